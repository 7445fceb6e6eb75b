// SYMV kernels: storage-aware ("algorithm 2"), storage-oblivious ("algorithm 1") and the atomic
// variant of the aware one; the plan (tiles, segments, workspace) and the argument checks.
// Design and measurements: docs/perf/symv.md.
//
// Geometry. The n x n matrix is cut into kNB x kNB tiles; block row r holds rows [r kNB, r kNB + kNB).
// A thread block (a "unit") handles one block row r and a segment of at most `seg_tiles` consecutive
// tiles of it. Its 256 threads are kRowLanes x kColGroups: a row lane owns kV = 16 / sizeof(T)
// consecutive rows of the tile (one 16-byte load per column), a column group owns kColsPerThread
// columns of the tile (g, g + kColGroups, ...). So each thread issues kColsPerThread independent
// 16-byte loads per tile, and a warp reads whole 256-byte column pieces.
//
// Per stored off-diagonal tile (r, j) a thread accumulates, for its kV rows, the row sums
// A_rj x_j (kept in registers over the segment) and, for its columns, the column dots A_rj^T x_r
// (reduced over the row lanes at once and written to the tile's slot of the workspace). The
// diagonal tile is read like the others and its unstored half masked out. The oblivious variant
// reads the mirror tiles (j, r) of the unstored half and uses only their column dots.
//
// v3 (SymvImpl::kAwareV3, below the v1 kernels): units of kSub block rows x a segment of block columns
// anchored at absolute column positions (symv_v3_plan.hpp), and its own reduction kernel.
#include <algorithm>
#include <cstdint>

#include "gpuprobe/kernels/symv.hpp"
#include "symv_gemv_common.cuh"
#include "symv_v3_plan.hpp"

namespace gpuprobe::kernels {
namespace {

using blas2::Strided;
using blas2::Vec16;

constexpr int kNB = 64;        // tile edge: the granularity of the workspace partials
static_assert(kNB == symv_v3::kNB, "v1 and v3 share the tile edge");
constexpr int kThreads = 256;  // per unit

template <class T>
struct Shape {
  static constexpr int kV = Vec16<T>::kCount;               // rows per lane (one 16-byte load)
  static constexpr int kRowLanes = kNB / kV;                // 16 (float), 32 (double)
  static constexpr int kColGroups = kThreads / kRowLanes;   // 16, 8
  static constexpr int kColsPerThread = kNB / kColGroups;   // 4, 8 loads in flight per tile
  static_assert(kRowLanes * kV == kNB, "row lanes cover the tile's rows");
  static_assert(kRowLanes * kColGroups == kThreads, "the block is row lanes x column groups");
  static_assert(kColGroups * kColsPerThread == kNB, "column groups cover the tile's columns");
  static_assert(32 % kRowLanes == 0, "a column's row lanes lie inside one warp (shuffle reduction)");
  static_assert(kColsPerThread <= kRowLanes, "transposed reduction: one result per lane group");
};

enum class Algo { kAware, kOblivious, kAwareAtomic };

// Units and workspace layout, the same on host (sizes) and device (indexing).
struct Plan {
  int n = 0;
  int tiles = 0;         // N = ceil(n / kNB) block rows (and columns)
  int seg_tiles = 1;     // tiles per unit (segment of a block row)
  int max_segments = 0;  // segments of the longest block row
  long long slot_elems = 0;  // column partials: one kNB slot per stored off-diagonal tile (aware)
  long long row_elems = 0;   // row partials: one kNB slot per (block row, segment)

