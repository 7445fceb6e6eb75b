// GEMV's API: argument checks, kAuto's choice and the dispatch through the records (kGemvImpls); the
// kernels, one part per implementation: gemv_kernels.cuh. Design and measurements: docs/perf/gemv.md.
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
// That is GemvImpl::kSplitReduce (kAuto runs it for the shapes no rule below claims).
// GemvImpl::kSinglePass (namespace v3, its design's name in docs/perf/gemv.md) keeps these main
// loops, does the sum of the partials inside the same kernel (the last block of a unit to finish, in
// a fixed order), and adds block shapes for thin, tall, deep and small matrices, coalesced scalar
// loads for lda not a multiple of 16 bytes, and evict-first loads of A when A is larger than the L2;
// the row blocks (GemvImpl::kRowBlocks, kRowBlocksSector, kNoTrans) are two more of its block shapes.
// GemvImpl::kColumnBlocks (namespace cb, kTrans only; kAuto's T choice at most shapes): one
// 128-thread block per column of A, cuBLAS's DGEMV T design.
#include "gemv_kernels.cuh"

// The float kernels (the double ones: gemv_double.cu).
#define GPUPROBE_GEMV_T float
GPUPROBE_GEMV_KERNELS_INSTANTIATE
#undef GPUPROBE_GEMV_T

