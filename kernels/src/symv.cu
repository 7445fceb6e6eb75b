// gpuprobe::kernels::symv: argument checks (before any CUDA call), the choice of kAuto, and the
// dispatch through kSymvImpls to the launchers below. The kernels: symv_v3.cuh (kAwareV6, kAwareV5)
// and symv_v1.cuh (the baselines kOblivious, kAwareAtomic). Design and measurements: docs/perf/symv.md.
#include <algorithm>

#include "gpuprobe/kernels/symv.hpp"
#include "symv_gemv_common.cuh"
#include "symv_internal.cuh"
#include "symv_v1.cuh"
#include "symv_v3.cuh"
#include "symv_v3_plan.hpp"

namespace gpuprobe::kernels {

namespace detail {

// kAwareV6: groups of sub_rows<T>() block rows (4 float, 2 double), grid walked group first.
template <class T>
std::size_t SymvAwareV6Kernels::workspace_bytes(int n) {
  return symv_v3::workspace_bytes<T>(n, symv_v3::sub_rows<T>());
}
template <class T>
cudaError_t SymvAwareV6Kernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  const symv_v3::Plan plan = symv_v3::plan_for(args.n, symv_v3::sub_rows<T>(), /*group_fastest=*/true);
  return symv_v3::launch<T>(args, plan, symv_v3::triangle_exceeds_l2<T>(args.n), stream);
}

// kAwareV5: groups of 4 block rows in either precision (double: two load batches per step).
template <class T>
std::size_t SymvAwareV5Kernels::workspace_bytes(int n) {
  return symv_v3::workspace_bytes<T>(n, 4);
}
template <class T>
cudaError_t SymvAwareV5Kernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  const symv_v3::Plan plan = symv_v3::plan_for(args.n, 4, /*group_fastest=*/true);
  return symv_v3::launch<T>(args, plan, symv_v3::triangle_exceeds_l2<T>(args.n), stream);
}

template <class T>
std::size_t SymvObliviousKernels::workspace_bytes(int n) {
  return symv_v1::workspace_bytes<T>(n, symv_v1::Algo::kOblivious);
}
template <class T>
cudaError_t SymvObliviousKernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  return symv_v1::launch<T, symv_v1::Algo::kOblivious>(args, stream);
}

template <class T>
std::size_t SymvAwareAtomicKernels::workspace_bytes(int n) {
  return symv_v1::workspace_bytes<T>(n, symv_v1::Algo::kAwareAtomic);  // 0: partials go straight into y
}
template <class T>
cudaError_t SymvAwareAtomicKernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  return symv_v1::launch<T, symv_v1::Algo::kAwareAtomic>(args, stream);
}

#define GPUPROBE_SYMV_KERNELS_INSTANTIATE(Kernels, T)        \
  template std::size_t Kernels::workspace_bytes<T>(int n); \
  template cudaError_t Kernels::launch<T>(const SymvArgs<T>&, cudaStream_t);
#define GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH(Kernels) \
  GPUPROBE_SYMV_KERNELS_INSTANTIATE(Kernels, float)     \
  GPUPROBE_SYMV_KERNELS_INSTANTIATE(Kernels, double)
GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH(SymvAwareV5Kernels)
GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH(SymvAwareV6Kernels)
GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH(SymvObliviousKernels)
GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH(SymvAwareAtomicKernels)
#undef GPUPROBE_SYMV_KERNELS_INSTANTIATE_BOTH
#undef GPUPROBE_SYMV_KERNELS_INSTANTIATE

}  // namespace detail

namespace {

// The checks of symv_check_args for an implementation that needs `needed` bytes of workspace at n
// (`needed` is asked only once n is known to be valid).
template <class T, class Needed>
Status check_args(Uplo uplo, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                  const void* workspace, std::size_t workspace_bytes, Needed needed) {
  if (n < 0 || lda < std::max(1, n) || incx == 0 || incy == 0) return Status::kInvalidValue;
  if (n == 0) return Status::kSuccess;  // quick return: nothing is read or written
  // The grid's y dimension holds the block rows (symv_v1) or at most as many segments (symv_v3).
  if ((n + symv_v1::kNB - 1) / symv_v1::kNB > 65535) return Status::kInvalidValue;
  if (!A || !x || !y) return Status::kNullPointer;
  const std::size_t need = needed(n);
  if (workspace_bytes < need) return Status::kWorkspaceTooSmall;
  if (need > 0 && !workspace) return Status::kNullPointer;
  return Status::kSuccess;
}

bool uplo_valid(Uplo uplo) { return uplo == Uplo::kLower || uplo == Uplo::kUpper; }

}  // namespace

