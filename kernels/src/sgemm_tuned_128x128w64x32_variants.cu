// Variants of the 128 x 128 x 16 tiling (8 warps of 64 x 32, 8 x 8 per thread, two blocks per SM,
// K-contiguous operands by 4-byte cp.async), docs/perf/sgemm.md:
//   k-tile 32, 3 stages: half the barriers and pipeline bookkeeping per FFMA; 3 x 32 x 272 x 4 B =
//       104 KB of shared memory per block (two blocks: 209 KB of the SM's 228 KB). The best measured
//       at 4096-16384 NN (run 4): the default kTuned;
//   k-tile 16, 4 stages: one more k-tile in flight; 4 x 16 x 272 x 4 B = 70 KB per block.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_128x128x32w64x32(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

cudaError_t launch_sgemm_tuned_128x128w64x32_4stages(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 16, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 4, /*blocks/SM*/ 2>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
