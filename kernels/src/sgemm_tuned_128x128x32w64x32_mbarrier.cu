// The default tiling (sgemm_tuned_128x128x32w64x32_swizzle.cu: block 128 x 128 x 32, 8 warps of 64
// x 32, 8 x 8 per thread, 3 stages, two blocks per SM, grouped rasterization) with the k-tile
// pipeline synchronized by per-stage mbarriers instead of one __syncthreads per k-tile
// (StageSync::kMbarrier in sgemm_tuned.cuh; docs/perf/sgemm.md), and the same with the FFMAs walked
// in serpentine order. Variants until measured; their own translation unit so that they build in
// parallel with the default.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_128x128x32w64x32_mbarrier(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kMbarrier>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

cudaError_t launch_sgemm_tuned_128x128x32w64x32_mbarrier_serpentine(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kMbarrier, FfmaOrder::kSerpentine>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