  long long workspace_elems() const { return slot_elems + row_elems; }
};

// Enough units to fill the GPU several times over (short tails), at least 4 tiles each so the
// per-unit prologue and epilogue stay small; fixed, not read off the device, so the workspace size
// depends on n alone. Then, for n >= kBoundFrom, segments are lengthened until the workspace is
// within 1 % of the n x n matrix.
constexpr long long kTargetUnits = 4096;
constexpr int kMinSegTiles = 4;
constexpr int kBoundFrom = 1024;

Plan make_plan(int n, Algo algo) {
  Plan p;
  p.n = n;
  if (n <= 0) return p;
  const long long N = (n + kNB - 1) / kNB;
  p.tiles = static_cast<int>(N);
  const bool aware = algo != Algo::kOblivious;
  const long long total_tiles = aware ? N * (N + 1) / 2 : N * N;
  long long seg = std::max<long long>(kMinSegTiles, (total_tiles + kTargetUnits - 1) / kTargetUnits);
  seg = std::min<long long>(seg, N);
  auto fill = [&](long long s) {
    p.seg_tiles = static_cast<int>(s);
    p.max_segments = static_cast<int>((N + s - 1) / s);
    p.slot_elems = algo == Algo::kAware ? N * (N - 1) / 2 * kNB : 0;
    p.row_elems = algo == Algo::kAwareAtomic ? 0 : N * p.max_segments * kNB;
  };
  fill(seg);
  if (n >= kBoundFrom)
    while (static_cast<double>(p.workspace_elems()) > 0.01 * n * static_cast<double>(n) && seg < N) fill(++seg);
  return p;
}

Algo algo_of(SymvImpl impl) {
  switch (impl) {
    case SymvImpl::kOblivious: return Algo::kOblivious;
    case SymvImpl::kAwareAtomic: return Algo::kAwareAtomic;
    default: return Algo::kAware;
  }
}

// Slot of the stored off-diagonal tile whose block indices are {hi, lo}, hi > lo (triangular order).
__device__ __forceinline__ long long slot_of(int hi, int lo) {
  return (static_cast<long long>(hi) * (hi - 1) / 2 + lo) * kNB;
}

// Tiles [first, first + count) of block row r that its units walk.
template <bool kLower, Algo kAlgo>
__device__ __forceinline__ void row_tiles(int r, int N, int& first, int& count) {
  if constexpr (kAlgo == Algo::kOblivious) {
    first = 0;
    count = N;
  } else {
    first = kLower ? 0 : r;
    count = kLower ? r + 1 : N - r;
  }
}

template <class T, bool kLower, Algo kAlgo, bool kVector>
__global__ void __launch_bounds__(kThreads) symv_tiles_kernel(int n, const T* __restrict__ A, long long lda,
                                                              Strided<const T> x, Plan plan, T* __restrict__ slots,
                                                              T* __restrict__ row_parts, T alpha, Strided<T> y) {
  using S = Shape<T>;
  constexpr int kV = S::kV, kCG = S::kColGroups, kCPT = S::kColsPerThread, kRL = S::kRowLanes;
  constexpr bool kAware = kAlgo != Algo::kOblivious;

  const int r = blockIdx.y, seg = blockIdx.x;
  int first, count;
  row_tiles<kLower, kAlgo>(r, plan.tiles, first, count);
  const int j_begin = first + seg * plan.seg_tiles;
  const int j_end = min(first + count, j_begin + plan.seg_tiles);
  if (j_begin >= j_end) return;  // uniform over the block: the grid is rectangular, rows are not
  blas2::allow_dependent_launch();

  const int lane = threadIdx.x % kRL;  // row lane
  const int g = threadIdx.x / kRL;     // column group
  const int row_in_tile = lane * kV;
  const int my_row = r * kNB + row_in_tile;  // first of this thread's kV rows of block row r

  T xr[kV];  // x at this thread's rows: the column dots of the tiles of block row r use it
#pragma unroll
  for (int k = 0; k < kV; ++k) xr[k] = my_row + k < n ? blas2::load_x(x, my_row + k) : T(0);

  T row_acc[kV] = {};    // (A x) for this thread's rows, over the segment
  T col_acc[kCPT] = {};  // (A^T x) for rows r kNB + g + u kCG: diagonal tile, mirror tiles

  for (int j = j_begin; j < j_end; ++j) {
    const bool mirror = kAlgo == Algo::kOblivious && (kLower ? j > r : j < r);
    const int tile_row = mirror ? j : r, tile_col = mirror ? r : j;  // the stored tile read
    const int row0 = tile_row * kNB + row_in_tile;
    const int rows_valid = n - row0;
    const int col0 = tile_col * kNB + g;
    const T* p = A + static_cast<long long>(col0) * lda + row0;

    T a[kCPT][kV];
#pragma unroll
    for (int u = 0; u < kCPT; ++u)
      blas2::load_rows<T, kVector>(p + static_cast<long long>(u) * kCG * lda, col0 + u * kCG < n ? rows_valid : 0,
                                   a[u]);

    if (mirror) {  // tile (j, r) stands for (r, j)^T: its column dots are block row r's sums
      T xs[kV];
#pragma unroll
      for (int k = 0; k < kV; ++k) xs[k] = row0 + k < n ? blas2::load_x(x, row0 + k) : T(0);
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) col_acc[u] += a[u][k] * xs[k];
      continue;
    }

    T xc[kCPT];
#pragma unroll
    for (int u = 0; u < kCPT; ++u) xc[u] = col0 + u * kCG < n ? blas2::load_x(x, col0 + u * kCG) : T(0);

    if (j == r) {  // diagonal tile: the stored half (diagonal included) for row sums, strict half for dots
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) {
          const int row = row_in_tile + k, col = g + u * kCG;
          const bool stored = kLower ? row >= col : row <= col;
          const T v = stored ? a[u][k] : T(0);
          row_acc[k] += v * xc[u];
          col_acc[u] += (row != col ? v : T(0)) * xr[k];
        }
      continue;
    }

#pragma unroll
    for (int u = 0; u < kCPT; ++u)
#pragma unroll
      for (int k = 0; k < kV; ++k) row_acc[k] += a[u][k] * xc[u];

