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
//   kAuto          the default: the dispatcher. It picks kTuned or kSmall per shape and device by the rule
//                  of sgemm_choose() below, which each record's `chosen_when` states in words; the
//                  benchmark and the report name the kernel it ran (sgemm_choice_name()).
//   kTuned         the sm_90 kernel from one block per SM up: 128 x 128 x 32 block tiles, warp
//                  tiling (64 x 32 per warp, 8 x 8 per thread), a 3-stage cp.async pipeline, padded
//                  (bank-conflict-free) shared tiles, 128-bit shared-memory loads, FP32 FFMA only (no
//                  TF32). K-contiguous operands (A transposed, B not) are transposed into shared memory by
//                  4-byte cp.async. Blocks are walked in groups of 16 M-tile rows (sgemm_swizzle.cuh); the
//                  copies of the k-tile two ahead are issued after k step 0's fragment loads.
//   kSmall         the same kernel template at 64 x 64 x 32 (4 warps of 32 x 32, 4 x 8 per thread, four
//                  blocks per SM), with split-k over a thread-block cluster (sm_90 code): the k-tiles
//                  divided among up to 8 blocks, their partial tiles summed through distributed shared
//                  memory in rank order (deterministic, no workspace, no atomics).
//   kVolkovDemmel  V. Volkov & J. Demmel, "Benchmarking GPUs to tune dense linear algebra", SC08, kept
//                  as the reference design: 64 x 16 blocks of C, 64 threads, each thread a 1 x 16 strip
//                  of C in registers, op(A) streamed from global memory into registers, a 16 x 16 tile
//                  of op(B) in shared memory read as broadcasts. No dispatch reaches it.
// Variants of the tuned kernel studied on the way (other tilings, pipelines, rasterizations) live in
// lab/sgemm_variants/, outside the library.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

// A new implementation: an enumerator here (before kEnd) and its record in kSgemmImpls, same order.
enum class SgemmImpl {
  kAuto,          // the default: the dispatcher (sgemm_choose)
  kTuned,         // 128 x 128 tiles
  kSmall,         // 64 x 64 tiles, split-k
  kVolkovDemmel,  // the SC08 baseline
  kEnd,           // not an implementation: one past the last (the table's checks count on it)
};

namespace detail {
struct SgemmArgs;  // validated arguments (kernels/src/sgemm_internal.cuh)
// Enqueues one SGEMM whose arguments sgemm() validated (m, n > 0; k = 0 when alpha == 0) and returns
// the launch's cudaGetLastError().
using SgemmLauncher = cudaError_t (*)(const SgemmArgs& args, cudaStream_t stream);
cudaError_t launch_sgemm_auto(const SgemmArgs& args, cudaStream_t stream);            // sgemm.cu
cudaError_t launch_sgemm_tuned(const SgemmArgs& args, cudaStream_t stream);           // sgemm_tuned.cu
cudaError_t launch_sgemm_small(const SgemmArgs& args, cudaStream_t stream);           // sgemm_small.cu
cudaError_t launch_sgemm_volkov_demmel(const SgemmArgs& args, cudaStream_t stream);  // sgemm_volkov_demmel.cu
}  // namespace detail

struct SgemmImplRecord {
  SgemmImpl impl;
  const char* name;  // unique; sgemm_impl_name(), benchmark entries impl:ours_<name>, GPU test names
  detail::SgemmLauncher launch;
  const char* description;  // one line: what the implementation is
  const char* chosen_when;  // one line: when kAuto runs it (the rule of sgemm_choose, in words)
};

inline constexpr SgemmImplRecord kSgemmImpls[] = {
    {SgemmImpl::kAuto, "auto", &detail::launch_sgemm_auto,
     "the dispatcher: kTuned or kSmall per shape and device (sgemm_choose)", "always (the default of sgemm())"},
    {SgemmImpl::kTuned, "tuned", &detail::launch_sgemm_tuned,
     "sm_90 FFMA kernel: 128x128x32 blocks, 8 warps of 64x32, 8x8 per thread, 3-stage cp.async, "
     "grouped rasterization (16 M-tile rows), next copies after k step 0's fragment loads",
     "C has at least one 128x128 tile per SM and the GPU gives a block its 104 KB of shared memory"},
    {SgemmImpl::kSmall, "small", &detail::launch_sgemm_small,
     "the same template at 64x64x32 blocks, 4 warps of 32x32, 4x8 per thread, 4 blocks per SM; split-k over "
     "a cluster of up to 8 blocks, reduced in distributed shared memory (sm_90 code)",
     "otherwise; split k ways (1, 2, 4 or 8) while tiles x k stay within one wave of 64x64 blocks and each "
     "split keeps at least 4 k-tiles of 32"},
    {SgemmImpl::kVolkovDemmel, "vd", &detail::launch_sgemm_volkov_demmel,
     "Volkov & Demmel (SC08): 64x16 blocks of C, 64 threads, op(A) from global memory into registers, "
     "op(B) 16x16 tiles in shared memory read as broadcasts",
     "never (the reference design)"},
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
        r.description == nullptr || r.description[0] == '\0' || r.chosen_when == nullptr ||
        r.chosen_when[0] == '\0')
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

