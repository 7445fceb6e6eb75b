// Each probe group registers its entries here, after the device is open (sweeps depend on it:
// SM count, L2 size, memory size). main() calls register_all_probes() once.
#pragma once

namespace gpuprobe {

void register_baseline_probes();   // probes/baseline.cu: cudaMemcpy reference figures
void register_memory_probes();     // probes/memory_*.cu
void register_execution_probes();  // probes/exec_*.cu: pipelines, launch, barriers
void register_transfer_probes();   // probes/transfer_*.cu: host<->device, peer-to-peer
void register_kernel_benchmarks(); // probes/kernels_registry.cpp: the ones below
void register_blas2_benchmarks();  // probes/kernels_blas2.cu: SYMV, GEMV vs cuBLAS
void register_sgemm_benchmarks();  // probes/kernels_sgemm.cu: SGEMM vs cuBLAS
void register_gemm_lt_benchmarks();  // probes/kernels_gemm_lt.cu: cuBLASLt GEMMs on the tensor cores
void register_mgpu_benchmarks();   // probes/kernels_mgpu.cu: multi-GPU SYMV, GEMV, the SYTRD sequence

inline void register_all_probes() {
  register_baseline_probes();
  register_memory_probes();
  register_execution_probes();
  register_transfer_probes();
  register_kernel_benchmarks();
}

}  // namespace gpuprobe
