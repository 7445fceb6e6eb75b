// The product's two tilings (kernels/src/sgemm_tilings.cuh) at fixed split-k counts, to choose the
// dispatch rule of sgemm_choose() (docs/perf/sgemm.md): kSmall's 64 x 64 tiling split 1, 2, 4 and 8
// ways and kTuned's 128 x 128 tiling split 2 and 4 ways (clusters of that many blocks along z).
#include "sgemm_tilings.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::sgemm_lab {

using namespace kernels::detail;  // the kernel template and the product's tilings

// The library's per-device answer (kSmall's split-k kernel; this file is built with the same architectures).
template <class T, int kSplits>
cudaError_t launch_split(const SgemmArgs& a, cudaStream_t s) {
  if (kSplits > 1 && !kernels::sgemm_device_traits().split_k) return cudaErrorNotSupported;
  return launch_tuned<T, KContiguousPath::kCpAsyncScalar, true>(a, s, kSplits);
}

cudaError_t launch_small_split1(const SgemmArgs& a, cudaStream_t s) { return launch_split<SmallTiling, 1>(a, s); }
cudaError_t launch_small_split2(const SgemmArgs& a, cudaStream_t s) { return launch_split<SmallTiling, 2>(a, s); }
cudaError_t launch_small_split4(const SgemmArgs& a, cudaStream_t s) { return launch_split<SmallTiling, 4>(a, s); }
cudaError_t launch_small_split8(const SgemmArgs& a, cudaStream_t s) { return launch_split<SmallTiling, 8>(a, s); }
cudaError_t launch_tuned_split2(const SgemmArgs& a, cudaStream_t s) { return launch_split<LargeTiling, 2>(a, s); }
cudaError_t launch_tuned_split4(const SgemmArgs& a, cudaStream_t s) { return launch_split<LargeTiling, 4>(a, s); }

}  // namespace gpuprobe::sgemm_lab
