// Variants ours_tuned_mbarrier and ours_tuned_mbarrier_serpentine (variants.hpp): the tiling of
// ours_tuned_copies_at_tile_start (block 128 x 128 x 32, 8 warps of 64 x 32, 8 x 8 per thread,
// 3 stages, two blocks per SM, groups of 16 M-tile rows) with the k-tile pipeline synchronized by
// per-stage mbarriers instead of one __syncthreads per k-tile (StageSync::kMbarrier in
// kernels/src/sgemm_tuned.cuh), and the same with the FFMAs walked in serpentine order.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_mbarrier(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kMbarrier>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

cudaError_t launch_ours_tuned_mbarrier_serpentine(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kMbarrier, FfmaOrder::kSerpentine>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
