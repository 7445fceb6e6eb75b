// GEMV v8 plan (kernels/src/gemv_cluster_plan.hpp, GemvImpl::kClusterSplit), checked on the CPU with
// the functions the kernel indexes with: on every shape and both precisions,
//  - the units cover the rows exactly (the last one partial at most);
//  - C is a power of two <= 8, the smallest whose segments are one block step (<= 128 columns), or 8;
//  - the C segments cover the columns exactly once, in rank order, none empty, with no int overflow
//    up to m = n = 2^31 - 1;
//  - each rank's share of the unit's rows in the cluster sum is whole, and the shares cover the unit;
//  - the grid (units x C blocks) fits a 1-D grid;
// and the plan at the small N shapes v8 is for (docs/perf/gemv.md v8).
#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "gemv_cluster_plan.hpp"

namespace gpuprobe {
namespace {

namespace cp = kernels::gemv_cluster;

template <class T>
void check_plan(int m, int n) {
  SCOPED_TRACE(testing::Message() << (sizeof(T) == 4 ? "float" : "double") << " m=" << m << " n=" << n);
  const cp::Plan p = cp::make_plan<T>(m, n);
  const long long rows = cp::rows_per_unit<T>();
  ASSERT_EQ(p.m, m);
  ASSERT_EQ(p.n, n);
  EXPECT_GE(static_cast<long long>(p.units) * rows, m);
  EXPECT_LT(static_cast<long long>(p.units - 1) * rows, m);
  const int c = p.cluster;
  ASSERT_TRUE(c == 1 || c == 2 || c == 4 || c == 8) << c;
  const long long per_c = (static_cast<long long>(n) + c - 1) / c;
  EXPECT_EQ(p.seg_len, per_c);
  EXPECT_TRUE(per_c <= cp::kCols || c == cp::kMaxCluster) << "segments of one block step, or the cluster limit";
  if (c > 1) EXPECT_GT((static_cast<long long>(n) + c / 2 - 1) / (c / 2), cp::kCols) << "C is the smallest such";
  long long next = 0;
  for (int s = 0; s < c; ++s) {
    EXPECT_EQ(p.seg_begin(s), next) << "segment " << s;
    EXPECT_GT(p.seg_cols(s), 0) << "segment " << s;
    EXPECT_LE(p.seg_cols(s), p.seg_len) << "segment " << s;
    next += p.seg_cols(s);
  }
  EXPECT_EQ(next, n);
  EXPECT_EQ(p.rows_per_rank(static_cast<int>(rows)) * c, rows);
  EXPECT_EQ(p.blocks(), static_cast<long long>(p.units) * c);
  EXPECT_LE(p.blocks(), cp::kMaxGridX);
}

TEST(GemvClusterPlan, CoversRowsAndColumnsOnEveryShape) {
  std::vector<int> sizes = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300};
  for (int v : {511, 512, 513, 700, 1000, 1023, 1024, 1025, 2048, 3041, 4096, 4097, 20000, 1 << 20})
    sizes.push_back(v);
  for (int m : sizes)
    for (int n : sizes) {
      check_plan<float>(m, n);
      check_plan<double>(m, n);
    }
  // The extremes: the largest int shapes (no overflow in the segment arithmetic, the grid fits).
  for (auto [m, n] : {std::pair<int, int>{INT_MAX, INT_MAX}, {INT_MAX, 1}, {1, INT_MAX}, {INT_MAX - 7, 1025}}) {
    check_plan<float>(m, n);
    check_plan<double>(m, n);
  }
  // An empty problem: no blocks.
  EXPECT_EQ(cp::make_plan<float>(0, 5).blocks(), 0);
  EXPECT_EQ(cp::make_plan<double>(5, 0).blocks(), 0);
}

TEST(GemvClusterPlan, SmallSquares) {
  // N squares: {n, units, C, blocks} per precision (units of 32 float / 16 double rows; C segments
  // of at most 128 columns up to 1024, then 8 segments and several block steps per thread).
  struct Row {
    int n, units, cluster;
    long long blocks;
  };
  const Row floats[] = {{512, 16, 4, 64},    {1000, 32, 8, 256},  {1024, 32, 8, 256},
                        {2048, 64, 8, 512},  {4096, 128, 8, 1024}};
  const Row doubles[] = {{512, 32, 4, 128},   {1000, 63, 8, 504},  {1024, 64, 8, 512},
                         {2048, 128, 8, 1024}, {4096, 256, 8, 2048}};
  for (const Row& r : floats) {
    const cp::Plan p = cp::make_plan<float>(r.n, r.n);
    EXPECT_EQ(p.units, r.units) << r.n;
    EXPECT_EQ(p.cluster, r.cluster) << r.n;
    EXPECT_EQ(p.blocks(), r.blocks) << r.n;
  }
  for (const Row& r : doubles) {
    const cp::Plan p = cp::make_plan<double>(r.n, r.n);
    EXPECT_EQ(p.units, r.units) << r.n;
    EXPECT_EQ(p.cluster, r.cluster) << r.n;
    EXPECT_EQ(p.blocks(), r.blocks) << r.n;
  }
}

}  // namespace
}  // namespace gpuprobe