    if constexpr (kAware) {  // column dots of an off-diagonal stored tile: partial of y_j
      T dot[kCPT];
#pragma unroll
      for (int u = 0; u < kCPT; ++u) {
        dot[u] = a[u][0] * xr[0];
#pragma unroll
        for (int k = 1; k < kV; ++k) dot[u] += a[u][k] * xr[k];
      }
      const T sum = blas2::reduce_transposed<kCPT, kRL>(dot, lane);
      constexpr int kLanesPerValue = kRL / kCPT;
      if (lane % kLanesPerValue == 0) {
        const int col = g + (lane / kLanesPerValue) * kCG;  // column inside tile j
        if constexpr (kAlgo == Algo::kAwareAtomic) {
          if (j * kNB + col < n) atomicAdd(&y[j * kNB + col], alpha * sum);
        } else {
          slots[slot_of(max(r, j), min(r, j)) + col] = sum;
        }
      }
    }
  }

  // Epilogue: block row r's partial = row sums over the column groups + column dots over the lanes.
  __shared__ T row_part[kCG][kNB];
  __shared__ T col_part[kNB];
#pragma unroll
  for (int k = 0; k < kV; ++k) row_part[g][row_in_tile + k] = row_acc[k];
  const T dot = blas2::reduce_transposed<kCPT, kRL>(col_acc, lane);
  constexpr int kLanesPerValue = kRL / kCPT;
  if (lane % kLanesPerValue == 0) col_part[g + (lane / kLanesPerValue) * kCG] = dot;
  __syncthreads();
  if (threadIdx.x < kNB) {
    const int t = threadIdx.x;
    T sum = col_part[t];
#pragma unroll
    for (int q = 0; q < kCG; ++q) sum += row_part[q][t];
    const int row = r * kNB + t;
    if constexpr (kAlgo == Algo::kAwareAtomic) {
      if (row < n) atomicAdd(&y[row], alpha * sum);
    } else {
      row_parts[(static_cast<long long>(r) * plan.max_segments + seg) * kNB + t] = sum;
    }
  }
}

// y_c = alpha (sum of the partials of column block c) + beta y_c, summed in a fixed order:
// the row partials of block row c's segments, then the column partials of the stored tiles of
// block column c (aware). 32 elements x 8 groups of terms per block; warps read 128-byte rows.
constexpr int kReduceElems = 32;
constexpr int kReduceGroups = kThreads / kReduceElems;
static_assert(kNB % kReduceElems == 0, "reduction blocks tile a column block");

template <class T, bool kLower, Algo kAlgo>
__global__ void __launch_bounds__(kThreads) symv_reduce_kernel(Plan plan, const T* __restrict__ slots,
                                                               const T* __restrict__ row_parts, T alpha, T beta,
                                                               Strided<T> y) {
  const int cb = blockIdx.x;
  const int e = blockIdx.y * kReduceElems + threadIdx.x % kReduceElems;  // element inside column block
  const int q = threadIdx.x / kReduceElems;
  blas2::grid_dependency_wait();  // launched early (PDL): the partials are complete only after this
  int first, count;
  row_tiles<kLower, kAlgo>(cb, plan.tiles, first, count);
  const int segments = (count + plan.seg_tiles - 1) / plan.seg_tiles;
  const int slot_terms = kAlgo == Algo::kAware ? (kLower ? plan.tiles - 1 - cb : cb) : 0;
  T sum = T(0);
  for (int t = q; t < segments + slot_terms; t += kReduceGroups) {
    long long at;
    if (t < segments) {
      at = (static_cast<long long>(cb) * plan.max_segments + t) * kNB;
    } else {
      const int k = t - segments;  // lower: tiles (cb + 1 + k, cb); upper: tiles (k, cb) = slot (cb, k)
      at = kLower ? slot_of(cb + 1 + k, cb) : slot_of(cb, k);
    }
    sum += (t < segments ? row_parts : slots)[at + e];
  }
  const int c = cb * kNB + e;
  blas2::sum_groups_into_y<kReduceGroups, kReduceElems>(sum, q, c, c < plan.n, alpha, beta, y);
}

template <class T, bool kLower, Algo kAlgo, bool kVector>
void launch_tiles(const Plan& plan, const T* A, int lda, Strided<const T> x, T* slots, T* row_parts, T alpha,
                  Strided<T> y, cudaStream_t stream) {
  const dim3 grid(plan.max_segments, plan.tiles);
  symv_tiles_kernel<T, kLower, kAlgo, kVector>
      <<<grid, kThreads, 0, stream>>>(plan.n, A, lda, x, plan, slots, row_parts, alpha, y);
}

