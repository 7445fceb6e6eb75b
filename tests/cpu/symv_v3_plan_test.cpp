// SYMV v3 plan (kernels/src/symv_v3_plan.hpp), checked on the CPU with the same functions the kernels
// index with: on every shape, both triangles and both group heights (float 4, double 2 block rows),
//  - every stored 64 x 64 tile is read by exactly one unit, no unit reads a tile of the unstored
//    triangle, and a unit's block columns are its group's band or full ones as the kernel assumes;
//  - the units' row parts and the full block columns' slots have distinct indices, dense from 0 and
//    inside the workspace, and the row parts of a group are contiguous in segment order;
//  - the reduction of column block c sums exactly the row parts of c's group and the slots (h, c)
//    that the units write;
//  - the workspace is at most 1 % of the n x n matrix for n >= 1024.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "symv_v3_plan.hpp"

namespace gpuprobe {
namespace {

namespace v3 = kernels::symv_v3;

void check_plan(int n, int sub, bool lower) {
  SCOPED_TRACE(testing::Message() << "n=" << n << " sub=" << sub << (lower ? " lower" : " upper"));
  const v3::Plan p = v3::make_plan(n, sub);
  const int N = p.tiles;
  ASSERT_EQ(N, (n + 63) / 64);
  ASSERT_EQ(p.groups, (N + sub - 1) / sub);
  const int t = p.seg_tiles;
  ASSERT_TRUE(t >= 1 && (sub % t == 0 || t % sub == 0)) << t;  // the closed forms need it
  ASSERT_EQ(p.max_segments, (N + t - 1) / t);

  std::vector<int> visits(static_cast<std::size_t>(N) * N, 0);
  std::set<long long> row_parts, slots;
  std::map<std::pair<int, int>, bool> units;   // (g, k) with work
  std::set<std::pair<int, int>> slot_written;  // (g, j)
  const long long row_len = static_cast<long long>(sub) * v3::kNB;
  for (int g = 0; g < p.groups; ++g) {
    const int r0 = g * sub;
    for (int k = 0; k < p.max_segments; ++k) {
      int jb, je;
      p.unit_columns(lower, g, k, &jb, &je);
      const bool active = jb < je;
      const int first = p.first_segment(lower, g);
      EXPECT_EQ(active, k >= first && k < first + p.segments(lower, g)) << "g=" << g << " k=" << k;
      if (!active) continue;
      units[{g, k}] = true;
      const long long rp = p.row_part(lower, g, k);
      EXPECT_EQ(rp % row_len, 0);
      EXPECT_TRUE(row_parts.insert(rp).second) << "row part reused: g=" << g << " k=" << k;
      EXPECT_LE(rp + row_len, p.row_elems);
      for (int j = jb; j < je; ++j) {
        ASSERT_TRUE(j >= 0 && j < N);
        const bool band = j >= p.band_begin(g) && j < p.band_end(g);
        EXPECT_EQ(band, j >= r0 && j < r0 + sub);
        for (int i = 0; i < sub && r0 + i < N; ++i) {
          const int r = r0 + i;
          const bool stored = lower ? j <= r : j >= r;
          // Full block columns: every tile stored (the kernel loads them all); band: by (i, b).
          if (!band) {
            EXPECT_TRUE(stored) << "full column " << j << " of group " << g << " has unstored tile row " << r;
          }
          if (stored) ++visits[static_cast<std::size_t>(r) * N + j];
        }
        if (!band) {
          const long long s = p.slot(lower, g, j);
          EXPECT_EQ(s % v3::kNB, 0);
          EXPECT_TRUE(slots.insert(s).second) << "slot reused: g=" << g << " j=" << j;
          EXPECT_TRUE(s >= 0 && s + v3::kNB <= p.slot_elems) << "g=" << g << " j=" << j;
          slot_written.insert({g, j});
        }
      }
    }
  }
  for (int r = 0; r < N; ++r)
    for (int j = 0; j < N; ++j) {
      const bool stored = lower ? j <= r : j >= r;
      EXPECT_EQ(visits[static_cast<std::size_t>(r) * N + j], stored ? 1 : 0) << "tile (" << r << ", " << j << ")";
    }
  // Row parts: one per unit, dense from 0 (the workspace is sized for the triangle with more units).
  ASSERT_FALSE(row_parts.empty());
  EXPECT_EQ(*row_parts.rbegin(), static_cast<long long>(row_parts.size() - 1) * row_len);
  if (!slots.empty()) {  // slots too: no gaps
    EXPECT_EQ(*slots.rbegin(), static_cast<long long>(slots.size() - 1) * v3::kNB);
  }

  // The reduction's terms for each column block.
  std::size_t slot_terms = 0;
  for (int c = 0; c < N; ++c) {
    const int gc = c / sub;
    const int first = p.first_segment(lower, gc), count = p.segments(lower, gc);
    const long long base = p.row_part(lower, gc, first);
    for (int q = 0; q < count; ++q) {
      EXPECT_TRUE(units.count({gc, first + q})) << "c=" << c << " sums a unit without work";
      EXPECT_EQ(p.row_part(lower, gc, first + q), base + q * row_len);  // contiguous, segment order
    }
    int group_units = 0;
    for (const auto& [unit, on] : units) group_units += unit.first == gc;
    EXPECT_EQ(count, group_units) << "c=" << c;
    for (int h = p.slot_group_begin(lower, c); h < p.slot_group_end(lower, c); ++h) {
      EXPECT_TRUE(slot_written.count({h, c})) << "c=" << c << " sums slot (" << h << ", " << c << ") nobody writes";
      ++slot_terms;
    }
  }
  EXPECT_EQ(slot_terms, slot_written.size());

  if (n >= v3::kBoundFrom) {
    EXPECT_LE(static_cast<double>(p.workspace_elems()), 0.01 * double(n) * n);
  }
}

TEST(SymvV3Plan, EveryStoredTileOnceAndEveryPartialReduced) {
  std::vector<int> sizes;
  for (int n = 1; n <= 700; n += (n < 140 ? 1 : 37)) sizes.push_back(n);
  for (int n : {1000, 1023, 1024, 1025, 2048, 3000, 4096, 4097, 8192, 10000, 16384, 32768}) sizes.push_back(n);
  for (int sub : {4, 2})
    for (bool lower : {true, false})
      for (int n : sizes) check_plan(n, sub, lower);
}

TEST(SymvV3Plan, SegmentsAtTheBenchmarkSizes) {
  // The plans the performance log's predictions assume (docs/perf/symv.md, v3).
  struct Expect {
    int n, sub, t;
  };
  for (const Expect& e : {Expect{2048, 4, 2}, Expect{2048, 2, 2}, Expect{8192, 4, 2}, Expect{16384, 4, 2},
                          Expect{16384, 2, 4}, Expect{32768, 4, 8}, Expect{32768, 2, 16}})
    EXPECT_EQ(v3::make_plan(e.n, e.sub).seg_tiles, e.t) << "n=" << e.n << " sub=" << e.sub;
}

}  // namespace
}  // namespace gpuprobe
