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

TEST(SgemmImpls, ConsistencyCheckRejectsBadTables) {
  static_assert(sgemm_impl_table_is_consistent(kernels::kSgemmImpls));
  const auto tuned = &kernels::detail::launch_sgemm_tuned;
  const auto vd = &kernels::detail::launch_sgemm_volkov_demmel;
  constexpr const char* kText = "an implementation";
  const SgemmImplRecord good[] = {{SgemmImpl::kTuned, "a", tuned, kText}, {SgemmImpl::kVolkovDemmel, "b", vd, kText}};
  EXPECT_TRUE(sgemm_impl_table_is_consistent(good));
  const SgemmImplRecord same_name[] = {{SgemmImpl::kTuned, "a", tuned, kText},
                                       {SgemmImpl::kVolkovDemmel, "a", vd, kText}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(same_name));
  const SgemmImplRecord out_of_order[] = {{SgemmImpl::kVolkovDemmel, "b", vd, kText},
                                          {SgemmImpl::kTuned, "a", tuned, kText}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(out_of_order));
  const SgemmImplRecord missing_one[] = {{SgemmImpl::kTuned, "a", tuned, kText}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(missing_one));
  const SgemmImplRecord no_launcher[] = {{SgemmImpl::kTuned, "a", tuned, kText},
                                         {SgemmImpl::kVolkovDemmel, "b", nullptr, kText}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(no_launcher));
  const SgemmImplRecord empty_name[] = {{SgemmImpl::kTuned, "", tuned, kText},
                                        {SgemmImpl::kVolkovDemmel, "b", vd, kText}};
  EXPECT_FALSE(sgemm_impl_table_is_consistent(empty_name));
}

}  // namespace
}  // namespace gpuprobe
