// SgemmImpl::kSmall: the 64 x 64 tiling (sgemm_tilings.cuh), split k ways by sgemm_small_splits().
#include "sgemm_tilings.cuh"

namespace gpuprobe::kernels::detail {

std::size_t sgemm_small_smem_bytes() { return SmallTiling::kSmemBytes; }

bool sgemm_small_split_k_here() { return split_k_code_here<SmallTiling>(); }

cudaError_t launch_sgemm_small(const SgemmArgs& args, cudaStream_t stream) {
  const SgemmChoice choice = sgemm_choice(SgemmImpl::kSmall, args.m, args.n, args.k);
  return launch_tuned<SmallTiling, KContiguousPath::kCpAsyncScalar, true>(args, stream, choice.splits);
}

}  // namespace gpuprobe::kernels::detail
