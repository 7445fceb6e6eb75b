// Launchers behind gpuprobe::kernels::sgemm (sgemm.cu). Arguments arrive validated, with m, n > 0,
// and k already set to 0 when alpha == 0 (so that A and B are not read). They return the launch's
// cudaGetLastError().
#pragma once

#include <cuda_runtime.h>

#include "gpuprobe/kernels/blas_types.hpp"
#include "gpuprobe/kernels/sgemm.hpp"

namespace gpuprobe::kernels::detail {

struct SgemmArgs {
  Trans transa, transb;
  int m, n, k;
  float alpha;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float beta;
  float* C;
  int ldc;
};

cudaError_t launch_sgemm_volkov_demmel(const SgemmArgs& args, cudaStream_t stream);
// One translation unit per tiling of the tuned kernel (sgemm_tuned_*.cu), so they build in parallel.
// Block tile (m x n x k), warp tile, thread tile, stages:
cudaError_t launch_sgemm_tuned_128x128w64x32(const SgemmArgs& args, cudaStream_t stream);  // 8x8, 3
cudaError_t launch_sgemm_tuned_128x256w64x64(const SgemmArgs& args, cudaStream_t stream);  // 8x16, 3
cudaError_t launch_sgemm_tuned_128x128w64x64(const SgemmArgs& args, cudaStream_t stream);  // 8x16, 4
// 128x128w64x32 with K-contiguous operands by register staging instead of 4-byte cp.async.
cudaError_t launch_sgemm_tuned_128x128w64x32_kregister(const SgemmArgs& args, cudaStream_t stream);
// 128x128w64x32 variants with 4-byte cp.async for K-contiguous operands: k-tile 32; 4 stages.
cudaError_t launch_sgemm_tuned_128x128x32w64x32(const SgemmArgs& args, cudaStream_t stream);
cudaError_t launch_sgemm_tuned_128x128w64x32_4stages(const SgemmArgs& args, cudaStream_t stream);
// The k-tile-32 tiling with grouped rasterization (16 M-tile rows per group, 1-D grid).
cudaError_t launch_sgemm_tuned_128x128x32w64x32_swizzle(const SgemmArgs& args, cudaStream_t stream);
// The swizzled tiling with per-stage mbarriers instead of a block barrier per k-tile; and with
// serpentine FFMA order too.
cudaError_t launch_sgemm_tuned_128x128x32w64x32_mbarrier(const SgemmArgs& args, cudaStream_t stream);
cudaError_t launch_sgemm_tuned_128x128x32w64x32_mbarrier_serpentine(const SgemmArgs& args, cudaStream_t stream);
// The swizzled tiling with the copies issued after the first fragment loads, or split.
cudaError_t launch_sgemm_tuned_128x128x32w64x32_copies_after_fragments(const SgemmArgs& args, cudaStream_t stream);
cudaError_t launch_sgemm_tuned_128x128x32w64x32_split_copies(const SgemmArgs& args, cudaStream_t stream);

}  // namespace gpuprobe::kernels::detail
