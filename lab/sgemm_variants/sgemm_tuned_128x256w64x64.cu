// Variant ours_tuned_128x256_w64x64 (variants.hpp): block 128 x 256 x 16, 8 warps (2 x 4) of 64 x 64,
// 8 x 16 per thread, 3 stages, one block per SM (up to 255 registers), K-contiguous operands by
// register staging. Shared: 3 x 16 x (132 + 260) x 4 B = 75.3 KB. Fewer shared-memory bytes per FFMA
// than 8 x 8 (24 floats loaded per 128 FFMA instead of 16 per 64).
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_128x256_w64x64(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 256, 16, /*warps*/ 2, 4, /*thread*/ 8, 16, /*stages*/ 3, /*blocks/SM*/ 1>;
  return launch_tuned<Tiling>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
