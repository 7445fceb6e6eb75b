// Variant ours_tuned_copies_at_tile_start (variants.hpp): the product's tiling (block 128 x 128 x 32,
// 8 warps of 64 x 32, 8 x 8 per thread, 3 stages, two blocks per SM, K-contiguous operands by 4-byte
// cp.async, groups of 16 M-tile rows) with the next k-tile's copies issued right after the barrier
// (CopyIssue::kTileStart) instead of after k step 0's fragment loads: the product's predecessor.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_copies_at_tile_start(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
