// Kernel benchmarks (ours vs cuBLAS), one call per kernel group (see registry.hpp).
// register_blas2_benchmarks() (SYMV, GEMV) joins here when probes/kernels_blas2.cu lands.
#include "probes/registry.hpp"

namespace gpuprobe {

void register_kernel_benchmarks() {
  register_sgemm_benchmarks();
}

}  // namespace gpuprobe
