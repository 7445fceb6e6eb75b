// Variants ours_tuned_128x128_w64x32 and ours_tuned_kregister (variants.hpp): block 128 x 128 x 16,
// 8 warps (2 x 4) of 64 x 32, 8 x 8 per thread, 3 stages, two blocks per SM (launch bound caps
// registers at 128), plain 2-D rasterization. Shared: 3 x 16 x (132 + 132) x 4 B = 50.7 KB.
#include "sgemm_tuned_launch.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {
using namespace kernels::detail;  // the kernel template (kernels/src/sgemm_tuned.cuh)

using Tiling128x128w64x32 =
    TunedTiling</*block*/ 128, 128, 16, /*warps*/ 2, 4, /*thread*/ 8, 8, /*stages*/ 3, /*blocks/SM*/ 2>;

// K-contiguous operands by 4-byte cp.async: measured faster here than register staging, whose 8
// staging registers squeeze this 128-register tiling (docs/perf/sgemm.md).
cudaError_t launch_ours_tuned_128x128_w64x32(const SgemmArgs& args, cudaStream_t stream) {
  return launch_tuned<Tiling128x128w64x32, KContiguousPath::kCpAsyncScalar>(args, stream);
}

// The same kernels (one instantiation per copy-path pair serves both launchers).
cudaError_t launch_ours_tuned_kregister(const SgemmArgs& args, cudaStream_t stream) {
  return launch_tuned<Tiling128x128w64x32, KContiguousPath::kRegisterStaged>(args, stream);
}

}  // namespace gpuprobe::sgemm_lab
