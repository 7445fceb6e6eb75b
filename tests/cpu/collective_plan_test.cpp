// The host-side plan of transfer.collective: nccl-tests' size convention and bus-bandwidth factors,
// the group sizes, the sweep and the skip lines; decided before NCCL is called, so checked without a
// GPU (and without NCCL).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpuprobe/check.hpp"
#include "probes/transfer_collective_plan.hpp"

namespace gpuprobe {
namespace {

TEST(CollectivePlan, BusBandwidthFactorsAreNcclTests) {
  for (int g : {1, 2, 3, 4, 8, 16}) {
    SCOPED_TRACE(g);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, g), 2.0 * (g - 1) / g);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduceScatter, g), double(g - 1) / g);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllGather, g), double(g - 1) / g);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduce, g), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kBroadcast, g), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_THROW(busbw_factor(CollectiveOp::kAllReduce, 0), UsageError);
}

TEST(CollectivePlan, SizeIsTheLargestBufferOfOneRank) {
  const std::uint64_t size = 1 << 20;  // 262144 floats
  for (int g : {2, 4, 8}) {
    SCOPED_TRACE(g);
    const std::size_t elements = size / 4;
    const CollectiveCounts ar = collective_counts(CollectiveOp::kAllReduce, g, size);
    EXPECT_EQ(ar.send, elements);
    EXPECT_EQ(ar.recv, elements);
    EXPECT_EQ(ar.nccl_count, elements);
    const CollectiveCounts rs = collective_counts(CollectiveOp::kReduceScatter, g, size);
    EXPECT_EQ(rs.send, elements);  // the send buffer is the size
    EXPECT_EQ(rs.recv, elements / g);
    EXPECT_EQ(rs.nccl_count, elements / g);  // NCCL takes the receive count
    const CollectiveCounts ag = collective_counts(CollectiveOp::kAllGather, g, size);
    EXPECT_EQ(ag.recv, elements);  // the receive buffer is the size
    EXPECT_EQ(ag.send, elements / g);
    EXPECT_EQ(ag.nccl_count, elements / g);  // NCCL takes the send count
    for (CollectiveOp op : collective_ops())
      EXPECT_EQ(collective_counts(op, g, size).largest() * kCollectiveElementBytes, size) << collective_name(op);
  }
}

TEST(CollectivePlan, CountsFromTheNcclCountAtIrregularCounts) {
  const CollectiveCounts rs = collective_counts_from_nccl_count(CollectiveOp::kReduceScatter, 3, 7);
  EXPECT_EQ(rs.send, 21u);
  EXPECT_EQ(rs.recv, 7u);
  const CollectiveCounts ag = collective_counts_from_nccl_count(CollectiveOp::kAllGather, 3, 7);
  EXPECT_EQ(ag.send, 7u);
  EXPECT_EQ(ag.recv, 21u);
  const CollectiveCounts bc = collective_counts_from_nccl_count(CollectiveOp::kBroadcast, 3, 7);
  EXPECT_EQ(bc.send, 7u);
  EXPECT_EQ(bc.recv, 7u);
  EXPECT_THROW(collective_counts_from_nccl_count(CollectiveOp::kAllReduce, 2, 0), UsageError);
}

TEST(CollectivePlan, SizesBelowOneFloatPerRankDoNotFit) {
  EXPECT_TRUE(collective_size_fits(CollectiveOp::kAllReduce, 8, 8));  // 2 floats on every rank
  EXPECT_TRUE(collective_size_fits(CollectiveOp::kAllGather, 2, 8));  // 1 float sent per rank
  EXPECT_FALSE(collective_size_fits(CollectiveOp::kAllGather, 4, 8));
  EXPECT_FALSE(collective_size_fits(CollectiveOp::kReduceScatter, 4, 8));
  EXPECT_TRUE(collective_size_fits(CollectiveOp::kReduceScatter, 4, 16));
  EXPECT_FALSE(collective_size_fits(CollectiveOp::kAllReduce, 2, 6));  // not whole floats
  EXPECT_FALSE(collective_size_fits(CollectiveOp::kAllReduce, 2, 0));
  EXPECT_THROW(collective_counts(CollectiveOp::kAllGather, 4, 8), UsageError);
}

TEST(CollectivePlan, GroupsArePowersOfTwoUpToTheDevices) {
  EXPECT_TRUE(collective_group_sizes(1).empty());
  EXPECT_EQ(collective_group_sizes(2), (std::vector<int>{2}));
  EXPECT_EQ(collective_group_sizes(3), (std::vector<int>{2}));
  EXPECT_EQ(collective_group_sizes(4), (std::vector<int>{2, 4}));
  EXPECT_EQ(collective_group_sizes(8), (std::vector<int>{2, 4, 8}));
}

TEST(CollectivePlan, SweepFrom8BytesToTheLargestPowerOfTwo) {
  const std::vector<std::uint64_t> full = collective_sizes(std::uint64_t(1) << 30, false);
  ASSERT_EQ(full.size(), 28u);  // 2^3 .. 2^30
  EXPECT_EQ(full.front(), 8u);
  EXPECT_EQ(full.back(), std::uint64_t(1) << 30);
  for (std::size_t i = 1; i < full.size(); ++i) EXPECT_EQ(full[i], 2 * full[i - 1]);
  const std::vector<std::uint64_t> quick = collective_sizes(std::uint64_t(64) << 20, true);
  EXPECT_EQ(quick.front(), 8u);
  EXPECT_EQ(quick.back(), std::uint64_t(64) << 20);  // 2^26 appended after 2^24
  EXPECT_EQ(quick.size(), 9u);
  // A bound that is not a power of two: the sweep ends at the power of two below it, never above.
  const std::vector<std::uint64_t> odd = collective_sizes(3000, false);
  EXPECT_EQ(odd.back(), 2048u);
  EXPECT_EQ(std::set<std::uint64_t>(odd.begin(), odd.end()).size(), odd.size());
  EXPECT_THROW(collective_sizes(4, false), UsageError);
}

TEST(CollectivePlan, LargestSizeBoundedByFootprintAndMemory) {
  const std::uint64_t gib = std::uint64_t(1) << 30;
  EXPECT_EQ(collective_max_bytes(4 * gib, 80 * gib, false), gib);
  EXPECT_EQ(collective_max_bytes(4 * gib, 80 * gib, true), std::uint64_t(64) << 20);
  EXPECT_EQ(collective_max_bytes(gib, 80 * gib, false), gib / 2);  // --max-footprint=1G: two buffers per rank
  EXPECT_EQ(collective_max_bytes(4 * gib, 4 * gib, false), gib / 2);  // an eighth of the memory
}

TEST(CollectivePlan, SkipLines) {
  EXPECT_NE(collective_skip_reason(false, 8).find("built without NCCL"), std::string::npos);
  EXPECT_NE(collective_skip_reason(true, 1).find("1 GPU visible"), std::string::npos);
  EXPECT_EQ(collective_skip_reason(true, 2), "");
  std::set<std::string> names;
  for (CollectiveOp op : collective_ops()) names.insert(collective_name(op));
  EXPECT_EQ(names.size(), 5u);
}

}  // namespace
}  // namespace gpuprobe
