// The tilings of the product's SGEMM kernels (instantiations of sgemm_tuned.cuh), shared with
// lab/sgemm_variants so that its variants time exactly these kernels.
#pragma once

#include "sgemm_tuned_launch.cuh"

namespace gpuprobe::kernels::detail {

// SgemmImpl::kTuned, the configuration measured best on the H100 at one wave of blocks and more
// (docs/perf/sgemm.md; the variants it was chosen against are in lab/sgemm_variants/):
//   block 128 x 128 x 32, 8 warps (2 x 4) of 64 x 32, 8 x 8 per thread, 3 stages, two blocks per SM
//   (launch bound caps registers at 128): 3 x 32 x 272 x 4 B = 104 KB of shared memory per block;
//   K-contiguous operands by 4-byte transposing cp.async (register staging squeezes this
//   128-register tiling);
//   a 1-D grid walked in groups of 16 M-tile rows, column by column inside a group, so that the
//   blocks resident at once share about 16 A and 17 B panels (sgemm_swizzle.cuh);
//   one block barrier per k-tile, the copies of the k-tile two ahead issued after k step 0's fragment
//   loads, so that the loads' latency hides behind the ~130 copy instructions.
using LargeTiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3,
                                /*blocks/SM*/ 2, /*M-tile rows per group*/ 16, StageSync::kBlockBarrier,
                                FfmaOrder::kRowMajor, CopyIssue::kAfterFirstFragments>;

// SgemmImpl::kSmall, for problems whose C has too few 128 x 128 tiles to fill the GPU: block 64 x 64 x 32,
// 4 warps (2 x 2) of 32 x 32, 4 x 8 per thread, 3 stages of 32 x 144 floats (55 KB), four blocks per SM,
// plain 2-D grid (a grid under one wave has no order to choose), split-k over a cluster where the tiles
// alone leave SMs idle.
using SmallTiling = TunedTiling</*block*/ 64, 64, 32, /*warps*/ 2, 2, /*thread*/ 4, 8, /*stages*/ 3,
                                /*blocks/SM*/ 4, /*plain 2-D grid*/ 0, StageSync::kBlockBarrier,
                                FfmaOrder::kRowMajor, CopyIssue::kAfterFirstFragments>;

static_assert(LargeTiling::kBlockM == kSgemmLargeTile && LargeTiling::kBlockN == kSgemmLargeTile &&
                  LargeTiling::kMinBlocksPerSm == kSgemmLargeBlocksPerSm && LargeTiling::kBlockK == kSgemmKTile,
              "kTuned's tiling is the one sgemm_choose() counts on (sgemm.hpp)");
static_assert(SmallTiling::kBlockM == kSgemmSmallTile && SmallTiling::kBlockN == kSgemmSmallTile &&
                  SmallTiling::kMinBlocksPerSm == kSgemmSmallBlocksPerSm && SmallTiling::kBlockK == kSgemmKTile,
              "kSmall's tiling is the one sgemm_choose() counts on (sgemm.hpp)");
static_assert(SmallTiling::kThreadN >= kSgemmMaxSplits,
              "split-k: each rank completes the columns j % splits == rank of the thread tiles");
static_assert(kSgemmSmallBlocksPerSm * SmallTiling::kSmemBytes <= 228 * 1024,
              "four kSmall blocks fit an SM's shared memory (sm_90: 228 KB)");

}  // namespace gpuprobe::kernels::detail
