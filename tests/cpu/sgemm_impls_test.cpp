// The SGEMM implementation table (kernels::kSgemmImpls), from which sgemm_impl_name(), sgemm()'s
// dispatch, the benchmark entries and the GPU tests derive: one record per SgemmImpl enumerator, in
// order, names unique. The header static_asserts the same; these tests also show that the check
// rejects the mistakes it is there for.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpuprobe/kernels/sgemm.hpp"

namespace gpuprobe {
namespace {

using kernels::SgemmImpl;
using kernels::SgemmImplRecord;
using kernels::detail::sgemm_impl_table_is_consistent;

TEST(SgemmImpls, EveryEnumeratorHasItsRecordWithAUniqueName) {
  ASSERT_EQ(kernels::kSgemmImplCount, static_cast<std::size_t>(SgemmImpl::kEnd));
  std::set<std::string> names;
  for (std::size_t i = 0; i < kernels::kSgemmImplCount; ++i) {
    const auto impl = static_cast<SgemmImpl>(i);
    const SgemmImplRecord* record = kernels::sgemm_impl_record(impl);
    ASSERT_NE(record, nullptr) << i;
    EXPECT_EQ(record->impl, impl);
    EXPECT_EQ(record, &kernels::kSgemmImpls[i]);
    EXPECT_STREQ(kernels::sgemm_impl_name(impl), record->name);
    EXPECT_NE(record->launch, nullptr) << record->name;
    EXPECT_GT(std::string(record->description).size(), 10u) << record->name;
    EXPECT_TRUE(names.insert(record->name).second) << "name twice: " << record->name;
  }
  EXPECT_EQ(kernels::sgemm_impl_record(SgemmImpl::kEnd), nullptr);
  EXPECT_EQ(kernels::sgemm_impl_record(static_cast<SgemmImpl>(-1)), nullptr);
  EXPECT_STREQ(kernels::sgemm_impl_name(SgemmImpl::kEnd), "unknown");
}

// The benchmark names its entries impl:ours_<name>; the analysis (roofline.DEFAULT_IMPL "ours_tuned")
// and the committed reference results know the product's implementations by these names.
TEST(SgemmImpls, NamesThatResultFilesUse) {
  EXPECT_STREQ(kernels::sgemm_impl_name(SgemmImpl::kTuned), "tuned");
  EXPECT_STREQ(kernels::sgemm_impl_name(SgemmImpl::kVolkovDemmel), "vd");
}

TEST(SgemmImpls, EveryRecordSaysWhenTheDispatcherRunsIt) {
  for (const SgemmImplRecord& record : kernels::kSgemmImpls)
    EXPECT_GT(std::string(record.chosen_when).size(), 4u) << record.name;
}

TEST(SgemmImpls, ConsistencyCheckRejectsBadTables) {
  static_assert(sgemm_impl_table_is_consistent(kernels::kSgemmImpls));
  const auto f = &kernels::detail::launch_sgemm_tuned;
  constexpr const char* kText = "an implementation";
  constexpr const char* kWhen = "whenever";
  using I = SgemmImpl;
  const SgemmImplRecord good[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "b", f, kText, kWhen},
                                  {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "d", f, kText, kWhen}};
  EXPECT_TRUE(sgemm_impl_table_is_consistent(good));
  const SgemmImplRecord same_name[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "b", f, kText, kWhen},
                                       {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "a", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(same_name));
  const SgemmImplRecord out_of_order[] = {{I::kTuned, "b", f, kText, kWhen}, {I::kAuto, "a", f, kText, kWhen},
                                          {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "d", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(out_of_order));
  const SgemmImplRecord missing_one[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "b", f, kText, kWhen},
                                         {I::kSmall, "c", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(missing_one));
  const SgemmImplRecord no_launcher[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "b", nullptr, kText, kWhen},
                                         {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "d", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(no_launcher));
  const SgemmImplRecord empty_name[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "", f, kText, kWhen},
                                        {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "d", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(empty_name));
  const SgemmImplRecord no_rule[] = {{I::kAuto, "a", f, kText, kWhen}, {I::kTuned, "b", f, kText, ""},
                                     {I::kSmall, "c", f, kText, kWhen}, {I::kVolkovDemmel, "d", f, kText, kWhen}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(no_rule));
}

// kAuto's rule (sgemm_choose) on an H100 SXM's 132 SMs: kTuned from one 128 x 128 tile per SM (132), kSmall
// below with split-k doubled while 64 x 64 blocks x splits stay within 4 per SM (528) and every split keeps
// 4 k-tiles of 32.
TEST(SgemmDispatch, RuleOnAnH100) {
  using kernels::sgemm_choose;
  const kernels::SgemmDeviceTraits h100{132, true, true};
  auto choice = [&](int m, int n, int k) { return sgemm_choose(m, n, k, h100); };
  EXPECT_EQ(choice(4096, 4096, 4096).impl, SgemmImpl::kTuned);         // 1024 tiles
  EXPECT_EQ(choice(2048, 2048, 2048).impl, SgemmImpl::kTuned);         // 256 tiles
  EXPECT_EQ(choice(1536, 1408, 64).impl, SgemmImpl::kTuned);           // 12 x 11 = 132 tiles
  EXPECT_EQ(choice(1536, 1280, 64).impl, SgemmImpl::kSmall);           // 12 x 10 = 120 tiles
  EXPECT_EQ(choice(1024, 1024, 1024).impl, SgemmImpl::kSmall);         // 64 tiles
  EXPECT_EQ(choice(1024, 1024, 1024).splits, 2);                       // 256 small tiles x 2 <= 528
  EXPECT_EQ(choice(1536, 1280, 4096).splits, 1);                       // 480 small tiles: no room for 2
  EXPECT_EQ(choice(512, 512, 512).splits, 4);                          // 16 k-tiles: 4 splits of 4
  EXPECT_EQ(choice(512, 512, 256).splits, 2);                          // 8 k-tiles: 2 splits of 4
  EXPECT_EQ(choice(512, 512, 100).splits, 1);                          // 4 k-tiles: no split
  EXPECT_EQ(choice(64, 64, 1 << 20).splits, kernels::kSgemmMaxSplits); // never above the cluster limit
  EXPECT_EQ(choice(1, 1, 1).impl, SgemmImpl::kSmall);
  EXPECT_EQ(choice(1, 1, 1).splits, 1);
}

TEST(SgemmDispatch, WithoutSplitKOrRoomForTheLargeKernel) {
  using kernels::sgemm_choose;
  const kernels::SgemmDeviceTraits no_split{132, true, false};     // a build without sm_90 code
  EXPECT_EQ(sgemm_choose(512, 512, 512, no_split).splits, 1);
  const kernels::SgemmDeviceTraits small_smem{128, false, false};  // sm_86/89/120: 99 KB per block
  EXPECT_EQ(sgemm_choose(16384, 16384, 16384, small_smem).impl, SgemmImpl::kSmall);
  EXPECT_EQ(sgemm_choose(16384, 16384, 16384, small_smem).splits, 1);
}

TEST(SgemmDispatch, ChoiceNames) {
  EXPECT_EQ(kernels::sgemm_choice_name({SgemmImpl::kTuned, 1}), "tuned");
  EXPECT_EQ(kernels::sgemm_choice_name({SgemmImpl::kSmall, 4}), "small, split-k 4");
}

}  // namespace
}  // namespace gpuprobe