namespace gpuprobe::kernels {

const char* gemv_impl_name(GemvImpl impl) {
  const GemvImplRecord* record = gemv_impl_record(impl);
  return record != nullptr ? record->name : "unknown";
}

template <class T>
GemvImpl gemv_auto_impl(Trans trans, int m, int n, GemvImpl impl) {
  const GemvImplRecord* record = gemv_impl_record(impl);
  if (record == nullptr) return impl;
  if (impl != GemvImpl::kAuto) return record->runs(trans);
  // Column blocks: faster than kSplitReduce / kSinglePass at every T shape of the benchmarks but the
  // ones with columns of 2 KB or less (a block's start-up then outweighs its column) or fewer than 512
  // of them (1048576 x 64: 64 blocks on 132 SMs). Counted in bytes of a column
  // (cb::kAutoAboveColumnBytes), so double columns of 257 ... 512 rows count too.
  const long long column_bytes = static_cast<long long>(m) * static_cast<long long>(sizeof(T));
  if (trans == Trans::kTrans && column_bytes > cb::kAutoAboveColumnBytes && n >= cb::kAutoMinColumns)
    return GemvImpl::kColumnBlocks;
  const long long lo = std::min(m, n), hi = std::max(m, n);
  const bool thin = lo <= 512 && hi >= 64 * lo;
  const long long a_bytes = static_cast<long long>(m) * static_cast<long long>(n) * static_cast<long long>(sizeof(T));
  // Row blocks for small N: kAutoRowBlocksBytes above.
  if (trans == Trans::kNoTrans && !thin && n <= kAutoRowBlocksMaxColumns && a_bytes <= kAutoRowBlocksBytes)
    return sizeof(T) == 4 ? GemvImpl::kRowBlocksSector : GemvImpl::kRowBlocks;
  // Small N where row blocks do not apply (more than 1024 columns): A of at most
  // kAutoSmallNoTransBytes, an L2-resident call of 5-8 us where kSinglePass's one kernel (unsplit)
  // beat kSplitReduce's two in paired entries; above 4 MiB kSplitReduce was ahead.
  if (trans == Trans::kNoTrans && a_bytes <= kAutoSmallNoTransBytes) return GemvImpl::kSinglePass;
  // Thin: kSplitReduce cuts the long dimension into thousands of segments whose partials a second
  // kernel sums with few blocks (64 x 1048576: 2 blocks, 1024 partials a thread); kSinglePass sums
  // them in the same kernel, in two levels. The 64 x ratio keeps square and near-square shapes on
  // kSplitReduce (512 x 512 included for T). Large (>= 2^26 elements): kSinglePass's
  // evict-first loads and, for T, its segment-major grid beat kSplitReduce's second kernel; below that
  // (4096 squares) kSplitReduce was faster. Deep: about one wave of whole-row (N) or whole-column (T)
  // units, where kSinglePass runs one kernel without a split and kSplitReduce pays its reduction
  // kernel (the 4096 squares).
  const bool large = static_cast<long long>(m) * n >= (1LL << 26);
  const bool deep = v3::deep_shape(trans, m, n);
  return thin || large || deep ? GemvImpl::kSinglePass : GemvImpl::kSplitReduce;
}
template GemvImpl gemv_auto_impl<float>(Trans, int, int, GemvImpl);
template GemvImpl gemv_auto_impl<double>(Trans, int, int, GemvImpl);

namespace {

// The launchers of what gemv<T> runs for `impl` on this problem (gemv_auto_impl); nullptr for a value
// that names no implementation.
template <class T>
const detail::GemvLaunch<T>* resolved_launch(Trans trans, int m, int n, GemvImpl impl) {
  const GemvImplRecord* record = gemv_impl_record(gemv_auto_impl<T>(trans, m, n, impl));
  return record != nullptr ? &record->launchers.template of<T>() : nullptr;
}

}  // namespace

template <class T>
std::size_t gemv_workspace_bytes(Trans trans, int m, int n, GemvImpl impl) {
  if (m <= 0 || n <= 0) return 0;
  const detail::GemvLaunch<T>* launch = resolved_launch<T>(trans, m, n, impl);
  return launch != nullptr ? launch->plan(trans, m, n).workspace_bytes : 0;
}

template <class T>
Status gemv_check_args(Trans trans, int m, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, GemvImpl impl) {
  if (trans != Trans::kNoTrans && trans != Trans::kTrans) return Status::kInvalidValue;
  if (gemv_impl_record(impl) == nullptr) return Status::kInvalidValue;
  if (m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0) return Status::kInvalidValue;
  if (m == 0 || n == 0) return Status::kSuccess;  // quick return: y untouched
  const detail::GemvPlanSummary plan = resolved_launch<T>(trans, m, n, impl)->plan(trans, m, n);
  if (!plan.fits_grid) return Status::kInvalidValue;
  if (!A || !x || !y) return Status::kNullPointer;
  if (workspace_bytes < plan.workspace_bytes) return Status::kWorkspaceTooSmall;
  if (plan.workspace_bytes > 0 && !workspace) return Status::kNullPointer;
  return Status::kSuccess;
}

Status gemv_workspace_init(void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (workspace_bytes == 0) return Status::kSuccess;
  if (!workspace) return Status::kNullPointer;
  const std::size_t bytes = std::min(workspace_bytes, v3::kCounterBytes);
  return cudaMemsetAsync(workspace, 0, bytes, stream) == cudaSuccess ? Status::kSuccess : Status::kLaunchFailed;
}

template <class T>
Status gemv(Trans trans, int m, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream, GemvImpl impl) {
  const Status st = gemv_check_args<T>(trans, m, n, A, lda, x, incx, y, incy, workspace, workspace_bytes, impl);
  if (st != Status::kSuccess || m == 0 || n == 0) return st;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  if (alpha == T(0)) {  // A and x are not read
    blas2::launch_scale(trans == Trans::kNoTrans ? m : n, beta,
                        blas2::make_strided(y, trans == Trans::kNoTrans ? m : n, incy), stream);
    return blas2::launch_status();
  }
  const detail::GemvArgs<T> args{trans, m, n, alpha, A, lda, x, incx, beta, y, incy, workspace};
  return resolved_launch<T>(trans, m, n, impl)->launch(args, stream) == cudaSuccess ? Status::kSuccess
                                                                                    : Status::kLaunchFailed;
}

#define GPUPROBE_GEMV_INSTANTIATE(T)                                                                          \
  template std::size_t gemv_workspace_bytes<T>(Trans, int, int, GemvImpl);                                    \
  template Status gemv_check_args<T>(Trans, int, int, const T*, int, const T*, int, const T*, int,            \
                                     const void*, std::size_t, GemvImpl);                                     \
  template Status gemv<T>(Trans, int, int, T, const T*, int, const T*, int, T, T*, int, void*, std::size_t,   \
                          cudaStream_t, GemvImpl);
GPUPROBE_GEMV_INSTANTIATE(float)
GPUPROBE_GEMV_INSTANTIATE(double)
#undef GPUPROBE_GEMV_INSTANTIATE

}  // namespace gpuprobe::kernels
