// GemvImpl::kSplitReduce: units of whole rows (kNoTrans) or 32 columns (kTrans), split into segments
// when they are too few to fill the GPU; the segments' partials go to the workspace and
// gemv_reduce_kernel sums them in segment order (deterministic). Design: gemv.cu's header.
#pragma once
#include "gemv_common.cuh"

namespace gpuprobe::kernels {
namespace {

// Units of whole rows (columns) are split when fewer than this (many small units: a short tail); segments are never shorter than
// kMinSteps steps of a thread (so the epilogue stays small against the streaming).
constexpr long long kTargetUnits = 8192;
constexpr int kMinSteps = 4;

struct Plan {
  int m = 0, n = 0;
  int units = 0;       // units along the output (row blocks for kNoTrans, column blocks for kTrans)
  int segments = 1;    // along the reduced dimension
  int seg_len = 0;     // columns (kNoTrans) or rows (kTrans) per segment
  int out_len = 0;     // y's length
  long long workspace_elems() const { return segments > 1 ? static_cast<long long>(segments) * out_len : 0; }
};

template <class T>
Plan make_plan(Trans trans, int m, int n) {
  Plan p;
  p.m = m;
  p.n = n;
  if (m <= 0 || n <= 0) return p;
  const bool no_trans = trans == Trans::kNoTrans;
  const int reduced = no_trans ? n : m;  // the dimension summed over
  p.out_len = no_trans ? m : n;
  p.units = no_trans ? (m + rows_per_unit<T>() - 1) / rows_per_unit<T>() : (n + kColsPerUnit - 1) / kColsPerUnit;
  // One step of a block covers kColsPerUnit columns (kNoTrans) or rows_per_unit rows (kTrans); a
  // segment is a whole number of steps so that 16-byte alignment carries over between segments.
  const int granule = no_trans ? kColsPerUnit : rows_per_unit<T>();
  const long long steps = (reduced + granule - 1) / granule;
  long long segments = std::max<long long>(1, kTargetUnits / p.units);
  segments = std::min(segments, std::max<long long>(1, steps / kMinSteps));
  const long long steps_per_seg = (steps + segments - 1) / segments;
  p.seg_len = static_cast<int>(steps_per_seg * granule);
  p.segments = static_cast<int>((reduced + p.seg_len - 1) / p.seg_len);
  return p;
}

template <class T>
__device__ __forceinline__ void write_out(T sum, long long i, int s, const Plan& plan, T* part, T alpha, T beta,
                                          const Strided<T>& y) {
  if (part)
    part[static_cast<long long>(s) * plan.out_len + i] = sum;
  else
    y[i] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[i];
}

template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads) gemv_n_kernel(Plan plan, const T* __restrict__ A, long long lda,
                                                          Strided<const T> x, T alpha, T beta, Strided<T> y,
                                                          T* __restrict__ part) {
  constexpr int kV = Vec16<T>::kCount, kRows = rows_per_unit<T>();
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int row0 = blockIdx.x * kRows + lane * kV;
  const int rows_valid = plan.m - row0;
  const int s = blockIdx.y;
  const int c_begin = s * plan.seg_len, c_end = min(plan.n, c_begin + plan.seg_len);
  blas2::allow_dependent_launch();

  T acc[kV] = {};
  for (int c = c_begin + g; c < c_end; c += kColsPerUnit) {
    T a[kUnroll][kV], xc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = c + u * kColGroups;
      blas2::load_rows<T, kVector>(A + static_cast<long long>(col) * lda + row0, col < c_end ? rows_valid : 0, a[u]);
      xc[u] = col < c_end ? blas2::load_x(x, col) : T(0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kV; ++k) acc[k] += a[u][k] * xc[u];
  }

  __shared__ T sums[kColGroups][kRows];
#pragma unroll
  for (int k = 0; k < kV; ++k) sums[g][lane * kV + k] = acc[k];
  __syncthreads();
  if (threadIdx.x < kRows) {
    T sum = sums[0][threadIdx.x];
#pragma unroll
    for (int q = 1; q < kColGroups; ++q) sum += sums[q][threadIdx.x];
    const int row = blockIdx.x * kRows + threadIdx.x;
    if (row < plan.m) write_out(sum, row, s, plan, part, alpha, beta, y);
  }
}

template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads) gemv_t_kernel(Plan plan, const T* __restrict__ A, long long lda,
                                                          Strided<const T> x, T alpha, T beta, Strided<T> y,
                                                          T* __restrict__ part) {
  constexpr int kV = Vec16<T>::kCount, kRows = rows_per_unit<T>();
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int col0 = blockIdx.x * kColsPerUnit + g;
  const int s = blockIdx.y;
  const int r_begin = s * plan.seg_len, r_end = min(plan.m, r_begin + plan.seg_len);
  blas2::allow_dependent_launch();

  T acc[kUnroll] = {};
  for (int row = r_begin + lane * kV; row - lane * kV < r_end; row += kRows) {
    const int rows_valid = r_end - row;
    T xv[kV];
#pragma unroll
    for (int k = 0; k < kV; ++k) xv[k] = k < rows_valid ? blas2::load_x(x, row + k) : T(0);
    T a[kUnroll][kV];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = col0 + u * kColGroups;
      blas2::load_rows<T, kVector>(A + static_cast<long long>(col) * lda + row, col < plan.n ? rows_valid : 0, a[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kV; ++k) acc[u] += a[u][k] * xv[k];
  }
  const T sum = blas2::reduce_transposed<kUnroll, kRowLanes>(acc, lane);
  constexpr int kLanesPerValue = kRowLanes / kUnroll;
  if (lane % kLanesPerValue == 0) {
    const int col = col0 + (lane / kLanesPerValue) * kColGroups;
    if (col < plan.n) write_out(sum, col, s, plan, part, alpha, beta, y);
  }
}

// y_i = alpha sum_s part[s][i] + beta y_i, segments summed in order; 32 elements x 8 segment groups
// per block, so that a long list of segments is read by 8 warps at once.
constexpr int kReduceElems = 32;
constexpr int kReduceGroups = kThreads / kReduceElems;

template <class T>
__global__ void __launch_bounds__(kThreads) gemv_reduce_kernel(Plan plan, const T* __restrict__ part, T alpha,
                                                               T beta, Strided<T> y) {
  const long long i = static_cast<long long>(blockIdx.x) * kReduceElems + threadIdx.x % kReduceElems;
  const int q = threadIdx.x / kReduceElems;
  blas2::grid_dependency_wait();  // launched early (PDL): the partials are complete only after this
  T sum = T(0);
  if (i < plan.out_len)
    for (int s = q; s < plan.segments; s += kReduceGroups) sum += part[static_cast<long long>(s) * plan.out_len + i];
  blas2::sum_groups_into_y<kReduceGroups, kReduceElems>(sum, q, i, i < plan.out_len, alpha, beta, y);
}

template <class T, bool kVector>
void launch_main(Trans trans, const Plan& plan, const T* A, int lda, Strided<const T> x, T alpha, T beta,
                 Strided<T> y, T* part, cudaStream_t stream) {
  const dim3 grid(plan.units, plan.segments);
  if (trans == Trans::kNoTrans)
    gemv_n_kernel<T, kVector><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, part);
  else
    gemv_t_kernel<T, kVector><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, part);
}

}  // namespace

