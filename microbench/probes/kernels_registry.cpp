// Kernel benchmarks (ours vs cuBLAS), one call per kernel group (see registry.hpp).
#include "probes/registry.hpp"

namespace gpuprobe {

void register_kernel_benchmarks() {
  register_blas2_benchmarks();  // probes/kernels_blas2.cu: SYMV, GEMV
  register_sgemm_benchmarks();
  register_gemm_lt_benchmarks();
  register_mgpu_benchmarks();  // probes/kernels_mgpu.cu: multi-GPU SYMV, GEMV
}

}  // namespace gpuprobe
