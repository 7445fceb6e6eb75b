// GemvImpl::kSinglePass (and the row blocks, which are block shapes of its N kernel): one kernel per call.
//
// The main loops are kSplitReduce's, with three block shapes for kNoTrans (NCfg below) and, for lda
// not a multiple of 16 bytes, coalesced scalar loads (blas2::slot_row). When the reduced dimension
// is split, each block writes its segment's partials to the workspace and then counts itself in
// (atomicAdd on a per-group counter, after a __threadfence); the last block of a group of segments
// sums the group's partials, in segment order, and either writes y (one group) or a level-2 partial,
// of which the unit's last group sums all in group order and writes y. Which block arrives last
// varies; the summation order does not (deterministic). The last block resets its counter to 0.
// Its plan (block shapes, segments and groups): gemv_single_pass_plan.cuh.
#pragma once
#include "gemv_single_pass_plan.cuh"

namespace gpuprobe::kernels {
namespace {
namespace v3 {

template <class T>
struct Work3 {
  unsigned* counters;  // [units][groups] level 1, then [units] level 2
  T* part1;            // [segments][out_len]
  T* part2;            // [groups][out_len] (two levels only)
};

// Sums src[k ld + o0 + i] over k in [first, first + count), for i < len, in increasing k: kQ
// interleaved subsets of k (each summed in order, loads batched 8 at a time), then the kQ subtotals in
// order. Calls emit(i, total) once per i < len. Every thread of the block must call it.
template <class T, int kOut, class Emit>
__device__ __forceinline__ void sum_partials(const T* src, long long ld, int first, int count, int o0, int len,
                                             T* red, Emit emit) {
  constexpr int kQ = kOut >= kThreads ? 1 : kThreads / kOut;
  constexpr int kPer = kOut >= kThreads ? kOut / kThreads : 1;
  static_assert(kOut % kThreads == 0 || kThreads % kOut == 0, "outputs per unit: a divisor or multiple of 256");
  constexpr int kBatch = 8;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = kQ == 1 ? static_cast<int>(threadIdx.x) + j * kThreads : static_cast<int>(threadIdx.x) % kOut;
    const int q = kQ == 1 ? 0 : static_cast<int>(threadIdx.x) / kOut;
    T acc = T(0);
    if (i < len) {
      const T* base = src + o0 + i;
      const int end = first + count;
      int k = first + q;
      for (; k + (kBatch - 1) * kQ < end; k += kBatch * kQ) {
        T v[kBatch];
#pragma unroll
        for (int t = 0; t < kBatch; ++t) v[t] = __ldcg(base + static_cast<long long>(k + t * kQ) * ld);
#pragma unroll
        for (int t = 0; t < kBatch; ++t) acc += v[t];
      }
      for (; k < end; k += kQ) acc += __ldcg(base + static_cast<long long>(k) * ld);
    }
    if constexpr (kQ == 1) {
      if (i < len) emit(i, acc);
    } else {
      red[threadIdx.x] = acc;  // = red[q * kOut + i]
    }
  }
  if constexpr (kQ > 1) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < kOut && static_cast<int>(threadIdx.x) < len) {
      T total = red[threadIdx.x];
#pragma unroll
      for (int q = 1; q < kQ; ++q) total += red[q * kOut + threadIdx.x];
      emit(static_cast<int>(threadIdx.x), total);
    }
  }
}

// Counts the block in on `counter`; true (in every thread) for the last of `arrivals` blocks, which
// also resets the counter. The caller's global writes before the call are visible to that block.
__device__ __forceinline__ bool arrive_last(unsigned* counter, int arrivals, unsigned* flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned prev = atomicAdd(counter, 1u);
    const bool last = prev == static_cast<unsigned>(arrivals - 1);
    if (last) *counter = 0u;  // every block of the group has arrived: ready for the next call
    *flag = last ? 1u : 0u;
  }
  __syncthreads();
  const bool last = *flag != 0u;
  if (last) __threadfence();
  return last;
}

