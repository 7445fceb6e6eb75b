// SYMV v10 plan (kernels/src/symv_v10_plan.hpp), checked on the CPU with the functions the kernel
// indexes with, by walking the launch as the kernel does (block b: cluster b / C, rank b % C):
//  - every stored 64 x 64 tile is read by exactly one block, and no block reads an unstored one;
//  - segment_of inverts the row-major numbering of the live segments, each of which holds a stored tile;
//  - the row parts and slots written are distinct, inside the workspace, and exactly the terms that
//    the output blocks sum (term(c, t) for t < terms(c)), each once;
//  - the workspace is at most 1 % of the n x n matrix for n >= 1024.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "symv_v10_plan.hpp"

namespace gpuprobe {
namespace {

namespace v10 = kernels::symv_v10;

void check_plan(int n, bool lower) {
  SCOPED_TRACE(testing::Message() << "n=" << n << (lower ? " lower" : " upper"));
  const v10::Plan p = v10::make_plan(n);
  const int N = p.tiles, C = p.cluster;
  ASSERT_EQ(N, (n + 63) / 64);
  ASSERT_EQ(1 << p.cluster_log2, C);
  ASSERT_TRUE(C == 8 || (C >= N && C / 2 < N) || (N == 1 && C == 1)) << C;

  std::vector<int> reads(static_cast<std::size_t>(N) * N, 0);
  std::map<long long, int> written;  // partial offset -> times written
  const long long segments = p.live_segments();
  long long k = 0;
  for (int i = 0; i < N; ++i)
    for (int s = 0; s < p.seg_count(lower, i); ++s, ++k) {
      int row = -1, seg = -1;
      p.segment_of(lower, k, &row, &seg);
      ASSERT_EQ(row, i) << "k=" << k;
      ASSERT_EQ(seg, s) << "k=" << k;
      EXPECT_EQ(p.segments_before(lower, i) + s, k);
      bool any = false;
      for (int r = 0; r < C; ++r) {
        const int j = p.column(lower, i, s, r);
        const bool live = j < p.first_column(lower, i) + p.row_tiles(lower, i);  // the kernel's test
        EXPECT_EQ(live, j < N && p.stored(lower, i, j));
        if (!live) continue;
        any = true;
        ASSERT_TRUE(lower ? j <= i : (j >= i && j < N));
        ++reads[static_cast<std::size_t>(i) * N + j];
        if (j != i) ++written[lower ? p.slot(i, j) : p.slot(j, i)];
      }
      EXPECT_TRUE(any) << "a launched segment without a stored tile: i=" << i << " s=" << s;
      ++written[p.row_part(lower, i, s)];
    }
  EXPECT_EQ(k, segments);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      EXPECT_EQ(reads[static_cast<std::size_t>(i) * N + j], (lower ? j <= i : j >= i) ? 1 : 0) << i << "," << j;

  const long long parts = p.row_elems() + p.slot_elems();
  for (const auto& [offset, times] : written) {
    EXPECT_EQ(times, 1) << offset;
    EXPECT_EQ(offset % v10::kNB, 0);
    EXPECT_GE(offset, 0);
    EXPECT_LE(offset + v10::kNB, parts);
  }
  // The output blocks sum exactly what was written, each partial once.
  std::map<long long, int> summed;
  for (int c = 0; c < N; ++c) {
    EXPECT_GE(p.terms(lower, c), 1);
    for (int t = 0; t < p.terms(lower, c); ++t) ++summed[p.term(lower, c, t)];
  }
  EXPECT_EQ(summed, written);
  EXPECT_EQ(p.workspace_bytes(8), p.counter_bytes() + parts * 8);
  EXPECT_GE(p.counter_bytes(), 8LL * N);
  EXPECT_EQ(p.counter_bytes() % 16, 0);
}

TEST(SymvV10Plan, TilesPartialsAndTermsMatchOnEveryShape) {
  for (int n : {1, 2, 63, 64, 65, 127, 128, 129, 200, 256, 300, 448, 449, 511, 512, 513, 1000, 1024, 1025, 2048,
                2049, 3000, 4097})
    for (bool lower : {true, false}) check_plan(n, lower);
}

TEST(SymvV10Plan, WorkspaceAtMostOnePercentFrom1024) {
  for (int n = 1024; n <= 20000; n += 61)
    for (int bytes : {4, 8}) {
      const v10::Plan p = v10::make_plan(n);
      EXPECT_LE(static_cast<double>(p.workspace_bytes(bytes)) / bytes, 0.01 * n * static_cast<double>(n)) << n;
    }
}

}  // namespace
}  // namespace gpuprobe
