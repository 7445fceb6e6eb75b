// SgemmImpl::kTuned: the 128 x 128 tiling (sgemm_tilings.cuh).
#include "sgemm_tilings.cuh"

namespace gpuprobe::kernels::detail {

std::size_t sgemm_tuned_smem_bytes() { return LargeTiling::kSmemBytes; }

cudaError_t launch_sgemm_tuned(const SgemmArgs& args, cudaStream_t stream) {
  return launch_tuned<LargeTiling, KContiguousPath::kCpAsyncScalar>(args, stream);
}

}  // namespace gpuprobe::kernels::detail
