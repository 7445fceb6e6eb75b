// Multi-GPU SYMV plan (kernels/src/symv_mgpu_plan.hpp), checked on the CPU with the same functions
// the kernels index with, on layouts with block sizes below, equal to and above the 64-column tile,
// not dividing n, 1 to 5 GPUs, offsets at and off block and tile boundaries, trailing and inner
// submatrices, both triangles and both group heights. For every GPU it replays the kernel's walk
// (which tiles each unit visits, which of them it reads unmasked, and per column the rows a masked
// tile keeps) and checks:
//  - every stored element of the submatrix in the GPU's columns is used exactly once, nothing else
//    is, and a tile read unmasked holds only stored, in-range, off-diagonal elements;
//  - the row parts and slots written are distinct and inside the plan's arrays, and the plan's
//    arrays inside the layout-wide bounds the workspace query allocates;
//  - the reduction of each output element reads exactly the row parts of its group's units and the
//    slots of the tiles written for its column.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "symv_mgpu_plan.hpp"

namespace gpuprobe {
namespace {

namespace plan = kernels::symv_mgpu_plan;
using kernels::BlockCyclicLayout;

void check_gpu(const BlockCyclicLayout& L, int q, bool lower, int sub, int n, int offset) {
  SCOPED_TRACE(testing::Message() << "N=" << L.cols << " b=" << L.block << " G=" << L.gpus << " q=" << q
                                  << " sub=" << sub << " n=" << n << " o=" << offset << (lower ? " lower" : " upper"));
  const plan::Plan p = plan::make_plan(L, q, lower, sub, n, offset);
  const plan::Bounds bounds = plan::plan_bounds(L, sub);
  ASSERT_LE(p.groups, bounds.groups);
  ASSERT_LE(p.col_tiles, bounds.col_tiles);
  ASSERT_LE(p.slot_elems, bounds.slot_elems);
  ASSERT_LE(p.row_part_elems, bounds.row_part_elems);
  ASSERT_LE(p.nl, bounds.local_cols);
  ASSERT_EQ(p.nl, L.local_cols_before(q, offset + n) - L.local_cols_before(q, offset));
  ASSERT_EQ(p.col_tiles, (p.nl + 63) / 64);
  // Rows: the groups cover [offset, offset + n) exactly.
  ASSERT_GE(p.groups, 1);
  ASSERT_EQ(p.row_lo(0), offset);
  ASSERT_EQ(p.row_hi(p.groups - 1), offset + n);
  for (int h = 0; h + 1 < p.groups; ++h) ASSERT_EQ(p.row_hi(h), p.row_lo(h + 1));
  if (p.col_tiles > 0) {
    ASSERT_GE(p.segments, 1);
    ASSERT_LE(p.segments, plan::kMaxSegments);
    ASSERT_EQ(p.segments, (p.col_tiles + p.seg_tiles - 1) / p.seg_tiles);
  }

  const int rows_per_group = sub * plan::kNB;
  auto stored = [&](int i, int c) { return lower ? i >= c : i <= c; };
  // uses[(i - offset) * nl + lj]: how often element (row i, local column lj) enters the row sums.
  std::vector<int> uses(static_cast<std::size_t>(n) * p.nl, 0);
  std::set<long long> row_parts_written, slots_written;
  std::set<std::pair<int, int>> units, tiles;  // (h, k) with work; (h, J) visited
  for (int h = 0; h < p.groups; ++h)
    for (int k = 0; k < p.segments; ++k) {
      int jb, je;
      p.unit_tiles(h, k, &jb, &je);
      if (jb >= je) continue;
      units.insert({h, k});
      const long long rp = p.row_part(h, k);
      ASSERT_TRUE(rp >= 0 && rp + rows_per_group <= p.row_part_elems) << "h=" << h << " k=" << k;
      ASSERT_TRUE(row_parts_written.insert(rp).second);
      // The kernel's split: unmasked tiles [ib, ie) of an unclipped group.
      int ib = std::max(jb, p.full_begin(h)), ie = std::min(je, std::min(p.full_end(h), p.nl / plan::kNB));
      if (p.rows_clipped(h) || ib >= ie) ib = ie = je;
      const int r0 = p.group_row0(h), row_lo = p.row_lo(h), row_hi = p.row_hi(h);
      for (int J = jb; J < je; ++J) {
        ASSERT_TRUE(J >= 0 && J < p.col_tiles);
        tiles.insert({h, J});
        const long long s = p.slot(h, J);
        ASSERT_TRUE(s >= 0 && s + plan::kNB <= p.slot_elems) << "h=" << h << " J=" << J;
        ASSERT_TRUE(slots_written.insert(s).second);
        const bool masked = !(J >= ib && J < ie);
        for (int lj = J * plan::kNB; lj < J * plan::kNB + plan::kNB; ++lj) {
          if (!masked) ASSERT_LT(lj, p.nl);
          if (lj >= p.nl) continue;  // a masked tile keeps no row of a column past nl
          const int c = p.col_global(lj);
          ASSERT_EQ(L.owner(c), q);
          const int lo = masked ? (lower ? std::max(row_lo, c) : row_lo) : r0;
          const int hi = masked ? (lower ? row_hi : std::min(row_hi, c + 1)) : r0 + rows_per_group;
          for (int i = std::max(lo, r0); i < std::min(hi, r0 + rows_per_group); ++i) {
            if (!masked) {
              ASSERT_TRUE(i >= offset && i < offset + n && stored(i, c) && i != c)
                  << "unmasked tile (" << h << ", " << J << ") holds element (" << i << ", " << c << ")";
            }
            ASSERT_TRUE(i >= offset && i < offset + n) << "row " << i << " outside the submatrix";
            ++uses[static_cast<std::size_t>(i - offset) * p.nl + lj];
          }
        }
      }
    }
  for (int i = offset; i < offset + n; ++i)
    for (int lj = 0; lj < p.nl; ++lj) {
      const int c = p.col_global(lj);
      ASSERT_EQ(uses[static_cast<std::size_t>(i - offset) * p.nl + lj], stored(i, c) ? 1 : 0)
          << "element (" << i << ", " << c << ")";
    }

  // The reduction's terms, as symv_mgpu_reduce_kernel enumerates them.
  std::set<std::pair<int, int>> units_read, tiles_read;
  for (int e = 0; e < n; ++e) {
    const int i = offset + e;
    const int h = p.group_of_row(i);
    ASSERT_TRUE(h >= 0 && h < p.groups && i >= p.row_lo(h) && i < p.row_hi(h)) << "row " << i;
    for (int k = p.first_segment(h); k < p.end_segment(h); ++k) {
      ASSERT_TRUE(units.count({h, k})) << "row " << i << " reads the row part of idle unit (" << h << ", " << k << ")";
      units_read.insert({h, k});
    }
    if (L.owner(i) == q) {
      const int lj = L.local_col(i) - p.lc0;
      ASSERT_TRUE(lj >= 0 && lj < p.nl);
      const int J = lj / plan::kNB;
      for (int g = p.slot_group_begin(J); g < p.slot_group_end(J); ++g) {
        ASSERT_TRUE(tiles.count({g, J})) << "column " << i << " reads the slot of unvisited tile (" << g << ", " << J
                                         << ")";
        tiles_read.insert({g, J});
      }
    }
  }
  EXPECT_EQ(units_read, units) << "a unit's row part is never summed";
  EXPECT_EQ(tiles_read, tiles) << "a tile's column dots are never summed";
}

void check_layout(int N, int block, int gpus) {
  const BlockCyclicLayout L{N, N, block, gpus};
  std::vector<std::pair<int, int>> problems;  // (offset, n)
  for (int offset : {0, 1, block - 1, block, block + 1, 63, 64, 65, N / 3, N - 2, N - 1})
    if (offset >= 0 && offset < N) {
      problems.push_back({offset, N - offset});        // trailing (the SYTRD's)
      if (N - offset > 2) problems.push_back({offset, (N - offset) / 2 + 1});  // inner
    }
  for (const auto& [offset, n] : problems)
    for (int q = 0; q < gpus; ++q)
      for (bool lower : {true, false})
        for (int sub : {2, 4}) check_gpu(L, q, lower, sub, n, offset);
}

TEST(SymvMgpuPlan, EveryStoredElementOnceAndEveryPartialSummed) {
  for (const auto& [N, block, gpus] : std::vector<std::tuple<int, int, int>>{
           {1, 64, 1}, {2, 1, 2}, {63, 16, 2}, {65, 64, 1}, {65, 64, 2}, {130, 64, 3}, {200, 48, 2},
           {300, 7, 3}, {333, 100, 2}, {520, 128, 2}, {700, 1, 5}, {1000, 256, 4}, {777, 64, 3}})
    check_layout(N, block, gpus);
}

// Many tiles per GPU: segments longer than one tile, several units per group.
TEST(SymvMgpuPlan, LargeLayoutsSplitGroupsIntoSegments) {
  check_gpu(BlockCyclicLayout{6000, 6000, 64, 2}, 1, true, 2, 6000, 0);
  check_gpu(BlockCyclicLayout{6000, 6000, 100, 2}, 0, false, 4, 5900, 77);
  const plan::Plan p = plan::make_plan(BlockCyclicLayout{131072, 131072, 64, 2}, 0, true, 4, 131072, 0);
  EXPECT_GT(p.seg_tiles, 1);
  EXPECT_LE(static_cast<long long>(p.groups) * p.segments, plan::kTargetDenseUnits);
}

}  // namespace
}  // namespace gpuprobe
