// Multi-GPU SYMV (symv_mgpu.cu): the plan of one GPU's part, i.e. which 64 x 64 tiles of its local
// columns each unit reads, what is masked, and where the partials go. Host (sizes, launch) and device
// (indexing) share it, and so does tests/cpu/symv_mgpu_plan_test.cpp, which checks on many layouts,
// offsets and sizes that every stored element of the submatrix in the GPU's columns is used by
// exactly one unit, that the masks the kernel applies select exactly those, that the reduction sums
// exactly the partials the units write, and that the workspace fits the layout-wide query.
//
// Geometry of GPU q's part of A(o:o+n, o:o+n):
//  - rows: the global rows [o, o+n), cut into 64-row tiles aligned at global multiples of 64 (so a
//    16-byte vector of a column never straddles two tiles and stays aligned), tile0 = o / 64 first;
//    groups of `sub` consecutive tiles (the units' height); a group's valid rows [row_lo, row_hi) are
//    clipped to [o, o+n) (the first and last group may be partial: "rows clipped");
//  - columns: q's local columns of the global range [o, o+n), the contiguous local range
//    [lc0, lc0 + nl); relative local column lj (0 <= lj < nl) is global column col_global(lj), in
//    increasing order; cut into local tile columns J of 64 (the last may be partial);
//  - a tile (h, J) of the lower triangle holds stored elements iff col_global(64 J) < row_hi(h); it
//    is full (every element stored and none on the diagonal) iff its last column is below row_lo(h).
//    Counting "local columns below row r" gives, for both triangles, the band [band_begin,
//    band_end) of tiles with some but not all elements stored (or a diagonal element); lower: the
//    nonempty tiles are [0, band_end), the full ones [0, band_begin); upper: [band_begin, JT) and
//    [band_end, JT).
//  - units: (group h, segment k), segment k = local tile columns [k t, k t + t) clipped to the
//    group's nonempty tiles; the grid is (groups, segments), group fastest.
//  - partials: each unit's row sums (sub x 64, the column groups summed) go to the row part (h, k);
//    each nonempty tile's column dots (64) to the slot (h, J). Both arrays are dense (indexed by
//    h, k and h, J without compaction: the index is the same closed form on host and device).
//  - the reduction sums, for output e (global row i = o + e), the row parts (h(i), k) of the group's
//    nonempty segments in k order, then, if q owns column i, the slots (h, J(i)) of the groups whose
//    tile is nonempty, in h order: a fixed order (bit-identical repeats).
#pragma once

#include "gpuprobe/kernels/block_cyclic.hpp"

#if defined(__CUDACC__)
#define GPUPROBE_SYMV_MGPU_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_SYMV_MGPU_HD inline
#endif

namespace gpuprobe::kernels::symv_mgpu_plan {

constexpr int kNB = 64;  // tile edge
// Dense units (groups x segments) wanted at most: the stored triangle covers about half of them, so
// about 4608 active units (single-GPU v3's target: several waves on 132 SMs, short tails).
constexpr long long kTargetDenseUnits = 9216;
constexpr int kMinSteps = 2;         // block columns per unit at least (prologue and epilogue amortised)
constexpr int kMaxSegments = 65535;  // the grid's y dimension

GPUPROBE_SYMV_MGPU_HD int imin(int a, int b) { return a < b ? a : b; }
GPUPROBE_SYMV_MGPU_HD int imax(int a, int b) { return a > b ? a : b; }

struct Plan {
  BlockCyclicLayout layout;
  int gpu = 0;
  bool lower = true;
  int sub = 1;  // row tiles per group
  int n = 0, offset = 0;
  int tile0 = 0;      // first global row tile
  int groups = 0;     // ceil(row tiles / sub)
  int lc0 = 0;        // first local column of the submatrix on this GPU
  int nl = 0;         // local columns of the submatrix on this GPU
  int col_tiles = 0;  // JT = ceil(nl / 64)
  int seg_tiles = 1;  // t
  int segments = 0;   // ceil(JT / t)
  long long slot_elems = 0;      // groups JT 64
  long long row_part_elems = 0;  // groups segments sub 64

  // ---- rows ----
  GPUPROBE_SYMV_MGPU_HD int group_row0(int h) const { return (tile0 + h * sub) * kNB; }
  GPUPROBE_SYMV_MGPU_HD int row_lo(int h) const { return imax(offset, group_row0(h)); }
  GPUPROBE_SYMV_MGPU_HD int row_hi(int h) const { return imin(offset + n, group_row0(h) + sub * kNB); }
  GPUPROBE_SYMV_MGPU_HD bool rows_clipped(int h) const {
    return row_lo(h) != group_row0(h) || row_hi(h) != group_row0(h) + sub * kNB;
  }
  // Group of global row i (o <= i < o + n).
  GPUPROBE_SYMV_MGPU_HD int group_of_row(int i) const { return (i / kNB - tile0) / sub; }

  // ---- columns ----
  GPUPROBE_SYMV_MGPU_HD int col_global(int lj) const { return layout.global_col(gpu, lc0 + lj); }
  // Local columns (relative) whose global index is below r, o <= r <= o + n.
  GPUPROBE_SYMV_MGPU_HD int cols_below(int r) const {
    return imin(nl, imax(0, layout.local_cols_before(gpu, r) - lc0));
  }
  // Tiles wholly among the first `count` local columns, and tiles touching them.
  GPUPROBE_SYMV_MGPU_HD int tiles_within(int count) const { return count >= nl ? col_tiles : count / kNB; }
  GPUPROBE_SYMV_MGPU_HD int tiles_touching(int count) const { return (count + kNB - 1) / kNB; }
  GPUPROBE_SYMV_MGPU_HD int band_begin(int h) const { return tiles_within(cols_below(row_lo(h))); }
  GPUPROBE_SYMV_MGPU_HD int band_end(int h) const { return tiles_touching(cols_below(row_hi(h))); }
  // Nonempty tiles of group h: [nonempty_begin, nonempty_end); full ones: [full_begin, full_end).
  GPUPROBE_SYMV_MGPU_HD int nonempty_begin(int h) const { return lower ? 0 : band_begin(h); }
  GPUPROBE_SYMV_MGPU_HD int nonempty_end(int h) const { return lower ? band_end(h) : col_tiles; }
  GPUPROBE_SYMV_MGPU_HD int full_begin(int h) const { return lower ? 0 : band_end(h); }
  GPUPROBE_SYMV_MGPU_HD int full_end(int h) const { return lower ? band_begin(h) : col_tiles; }

