// Variant ours_tuned_128x128_w64x64 (variants.hpp): block 128 x 128 x 16, 4 warps (2 x 2) of 64 x 64,
// 8 x 16 per thread, 4 stages, two blocks per SM (up to 255 registers each), K-contiguous operands by
// register staging. Shared: 4 x 16 x (132 + 132) x 4 B = 67.6 KB. The shape cuBLAS's FFMA kernels use
// on sm_80/sm_90 (128x128x8, 2x2 warps), with a deeper pipeline.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_128x128_w64x64(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 16, /*warps*/ 2, 2, /*thread*/ 8, 16, /*stages*/ 4, /*blocks/SM*/ 2>;
  return launch_tuned<Tiling>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
