// The plan of the SYMV kernels with groups of block rows (symv_v3.cuh: SymvImpl::kAwareV6, kAwareV5),
// i.e. which tiles a unit reads and where its partials go in the workspace. Host and device code
// share it (sizes on the host, indexing in the kernels), and so does the CPU test
// tests/cpu/symv_v3_plan_test.cpp, which checks on every shape that each stored
// tile is read by exactly one unit, that no unit loads an unstored tile, and that the reduction sums
// exactly the partials the units write. Design and measurements: docs/perf/symv.md.
//
// Geometry. 64 x 64 tiles as in v1; N = ceil(n / 64) block rows. A unit (thread block) owns a
// *group* of kSub consecutive block rows [r0, r0 + kSub), r0 = g kSub, and a *segment* of t
// consecutive block columns; for each block column it reads the kSub tiles stacked in it (1 KB of
// each column: kSub = 4 for float, 2 for double). Segment k covers the block columns [k t, k t + t):
// anchored at absolute column positions for both triangles, so that the units of neighbouring
// groups with the same k walk the same columns at the same time (v1's upper path did not: there,
// block row r's segments started at column r and neighbouring rows were a tile apart).
//   lower: group g spans the block columns [0, min(N, r0 + kSub)); those < r0 are "full" (all kSub
//          tiles stored), those in [r0, r0 + kSub) the "band" (tile (r0 + i, r0 + b) stored for i >= b,
//          the diagonal tile for i == b).
//   upper: group g spans [r0, N); the band [r0, r0 + kSub) first (stored for i <= b), then full ones.
// Partials: the row sums of a unit (kSub x 64 values, the band's column dots folded in: they belong
// to the unit's own rows) go to a row part per (group, segment); the column dots of a full block
// column j (64 values: y_j's share from the group's rows) go to the slot of (g, j). The reduction sums,
// for column block c, the row parts of c's group (segments in order) and then the slots (h, c) of
// the other groups (h in order): a fixed order, so repeated calls are bit-identical.
//
// t is restricted to divisors and multiples of kSub: then the number of segments before a group has
// a closed form (no loop over groups in the kernels).
#pragma once

#include <algorithm>

#if defined(__CUDACC__)
#define GPUPROBE_SYMV_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_SYMV_HD inline
#endif

namespace gpuprobe::kernels::symv_v3 {

constexpr int kNB = 64;  // tile edge: the granularity of the partials, as in v1

template <class T>
constexpr int sub_rows() {
  return sizeof(T) == 4 ? 4 : 2;  // kSub: block rows per unit, 1 KB of each column (float 256 rows, double 128)
}

// Fewer units than this when possible (a unit reads kSub x t tiles); t at least kMinSteps block
// columns (prologue and epilogue amortised); for n >= kBoundFrom the workspace at most 1 % of n^2.
constexpr long long kTargetUnits = 4608;
constexpr int kMinSteps = 2;
constexpr int kBoundFrom = 1024;

struct Plan {
  int n = 0;
  int tiles = 0;         // N
  int sub = 1;           // kSub
  int groups = 0;        // G = ceil(N / kSub)
  int seg_tiles = 1;     // t: block columns per segment (a divisor or a multiple of kSub)
  int max_segments = 0;  // ceil(N / t): segment indices k are in [0, max_segments) (the grid's x;
                         // its y when group_fastest)
  long long slot_elems = 0;  // kNB per (group, full block column)
  long long row_elems = 0;   // kSub kNB per (group, segment)
  bool group_fastest = false;  // the grid: (groups, segments) instead of (segments, groups)

  GPUPROBE_SYMV_HD long long workspace_elems() const { return slot_elems + row_elems; }

  // Block columns [*begin, *end) of group g (the whole walk of its units).
  GPUPROBE_SYMV_HD void group_columns(bool lower, int g, int* begin, int* end) const {
    const int r0 = g * sub;
    *begin = lower ? 0 : r0;
    *end = lower ? (r0 + sub < tiles ? r0 + sub : tiles) : tiles;
  }
  // Block columns [*begin, *end) of the unit (g, k); empty when the unit has no work.
  GPUPROBE_SYMV_HD void unit_columns(bool lower, int g, int k, int* begin, int* end) const {
    int b, e;
    group_columns(lower, g, &b, &e);
    const int kb = k * seg_tiles, ke = kb + seg_tiles;
    *begin = b > kb ? b : kb;
    *end = e < ke ? e : ke;
  }
  // The band of group g: block columns [r0, r0 + sub) clipped to the matrix.
  GPUPROBE_SYMV_HD int band_begin(int g) const { return g * sub; }
  GPUPROBE_SYMV_HD int band_end(int g) const { return g * sub + sub < tiles ? g * sub + sub : tiles; }

