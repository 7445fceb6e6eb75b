// SYMV v10 (SymvImpl::kAwareV10): the plan, i.e. which tile each thread block reads, which cluster
// it belongs to, where its partials go and in which order the block that completes an output block
// sums them. Host and device code share it (sizes on the host, indexing in the kernel), and so does
// the CPU test tests/cpu/symv_v10_plan_test.cpp. Design and measurements: docs/perf/symv.md (v10).
//
// Geometry. 64 x 64 tiles as in v1/v3; N = ceil(n / 64) block rows. One thread block reads one stored
// tile (i, j). The stored tiles of block row i are cut into *segments* of C consecutive block
// columns, and the C blocks of a segment form one thread-block cluster: they add their row sums
// (A_ij x_j, all for y_i) in distributed shared memory, so a segment leaves one row part instead of
// C. Segments start at the row's first stored tile (lower: block column 0; upper: the diagonal i),
// so block row i has ceil(stored / C) of them either way (lower i + 1 stored tiles, upper N - i) and
// the two triangles need the same workspace (v3 anchored upper segments at absolute columns so that
// neighbouring units streamed the same columns from DRAM; v10 is for L2-resident sizes):
//   segment s of block row i = block columns first(i) + [s C, s C + C), first(i) = lower ? 0 : i.
// A segment's blocks past the stored range (j > i lower, j >= N upper) read nothing and add zero.
// Partials (after the arrival counters in the workspace):
//   row parts: one kNB vector per live segment, dense in row-major order of (i, s);
//   slots: one kNB vector per stored off-diagonal tile {hi, lo} (hi > lo): its column dots, the share
//          of y_lo (lower: tile (hi, lo) gives A^T x_hi; upper: tile (lo, hi) gives A^T x_lo, for y_hi).
// Output block c (y rows [64 c, 64 c + 64)) has terms(c) partials: the row parts of block row c's live
// segments (in segment order), then the slots of the stored tiles in block column c (lower: tiles
// (r, c), r = c + 1 ... N - 1; upper: tiles (r, c), r = 0 ... c - 1, i.e. slots {c, r}), summed in
// that fixed order: the result does not depend on which block arrives last.
#pragma once

#if defined(__CUDACC__)
#define GPUPROBE_SYMV_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_SYMV_HD inline
#endif

namespace gpuprobe::kernels::symv_v10 {

constexpr int kNB = 64;          // tile edge
constexpr int kMaxCluster = 8;   // portable cluster size limit

struct Plan {
  int n = 0;
  int tiles = 0;     // N
  int cluster = 1;   // C: blocks (block columns) per segment, a power of two <= kMaxCluster
  int cluster_log2 = 0;

  // Stored tiles of block row i and its segments.
  GPUPROBE_SYMV_HD int row_tiles(bool lower, int i) const { return lower ? i + 1 : tiles - i; }
  GPUPROBE_SYMV_HD int seg_count(bool lower, int i) const { return (row_tiles(lower, i) + cluster - 1) >> cluster_log2; }
  // Block column of rank r's tile in segment s of block row i (stored iff < first + row_tiles).
  GPUPROBE_SYMV_HD int first_column(bool lower, int i) const { return lower ? 0 : i; }
  GPUPROBE_SYMV_HD int column(bool lower, int i, int s, int r) const { return first_column(lower, i) + s * cluster + r; }
  GPUPROBE_SYMV_HD bool stored(bool lower, int i, int j) const { return lower ? j <= i : j < tiles; }
  // L(m) = sum over r < m of (floor(r / C) + 1) = m + C q (q - 1) / 2 + rem q, q = m / C, rem = m % C:
  // the segments of rows with 1 ... m stored tiles.
  GPUPROBE_SYMV_HD long long rows_segments(int m) const {
    const long long q = m >> cluster_log2, rem = m & (cluster - 1);  // C a power of two: no division
    return m + cluster * q * (q - 1) / 2 + rem * q;
  }
  // Segments of the block rows before i (0 <= i <= N): lower L(i); upper L(N) - L(N - i) (row r has
  // N - r stored tiles).
  GPUPROBE_SYMV_HD long long segments_before(bool lower, int i) const {
    return lower ? rows_segments(i) : rows_segments(tiles) - rows_segments(tiles - i);
  }
  GPUPROBE_SYMV_HD long long live_segments() const { return rows_segments(tiles); }  // either triangle
  // The segment with index k (row-major order, k < live_segments()): its block row and index in it.
  GPUPROBE_SYMV_HD void segment_of(bool lower, long long k, int* row, int* seg) const {
    int lo = 0, hi = tiles - 1;  // the last i with segments_before(i) <= k
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (segments_before(lower, mid) <= k) lo = mid;
      else hi = mid - 1;
    }
    *row = lo;
    *seg = static_cast<int>(k - segments_before(lower, lo));
  }

  // Workspace: the arrival counters (8 bytes per output block, first), then the partials.
  GPUPROBE_SYMV_HD long long counter_bytes() const { return (static_cast<long long>(tiles) * 8 + 15) / 16 * 16; }
  GPUPROBE_SYMV_HD long long row_elems() const { return live_segments() * kNB; }
  GPUPROBE_SYMV_HD long long slot_elems() const { return static_cast<long long>(tiles) * (tiles - 1) / 2 * kNB; }
  GPUPROBE_SYMV_HD long long workspace_bytes(long long elem_bytes) const {
    return tiles > 0 ? counter_bytes() + (row_elems() + slot_elems()) * elem_bytes : 0;
  }
  // Element offsets in the partials (after the counters): the row parts, then the slots.
  GPUPROBE_SYMV_HD long long row_part(bool lower, int i, int s) const {
    return (segments_before(lower, i) + s) * kNB;
  }
  GPUPROBE_SYMV_HD long long slot(int hi, int lo) const {
    return row_elems() + (static_cast<long long>(hi) * (hi - 1) / 2 + lo) * kNB;
  }
  // Partials that output block c sums (row parts, then slots) and so arrivals its counter expects.
  GPUPROBE_SYMV_HD int slot_terms(bool lower, int c) const { return lower ? tiles - 1 - c : c; }
  GPUPROBE_SYMV_HD int terms(bool lower, int c) const { return seg_count(lower, c) + slot_terms(lower, c); }
  // Element offset of term t (< terms(c)) of output block c.
  GPUPROBE_SYMV_HD long long term(bool lower, int c, int t) const {
    const int segs = seg_count(lower, c);
    if (t < segs) return row_part(lower, c, t);
    const int r = lower ? c + 1 + (t - segs) : t - segs;  // block row of the slot's tile in column c
    return lower ? slot(r, c) : slot(c, r);
  }
};

// C: the smallest power of two covering a block row's tiles, at most kMaxCluster (8 at n > 448).
inline Plan make_plan(int n) {
  Plan p;
  p.n = n;
  if (n <= 0) return p;
  p.tiles = (n + kNB - 1) / kNB;
  while (p.cluster < kMaxCluster && p.cluster < p.tiles) {
    p.cluster *= 2;
    ++p.cluster_log2;
  }
  return p;
}

}  // namespace gpuprobe::kernels::symv_v10

#undef GPUPROBE_SYMV_HD