// After the block has written its partials (segment s of unit u, outputs o0 .. o0 + len).
template <class T, int kOut>
__device__ __forceinline__ void finish_unit(const Plan3& p, const Work3<T>& w, int u, int s, int o0, int len, T alpha,
                                            T beta, const Strided<T>& y) {
  __shared__ T red[kThreads];
  __shared__ unsigned flag;
  const int gi = s / p.group_size;
  const int g0 = gi * p.group_size, gn = min(p.segments - g0, p.group_size);
  if (!arrive_last(w.counters + static_cast<long long>(u) * p.groups + gi, gn, &flag)) return;
  auto to_y = [&](int i, T total) {
    const long long r = static_cast<long long>(o0) + i;
    y[r] = beta == T(0) ? alpha * total : alpha * total + beta * y[r];
  };
  if (p.groups == 1) {
    sum_partials<T, kOut>(w.part1, p.out_len, g0, gn, o0, len, red, to_y);
    return;
  }
  T* part2 = w.part2 + static_cast<long long>(gi) * p.out_len + o0;
  sum_partials<T, kOut>(w.part1, p.out_len, g0, gn, o0, len, red, [&](int i, T total) { part2[i] = total; });
  if (!arrive_last(w.counters + static_cast<long long>(p.units) * p.groups + u, p.groups, &flag)) return;
  sum_partials<T, kOut>(w.part2, p.out_len, 0, p.groups, o0, len, red, to_y);
}

// Minimum blocks per SM for gemv3_n_kernel's register cap: one for the tall (4 row vectors) and the
// 512-thread shapes, two for the deep ones (16 loads in flight), else as kSplitReduce's N kernels.
template <class Cfg, bool kVector>
constexpr int n_min_blocks_per_sm() {
  if (Cfg::kMinBlocksPerSm > 0) return Cfg::kMinBlocksPerSm;  // set by the shape (row blocks)
  if (Cfg::kRowVecs > 1 || Cfg::kBlockThreads > kThreads) return 1;
  if (Cfg::kUnroll > 4) return kDeepMinBlocksPerSm;
  return kVector ? kMinBlocksPerSm : kMinBlocksPerSmScalarN;
}

template <class T, class Cfg, bool kVector, bool kStream>
__global__ void __launch_bounds__(Cfg::kBlockThreads, n_min_blocks_per_sm<Cfg, kVector>())
    gemv3_n_kernel(Plan3 plan, const T* __restrict__ A, long long lda, Strided<const T> x, T alpha, T beta,
                   Strided<T> y, Work3<T> ws) {
  constexpr int kV = Cfg::kV, kLanes = Cfg::kLanes, kRV = Cfg::kRowVecs, kU = Cfg::kUnroll;
  constexpr int kGroups = Cfg::kGroups, kRows = Cfg::kRows;
  const int lane = threadIdx.x % kLanes, g = threadIdx.x / kLanes;
  const int row0 = blockIdx.x * kRows;
  const int rows_valid = plan.m - row0;
  const int s = blockIdx.y;
  const int c_begin = s * plan.seg_len, c_end = min(plan.n, c_begin + plan.seg_len);
  const int lane_row = blas2::slot_row<kLanes, kV, kVector>(lane, 0, 0);
  const T* a0 = A + row0 + lane_row;
  const int lane_valid = rows_valid - lane_row;

  T acc[kRV][kV] = {};
  for (int c = c_begin + g; c < c_end; c += Cfg::kCols) {
    T a[kU][kRV][kV], xc[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int col = c + u * kGroups;
      blas2::load_slots<T, kLanes, kRV, kVector, kStream>(a0 + static_cast<long long>(col) * lda,
                                                          col < c_end ? lane_valid : 0, a[u]);
      xc[u] = col < c_end ? blas2::load_x(x, col) : T(0);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int v = 0; v < kRV; ++v)
#pragma unroll
        for (int k = 0; k < kV; ++k) acc[v][k] += a[u][v][k] * xc[u];
  }

  __shared__ T sums[kGroups][kRows];
#pragma unroll
  for (int v = 0; v < kRV; ++v)
#pragma unroll
    for (int k = 0; k < kV; ++k) sums[g][blas2::slot_row<kLanes, kV, kVector>(lane, v, k)] = acc[v][k];
  __syncthreads();
  // The column groups' sums of a row, in group order. With more groups than kTwoStageMinGroups, two
  // stages: kSlices threads per row each sum kGroups / kSlices consecutive groups, then one thread
  // sums the slices in order (fixed order either way: repeated calls are bit-identical); a chain of
  // kGroups / kSlices + kSlices adds instead of kGroups (64 for DeepOneBlockCfg in float).
  constexpr int kSlices = kGroups > kTwoStageMinGroups && Cfg::kBlockThreads % kRows == 0 &&
                                  kGroups % (Cfg::kBlockThreads / kRows) == 0
                              ? Cfg::kBlockThreads / kRows
                              : 1;
  __shared__ T slice_sums[kSlices][kRows];
  if constexpr (kSlices > 1) {
    const int r = threadIdx.x % kRows, sl = threadIdx.x / kRows;
    constexpr int kPerSlice = kGroups / kSlices;
    T part = sums[sl * kPerSlice][r];
#pragma unroll
    for (int q = 1; q < kPerSlice; ++q) part += sums[sl * kPerSlice + q][r];
    slice_sums[sl][r] = part;
    __syncthreads();
  }
  constexpr int kTerms = kSlices > 1 ? kSlices : kGroups;
  const T(*terms)[kRows] = kSlices > 1 ? slice_sums : sums;
  for (int r = threadIdx.x; r < kRows; r += Cfg::kBlockThreads) {
    if (r < rows_valid) {
      T sum = terms[0][r];
#pragma unroll
      for (int q = 1; q < kTerms; ++q) sum += terms[q][r];
      const long long row = static_cast<long long>(row0) + r;
      if (plan.segments == 1)
        y[row] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[row];
      else
        ws.part1[static_cast<long long>(s) * plan.out_len + row] = sum;
    }
  }
  if (plan.segments > 1) finish_unit<T, kRows>(plan, ws, blockIdx.x, s, row0, min(kRows, rows_valid), alpha, beta, y);
}