template <class T, bool kLower, Algo kAlgo>
void launch_all(const Plan& plan, bool vector, const T* A, int lda, Strided<const T> x, T* ws, T alpha, T beta,
                Strided<T> y, cudaStream_t stream) {
  T* slots = ws;
  T* row_parts = ws ? ws + plan.slot_elems : nullptr;
  if constexpr (kAlgo == Algo::kAwareAtomic) blas2::launch_scale(plan.n, beta, y, stream);
  if (vector)
    launch_tiles<T, kLower, kAlgo, true>(plan, A, lda, x, slots, row_parts, alpha, y, stream);
  else
    launch_tiles<T, kLower, kAlgo, false>(plan, A, lda, x, slots, row_parts, alpha, y, stream);
  if constexpr (kAlgo != Algo::kAwareAtomic) {
    const dim3 grid(plan.tiles, kNB / kReduceElems);
    blas2::launch_dependent(symv_reduce_kernel<T, kLower, kAlgo>, grid, dim3(kThreads), stream, plan,
                            static_cast<const T*>(slots), static_cast<const T*>(row_parts), alpha, beta, y);
  }
}

// ---- v3 (SymvImpl::kAwareV3, kAwareV3Stream, kAwareV5): groups of kSub block rows, segments anchored at
// absolute columns ----
// Plan and workspace layout: symv_v3_plan.hpp. Per step (one block column j of the unit's segment)
// each thread issues kSub x kColsPerThread 16-byte loads (16 at a time: 256 bytes in flight), the
// same lane/column-group mapping as v1 inside each of the kSub stacked tiles, so a warp reads kSub
// adjacent pieces of each of its columns: 1 KB contiguous per column. The column dots of the kSub
// tiles are summed in registers and reduced over the row lanes once per step (v1: once per tile).
enum class V3Step { kInterior, kEdge, kBand };  // kInterior: every row and column inside the matrix, no masking

// Sub-rows (block rows of the group) whose loads are issued together: 16 16-byte loads per thread
// (float: 4 x 4 columns; double: 2 x 8). A group of kSub > load_rows_per_batch() block rows is read
// in several batches per step, its column dots summed over all of them before the one reduction
// over the row lanes (v5: double with kSub = 4, half v3's slots).
template <class T>
constexpr int load_rows_per_batch() {
  return sizeof(T) == 4 ? 4 : 2;
}

template <class T, int kSub, bool kLower, bool kVector, bool kStream, V3Step kKind>
__device__ __forceinline__ void v3_step(int n, const T* __restrict__ A, long long lda, const Strided<const T>& x,
                                        const symv_v3::Plan& plan, int g, int j, int lane, int grp,
                                        const T (&xs)[kSub * kNB], T (&row_acc)[kSub][Vec16<T>::kCount],
                                        T (&col_band)[kSub][kNB], T* __restrict__ slots) {
  using S = Shape<T>;
  constexpr int kV = S::kV, kCG = S::kColGroups, kCPT = S::kColsPerThread, kRL = S::kRowLanes;
  constexpr int kBatch = load_rows_per_batch<T>();
  static_assert(kSub % kBatch == 0, "a group is read in whole load batches");
  constexpr bool kBand = kKind == V3Step::kBand;
  const int r0 = g * kSub;
  [[maybe_unused]] const int b = j - r0;  // kBand: the band column's index in the group (diagonal tile (r0 + b, j))
  const int row_in_tile = lane * kV;
  const int col0 = j * kNB + grp;
  const T* p = A + static_cast<long long>(col0) * lda + r0 * kNB + row_in_tile;

  T xc[kCPT];
  T dot[kCPT];
#pragma unroll
  for (int i0 = 0; i0 < kSub; i0 += kBatch) {
    T a[kBatch][kCPT][kV];
    if constexpr (kKind == V3Step::kInterior) {  // kBatch x kCPT loads, no predicate
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int ii = 0; ii < kBatch; ++ii)
          blas2::load_rows<T, kVector, kStream>(p + u * kCG * lda + (i0 + ii) * kNB, kV, a[ii][u]);
    } else {
#pragma unroll
      for (int ii = 0; ii < kBatch; ++ii) {
        const int i = i0 + ii;
        const int rows_valid = n - ((r0 + i) * kNB + row_in_tile);  // <= 0 past the matrix (last group): nothing read
#pragma unroll
        for (int u = 0; u < kCPT; ++u) {
          bool load = col0 + u * kCG < n;
          if constexpr (kBand) {  // skip unstored tiles and, on the diagonal, vectors wholly in the unstored half
            const int c = grp + u * kCG;
            const bool some = kLower ? row_in_tile + kV - 1 >= c : row_in_tile <= c;
            load = load && (kLower ? (i > b || (i == b && some)) : (i < b || (i == b && some)));
          }
          blas2::load_rows<T, kVector, kStream>(p + u * kCG * lda + i * kNB, load ? rows_valid : 0, a[ii][u]);
        }
      }
    }
    if (i0 == 0)  // x of the block column's columns: with the first batch's loads in flight
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
        xc[u] = kKind == V3Step::kInterior || col0 + u * kCG < n ? blas2::load_x(x, col0 + u * kCG) : T(0);

    if constexpr (kBand) {  // diagonal tile: keep its stored half (selection: NaN in the other half never enters)
#pragma unroll
      for (int ii = 0; ii < kBatch; ++ii)
        if (i0 + ii == b)
#pragma unroll
          for (int u = 0; u < kCPT; ++u)
#pragma unroll
            for (int k = 0; k < kV; ++k) {
              const int row = row_in_tile + k, col = grp + u * kCG;
              if (!(kLower ? row >= col : row <= col)) a[ii][u][k] = T(0);
            }
    }
#pragma unroll
    for (int ii = 0; ii < kBatch; ++ii)
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) row_acc[i0 + ii][k] += a[ii][u][k] * xc[u];
    if constexpr (kBand) {  // the diagonal elements count once, in the row sums
#pragma unroll
      for (int ii = 0; ii < kBatch; ++ii)
        if (i0 + ii == b)
#pragma unroll
          for (int u = 0; u < kCPT; ++u)
#pragma unroll
            for (int k = 0; k < kV; ++k)
              if (row_in_tile + k == grp + u * kCG) a[ii][u][k] = T(0);
    }
