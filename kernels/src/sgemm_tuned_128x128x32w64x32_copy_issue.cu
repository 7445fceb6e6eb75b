// The default tiling (sgemm_tuned_128x128x32w64x32_swizzle.cu) with the copies of the k-tile two ahead
// issued later in the iteration than right after the barrier (CopyIssue in sgemm_tuned.cuh;
// docs/perf/sgemm.md): after k step 0's fragment loads, so that the loads' latency hides behind the
// ~130 copy instructions (the default SgemmImpl::kTuned since v12: +0.6 to +2.8 % at NN 4096-16384 on
// the H100); or op(A)'s there and op(B)'s halfway through the k-tile (slower). Their own translation
// unit so that they build in parallel with the other tilings.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_128x128x32w64x32_copies_after_fragments(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kBlockBarrier, FfmaOrder::kRowMajor,
                             CopyIssue::kAfterFirstFragments>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

cudaError_t launch_sgemm_tuned_128x128x32w64x32_split_copies(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16, StageSync::kBlockBarrier, FfmaOrder::kRowMajor,
                             CopyIssue::kSplitOperands>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
