// The SM-driven copy of the transfer probes (transfer_host.cu): a kernel on the current device (all
// of its SMs, full occupancy) copying `bytes` from `src` to `dst` in 16-byte words (the tail byte by
// byte). Either pointer may be mapped host memory (zero-copy) or a peer GPU's memory (peer access of
// the current device to it enabled). Shared with transfer_p2p.cu and the GPU tests.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace gpuprobe {

// Both pointers must be 16-byte aligned (cudaMalloc and cudaHostAlloc give 256 bytes or more);
// `stream` must belong to the current device.
void transfer_sm_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace gpuprobe