// ---- The dispatch rule of kAuto ------------------------------------------------------------------
// Tile sizes and occupancies of kTuned and kSmall (kernels/src/sgemm_tilings.cuh asserts that its
// tilings are these).
inline constexpr int kSgemmLargeTile = 128, kSgemmLargeBlocksPerSm = 2;
inline constexpr int kSgemmSmallTile = 64, kSgemmSmallBlocksPerSm = 4;
inline constexpr int kSgemmKTile = 32;
inline constexpr int kSgemmMaxSplits = 8;            // the portable cluster size
inline constexpr int kSgemmMinKTilesPerSplit = 4;    // below that the pipeline's fill dominates a split

// What the rule needs to know of the GPU.
struct SgemmDeviceTraits {
  int sms = 0;                  // multiprocessors
  bool large_fits = false;      // kTuned's shared memory fits a block (opt-in limit)
  bool split_k = false;         // the split-k kernel runs here (cc >= 9.0 and sm_90 code in the build)
};

struct SgemmChoice {
  SgemmImpl impl = SgemmImpl::kTuned;
  int splits = 1;  // kSmall: blocks per C tile along k (1 = no split-k)
};

constexpr long long sgemm_tiles(int m, int n, int tile) {
  return (static_cast<long long>(m) + tile - 1) / tile * ((static_cast<long long>(n) + tile - 1) / tile);
}

// kSmall's split count: doubled while the blocks stay within one wave of kSmall (blocks per SM x SMs)
// and every split keeps at least kSgemmMinKTilesPerSplit k-tiles.
constexpr int sgemm_small_splits(int m, int n, int k, const SgemmDeviceTraits& gpu) {
  if (!gpu.split_k) return 1;
  const long long tiles = sgemm_tiles(m, n, kSgemmSmallTile);
  const long long wave = static_cast<long long>(kSgemmSmallBlocksPerSm) * gpu.sms;
  const long long k_tiles = (static_cast<long long>(k) + kSgemmKTile - 1) / kSgemmKTile;
  int splits = 1;
  while (splits * 2 <= kSgemmMaxSplits && tiles * splits * 2 <= wave &&
         k_tiles >= static_cast<long long>(kSgemmMinKTilesPerSplit) * splits * 2)
    splits *= 2;
  return splits;
}

// kAuto's rule: kTuned where C has at least one 128 x 128 tile per SM and the GPU gives it its shared memory,
// kSmall (with sgemm_small_splits) otherwise. Measured on the H100 (132 SMs, docs/perf/sgemm.md): at 1024^3
// (64 tiles) kSmall split 2 ran 0.77-0.84x cuBLAS against kTuned's 0.52-0.57x; at 2048^3 (256 tiles, just
// under one wave of 2 per SM) kTuned ran 0.84-0.94x against kSmall's 0.70-0.81x. Transposition and
// alignment choose the copy paths inside each kernel (sgemm_tuned.cuh), not the kernel.
constexpr SgemmChoice sgemm_choose(int m, int n, int k, const SgemmDeviceTraits& gpu) {
  if (gpu.large_fits && sgemm_tiles(m, n, kSgemmLargeTile) >= static_cast<long long>(gpu.sms))
    return {SgemmImpl::kTuned, 1};
  return {SgemmImpl::kSmall, sgemm_small_splits(m, n, k, gpu)};
}

// This GPU's traits (the current device; kept per device after the first call).
SgemmDeviceTraits sgemm_device_traits();

// What sgemm(..., impl) runs for this shape on the current device: impl itself, or kAuto's choice.
SgemmChoice sgemm_choice(SgemmImpl impl, int m, int n, int k);
// "tuned", "small", "small, split-k 4", ...: the kernel a choice names, for benchmarks and the report.
std::string sgemm_choice_name(const SgemmChoice& choice);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue or kNullPointer.
Status sgemm_check_args(Trans transa, Trans transb, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, const float* C, int ldc);

// Enqueues C = alpha op(A) op(B) + beta C on `stream`. Returns kInvalidValue for an `impl` that names
// no implementation, kLaunchFailed if the launch itself failed (asynchronous faults surface at the
// caller's next synchronizing call).
Status sgemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
             const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream,
             SgemmImpl impl = SgemmImpl::kAuto);

}  // namespace gpuprobe::kernels