#pragma unroll
    for (int ii = 0; ii < kBatch; ++ii) {
      const int i = i0 + ii;
      using V = typename Vec16<T>::type;  // x at this thread's kV rows of block row r0 + i: one 16-byte LDS
      const V xv = *reinterpret_cast<const V*>(&xs[i * kNB + row_in_tile]);
      const T* xr = reinterpret_cast<const T*>(&xv);
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) dot[u] = i == 0 && k == 0 ? a[ii][u][k] * xr[k] : dot[u] + a[ii][u][k] * xr[k];
    }
  }
  const T sum = blas2::reduce_transposed<kCPT, kRL>(dot, lane);
  constexpr int kLanesPerValue = kRL / kCPT;
  if (lane % kLanesPerValue == 0) {
    const int col = grp + (lane / kLanesPerValue) * kCG;  // column inside block column j
    if constexpr (kBand)
      col_band[b][col] = sum;  // y of the unit's own block row r0 + b: folded into its row part
    else
      slots[plan.slot(kLower, g, j) + col] = sum;
  }
}

// kStream: A read with evict-first loads (the triangle is larger than the L2, read once), so that the partials the
// units write stay in the L2 for the reduction kernel. Blocks per SM the register cap is set for: 2 (128 registers),
// but 1 for double with kSub = 4: at 128 registers it spilled 92-240 bytes (row sums of 4 block rows, 2 x 8 16-byte
// loads in flight); with one block of 8 warps per SM it uses 228 registers and no spills, and still has 64 KB of loads
// in flight per SM. H100, same run (docs/perf/symv.md): DSYMV 32768 lower 3036-3039 GB/s against 2913-2919 with the cap
// at 2 blocks, upper 3037-3038 against 2980-2984.
template <class T, int kSub>
constexpr int v3_min_blocks_per_sm() {
  return sizeof(T) == 8 && kSub == 4 ? 1 : 2;
}
template <class T, int kSub, bool kLower, bool kVector, bool kStream>
__global__ void __launch_bounds__(kThreads, v3_min_blocks_per_sm<T, kSub>())
    symv_v3_kernel(int n, const T* __restrict__ A, long long lda, Strided<const T> x, symv_v3::Plan plan,
                   T* __restrict__ slots, T* __restrict__ row_parts) {
  using S = Shape<T>;
  constexpr int kV = S::kV, kCG = S::kColGroups, kRL = S::kRowLanes;
  static_assert(kSub * kNB <= kThreads, "the epilogue writes one row-part element per thread");

  const int g = plan.group_fastest ? blockIdx.x : blockIdx.y, k = plan.group_fastest ? blockIdx.y : blockIdx.x;
  int j_begin, j_end;
  plan.unit_columns(kLower, g, k, &j_begin, &j_end);
  if (j_begin >= j_end) return;  // uniform over the block: the grid is rectangular, the groups are not
  blas2::allow_dependent_launch();

  const int lane = threadIdx.x % kRL;  // row lane
  const int grp = threadIdx.x / kRL;   // column group
  const int r0 = g * kSub;
  const int row_in_tile = lane * kV;

  // x at the unit's kSub block rows (the column dots use it), in shared memory: registers go to the
  // kSub x kColsPerThread vectors in flight.
  __shared__ __align__(16) T xs[kSub * kNB];
  for (int e = threadIdx.x; e < kSub * kNB; e += kThreads) xs[e] = r0 * kNB + e < n ? blas2::load_x(x, r0 * kNB + e) : T(0);
  __syncthreads();
  T row_acc[kSub][kV] = {};
  __shared__ T col_band[kSub][kNB];  // column dots of the band's block columns (written before read, no init)

  // lower: full block columns, then the band; upper: the band, then full ones (increasing j either way).
  // Full block columns are interior (no masking) when all kSub block rows and the column block lie
  // inside the matrix: all but the last group's and the last block column's.
  const int band_b = max(j_begin, plan.band_begin(g)), band_e = min(j_end, plan.band_end(g));
  const int full_b = kLower ? j_begin : max(j_begin, plan.band_end(g));
  const int full_e = kLower ? min(j_end, plan.band_begin(g)) : j_end;
  const int interior_e = (r0 + kSub) * kNB <= n ? min(full_e, n / kNB) : full_b;
  auto full_columns = [&] {
    for (int j = full_b; j < interior_e; ++j)
      v3_step<T, kSub, kLower, kVector, kStream, V3Step::kInterior>(n, A, lda, x, plan, g, j, lane, grp, xs, row_acc,
                                                                    col_band, slots);
    for (int j = max(full_b, interior_e); j < full_e; ++j)
      v3_step<T, kSub, kLower, kVector, kStream, V3Step::kEdge>(n, A, lda, x, plan, g, j, lane, grp, xs, row_acc,
                                                                col_band, slots);
  };
  if constexpr (kLower) full_columns();
  for (int j = band_b; j < band_e; ++j)
    v3_step<T, kSub, kLower, kVector, kStream, V3Step::kBand>(n, A, lda, x, plan, g, j, lane, grp, xs, row_acc,
                                                              col_band, slots);
  if constexpr (!kLower) full_columns();

  // Epilogue: the row part = row sums over the column groups (in group order) + the band's column dots.
  __shared__ T row_part[kCG][kSub * kNB];
#pragma unroll
  for (int i = 0; i < kSub; ++i)
#pragma unroll
    for (int q = 0; q < kV; ++q) row_part[grp][i * kNB + row_in_tile + q] = row_acc[i][q];
  __syncthreads();
  const int e = threadIdx.x;
  if (e < kSub * kNB) {
    T sum = row_part[0][e];
#pragma unroll
    for (int q = 1; q < kCG; ++q) sum += row_part[q][e];
    const int i = e / kNB;
    if (r0 + i >= band_b && r0 + i < band_e) sum += col_band[i][e % kNB];
    row_parts[plan.row_part(kLower, g, k) + e] = sum;
  }
}