  // ---- units ----
  // Tiles [*begin, *end) of unit (h, k); empty when the unit has no work.
  GPUPROBE_SYMV_MGPU_HD void unit_tiles(int h, int k, int* begin, int* end) const {
    *begin = imax(nonempty_begin(h), k * seg_tiles);
    *end = imin(nonempty_end(h), k * seg_tiles + seg_tiles);
  }
  // Segments of group h with work: [first_segment, end_segment).
  GPUPROBE_SYMV_MGPU_HD int first_segment(int h) const { return nonempty_begin(h) / seg_tiles; }
  GPUPROBE_SYMV_MGPU_HD int end_segment(int h) const {
    const int b = nonempty_begin(h), e = nonempty_end(h);
    return b < e ? (e - 1) / seg_tiles + 1 : b / seg_tiles;
  }

  // ---- partials ----
  GPUPROBE_SYMV_MGPU_HD long long row_part(int h, int k) const {
    return (static_cast<long long>(h) * segments + k) * sub * kNB;
  }
  GPUPROBE_SYMV_MGPU_HD long long slot(int h, int J) const {
    return (static_cast<long long>(h) * col_tiles + J) * kNB;
  }
  // Groups whose tile of column tile J is nonempty: [slot_group_begin, slot_group_end).
  GPUPROBE_SYMV_MGPU_HD int slot_group_begin(int J) const { return lower ? group_of_row(col_global(J * kNB)) : 0; }
  GPUPROBE_SYMV_MGPU_HD int slot_group_end(int J) const {
    return lower ? groups : group_of_row(col_global(imin(nl, J * kNB + kNB) - 1)) + 1;
  }
};

// The plan of GPU `gpu` for A(offset:offset+n, offset:offset+n), n >= 1, of the square `layout`.
inline Plan make_plan(const BlockCyclicLayout& layout, int gpu, bool lower, int sub, int n, int offset) {
  Plan p;
  p.layout = layout;
  p.gpu = gpu;
  p.lower = lower;
  p.sub = sub;
  p.n = n;
  p.offset = offset;
  if (n <= 0) return p;
  p.tile0 = offset / kNB;
  const int row_tiles = (offset + n + kNB - 1) / kNB - p.tile0;
  p.groups = (row_tiles + sub - 1) / sub;
  p.lc0 = layout.local_cols_before(gpu, offset);
  p.nl = layout.local_cols_before(gpu, offset + n) - p.lc0;
  p.col_tiles = (p.nl + kNB - 1) / kNB;
  p.slot_elems = static_cast<long long>(p.groups) * p.col_tiles * kNB;
  if (p.col_tiles == 0) return p;  // no local column: no unit, the partial is zero
  const long long JT = p.col_tiles, G = p.groups;
  // At most s_max segments per group (dense units <= the target, or one segment when the groups
  // alone exceed it); t = ceil(JT / s_max) gives ceil(JT / t) <= s_max; at least kMinSteps tiles.
  long long s_max = kTargetDenseUnits / G;
  if (s_max > kMaxSegments) s_max = kMaxSegments;
  if (s_max < 1) s_max = 1;
  long long t = (JT + s_max - 1) / s_max;
  if (t < kMinSteps) t = kMinSteps;
  if (t > JT) t = JT;
  p.seg_tiles = static_cast<int>(t);
  p.segments = static_cast<int>((JT + t - 1) / t);
  p.row_part_elems = G * p.segments * sub * kNB;
  return p;
}

// Layout-wide bounds of a plan's arrays (any n, offset with offset + n <= layout.cols, any GPU):
// groups <= ceil(ceil(N / 64) / sub), JT <= ceil(max local columns / 64); dense units <= both
// groups ceil(JT / 2) (t >= 2, or JT == 1) and max(kTargetDenseUnits, groups) (t grows until the
// target is met or t = JT, one segment).
struct Bounds {
  long long groups = 0, col_tiles = 0, slot_elems = 0, row_part_elems = 0, local_cols = 0;
};
inline Bounds plan_bounds(const BlockCyclicLayout& layout, int sub) {
  Bounds b;
  const long long N = layout.cols;
  if (N <= 0) return b;
  b.groups = ((N + kNB - 1) / kNB + sub - 1) / sub;
  for (int q = 0; q < layout.gpus; ++q)
    if (layout.local_cols(q) > b.local_cols) b.local_cols = layout.local_cols(q);
  b.col_tiles = (b.local_cols + kNB - 1) / kNB;
  b.slot_elems = b.groups * b.col_tiles * kNB;
  const long long by_segments = b.groups * ((b.col_tiles + 1) / 2);
  const long long by_target = b.groups > kTargetDenseUnits ? b.groups : kTargetDenseUnits;
  b.row_part_elems = (by_segments < by_target ? by_segments : by_target) * sub * kNB;
  return b;
}

}  // namespace gpuprobe::kernels::symv_mgpu_plan

#undef GPUPROBE_SYMV_MGPU_HD
