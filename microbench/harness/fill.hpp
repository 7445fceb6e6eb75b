// Device-side fills for probe and test data. Never measure or test on zeros: they hide unwritten
// outputs and wrong indexing, and can run faster than real data.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuprobe {

// Uniform values in [lo, hi) from a counter-based hash of (seed, index): reproducible, any size.
void fill_uniform(float* data, std::size_t count, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream = nullptr);
void fill_uniform(double* data, std::size_t count, std::uint64_t seed, double lo, double hi,
                  cudaStream_t stream = nullptr);
// Every element set to `value` (e.g. NaN, to poison an output before a check).
void fill_constant(float* data, std::size_t count, float value, cudaStream_t stream = nullptr);
void fill_constant(double* data, std::size_t count, double value, cudaStream_t stream = nullptr);

// Reads `bytes` bytes from `data` (16-byte aligned; the tail below 16 bytes is skipped) with 16-byte
// loads on all SMs and discards them: a read-only sweep that leaves only clean lines in the L2.
void read_through(const void* data, std::size_t bytes, cudaStream_t stream = nullptr);

}  // namespace gpuprobe