// kSegMajor: the grid is (segments, units) instead of (units, segments), so that the blocks resident
// together are consecutive row segments of the same columns (long runs down each column) rather than
// the same segment of many column units (2 KB pieces of hundreds of columns): kSinglePass's split
// kTrans grid, faster than units first at A >= 256 MiB (docs/perf/gemv.md). The deep shape has one
// segment, where either order is the same grid.
// kRV: row vectors per column and step (1; kDeepTRowVecs for the deep shape: 4 x kUnroll loads in
// flight per thread).
template <class T, bool kVector, bool kStream, bool kSegMajor, int kRV>
__global__ void __launch_bounds__(kThreads, kRV > 1 ? kDeepMinBlocksPerSm : kMinBlocksPerSm)
    gemv3_t_kernel(Plan3 plan, const T* __restrict__ A, long long lda, Strided<const T> x, T alpha, T beta,
                   Strided<T> y, Work3<T> ws) {
  constexpr int kV = Vec16<T>::kCount, kRows = kRV * rows_per_unit<T>();  // rows per step
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int unit = kSegMajor ? blockIdx.y : blockIdx.x;
  const int o0 = unit * kColsPerUnit;
  const int col0 = o0 + g;
  const int s = kSegMajor ? blockIdx.x : blockIdx.y;
  const int r_begin = s * plan.seg_len, r_end = min(plan.m, r_begin + plan.seg_len);

  const int lane_row = blas2::slot_row<kRowLanes, kV, kVector>(lane, 0, 0);
  T acc[kUnroll] = {};
  for (int row = r_begin + lane_row; row - lane_row < r_end; row += kRows) {
    const int valid = r_end - row;  // rows from this thread's first slot
    T a[kUnroll][kRV][kV];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = col0 + u * kColGroups;
      blas2::load_slots<T, kRowLanes, kRV, kVector, kStream>(A + static_cast<long long>(col) * lda + row,
                                                             col < plan.n ? valid : 0, a[u]);
    }
    T xv[kRV][kV];
#pragma unroll
    for (int v = 0; v < kRV; ++v)
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const int off = blas2::slot_row<kRowLanes, kV, kVector>(0, v, k);  // slot (v, k)'s offset from slot (0, 0)
        xv[v][k] = off < valid ? blas2::load_x(x, static_cast<long long>(row) + off) : T(0);
      }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < kRV; ++v)
#pragma unroll
        for (int k = 0; k < kV; ++k) acc[u] += a[u][v][k] * xv[v][k];
  }
  const T sum = blas2::reduce_transposed<kUnroll, kRowLanes>(acc, lane);
  constexpr int kLanesPerValue = kRowLanes / kUnroll;
  if (lane % kLanesPerValue == 0) {
    const int col = col0 + (lane / kLanesPerValue) * kColGroups;
    if (col < plan.n) {
      if (plan.segments == 1)
        y[col] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[col];
      else
        ws.part1[static_cast<long long>(s) * plan.out_len + col] = sum;
    }
  }
  if (plan.segments > 1)
    finish_unit<T, kColsPerUnit>(plan, ws, unit, s, o0, min(kColsPerUnit, plan.n - o0), alpha, beta, y);
}

