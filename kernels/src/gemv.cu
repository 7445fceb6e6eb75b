// GEMV kernels (no-transpose and transpose), the plan (split into segments or not), argument checks.
// Design and measurements: docs/perf/gemv.md.
//
// Both kernels use 256 threads as 32 row lanes x 8 column groups: a warp is one column group, its 32
// lanes read 32 consecutive 16-byte vectors of one column (512 contiguous bytes), and each thread
// keeps kUnroll such loads in flight per step.
//   kNoTrans: a unit owns kRowsPerUnit = 32 kV rows and a segment of the columns; each thread walks
//             the columns g, g + 8, ... of the segment and accumulates its kV row sums in registers;
//             the 8 column groups are summed through shared memory once, at the end.
//   kTrans:   a unit owns kColsPerUnit = 8 kUnroll columns and a segment of the rows; each thread
//             accumulates the dots of its kUnroll columns over its rows in registers; the 32 lanes
//             are summed by shuffles once, at the end.
// When the units of whole rows (columns) are too few to fill the GPU, the segments' partials go to
// the workspace and gemv_reduce_kernel sums them in segment order (deterministic).
#include <algorithm>

#include "gpuprobe/kernels/gemv.hpp"
#include "symv_gemv_common.cuh"

namespace gpuprobe::kernels {
namespace {

using blas2::Strided;
using blas2::Vec16;

constexpr int kThreads = 256;
constexpr int kRowLanes = 32;
constexpr int kColGroups = kThreads / kRowLanes;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread and step
static_assert(kRowLanes == 32, "a warp is one column group: lanes read one column's contiguous piece");

template <class T>
constexpr int rows_per_unit() { return kRowLanes * Vec16<T>::kCount; }  // kNoTrans: 128 (float), 64 (double)
constexpr int kColsPerUnit = kColGroups * kUnroll;                        // kTrans: 32 columns

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
  __shared__ T sums[kReduceGroups][kReduceElems];
  sums[q][threadIdx.x % kReduceElems] = sum;
  __syncthreads();
  if (q == 0 && i < plan.out_len) {
    T total = sums[0][threadIdx.x];
#pragma unroll
    for (int k = 1; k < kReduceGroups; ++k) total += sums[k][threadIdx.x];
    y[i] = beta == T(0) ? alpha * total : alpha * total + beta * y[i];
  }
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

template <class T>
std::size_t gemv_workspace_bytes(Trans trans, int m, int n) {
  return static_cast<std::size_t>(make_plan<T>(trans, m, n).workspace_elems()) * sizeof(T);
}

template <class T>
Status gemv_check_args(Trans trans, int m, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes) {
  if (trans != Trans::kNoTrans && trans != Trans::kTrans) return Status::kInvalidValue;
  if (m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0) return Status::kInvalidValue;
  if (m == 0 || n == 0) return Status::kSuccess;  // quick return: y untouched
  // Grid limits: the segments are the grid's y dimension.
  if (make_plan<T>(trans, m, n).segments > 65535) return Status::kInvalidValue;
  if (!A || !x || !y) return Status::kNullPointer;
  const std::size_t needed = gemv_workspace_bytes<T>(trans, m, n);
  if (workspace_bytes < needed) return Status::kWorkspaceTooSmall;
  if (needed > 0 && !workspace) return Status::kNullPointer;
  return Status::kSuccess;
}

template <class T>
Status gemv(Trans trans, int m, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  const Status st = gemv_check_args<T>(trans, m, n, A, lda, x, incx, y, incy, workspace, workspace_bytes);
  if (st != Status::kSuccess || m == 0 || n == 0) return st;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  const bool no_trans = trans == Trans::kNoTrans;
  const int x_len = no_trans ? n : m, y_len = no_trans ? m : n;
  const Strided<T> ys = blas2::make_strided(y, y_len, incy);
  if (alpha == T(0)) {
    blas2::launch_scale(y_len, beta, ys, stream);
    return blas2::launch_status();
  }
  const Strided<const T> xs = blas2::make_strided(x, x_len, incx);
  const Plan plan = make_plan<T>(trans, m, n);
  T* part = plan.segments > 1 ? static_cast<T*>(workspace) : nullptr;
  const bool vector = lda % Vec16<T>::kCount == 0 && blas2::aligned16(A);
  if (vector)
    launch_main<T, true>(trans, plan, A, lda, xs, alpha, beta, ys, part, stream);
  else
    launch_main<T, false>(trans, plan, A, lda, xs, alpha, beta, ys, part, stream);
  if (part) {
    const int blocks = (plan.out_len + kReduceElems - 1) / kReduceElems;
    blas2::launch_dependent(gemv_reduce_kernel<T>, dim3(blocks), dim3(kThreads), stream, plan,
                            static_cast<const T*>(part), alpha, beta, ys);
  }
  return blas2::launch_status();
}

#define GPUPROBE_GEMV_INSTANTIATE(T)                                                                          \
  template std::size_t gemv_workspace_bytes<T>(Trans, int, int);                                              \
  template Status gemv_check_args<T>(Trans, int, int, const T*, int, const T*, int, const T*, int,            \
                                     const void*, std::size_t);                                               \
  template Status gemv<T>(Trans, int, int, T, const T*, int, const T*, int, T, T*, int, void*, std::size_t,   \
                          cudaStream_t);
GPUPROBE_GEMV_INSTANTIATE(float)
GPUPROBE_GEMV_INSTANTIATE(double)
#undef GPUPROBE_GEMV_INSTANTIATE

}  // namespace gpuprobe::kernels