  // Segments of group g: k in [first_segment, first_segment + segments).
  GPUPROBE_SYMV_HD int first_segment(bool lower, int g) const { return lower ? 0 : g * sub / seg_tiles; }
  GPUPROBE_SYMV_HD int segments(bool lower, int g) const {
    if (lower) {
      const int end = g * sub + sub < tiles ? g * sub + sub : tiles;
      return (end + seg_tiles - 1) / seg_tiles;
    }
    return max_segments - g * sub / seg_tiles;
  }
  // Segments of the groups before g (g < groups: every group before it is whole, (h + 1) sub <= N).
  GPUPROBE_SYMV_HD long long segments_before(bool lower, int g) const {
    const long long G = g;
    if (seg_tiles <= sub) {  // t divides sub: group h has (h + 1) sub / t (lower), S - h sub / t (upper)
      const long long m = sub / seg_tiles;
      return lower ? m * G * (G + 1) / 2 : G * max_segments - m * G * (G - 1) / 2;
    }
    const long long m = seg_tiles / sub;  // t = m sub: ceil((h + 1) / m) (lower), S - floor(h / m) (upper)
    const long long q = G / m, rem = G % m;
    return lower ? m * q * (q + 1) / 2 + rem * (q + 1) : G * max_segments - (m * q * (q - 1) / 2 + rem * q);
  }
  // First element of the row part of unit (g, k).
  GPUPROBE_SYMV_HD long long row_part(bool lower, int g, int k) const {
    return (segments_before(lower, g) + (k - first_segment(lower, g))) * sub * kNB;
  }

  // Slots: lower group g has the full block columns [0, r0), upper group g [r0 + sub, N).
  GPUPROBE_SYMV_HD long long slots_before(bool lower, int g) const {
    const long long G = g;
    return lower ? sub * G * (G - 1) / 2 : G * tiles - sub * G * (G + 1) / 2;
  }
  // First element of the slot of (group g, full block column j).
  GPUPROBE_SYMV_HD long long slot(bool lower, int g, int j) const {
    return (slots_before(lower, g) + (lower ? j : j - (g + 1) * sub)) * kNB;
  }
  // Groups whose full block columns include c: lower (c / sub, groups), upper [0, c / sub).
  GPUPROBE_SYMV_HD int slot_group_begin(bool lower, int c) const { return lower ? c / sub + 1 : 0; }
  GPUPROBE_SYMV_HD int slot_group_end(bool lower, int c) const { return lower ? groups : c / sub; }
};

// t: the next candidate after t (divisors of sub doubling up to sub, then multiples of sub).
inline int next_seg_tiles(int t, int sub) { return t < sub ? 2 * t : t + sub; }

inline Plan make_plan(int n, int sub) {
  Plan p;
  p.n = n;
  p.sub = sub;
  if (n <= 0) return p;
  p.tiles = (n + kNB - 1) / kNB;
  p.groups = (p.tiles + sub - 1) / sub;
  auto fill = [&](int t) {
    p.seg_tiles = t;
    p.max_segments = (p.tiles + t - 1) / t;
    long long units = 0, slots = 0;
    for (bool lower : {true, false}) {  // sized for either triangle: the workspace query has no uplo
      const int last = p.groups - 1;
      units = std::max(units, p.segments_before(lower, last) + p.segments(lower, last));
      slots = std::max(slots, lower ? p.slots_before(true, p.groups)
                                    : p.slots_before(false, last) + std::max(0, p.tiles - p.groups * sub));
    }
    p.slot_elems = slots * kNB;
    p.row_elems = units * sub * kNB;
    return units;
  };
  int t = std::min(kMinSteps, sub);  // 2: a divisor of sub (2 or 4)
  while (fill(t) > kTargetUnits && t < p.tiles) t = next_seg_tiles(t, sub);
  if (n >= kBoundFrom)
    while (static_cast<double>(p.workspace_elems()) > 0.01 * n * static_cast<double>(n) && t < p.tiles)
      fill(t = next_seg_tiles(t, sub));
  return p;
}

}  // namespace gpuprobe::kernels::symv_v3

#undef GPUPROBE_SYMV_HD
