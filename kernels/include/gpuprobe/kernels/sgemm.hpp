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
// Implementations (kept side by side for analysis, docs/perf/sgemm.md):
//   kVolkovDemmel  V. Volkov & J. Demmel, "Benchmarking GPUs to tune dense linear algebra", SC08:
//                  64 x 16 blocks of C, 64 threads, each thread a 1 x 16 strip of C in registers,
//                  op(A) streamed from global memory into registers, a 16 x 16 tile of op(B) in shared
//                  memory read as broadcasts.
//   kTuned         the sm_90 variant: 128 x 128 x 32 block tiles, warp tiling (64 x 32 per warp,
//                  8 x 8 per thread), a 3-stage cp.async pipeline, padded (bank-conflict-free) shared
//                  tiles, 128-bit shared-memory loads, FP32 FFMA only (no TF32). K-contiguous
//                  operands (A transposed, B not) are transposed into shared memory by 4-byte cp.async.
//                  Blocks are walked in groups of 16 M-tile rows; the next k-tile's copies are issued
//                  after k step 0's fragment loads (= kTuned128x128x32w64x32CopiesAfterFragments).
//   kTuned128x128w64x32KRegister  the same, K-contiguous operands loaded into registers a k-tile
//                  ahead (8-byte loads) and stored transposed (STS.128); the 8 x 16 tilings use it.
//   kTuned128x128x32w64x32Swizzle  the k-tile-32 kernel with blocks walked in groups of 16 M-tile
//                  rows, column by column inside a group (1-D grid), so that the blocks resident at once
//                  share fewer A and B panels' worth of DRAM traffic (docs/perf/sgemm.md); the
//                  default of v8-v11, with the next k-tile's copies issued right after the barrier.
//   kTuned128x128x32w64x32Mbarrier  the swizzled kernel with its k-tile pipeline synchronized by
//                  per-stage mbarriers (full: cp.async landed; empty: every warp has read the stage)
//                  instead of one block barrier per k-tile, so that warps drift up to a k-tile apart
//                  before one waits (docs/perf/sgemm.md); ...Serpentine: FFMAs in serpentine order.
//   kTuned128x128x32w64x32CopiesAfterFragments  the swizzled kernel with the copies of the k-tile two
//                  ahead issued after k step 0's fragment loads rather than right after the barrier, so
//                  that the loads' latency hides behind the copy instructions (the default since
//                  v12). ...SplitCopies: op(A)'s copies there, op(B)'s halfway through the k-tile.
//   kTuned*        other tilings of the same kernel template, kept for the tuning record.
#pragma once

#include <cuda_runtime.h>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

enum class SgemmImpl {
  kTuned,            // the default: the best measured (docs/perf/sgemm.md), = kTuned128x128x32w64x32CopiesAfterFragments
  kVolkovDemmel,     // SC08 baseline
  kTuned128x128w64x32,   // 256 threads, 8 x 8 per thread, k-tile 16, 3 stages
  kTuned128x256w64x64,   // 256 threads, 8 x 16 per thread, 3 stages
  kTuned128x128w64x64,   // 128 threads, 8 x 16 per thread, 4 stages
  kTuned128x128w64x32KRegister,  // as kTuned128x128w64x32, K-contiguous operands by register staging
  kTuned128x128x32w64x32,        // as kTuned128x128w64x32 with k-tiles of 32 (half the barriers per FFMA); plain raster
  kTuned128x128w64x32Stages4,    // as kTuned128x128w64x32 with 4 stages
  kTuned128x128x32w64x32Swizzle, // as kTuned128x128x32w64x32 with grouped rasterization (16 M-tile rows per group): v8-v11's default
  kTuned128x128x32w64x32Mbarrier,            // as kTuned128x128x32w64x32Swizzle, stages synchronized by mbarriers
  kTuned128x128x32w64x32MbarrierSerpentine,  // the same with the FFMAs in serpentine order
  kTuned128x128x32w64x32CopiesAfterFragments,  // ...Swizzle, the next copies issued after k step 0's loads (= kTuned)
  kTuned128x128x32w64x32SplitCopies,           // ...Swizzle, op(A)'s copies there, op(B)'s halfway
};

const char* sgemm_impl_name(SgemmImpl impl);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue or kNullPointer.
Status sgemm_check_args(Trans transa, Trans transb, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, const float* C, int ldc);

// Enqueues C = alpha op(A) op(B) + beta C on `stream`. Returns kLaunchFailed if the launch itself
// failed (asynchronous faults surface at the caller's next synchronizing call).
Status sgemm(Trans transa, Trans transb, int m, int n, int k, float alpha, const float* A, int lda,
             const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream,
             SgemmImpl impl = SgemmImpl::kTuned);

}  // namespace gpuprobe::kernels