// y_c = alpha (partials of column block c) + beta y_c: the row parts of c's group (its segments in
// order), then the slots (h, c) of the other groups (h in order). 8 groups of terms x 32 elements per
// block, each thread with kReduceAcc independent sums (term u of the thread into sum u % kReduceAcc),
// so kReduceAcc loads are in flight; the association is fixed, hence bit-identical repeats.
constexpr int kReduceAcc = 4;

template <class T, bool kLower>
__global__ void __launch_bounds__(kThreads) symv_v3_reduce_kernel(symv_v3::Plan plan, const T* __restrict__ slots,
                                                                  const T* __restrict__ row_parts, T alpha, T beta,
                                                                  Strided<T> y) {
  const int cb = blockIdx.x;
  const int e = blockIdx.y * kReduceElems + threadIdx.x % kReduceElems;  // element inside column block
  const int q = threadIdx.x / kReduceElems;
  blas2::grid_dependency_wait();  // launched early (PDL): the partials are complete only after this
  const int gc = cb / plan.sub;
  const int segments = plan.segments(kLower, gc);
  const long long row_base = plan.row_part(kLower, gc, plan.first_segment(kLower, gc)) + (cb - gc * plan.sub) * kNB + e;
  const int h0 = plan.slot_group_begin(kLower, cb);
  const int terms = segments + plan.slot_group_end(kLower, cb) - h0;
  T acc[kReduceAcc] = {};
  for (int t0 = q; t0 < terms; t0 += kReduceGroups * kReduceAcc) {
#pragma unroll
    for (int w = 0; w < kReduceAcc; ++w) {
      const int t = t0 + w * kReduceGroups;
      if (t < terms)
        acc[w] += t < segments ? row_parts[row_base + static_cast<long long>(t) * plan.sub * kNB]
                               : slots[plan.slot(kLower, h0 + t - segments, cb) + e];
    }
  }
  T sum = acc[0];
#pragma unroll
  for (int w = 1; w < kReduceAcc; ++w) sum += acc[w];
  const int c = cb * kNB + e;
  blas2::sum_groups_into_y<kReduceGroups, kReduceElems>(sum, q, c, c < plan.n, alpha, beta, y);
}

