// SYMV with units of one block row ("v1", docs/perf/symv.md): storage-aware ("algorithm 2" of
// Abdelfattah, Keyes & Ltaief), storage-oblivious ("algorithm 1") and the aware kernel with atomic
// partials. The product runs the oblivious and the atomic variants (SymvImpl::kOblivious,
// kAwareAtomic: the report's baselines); the deterministic aware one is a study variant
// (lab/blas2_variants). Shared with symv_v3.cuh: the tile edge, the block's lane geometry, the
// reduction's block shape.
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
// (reduced over the row lanes at once and written to the tile's slot of the workspace, or added into
// y with atomicAdd). The diagonal tile is read like the others and its unstored half masked out. The
// oblivious variant reads the mirror tiles (j, r) of the unstored half and uses only their column dots.
//
// Internal linkage (an unnamed namespace): the library and the lab each instantiate what they run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "symv_gemv_common.cuh"
#include "symv_internal.cuh"

namespace gpuprobe::kernels::symv_v1 {
namespace {

using blas2::Strided;
using blas2::Vec16;

constexpr int kNB = 64;        // tile edge: the granularity of the workspace partials
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

inline Plan make_plan(int n, Algo algo) {
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

// The launches of one SYMV; returns the first refused launch's error, else cudaGetLastError().
template <class T, bool kLower, Algo kAlgo>
cudaError_t launch_all(const Plan& plan, bool vector, const T* A, int lda, Strided<const T> x, T* ws, T alpha,
                       T beta, Strided<T> y, cudaStream_t stream) {
  T* slots = ws;
  T* row_parts = ws ? ws + plan.slot_elems : nullptr;
  if constexpr (kAlgo == Algo::kAwareAtomic) blas2::launch_scale(plan.n, beta, y, stream);
  if (vector)
    launch_tiles<T, kLower, kAlgo, true>(plan, A, lda, x, slots, row_parts, alpha, y, stream);
  else
    launch_tiles<T, kLower, kAlgo, false>(plan, A, lda, x, slots, row_parts, alpha, y, stream);
  cudaError_t reduce = cudaSuccess;
  if constexpr (kAlgo != Algo::kAwareAtomic) {
    const dim3 grid(plan.tiles, kNB / kReduceElems);
    reduce = blas2::launch_dependent(symv_reduce_kernel<T, kLower, kAlgo>, grid, dim3(kThreads), stream, plan,
                                     static_cast<const T*>(slots), static_cast<const T*>(row_parts), alpha, beta, y);
  }
  const cudaError_t last = cudaGetLastError();
  return reduce != cudaSuccess ? reduce : last;
}

// The workspace of `algo` at n, in bytes (0 for n <= 0 and for kAwareAtomic).
template <class T>
std::size_t workspace_bytes(int n, Algo algo) {
  return n > 0 ? static_cast<std::size_t>(make_plan(n, algo).workspace_elems()) * sizeof(T) : 0;
}

// One SYMV of arguments symv_with_launch validated, with `kAlgo`.
template <class T, Algo kAlgo>
cudaError_t launch(const detail::SymvArgs<T>& a, cudaStream_t stream) {
  const Plan plan = make_plan(a.n, kAlgo);
  return a.lower() ? launch_all<T, true, kAlgo>(plan, a.vector_a(), a.A, a.lda, a.xs(), a.ws(), a.alpha, a.beta,
                                               a.ys(), stream)
                   : launch_all<T, false, kAlgo>(plan, a.vector_a(), a.A, a.lda, a.xs(), a.ws(), a.alpha, a.beta,
                                                a.ys(), stream);
}

}  // namespace
}  // namespace gpuprobe::kernels::symv_v1
