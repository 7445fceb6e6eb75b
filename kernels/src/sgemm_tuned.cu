// SgemmImpl::kTuned: the tuned kernel template (sgemm_tuned.cuh) at the configuration measured best on
// the H100 (docs/perf/sgemm.md; the variants it was chosen against are in lab/sgemm_variants/):
//   block 128 x 128 x 32, 8 warps (2 x 4) of 64 x 32, 8 x 8 per thread, 3 stages, two blocks per SM
//   (launch bound caps registers at 128): 3 x 32 x 272 x 4 B = 104 KB of shared memory per block;
//   K-contiguous operands by 4-byte transposing cp.async (register staging squeezes this
//   128-register tiling);
//   a 1-D grid walked in groups of 16 M-tile rows, column by column inside a group, so that the
//   blocks resident at once share about 16 A and 17 B panels (sgemm_swizzle.cuh);
//   one block barrier per k-tile, the copies of the k-tile two ahead issued after k step 0's fragment
//   loads, so that the loads' latency hides behind the ~130 copy instructions.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

using ProductTiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3,
                                  /*blocks/SM*/ 2, /*M-tile rows per group*/ 16, StageSync::kBlockBarrier,
                                  FfmaOrder::kRowMajor, CopyIssue::kAfterFirstFragments>;

std::size_t sgemm_tuned_smem_bytes() { return ProductTiling::kSmemBytes; }

cudaError_t launch_sgemm_tuned(const SgemmArgs& args, cudaStream_t stream) {
  return launch_tuned<ProductTiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
