// gpuprobe::kernels::sgemm: argument checks (before any CUDA call) and dispatch through kSgemmImpls.
#include <algorithm>
#include <array>
#include <mutex>
#include <string>

#include "gpuprobe/kernels/sgemm.hpp"
#include "sgemm_internal.cuh"

namespace gpuprobe::kernels {

const char* sgemm_impl_name(SgemmImpl impl) {
  const SgemmImplRecord* record = sgemm_impl_record(impl);
  return record != nullptr ? record->name : "unknown";
}

Status sgemm_check_args(Trans transa, Trans transb, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, const float* C, int ldc) {
  if (m < 0 || n < 0 || k < 0) return Status::kInvalidValue;
  const int a_rows = transa == Trans::kNoTrans ? m : k;  // rows of A as stored
  const int b_rows = transb == Trans::kNoTrans ? k : n;
  if (lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m)) return Status::kInvalidValue;
  if (m > 0 && n > 0 && (A == nullptr || B == nullptr || C == nullptr)) return Status::kNullPointer;
  return Status::kSuccess;
}

namespace detail {
std::size_t sgemm_tuned_smem_bytes();  // sgemm_tuned.cu
std::size_t sgemm_small_smem_bytes();  // sgemm_small.cu
bool sgemm_small_split_k_here();       // sgemm_small.cu
}  // namespace detail

std::size_t sgemm_dynamic_smem_bytes(SgemmImpl impl) {
  switch (impl) {
    case SgemmImpl::kTuned: return detail::sgemm_tuned_smem_bytes();
    // kAuto runs kSmall where kTuned does not fit: it needs kSmall's.
    case SgemmImpl::kAuto:
    case SgemmImpl::kSmall: return detail::sgemm_small_smem_bytes();
    // Volkov-Demmel's tile is static shared memory, about 1 KB: within every GPU's default 48 KB.
    default: return 0;
  }
}

SgemmDeviceTraits sgemm_device_traits() {
  static std::array<std::once_flag, detail::kMaxDevices> once;
  static std::array<SgemmDeviceTraits, detail::kMaxDevices> traits;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= detail::kMaxDevices) return {};
  std::call_once(once[device], [&] {
    SgemmDeviceTraits t;
    int optin = 0;
    if (cudaDeviceGetAttribute(&t.sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) t.sms = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess)
      t.large_fits = static_cast<std::size_t>(optin) >= detail::sgemm_tuned_smem_bytes();
    t.split_k = detail::sgemm_small_split_k_here();
    traits[device] = t;
  });
  return traits[device];
}

SgemmChoice sgemm_choice(SgemmImpl impl, int m, int n, int k) {
  switch (impl) {
    case SgemmImpl::kAuto: return sgemm_choose(m, n, k, sgemm_device_traits());
    case SgemmImpl::kSmall: return {SgemmImpl::kSmall, sgemm_small_splits(m, n, k, sgemm_device_traits())};
    default: return {impl, 1};
  }
}

std::string sgemm_choice_name(const SgemmChoice& choice) {
  std::string name = sgemm_impl_name(choice.impl);
  if (choice.splits > 1) name += ", split-k " + std::to_string(choice.splits);
  return name;
}

namespace detail {

Status sgemm_with_launcher(SgemmLauncher launch, Trans transa, Trans transb, int m, int n, int k, float alpha,
                           const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                           cudaStream_t stream) {
  if (launch == nullptr) return Status::kInvalidValue;
  const Status status = sgemm_check_args(transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
  if (status != Status::kSuccess) return status;
  if (m == 0 || n == 0) return Status::kSuccess;
  // BLAS quick return: nothing to add and C scaled by one.
  if ((alpha == 0.f || k == 0) && beta == 1.f) return Status::kSuccess;

  // alpha == 0: A and B must not be read (0 * Inf would be NaN); k = 0 gives C = beta * C.
  const SgemmArgs args{transa, transb, m, n, alpha == 0.f ? 0 : k, alpha, A, lda, B, ldb, beta, C, ldc};
  const cudaError_t err = launch(args, stream);
  if (err == cudaErrorInvalidValue) return Status::kInvalidValue;  // a grid dimension over its limit
  return err == cudaSuccess ? Status::kSuccess : Status::kLaunchFailed;
}

cudaError_t launch_sgemm_auto(const SgemmArgs& args, cudaStream_t stream) {
  const SgemmChoice choice = sgemm_choice(SgemmImpl::kAuto, args.m, args.n, args.k);
  const SgemmImplRecord* record = sgemm_impl_record(choice.impl);
  if (record == nullptr || choice.impl == SgemmImpl::kAuto) return cudaErrorInvalidValue;
  return record->launch(args, stream);  // kSmall derives the same splits from the same rule
}

}  // namespace detail

Status sgemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
             const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream, SgemmImpl impl) {
  const SgemmImplRecord* record = sgemm_impl_record(impl);
  if (record == nullptr) return Status::kInvalidValue;
  return detail::sgemm_with_launcher(record->launch, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                     stream);
}

}  // namespace gpuprobe::kernels