template <class T, bool kVector, bool kStream>
void launch3(Trans trans, const Plan3& plan, const T* A, int lda, Strided<const T> x, T alpha, T beta, Strided<T> y,
             Work3<T> ws, cudaStream_t stream) {
  const dim3 grid(plan.units, plan.segments);
  if (trans == Trans::kTrans) {
    if (plan.deep_t)  // one segment: either grid order is the same
      gemv3_t_kernel<T, kVector, kStream, false, kDeepTRowVecs>
          <<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
    else
      gemv3_t_kernel<T, kVector, kStream, true, 1>
          <<<dim3(plan.segments, plan.units), kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
    return;
  }
  switch (plan.shape) {
    case NShape::kNarrow:
      gemv3_n_kernel<T, NarrowCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta,
                                                                                         y, ws);
      break;
    case NShape::kTall:
      gemv3_n_kernel<T, TallCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kWide:
      gemv3_n_kernel<T, WideCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kDeep:
      gemv3_n_kernel<T, DeepCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kDeepOneBlock:
      if constexpr (kVector)
        gemv3_n_kernel<T, DeepOneBlock1024Cfg<T>, kVector, kStream>
            <<<grid, DeepOneBlock1024Cfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      else
        gemv3_n_kernel<T, DeepOneBlockCfg<T>, kVector, kStream>
            <<<grid, DeepOneBlockCfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
    case NShape::kSmallOneBlock:
      gemv3_n_kernel<T, DeepOneBlockCfg<T>, kVector, kStream>
          <<<grid, DeepOneBlockCfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
    case NShape::kRowBlocks:
      gemv3_n_kernel<T, RowBlockCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta,
                                                                                           y, ws);
      break;
    case NShape::kRowBlocksSector:
      gemv3_n_kernel<T, RowBlockSectorCfg<T>, kVector, kStream>
          <<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
  }
}

}  // namespace v3

}  // namespace

namespace detail {
namespace {

// kSinglePass and the row blocks: v3's plan for `impl` (make_plan3) and its one kernel.
template <class T>
GemvPlanSummary plan_single_pass(GemvImpl impl, Trans trans, int m, int n) {
  const v3::Plan3 plan = v3::make_plan3<T>(trans, m, n, impl);
  // The grid's y dimension: the segments, or the units for the segment-major kTrans grid; the
  // counters fit their fixed area.
  const int grid_y = trans == Trans::kTrans ? plan.units : plan.segments;
  return {plan.workspace_bytes(sizeof(T)), grid_y <= 65535 && plan.counters() <= v3::kMaxCounters};
}

template <class T>
cudaError_t launch_single_pass(GemvImpl impl, const GemvArgs<T>& a, cudaStream_t stream) {
  const v3::Plan3 plan = v3::make_plan3<T>(a.trans, a.m, a.n, impl);
  v3::Work3<T> ws{nullptr, nullptr, nullptr};
  if (plan.segments > 1) {
    ws.counters = static_cast<unsigned*>(a.workspace);
    ws.part1 = reinterpret_cast<T*>(static_cast<unsigned char*>(a.workspace) + v3::kCounterBytes);
    ws.part2 = plan.groups > 1 ? ws.part1 + plan.part1_elems() : nullptr;
  }
  // Evict-first loads when A exceeds the L2 (a_exceeds_l2); not on the scalar path (lda not a
  // multiple of 16 bytes) of the one-block deep N kernel and of row blocks, whose lane groups
  // read only part of a sector per load: the next lane group (or load) reads the rest, and
  // evict-first loses it (S N 4097 read 13 % slower with the hint).
  const bool vector = a.vector_a();
  const bool partial_sector_loads = plan.shape == v3::NShape::kDeepOneBlock ||
                                    plan.shape == v3::NShape::kSmallOneBlock ||
                                    plan.shape == v3::NShape::kRowBlocks || plan.shape == v3::NShape::kRowBlocksSector;
  const bool stream_hint = a_exceeds_l2<T>(a.m, a.n) && (vector || !partial_sector_loads);
  const Strided<const T> xs = a.xs();
  const Strided<T> ys = a.ys();
  if (vector)
    stream_hint ? v3::launch3<T, true, true>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream)
                : v3::launch3<T, true, false>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream);
  else
    stream_hint ? v3::launch3<T, false, true>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream)
                : v3::launch3<T, false, false>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream);
  return launches_error();
}

}  // namespace
}  // namespace detail

}  // namespace gpuprobe::kernels
