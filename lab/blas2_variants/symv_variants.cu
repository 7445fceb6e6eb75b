// The SYMV variants' entry points (variants.hpp): the product's kernel templates (kernels/src) in
// the configurations kAuto no longer runs. Each is what symv() ran for its SymvImpl before the
// product kept only what its default reaches (docs/perf/symv.md, "Versions").
#include "symv_v1.cuh"  // kernels/src
#include "symv_v3.cuh"  // kernels/src
#include "variants.hpp"

namespace gpuprobe::blas2_lab {

using kernels::detail::SymvArgs;
namespace symv_v1 = kernels::symv_v1;
namespace symv_v3 = kernels::symv_v3;

// v1 aware: units of one block row, a slot of column dots per stored off-diagonal tile.
template <class T>
std::size_t SymvAwareKernels::workspace_bytes(int n) {
  return symv_v1::workspace_bytes<T>(n, symv_v1::Algo::kAware);
}
template <class T>
cudaError_t SymvAwareKernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  return symv_v1::launch<T, symv_v1::Algo::kAware>(args, stream);
}

// v3: kAwareV6's groups of block rows with the grid walked segment first, plain loads.
template <class T>
std::size_t SymvAwareV3Kernels::workspace_bytes(int n) {
  return symv_v3::workspace_bytes<T>(n, symv_v3::sub_rows<T>());
}
template <class T>
cudaError_t SymvAwareV3Kernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  const symv_v3::Plan plan = symv_v3::plan_for(args.n, symv_v3::sub_rows<T>(), /*group_fastest=*/false);
  return symv_v3::launch<T>(args, plan, /*evict_first_a=*/false, stream);
}

// v3 with evict-first loads of A when the triangle exceeds the L2 (as the product's).
template <class T>
std::size_t SymvAwareV3StreamKernels::workspace_bytes(int n) {
  return symv_v3::workspace_bytes<T>(n, symv_v3::sub_rows<T>());
}
template <class T>
cudaError_t SymvAwareV3StreamKernels::launch(const SymvArgs<T>& args, cudaStream_t stream) {
  const symv_v3::Plan plan = symv_v3::plan_for(args.n, symv_v3::sub_rows<T>(), /*group_fastest=*/false);
  return symv_v3::launch<T>(args, plan, symv_v3::triangle_exceeds_l2<T>(args.n), stream);
}

#define GPUPROBE_BLAS2_LAB_INSTANTIATE(Kernels)                                       \
  template std::size_t Kernels::workspace_bytes<float>(int);                          \
  template std::size_t Kernels::workspace_bytes<double>(int);                         \
  template cudaError_t Kernels::launch<float>(const SymvArgs<float>&, cudaStream_t);  \
  template cudaError_t Kernels::launch<double>(const SymvArgs<double>&, cudaStream_t);
GPUPROBE_BLAS2_LAB_INSTANTIATE(SymvAwareKernels)
GPUPROBE_BLAS2_LAB_INSTANTIATE(SymvAwareV3Kernels)
GPUPROBE_BLAS2_LAB_INSTANTIATE(SymvAwareV3StreamKernels)
#undef GPUPROBE_BLAS2_LAB_INSTANTIATE

}  // namespace gpuprobe::blas2_lab
