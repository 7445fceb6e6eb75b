// gpuprobe::kernels::sgemm: argument checks (before any CUDA call) and dispatch to an implementation.
#include <algorithm>

#include "gpuprobe/kernels/sgemm.hpp"
#include "sgemm_internal.cuh"

namespace gpuprobe::kernels {

const char* sgemm_impl_name(SgemmImpl impl) {
  switch (impl) {
    case SgemmImpl::kTuned: return "tuned";
    case SgemmImpl::kVolkovDemmel: return "volkov_demmel";
    case SgemmImpl::kTuned128x128w64x32: return "tuned_128x128_w64x32";
    case SgemmImpl::kTuned128x256w64x64: return "tuned_128x256_w64x64";
    case SgemmImpl::kTuned128x128w64x64: return "tuned_128x128_w64x64";
    case SgemmImpl::kTuned128x128w64x32KRegister: return "tuned_128x128_w64x32_kregister";
    case SgemmImpl::kTuned128x128x32w64x32: return "tuned_128x128x32_w64x32";
    case SgemmImpl::kTuned128x128w64x32Stages4: return "tuned_128x128_w64x32_4stages";
    case SgemmImpl::kTuned128x128x32w64x32Swizzle: return "tuned_128x128x32_w64x32_swizzle";
    case SgemmImpl::kTuned128x128x32w64x32Mbarrier: return "tuned_128x128x32_w64x32_mbarrier";
    case SgemmImpl::kTuned128x128x32w64x32MbarrierSerpentine: return "tuned_128x128x32_w64x32_mbarrier_serpentine";
    case SgemmImpl::kTuned128x128x32w64x32CopiesAfterFragments: return "tuned_128x128x32_w64x32_copies_after_fragments";
    case SgemmImpl::kTuned128x128x32w64x32SplitCopies: return "tuned_128x128x32_w64x32_split_copies";
  }
  return "unknown";
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

Status sgemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
             const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream, SgemmImpl impl) {
  const Status status = sgemm_check_args(transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
  if (status != Status::kSuccess) return status;
  if (m == 0 || n == 0) return Status::kSuccess;
  // BLAS quick return: nothing to add and C scaled by one.
  if ((alpha == 0.f || k == 0) && beta == 1.f) return Status::kSuccess;

  // alpha == 0: A and B must not be read (0 * Inf would be NaN); k = 0 gives C = beta * C.
  const detail::SgemmArgs args{transa, transb, m, n, alpha == 0.f ? 0 : k, alpha, A, lda, B, ldb, beta, C, ldc};
  cudaError_t err = cudaErrorInvalidValue;
  switch (impl) {
    case SgemmImpl::kVolkovDemmel: err = detail::launch_sgemm_volkov_demmel(args, stream); break;
    case SgemmImpl::kTuned128x128x32w64x32: err = detail::launch_sgemm_tuned_128x128x32w64x32(args, stream); break;
    case SgemmImpl::kTuned128x128w64x32: err = detail::launch_sgemm_tuned_128x128w64x32(args, stream); break;
    case SgemmImpl::kTuned128x256w64x64: err = detail::launch_sgemm_tuned_128x256w64x64(args, stream); break;
    case SgemmImpl::kTuned128x128w64x64: err = detail::launch_sgemm_tuned_128x128w64x64(args, stream); break;
    case SgemmImpl::kTuned128x128w64x32KRegister:
      err = detail::launch_sgemm_tuned_128x128w64x32_kregister(args, stream);
      break;
    case SgemmImpl::kTuned128x128w64x32Stages4:
      err = detail::launch_sgemm_tuned_128x128w64x32_4stages(args, stream);
      break;
    case SgemmImpl::kTuned128x128x32w64x32Swizzle:
      err = detail::launch_sgemm_tuned_128x128x32w64x32_swizzle(args, stream);
      break;
    case SgemmImpl::kTuned128x128x32w64x32Mbarrier:
      err = detail::launch_sgemm_tuned_128x128x32w64x32_mbarrier(args, stream);
      break;
    case SgemmImpl::kTuned128x128x32w64x32MbarrierSerpentine:
      err = detail::launch_sgemm_tuned_128x128x32w64x32_mbarrier_serpentine(args, stream);
      break;
    // The best measured: k-tile 32, grouped rasterization, the next k-tile's copies after k step 0's
    // fragment loads (docs/perf/sgemm.md).
    case SgemmImpl::kTuned:
    case SgemmImpl::kTuned128x128x32w64x32CopiesAfterFragments:
      err = detail::launch_sgemm_tuned_128x128x32w64x32_copies_after_fragments(args, stream);
      break;
    case SgemmImpl::kTuned128x128x32w64x32SplitCopies:
      err = detail::launch_sgemm_tuned_128x128x32w64x32_split_copies(args, stream);
      break;
    default: return Status::kInvalidValue;
  }
  if (err == cudaErrorInvalidValue) return Status::kInvalidValue;  // a grid dimension over its limit
  return err == cudaSuccess ? Status::kSuccess : Status::kLaunchFailed;
}

}  // namespace gpuprobe::kernels
