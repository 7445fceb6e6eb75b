// Variants ours_tuned_plain_raster and ours_tuned_4stages (variants.hpp) of the 128 x 128 tiling
// (8 warps of 64 x 32, 8 x 8 per thread, two blocks per SM, K-contiguous operands by 4-byte cp.async,
// plain 2-D rasterization):
//   k-tile 32, 3 stages: half the barriers and pipeline bookkeeping per FFMA; 3 x 32 x 272 x 4 B =
//       104 KB of shared memory per block (two blocks: 209 KB of the SM's 228 KB);
//   k-tile 16, 4 stages: one more k-tile in flight; 4 x 16 x 272 x 4 B = 70 KB per block.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_plain_raster(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

cudaError_t launch_ours_tuned_4stages(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 16, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 4, /*blocks/SM*/ 2>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
