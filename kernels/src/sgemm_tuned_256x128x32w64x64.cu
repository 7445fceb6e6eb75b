// The k-tile-32 tiling of sgemm_tuned_256x128w64x64.cu (its own translation unit so that the two
// build in parallel): block 256 x 128 x 32, 8 warps (4 x 2) of 64 x 64, 8 x 16 per thread, 3 stages,
// one block per SM, K-contiguous operands by 4-byte cp.async, grouped rasterization (8 M-tile rows).
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_256x128x32w64x64_swizzle(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 256, 128, 32, /*warps*/ 4, 2, /*thread*/ 8, 16, /*stages*/ 3, /*blocks/SM*/ 1,
                             /*M-tile rows per group*/ 8>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
