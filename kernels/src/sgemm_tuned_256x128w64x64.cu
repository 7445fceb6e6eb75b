// Tuned SGEMM tilings of cuBLAS's shape on the H100 (ncu, 2026-11-23: cuBLAS 13.1 pedantic NN 4096 runs
// sm80_xmma_gemm_f32f32_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma: 256 threads, 254 registers, one
// block per SM, 87 % of issue slots busy against our 8 x 8 default's 79 %, about the same instruction
// count): block 256 x 128, 8 warps (4 x 2) of 64 x 64, 8 x 16 per thread, 3 stages, one block per SM,
// grouped rasterization (8 M-tile rows of 256 = 2048 rows per group). Against kTuned128x256w64x64
// (the same warp and thread tiles) the K-contiguous operand of NN (B) is the 128-wide one, so half of
// its per-FFMA copy work; the 256-wide A goes by 16-byte cp.async.
//   k-tile 16, K-contiguous operands by register staging: 3 x 16 x (256 + 128 + 16) x 4 B = 76.8 KB;
//   k-tile 32, K-contiguous operands by 4-byte cp.async (the default's path): 153.6 KB.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_256x128w64x64_swizzle(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 256, 128, 16, /*warps*/ 4, 2, /*thread*/ 8, 16, /*stages*/ 3, /*blocks/SM*/ 1,
                             /*M-tile rows per group*/ 8>;
  return launch_tuned<Tiling>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
