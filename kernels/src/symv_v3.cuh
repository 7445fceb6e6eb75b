// SYMV with units of several block rows ("v3" and its successors, docs/perf/symv.md): storage-aware and
// deterministic, units of kSub block rows x a segment of block columns anchored at absolute column
// positions (the plan and workspace layout: symv_v3_plan.hpp), and its own fixed-order reduction
// kernel. The product runs it as SymvImpl::kAwareV6 (sub_rows<T>() block rows, grid walked group
// first) and kAwareV5 (4 block rows in double too), both with evict-first loads of A when the
// triangle exceeds the L2; lab/blas2_variants runs the segment-first grid order, with and without
// those loads.
//
// Internal linkage (an unnamed namespace): the library and the lab each instantiate what they run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "symv_gemv_common.cuh"
#include "symv_internal.cuh"
#include "symv_v1.cuh"
#include "symv_v3_plan.hpp"

namespace gpuprobe::kernels::symv_v3 {
namespace {

using blas2::Strided;
using blas2::Vec16;
using symv_v1::kReduceElems;
using symv_v1::kReduceGroups;
using symv_v1::kThreads;
using symv_v1::Shape;
static_assert(kNB == symv_v1::kNB, "v1 and v3 share the tile edge");

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
// in flight per SM (faster than the spilling cap at 2 blocks: docs/perf/symv.md, v5.1).
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

// The launches of one SYMV; returns the reduction launch's error if it was refused, else
// cudaGetLastError().
template <class T, bool kLower>
cudaError_t launch_v3(const symv_v3::Plan& plan, bool vector, bool stream_a, const T* A, int lda,
                      Strided<const T> x, T* ws, T alpha, T beta, Strided<T> y, cudaStream_t stream) {
  T* slots = ws;
  T* row_parts = ws + plan.slot_elems;
  stream_a ? launch_v3_main<T, kLower, true>(plan, vector, A, lda, x, slots, row_parts, stream)
           : launch_v3_main<T, kLower, false>(plan, vector, A, lda, x, slots, row_parts, stream);
  const cudaError_t reduce =
      blas2::launch_dependent(symv_v3_reduce_kernel<T, kLower>, dim3(plan.tiles, kNB / kReduceElems), dim3(kThreads),
                              stream, plan, static_cast<const T*>(slots), static_cast<const T*>(row_parts), alpha,
                              beta, y);
  const cudaError_t last = cudaGetLastError();
  return reduce != cudaSuccess ? reduce : last;
}

// The plan of units of `sub` block rows (sub_rows<T>(), or 4: double in two load batches per step),
// the grid walked group first or segment first.
inline symv_v3::Plan plan_for(int n, int sub, bool group_fastest) {
  symv_v3::Plan plan = symv_v3::make_plan(n, sub);
  plan.group_fastest = group_fastest;
  return plan;
}

// The workspace of units of `sub` block rows at n, in bytes (the grid order does not change it).
template <class T>
std::size_t workspace_bytes(int n, int sub) {
  return n > 0 ? static_cast<std::size_t>(symv_v3::make_plan(n, sub).workspace_elems()) * sizeof(T) : 0;
}

// Whether the stored triangle is larger than the current device's L2 (unknown L2: no): then it is read
// once per call anyway, and evict-first loads keep the partials in the L2 for the reduction kernel.
template <class T>
bool triangle_exceeds_l2(int n) {
  const long long l2 = blas2::device_l2_bytes();
  return l2 > 0 && 0.5 * n * static_cast<double>(n) * sizeof(T) > static_cast<double>(l2);
}

// One SYMV of arguments symv_with_launch validated, on `plan` (plan_for(a.n, ...)); A with
// evict-first loads when `evict_first_a`.
template <class T>
cudaError_t launch(const detail::SymvArgs<T>& a, const symv_v3::Plan& plan, bool evict_first_a, cudaStream_t stream) {
  return a.lower() ? launch_v3<T, true>(plan, a.vector_a(), evict_first_a, a.A, a.lda, a.xs(), a.ws(), a.alpha,
                                        a.beta, a.ys(), stream)
                   : launch_v3<T, false>(plan, a.vector_a(), evict_first_a, a.A, a.lda, a.xs(), a.ws(), a.alpha,
                                         a.beta, a.ys(), stream);
}

}  // namespace
}  // namespace gpuprobe::kernels::symv_v3
