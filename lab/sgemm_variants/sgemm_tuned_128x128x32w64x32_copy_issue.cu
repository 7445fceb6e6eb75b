// Variant ours_tuned_split_copies (variants.hpp): the product's tiling with op(A)'s copies of the
// k-tile two ahead issued after k step 0's fragment loads (as the product issues both operands') and
// op(B)'s halfway through the k-tile (CopyIssue::kSplitOperands in kernels/src/sgemm_tuned.cuh): half
// the burst of copy instructions after the barrier.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

cudaError_t launch_ours_tuned_split_copies(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kBlockBarrier, FfmaOrder::kRowMajor,
                             CopyIssue::kSplitOperands>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
