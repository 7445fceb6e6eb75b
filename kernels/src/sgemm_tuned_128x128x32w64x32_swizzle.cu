// The tiling of the default (block 128 x 128 x 32, 8 warps of 64 x 32, 8 x 8 per thread, 3 stages, two
// blocks per SM, K-contiguous operands by 4-byte cp.async) with grouped rasterization: a 1-D grid
// walked in groups of 16 M-tile rows, column by column inside a group, so that the 264 co-resident
// blocks of an H100 SXM cover about 16 A row-panels x 17 B column-panels instead of all A panels x 2-9
// B panels (sgemm_swizzle.cuh: per-wave DRAM bytes at 4096-16384; docs/perf/sgemm.md). This kernel,
// with the next k-tile's copies right after the barrier, was the default of v8-v11; v12's default
// issues them after k step 0's fragment loads (sgemm_tuned_128x128x32w64x32_copy_issue.cu). Its own
// translation unit: a separate set of kernels from the plain-mapping k-tile-32 tiling in
// sgemm_tuned_128x128w64x32_variants.cu, built in parallel with it.
#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

cudaError_t launch_sgemm_tuned_128x128x32w64x32_swizzle(const SgemmArgs& args, cudaStream_t stream) {
  using Tiling = TunedTiling</*block*/ 128, 128, 32, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2,
                             /*M-tile rows per group*/ 16>;
  return launch_tuned<Tiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