// Block rows per unit: v3's sub_rows (4 float, 2 double); v5: 4 for both (double in two load
// batches per step), half v3's slots in double.
template <class T>
int v3_sub(SymvImpl impl) {
  return impl == SymvImpl::kAwareV5 ? 4 : symv_v3::sub_rows<T>();
}

template <class T>
symv_v3::Plan v3_plan(int n, SymvImpl impl) {
  symv_v3::Plan plan = symv_v3::make_plan(n, v3_sub<T>(impl));
  plan.group_fastest = impl == SymvImpl::kAwareV6 || impl == SymvImpl::kAwareV5;
  return plan;
}

template <class T, int kSub, bool kLower, bool kStream>
void launch_v3_grid(const symv_v3::Plan& plan, bool vector, const T* A, int lda, Strided<const T> x, T* slots,
                    T* row_parts, cudaStream_t stream) {
  const dim3 grid = plan.group_fastest ? dim3(plan.groups, plan.max_segments) : dim3(plan.max_segments, plan.groups);
  if (vector)
    symv_v3_kernel<T, kSub, kLower, true, kStream>
        <<<grid, kThreads, 0, stream>>>(plan.n, A, lda, x, plan, slots, row_parts);
  else
    symv_v3_kernel<T, kSub, kLower, false, kStream>
        <<<grid, kThreads, 0, stream>>>(plan.n, A, lda, x, plan, slots, row_parts);
}

template <class T, bool kLower, bool kStream>
void launch_v3_main(const symv_v3::Plan& plan, bool vector, const T* A, int lda, Strided<const T> x, T* slots,
                    T* row_parts, cudaStream_t stream) {
  if constexpr (symv_v3::sub_rows<T>() == 4)  // float: v3 and v5 share the geometry
    launch_v3_grid<T, 4, kLower, kStream>(plan, vector, A, lda, x, slots, row_parts, stream);
  else if (plan.sub == 4)
    launch_v3_grid<T, 4, kLower, kStream>(plan, vector, A, lda, x, slots, row_parts, stream);
  else
    launch_v3_grid<T, symv_v3::sub_rows<T>(), kLower, kStream>(plan, vector, A, lda, x, slots, row_parts, stream);
}

template <class T, bool kLower>
void launch_v3(const symv_v3::Plan& plan, bool vector, bool stream_a, const T* A, int lda, Strided<const T> x, T* ws,
               T alpha, T beta, Strided<T> y, cudaStream_t stream) {
  T* slots = ws;
  T* row_parts = ws + plan.slot_elems;
  stream_a ? launch_v3_main<T, kLower, true>(plan, vector, A, lda, x, slots, row_parts, stream)
           : launch_v3_main<T, kLower, false>(plan, vector, A, lda, x, slots, row_parts, stream);
  blas2::launch_dependent(symv_v3_reduce_kernel<T, kLower>, dim3(plan.tiles, kNB / kReduceElems), dim3(kThreads),
                          stream, plan, static_cast<const T*>(slots), static_cast<const T*>(row_parts), alpha, beta,
                          y);
}

bool is_v3(SymvImpl impl) {
  return impl == SymvImpl::kAwareV3 || impl == SymvImpl::kAwareV3Stream || impl == SymvImpl::kAwareV5 ||
         impl == SymvImpl::kAwareV6;
}

}  // namespace

const char* symv_impl_name(SymvImpl impl) {
  switch (impl) {
    case SymvImpl::kAuto: return "auto";
    case SymvImpl::kAware: return "aware";
    case SymvImpl::kOblivious: return "oblivious";
    case SymvImpl::kAwareAtomic: return "aware_atomic";
    case SymvImpl::kAwareV3: return "aware_v3";
    case SymvImpl::kAwareV3Stream: return "aware_v3_stream";
    case SymvImpl::kAwareV5: return "aware_v5";
    case SymvImpl::kAwareV6: return "aware_v6";
  }
  return "unknown";
}

template <class T>
SymvImpl symv_auto_impl(Uplo, int n, SymvImpl impl, long long l2_bytes) {
  if (impl != SymvImpl::kAuto) return impl;
  if (sizeof(T) != 8 || n <= 0) return SymvImpl::kAwareV6;  // float: v5's geometry is v6's
  if (l2_bytes < 0) l2_bytes = blas2::device_l2_bytes();
  const double partials = static_cast<double>(v3_plan<T>(n, SymvImpl::kAwareV6).workspace_elems()) * sizeof(T);
  return l2_bytes > 0 && partials > 0.5 * static_cast<double>(l2_bytes) ? SymvImpl::kAwareV5 : SymvImpl::kAwareV6;
}
template SymvImpl symv_auto_impl<float>(Uplo, int, SymvImpl, long long);
template SymvImpl symv_auto_impl<double>(Uplo, int, SymvImpl, long long);

