// SGEMM, column-major as BLAS: C = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T.
//
//   op(A) is m x k, op(B) is k x n, C is m x n.
//   A is stored m x k (lda >= max(1, m)) when transa == kNoTrans, k x m (lda >= max(1, k)) otherwise;
//   B is stored k x n (ldb >= max(1, k)) when transb == kNoTrans, n x k (ldb >= max(1, n)) otherwise;
//   ldc >= max(1, m).
//
// BLAS semantics: when beta == 0, C is not read (NaN or garbage in C does not propagate); when
// alpha == 0 or k == 0, A and B are not read and C = beta * C. m == 0 or n == 0 returns at once.
// Every argument is checked before anything is launched; a bad one returns an error Status and
// nothing runs. A, B and C must be non-null whenever m > 0 and n > 0 (even if they would not be
// read), so that a caller's missing allocation is reported, not hidden.
//
// Implementations: one record each in kSgemmImpls below, from which the name, the dispatch of
// sgemm(), the benchmark entries (impl:ours_<name>) and the GPU tests that loop over implementations
// all derive (docs/perf/sgemm.md):
//   kTuned         the sm_90 kernel and the default: 128 x 128 x 32 block tiles, warp tiling (64 x 32
//                  per warp, 8 x 8 per thread), a 3-stage cp.async pipeline, padded (bank-conflict-free)
//                  shared tiles, 128-bit shared-memory loads, FP32 FFMA only (no TF32). K-contiguous
//                  operands (A transposed, B not) are transposed into shared memory by 4-byte cp.async.
//                  Blocks are walked in groups of 16 M-tile rows (sgemm_swizzle.cuh); the copies of the
//                  k-tile two ahead are issued after k step 0's fragment loads.
//   kVolkovDemmel  V. Volkov & J. Demmel, "Benchmarking GPUs to tune dense linear algebra", SC08, kept
//                  as the reference design: 64 x 16 blocks of C, 64 threads, each thread a 1 x 16 strip
//                  of C in registers, op(A) streamed from global memory into registers, a 16 x 16 tile
//                  of op(B) in shared memory read as broadcasts.
// Variants of the tuned kernel studied on the way (other tilings, pipelines, rasterizations) live in
// lab/sgemm_variants/, outside the library.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

// A new implementation: an enumerator here (before kEnd) and its record in kSgemmImpls, same order.
enum class SgemmImpl {
  kTuned,         // the default
  kVolkovDemmel,  // the SC08 baseline
  kEnd,           // not an implementation: one past the last (the table's checks count on it)
};

namespace detail {
struct SgemmArgs;  // validated arguments (kernels/src/sgemm_internal.cuh)
// Enqueues one SGEMM whose arguments sgemm() validated (m, n > 0; k = 0 when alpha == 0) and returns
// the launch's cudaGetLastError().
using SgemmLauncher = cudaError_t (*)(const SgemmArgs& args, cudaStream_t stream);
cudaError_t launch_sgemm_tuned(const SgemmArgs& args, cudaStream_t stream);          // sgemm_tuned.cu
cudaError_t launch_sgemm_volkov_demmel(const SgemmArgs& args, cudaStream_t stream);  // sgemm_volkov_demmel.cu
}  // namespace detail

struct SgemmImplRecord {
  SgemmImpl impl;
  const char* name;  // unique; sgemm_impl_name(), benchmark entries impl:ours_<name>, GPU test names
  detail::SgemmLauncher launch;
  const char* description;  // one line: what the implementation is
};

inline constexpr SgemmImplRecord kSgemmImpls[] = {
    {SgemmImpl::kTuned, "tuned", &detail::launch_sgemm_tuned,
     "sm_90 FFMA kernel: 128x128x32 blocks, 8 warps of 64x32, 8x8 per thread, 3-stage cp.async, "
     "grouped rasterization (16 M-tile rows), next copies after k step 0's fragment loads"},
    {SgemmImpl::kVolkovDemmel, "vd", &detail::launch_sgemm_volkov_demmel,
     "Volkov & Demmel (SC08): 64x16 blocks of C, 64 threads, op(A) from global memory into registers, "
     "op(B) 16x16 tiles in shared memory read as broadcasts"},
};
inline constexpr std::size_t kSgemmImplCount = sizeof(kSgemmImpls) / sizeof(kSgemmImpls[0]);

namespace detail {
// Record i is enumerator i, every enumerator before kEnd has its record, and each record is complete
// with a name of its own. A template over the table so that a test can show it rejects bad ones.
template <std::size_t kCount>
constexpr bool sgemm_impl_table_is_consistent(const SgemmImplRecord (&table)[kCount]) {
  if (kCount != static_cast<std::size_t>(SgemmImpl::kEnd)) return false;
  for (std::size_t i = 0; i < kCount; ++i) {
    const SgemmImplRecord& r = table[i];
    if (static_cast<std::size_t>(r.impl) != i || r.launch == nullptr || r.name == nullptr || r.name[0] == '\0' ||
        r.description == nullptr || r.description[0] == '\0')
      return false;
    for (std::size_t j = 0; j < i; ++j)
      if (same_text(table[j].name, r.name)) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::sgemm_impl_table_is_consistent(kSgemmImpls),
              "kSgemmImpls: one record per SgemmImpl enumerator, in enumerator order, with unique names");

// The record of `impl`; nullptr for a value that names no implementation.
constexpr const SgemmImplRecord* sgemm_impl_record(SgemmImpl impl) {
  const auto i = static_cast<std::size_t>(impl);
  return i < kSgemmImplCount ? &kSgemmImpls[i] : nullptr;
}

// The record's name; "unknown" for a value that names no implementation.
const char* sgemm_impl_name(SgemmImpl impl);

// The dynamic shared memory one block of `impl` takes (bytes; 0 for none): a GPU whose opt-in limit per
// block (cudaDevAttrMaxSharedMemoryPerBlockOptin) is smaller cannot launch it. The tuned kernel's 3-stage
// 128x128x32 pipeline takes 104,448 B: sm_80, 90 and 100 allow it, sm_86, 89 and 120 (99 KB) do not.
std::size_t sgemm_dynamic_smem_bytes(SgemmImpl impl);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue or kNullPointer.
Status sgemm_check_args(Trans transa, Trans transb, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, const float* C, int ldc);

// Enqueues C = alpha op(A) op(B) + beta C on `stream`. Returns kInvalidValue for an `impl` that names
// no implementation, kLaunchFailed if the launch itself failed (asynchronous faults surface at the
// caller's next synchronizing call).
Status sgemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
             const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream,
             SgemmImpl impl = SgemmImpl::kTuned);

}  // namespace gpuprobe::kernels