namespace detail {

template <class T>
Status symv_with_launch(const SymvLaunch<T>& launch, Uplo uplo, int n, T alpha, const T* A, int lda, const T* x,
                        int incx, T beta, T* y, int incy, void* workspace, std::size_t workspace_bytes,
                        cudaStream_t stream) {
  if (!uplo_valid(uplo) || launch.workspace_bytes == nullptr || launch.launch == nullptr)
    return Status::kInvalidValue;
  const Status st =
      check_args<T>(uplo, n, A, lda, x, incx, y, incy, workspace, workspace_bytes, launch.workspace_bytes);
  if (st != Status::kSuccess || n == 0) return st;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  if (alpha == T(0)) {  // A and x are not read
    blas2::launch_scale(n, beta, blas2::make_strided(y, n, incy), stream);
    return blas2::launch_status();
  }
  const SymvArgs<T> args{uplo, n, alpha, A, lda, x, incx, beta, y, incy, workspace};
  return launch.launch(args, stream) == cudaSuccess ? Status::kSuccess : Status::kLaunchFailed;
}
template Status symv_with_launch<float>(const SymvLaunch<float>&, Uplo, int, float, const float*, int, const float*,
                                        int, float, float*, int, void*, std::size_t, cudaStream_t);
template Status symv_with_launch<double>(const SymvLaunch<double>&, Uplo, int, double, const double*, int,
                                         const double*, int, double, double*, int, void*, std::size_t, cudaStream_t);

}  // namespace detail

const char* symv_impl_name(SymvImpl impl) {
  const SymvImplRecord* record = symv_impl_record(impl);
  return record != nullptr ? record->name : "unknown";
}

template <class T>
SymvImpl symv_auto_impl(Uplo, int n, SymvImpl impl, long long l2_bytes) {
  if (impl != SymvImpl::kAuto) return impl;
  if (sizeof(T) != 8 || n <= 0) return SymvImpl::kAwareV6;  // float: v5's geometry is v6's
  if (l2_bytes < 0) l2_bytes = blas2::device_l2_bytes();
  const double partials = static_cast<double>(detail::SymvAwareV6Kernels::workspace_bytes<T>(n));
  return l2_bytes > 0 && partials > 0.5 * static_cast<double>(l2_bytes) ? SymvImpl::kAwareV5 : SymvImpl::kAwareV6;
}
template SymvImpl symv_auto_impl<float>(Uplo, int, SymvImpl, long long);
template SymvImpl symv_auto_impl<double>(Uplo, int, SymvImpl, long long);

template <class T>
std::size_t symv_workspace_bytes(int n, SymvImpl impl) {
  const SymvImplRecord* record = symv_impl_record(impl);
  if (n <= 0 || record == nullptr) return 0;
  if (impl != SymvImpl::kAuto) return record->launchers.of<T>().workspace_bytes(n);
  std::size_t bytes = 0;  // kAuto: every record it may choose (not a baseline)
  for (const SymvImplRecord& r : kSymvImpls)
    if (r.impl != SymvImpl::kAuto && !r.baseline) bytes = std::max(bytes, r.launchers.of<T>().workspace_bytes(n));
  return bytes;
}

template <class T>
Status symv_check_args(Uplo uplo, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, SymvImpl impl) {
  if (!uplo_valid(uplo) || symv_impl_record(impl) == nullptr) return Status::kInvalidValue;
  return check_args<T>(uplo, n, A, lda, x, incx, y, incy, workspace, workspace_bytes,
                       [impl](int valid_n) { return symv_workspace_bytes<T>(valid_n, impl); });
}

template <class T>
Status symv(Uplo uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream, SymvImpl impl) {
  const Status st = symv_check_args<T>(uplo, n, A, lda, x, incx, y, incy, workspace, workspace_bytes, impl);
  if (st != Status::kSuccess || n == 0) return st;
  // kAuto's workspace covers whichever record it resolves to (symv_workspace_bytes).
  const SymvImplRecord* record = symv_impl_record(symv_auto_impl<T>(uplo, n, impl));
  return detail::symv_with_launch<T>(record->launchers.of<T>(), uplo, n, alpha, A, lda, x, incx, beta, y, incy,
                                     workspace, workspace_bytes, stream);
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
