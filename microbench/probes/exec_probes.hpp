// Registration of the execution probe groups (called by register_execution_probes() in
// exec_pipeline.cu) and device helpers they share.
#pragma once

#include <cstdint>

namespace gpuprobe {

void register_pipeline_probes();  // exec_pipeline.cu: exec.latency, exec.throughput, exec.throughput_peak
void register_launch_probes();    // exec_launch.cu: exec.launch_*
void register_barrier_probes();   // exec_barrier.cu: exec.barrier
void register_tensor_probes();    // exec_tensor.cu: exec.tensor, exec.tensor_latency

#if defined(__CUDACC__)
// %globaltimer: nanoseconds, the same clock on every SM (clock64 is per SM).
__device__ __forceinline__ std::uint64_t exec_global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

}  // namespace gpuprobe
