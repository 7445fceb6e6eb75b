#include "launch_gate.hpp"

#include "gpuprobe/check.hpp"

namespace gpuprobe {

namespace {

__device__ __forceinline__ std::uint64_t gate_global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins on the host's flag, words[0] (volatile: every read goes over PCIe to the pinned word); counts
// a time-out in words[1] (one gate per LaunchGate at a time: no race).
__global__ void launch_gate_kernel(volatile unsigned* words, std::uint64_t timeout_ns) {
  const std::uint64_t t0 = gate_global_timer_ns();
  while (words[0] == 0) {
    if (gate_global_timer_ns() - t0 > timeout_ns) {
      words[1] = words[1] + 1;
      __threadfence_system();
      return;
    }
  }
}

}  // namespace

LaunchGate::LaunchGate(std::uint64_t timeout_ns) : timeout_ns_(timeout_ns) {
  GP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_words_), 2 * sizeof(unsigned), cudaHostAllocMapped));
  host_words_[0] = 1;
  host_words_[1] = 0;
  GP_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_words_), host_words_, 0));
}

LaunchGate::~LaunchGate() {
  // Open first: a gate kernel still waiting (an exception between hold and release) ends before
  // cudaFreeHost, which waits for the device, frees the words it reads.
  __atomic_store_n(host_words_, 1u, __ATOMIC_SEQ_CST);
  cudaFreeHost(host_words_);
}

void LaunchGate::hold(cudaStream_t stream) {
  __atomic_store_n(host_words_, 0u, __ATOMIC_SEQ_CST);
  launch_gate_kernel<<<1, 1, 0, stream>>>(device_words_, timeout_ns_);
  GP_CUDA_CHECK_LAUNCH();
}

void LaunchGate::release() { __atomic_store_n(host_words_, 1u, __ATOMIC_SEQ_CST); }

}  // namespace gpuprobe
