// The GEMV and SYMV implementation tables (kernels::kGemvImpls, kernels::kSymvImpls), from which the
// name functions, the dispatch, the benchmark entries and the tests' lists of implementations derive:
// one record per enumerator, in order, names and benchmark entries unique, launchers for every record
// but kAuto. The headers static_assert the same; these tests also show that the checks reject the
// mistakes they are there for, and that every record is either a choice kAuto makes or (SYMV) a
// baseline: the product keeps nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuprobe/kernels/gemv.hpp"
#include "gpuprobe/kernels/symv.hpp"

namespace gpuprobe {
namespace {

using kernels::GemvImpl;
using kernels::GemvImplRecord;
using kernels::SymvImpl;
using kernels::SymvImplRecord;
using kernels::Trans;
using kernels::Uplo;
using kernels::detail::gemv_impl_table_is_consistent;
using kernels::detail::symv_impl_table_is_consistent;

TEST(GemvImpls, EveryEnumeratorHasItsRecordWithUniqueNames) {
  ASSERT_EQ(kernels::kGemvImplCount, static_cast<std::size_t>(GemvImpl::kEnd));
  std::set<std::string> names, entries;
  for (std::size_t i = 0; i < kernels::kGemvImplCount; ++i) {
    const auto impl = static_cast<GemvImpl>(i);
    const GemvImplRecord* record = kernels::gemv_impl_record(impl);
    ASSERT_NE(record, nullptr) << i;
    EXPECT_EQ(record->impl, impl);
    EXPECT_EQ(record, &kernels::kGemvImpls[i]);
    EXPECT_STREQ(kernels::gemv_impl_name(impl), record->name);
    EXPECT_EQ(record->launchers.set(), impl == GemvImpl::kAuto ? 0 : 4) << record->name;
    EXPECT_GT(std::string(record->description).size(), 10u) << record->name;
    EXPECT_TRUE(names.insert(record->name).second) << "name twice: " << record->name;
    EXPECT_TRUE(entries.insert(record->entry).second) << "entry twice: " << record->entry;
  }
  EXPECT_EQ(kernels::gemv_impl_record(GemvImpl::kEnd), nullptr);
  EXPECT_EQ(kernels::gemv_impl_record(static_cast<GemvImpl>(-1)), nullptr);
  EXPECT_STREQ(kernels::gemv_impl_name(GemvImpl::kEnd), "unknown");
}

// The result files know the implementations by these: the entries' impl (kernels.gemv/impl:<entry>,
// paired.gemv a: / b:) and impl_resolved (the name); the committed references (reports/h100) and
// `compare` match runs by them.
TEST(GemvImpls, NamesThatResultFilesUse) {
  const std::pair<GemvImpl, std::pair<const char*, const char*>> expected[] = {
      {GemvImpl::kAuto, {"auto", "ours"}},
      {GemvImpl::kSplitReduce, {"split_reduce", "ours_v2"}},
      {GemvImpl::kSinglePass, {"single_pass", "ours_v3"}},
      {GemvImpl::kColumnBlocks, {"column_blocks", "ours_colblocks"}},
      {GemvImpl::kRowBlocks, {"row_blocks", "ours_rowblocks"}},
      {GemvImpl::kRowBlocksSector, {"row_blocks_sector", "ours_rowblocks_sector"}}};
  ASSERT_EQ(std::size(expected), kernels::kGemvImplCount);
  for (const auto& [impl, names] : expected) {
    EXPECT_STREQ(kernels::gemv_impl_record(impl)->name, names.first);
    EXPECT_STREQ(kernels::gemv_impl_record(impl)->entry, names.second);
  }
}

// An explicit choice runs the record's own kernel, or for the transposition it has none for, the one
// it borrows: column blocks are T only (N: single pass), row blocks N only (T: column blocks).
TEST(GemvImpls, WhatAnExplicitChoiceRuns) {
  for (const GemvImplRecord& r : kernels::kGemvImpls) {
    if (r.impl == GemvImpl::kAuto) continue;
    for (Trans t : {Trans::kNoTrans, Trans::kTrans}) {
      EXPECT_EQ(kernels::gemv_auto_impl<float>(t, 1000, 1000, r.impl), r.runs(t)) << r.name;
      EXPECT_EQ(kernels::gemv_auto_impl<double>(t, 64, 1 << 20, r.impl), r.runs(t)) << r.name;
    }
  }
  EXPECT_EQ(kernels::gemv_impl_record(GemvImpl::kColumnBlocks)->runs(Trans::kNoTrans), GemvImpl::kSinglePass);
  EXPECT_EQ(kernels::gemv_impl_record(GemvImpl::kRowBlocks)->runs(Trans::kTrans), GemvImpl::kColumnBlocks);
  EXPECT_EQ(kernels::gemv_impl_record(GemvImpl::kRowBlocksSector)->runs(Trans::kTrans), GemvImpl::kColumnBlocks);
  // A value that names no implementation comes back as it is (gemv_check_args refuses it).
  EXPECT_EQ(kernels::gemv_auto_impl<float>(Trans::kNoTrans, 10, 10, GemvImpl::kEnd), GemvImpl::kEnd);
}

// The product keeps what the default reaches: over the benchmark shapes and the rules' edges, in both
// precisions and transpositions, kAuto picks every other record, and nothing else.
TEST(GemvImpls, AutoReachesEveryRecordAndOnlyThem) {
  std::vector<std::pair<int, int>> shapes = {{1 << 20, 64}, {1 << 18, 512},  {64, 1 << 20}, {512, 1 << 18},
                                             {100000, 1000}, {1000, 100000}, {1, 1},        {300, 700},
                                             {256, 512},     {257, 512},     {3040, 3040}, {3041, 2048}};
  for (int n : {512, 1000, 1024, 2048, 4096, 4097, 8192, 16384, 32768}) shapes.push_back({n, n});
  std::set<GemvImpl> reached;
  for (const auto& [m, n] : shapes)
    for (Trans t : {Trans::kNoTrans, Trans::kTrans}) {
      reached.insert(kernels::gemv_auto_impl<float>(t, m, n));
      reached.insert(kernels::gemv_auto_impl<double>(t, m, n));
    }
  std::set<GemvImpl> records;
  for (const GemvImplRecord& r : kernels::kGemvImpls)
    if (r.impl != GemvImpl::kAuto) records.insert(r.impl);
  EXPECT_EQ(reached, records);
}

// A copy of the product's table, for the consistency check to be shown bad variants of it.
struct GemvTable {
  GemvImplRecord r[kernels::kGemvImplCount];
  GemvTable() { std::copy(std::begin(kernels::kGemvImpls), std::end(kernels::kGemvImpls), std::begin(r)); }
  GemvImplRecord& operator[](GemvImpl impl) { return r[static_cast<std::size_t>(impl)]; }
};

TEST(GemvImpls, ConsistencyCheckRejectsBadTables) {
  static_assert(gemv_impl_table_is_consistent(kernels::kGemvImpls));
  EXPECT_TRUE(gemv_impl_table_is_consistent(GemvTable().r));
  {
    GemvTable t;  // a name twice
    t[GemvImpl::kRowBlocksSector].name = t[GemvImpl::kRowBlocks].name;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // a benchmark entry twice
    t[GemvImpl::kSinglePass].entry = "ours_v2";
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // an empty name
    t[GemvImpl::kSplitReduce].name = "";
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // out of enumerator order
    std::swap(t[GemvImpl::kSplitReduce], t[GemvImpl::kSinglePass]);
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // a record without a launcher
    t[GemvImpl::kColumnBlocks].launchers.dbl.launch = nullptr;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // kAuto with launchers
    t[GemvImpl::kAuto].launchers = t[GemvImpl::kSinglePass].launchers;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // borrowing the kernel of a record that borrows it in turn (two hops)
    t[GemvImpl::kColumnBlocks].trans_runs = GemvImpl::kRowBlocks;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // no kernel of its own for either transposition
    t[GemvImpl::kColumnBlocks].trans_runs = GemvImpl::kSinglePass;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  {
    GemvTable t;  // an implementation that runs kAuto
    t[GemvImpl::kRowBlocks].trans_runs = GemvImpl::kAuto;
    EXPECT_FALSE(gemv_impl_table_is_consistent(t.r));
  }
  const GemvImplRecord missing_one[] = {kernels::kGemvImpls[0]};
  EXPECT_FALSE(gemv_impl_table_is_consistent(missing_one));
}

TEST(SymvImpls, EveryEnumeratorHasItsRecordWithUniqueNames) {
  ASSERT_EQ(kernels::kSymvImplCount, static_cast<std::size_t>(SymvImpl::kEnd));
  std::set<std::string> names, entries;
  for (std::size_t i = 0; i < kernels::kSymvImplCount; ++i) {
    const auto impl = static_cast<SymvImpl>(i);
    const SymvImplRecord* record = kernels::symv_impl_record(impl);
    ASSERT_NE(record, nullptr) << i;
    EXPECT_EQ(record->impl, impl);
    EXPECT_EQ(record, &kernels::kSymvImpls[i]);
    EXPECT_STREQ(kernels::symv_impl_name(impl), record->name);
    EXPECT_EQ(record->launchers.set(), impl == SymvImpl::kAuto ? 0 : 4) << record->name;
    EXPECT_GT(std::string(record->description).size(), 10u) << record->name;
    EXPECT_TRUE(names.insert(record->name).second) << "name twice: " << record->name;
    EXPECT_TRUE(entries.insert(record->entry).second) << "entry twice: " << record->entry;
    // Atomic partials are a baseline's: the default is deterministic.
    if (record->atomics) EXPECT_TRUE(record->baseline) << record->name;
  }
  EXPECT_EQ(kernels::symv_impl_record(SymvImpl::kEnd), nullptr);
  EXPECT_EQ(kernels::symv_impl_record(static_cast<SymvImpl>(-1)), nullptr);
  EXPECT_STREQ(kernels::symv_impl_name(SymvImpl::kEnd), "unknown");
}

// As for GEMV: kernels.symv/impl:<entry>, paired.symv a: / b:, and impl_resolved.
TEST(SymvImpls, NamesThatResultFilesUse) {
  const std::pair<SymvImpl, std::pair<const char*, const char*>> expected[] = {
      {SymvImpl::kAuto, {"auto", "ours"}},
      {SymvImpl::kAwareV5, {"aware_v5", "ours_aware_v5"}},
      {SymvImpl::kAwareV6, {"aware_v6", "ours_aware_v6"}},
      {SymvImpl::kOblivious, {"oblivious", "ours_oblivious"}},
      {SymvImpl::kAwareAtomic, {"aware_atomic", "ours_atomic"}}};
  ASSERT_EQ(std::size(expected), kernels::kSymvImplCount);
  for (const auto& [impl, names] : expected) {
    EXPECT_STREQ(kernels::symv_impl_record(impl)->name, names.first);
    EXPECT_STREQ(kernels::symv_impl_record(impl)->entry, names.second);
  }
  // The report's baselines: the storage-oblivious and the atomic kernels.
  EXPECT_TRUE(kernels::symv_impl_record(SymvImpl::kOblivious)->baseline);
  EXPECT_TRUE(kernels::symv_impl_record(SymvImpl::kAwareAtomic)->baseline);
  EXPECT_TRUE(kernels::symv_impl_record(SymvImpl::kAwareAtomic)->atomics);
}

// The product keeps what the default reaches plus the baselines: over sizes and L2 sizes (unknown,
// smaller than the H100's, the H100's, the H200's), in both precisions and triangles, kAuto picks
// exactly the records that are not baselines.
TEST(SymvImpls, AutoReachesExactlyTheRecordsThatAreNotBaselines) {
  std::set<SymvImpl> reached;
  for (long long l2 : {0LL, 6LL << 20, 50LL << 20, 60LL << 20})
    for (int n : {1, 64, 1000, 4097, 8192, 16384, 32768, 65536})
      for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
        reached.insert(kernels::symv_auto_impl<float>(uplo, n, SymvImpl::kAuto, l2));
        reached.insert(kernels::symv_auto_impl<double>(uplo, n, SymvImpl::kAuto, l2));
      }
  std::set<SymvImpl> choices;
  for (const SymvImplRecord& r : kernels::kSymvImpls)
    if (r.impl != SymvImpl::kAuto && !r.baseline) choices.insert(r.impl);
  EXPECT_EQ(reached, choices);
  // An explicit choice is kept, whatever the L2.
  for (const SymvImplRecord& r : kernels::kSymvImpls)
    if (r.impl != SymvImpl::kAuto)
      EXPECT_EQ(kernels::symv_auto_impl<double>(Uplo::kLower, 32768, r.impl, 50LL << 20), r.impl) << r.name;
}

struct SymvTable {
  SymvImplRecord r[kernels::kSymvImplCount];
  SymvTable() { std::copy(std::begin(kernels::kSymvImpls), std::end(kernels::kSymvImpls), std::begin(r)); }
  SymvImplRecord& operator[](SymvImpl impl) { return r[static_cast<std::size_t>(impl)]; }
};

TEST(SymvImpls, ConsistencyCheckRejectsBadTables) {
  static_assert(symv_impl_table_is_consistent(kernels::kSymvImpls));
  EXPECT_TRUE(symv_impl_table_is_consistent(SymvTable().r));
  {
    SymvTable t;  // a name twice
    t[SymvImpl::kAwareV5].name = t[SymvImpl::kAwareV6].name;
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // a benchmark entry twice
    t[SymvImpl::kAwareAtomic].entry = "ours_oblivious";
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // out of enumerator order
    std::swap(t[SymvImpl::kAwareV5], t[SymvImpl::kAwareV6]);
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // a record without its workspace query
    t[SymvImpl::kOblivious].launchers.single.workspace_bytes = nullptr;
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // kAuto with launchers
    t[SymvImpl::kAuto].launchers = t[SymvImpl::kAwareV6].launchers;
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // kAuto a baseline
    t[SymvImpl::kAuto].baseline = true;
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  {
    SymvTable t;  // nothing left for kAuto to choose
    t[SymvImpl::kAwareV5].baseline = true;
    t[SymvImpl::kAwareV6].baseline = true;
    EXPECT_FALSE(symv_impl_table_is_consistent(t.r));
  }
  const SymvImplRecord missing_one[] = {kernels::kSymvImpls[0], kernels::kSymvImpls[1]};
  EXPECT_FALSE(symv_impl_table_is_consistent(missing_one));
}

}  // namespace
}  // namespace gpuprobe