template <class T>
std::size_t symv_workspace_bytes(int n, SymvImpl impl) {
  if (impl == SymvImpl::kAuto)
    return std::max({symv_workspace_bytes<T>(n, SymvImpl::kAware), symv_workspace_bytes<T>(n, SymvImpl::kAwareV3),
                     symv_workspace_bytes<T>(n, SymvImpl::kAwareV5)});
  const long long elems =
      is_v3(impl) ? v3_plan<T>(n, impl).workspace_elems() : make_plan(n, algo_of(impl)).workspace_elems();
  return static_cast<std::size_t>(elems) * sizeof(T);
}

template <class T>
Status symv_check_args(Uplo uplo, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, SymvImpl impl) {
  if (uplo != Uplo::kLower && uplo != Uplo::kUpper) return Status::kInvalidValue;
  if (impl != SymvImpl::kAuto && impl != SymvImpl::kAware && impl != SymvImpl::kOblivious &&
      impl != SymvImpl::kAwareAtomic && !is_v3(impl))
    return Status::kInvalidValue;
  if (n < 0 || lda < std::max(1, n) || incx == 0 || incy == 0) return Status::kInvalidValue;
  if (n == 0) return Status::kSuccess;  // quick return: nothing is read or written
  // The grid's y dimension holds the block rows.
  if ((n + kNB - 1) / kNB > 65535) return Status::kInvalidValue;
  if (!A || !x || !y) return Status::kNullPointer;
  const std::size_t needed = symv_workspace_bytes<T>(n, impl);
  if (workspace_bytes < needed) return Status::kWorkspaceTooSmall;
  if (needed > 0 && !workspace) return Status::kNullPointer;
  return Status::kSuccess;
}

template <class T>
Status symv(Uplo uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream, SymvImpl impl) {
  const Status st = symv_check_args<T>(uplo, n, A, lda, x, incx, y, incy, workspace, workspace_bytes, impl);
  if (st != Status::kSuccess || n == 0) return st;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  const Strided<T> ys = blas2::make_strided(y, n, incy);
  if (alpha == T(0)) {  // A and x are not read
    blas2::launch_scale(n, beta, ys, stream);
    return blas2::launch_status();
  }
  const Strided<const T> xs = blas2::make_strided(x, n, incx);
  const bool vector = lda % Vec16<T>::kCount == 0 && blas2::aligned16(A);
  T* ws = static_cast<T*>(workspace);
  const bool lower = uplo == Uplo::kLower;
  impl = symv_auto_impl<T>(uplo, n, impl);
  if (is_v3(impl)) {
    const symv_v3::Plan plan = v3_plan<T>(n, impl);
    // kAwareV3Stream, kAwareV5, kAwareV6: evict-first loads when the triangle cannot stay in the L2 anyway
    // (unknown L2: plain loads).
    const long long l2 = impl != SymvImpl::kAwareV3 ? blas2::device_l2_bytes() : 0;
    const bool stream_a = l2 > 0 && 0.5 * n * static_cast<double>(n) * sizeof(T) > static_cast<double>(l2);
    lower ? launch_v3<T, true>(plan, vector, stream_a, A, lda, xs, ws, alpha, beta, ys, stream)
          : launch_v3<T, false>(plan, vector, stream_a, A, lda, xs, ws, alpha, beta, ys, stream);
    return blas2::launch_status();
  }
  const Algo algo = algo_of(impl);
  const Plan plan = make_plan(n, algo);
  switch (algo) {
    case Algo::kAware:
      lower ? launch_all<T, true, Algo::kAware>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream)
            : launch_all<T, false, Algo::kAware>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream);
      break;
    case Algo::kOblivious:
      lower ? launch_all<T, true, Algo::kOblivious>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream)
            : launch_all<T, false, Algo::kOblivious>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream);
      break;
    case Algo::kAwareAtomic:
      lower ? launch_all<T, true, Algo::kAwareAtomic>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream)
            : launch_all<T, false, Algo::kAwareAtomic>(plan, vector, A, lda, xs, ws, alpha, beta, ys, stream);
      break;
  }
  return blas2::launch_status();
}

#define GPUPROBE_SYMV_INSTANTIATE(T)                                                                          \
  template std::size_t symv_workspace_bytes<T>(int, SymvImpl);                                                \
  template Status symv_check_args<T>(Uplo, int, const T*, int, const T*, int, const T*, int, const void*,     \
                                     std::size_t, SymvImpl);                                                  \
  template Status symv<T>(Uplo, int, T, const T*, int, const T*, int, T, T*, int, void*, std::size_t,         \
                          cudaStream_t, SymvImpl);
GPUPROBE_SYMV_INSTANTIATE(float)
GPUPROBE_SYMV_INSTANTIATE(double)
#undef GPUPROBE_SYMV_INSTANTIATE

}  // namespace gpuprobe::kernels
