// The SM-driven copy of the transfer probes (transfer_host.cu): a kernel on the current device
// copying `bytes` from `src` to `dst` in 16-byte words (the tail byte by byte). Either pointer may
// be mapped host memory (zero-copy) or a peer GPU's memory. Shared with tests/gpu/transfer_test.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace gpuprobe {

// Both pointers must be 16-byte aligned (cudaMalloc and cudaHostAlloc give 256 bytes or more).
void transfer_sm_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace gpuprobe