namespace detail {
namespace {

// kSplitReduce: the partials after kSinglePass's counter area (kAuto switches between kSplitReduce
// and kSinglePass by shape, and one workspace may serve both in turn: a kSplitReduce call must not
// overwrite the counters).
template <class T>
GemvPlanSummary plan_split_reduce(Trans trans, int m, int n) {
  const Plan plan = make_plan<T>(trans, m, n);
  const long long elems = plan.workspace_elems();
  // The segments are the grid's y dimension.
  return {elems > 0 ? v3::kCounterBytes + static_cast<std::size_t>(elems) * sizeof(T) : 0, plan.segments <= 65535};
}
template <class T>
cudaError_t launch_split_reduce(const GemvArgs<T>& a, cudaStream_t stream) {
  const Plan plan = make_plan<T>(a.trans, a.m, a.n);
  T* part = plan.segments > 1 ? reinterpret_cast<T*>(static_cast<unsigned char*>(a.workspace) + v3::kCounterBytes)
                              : nullptr;
  const Strided<T> ys = a.ys();
  if (a.vector_a())
    launch_main<T, true>(a.trans, plan, a.A, a.lda, a.xs(), a.alpha, a.beta, ys, part, stream);
  else
    launch_main<T, false>(a.trans, plan, a.A, a.lda, a.xs(), a.alpha, a.beta, ys, part, stream);
  cudaError_t reduce = cudaSuccess;
  if (part) {
    const int blocks = (plan.out_len + kReduceElems - 1) / kReduceElems;
    reduce = blas2::launch_dependent(gemv_reduce_kernel<T>, dim3(blocks), dim3(kThreads), stream, plan,
                                     static_cast<const T*>(part), a.alpha, a.beta, ys);
  }
  return launches_error(reduce);
}

}  // namespace
}  // namespace detail

}  // namespace gpuprobe::kernels
