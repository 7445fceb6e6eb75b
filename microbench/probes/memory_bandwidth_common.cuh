// What the bandwidth probes' translation units share (memory_bandwidth.cu, memory_l2_bandwidth.cu): the
// stream kernels' table, which names the kernels and drives their byte accounting, the device helpers of
// their loops, and one pool of device memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprobe {
namespace bandwidth {

// The stream kernels and their byte accounting (one table drives names, bytes and footprints).

enum class StreamKernel { kRead, kReadL2Only, kReadNonCoherent, kWrite, kCopy, kTriad };

struct StreamKernelInfo {
  StreamKernel kernel;
  const char* name;
  int arrays;        // distinct arrays touched: the working set is arrays x elements x vector bytes
  int accesses;      // loads + stores per element visit: bytes = accesses x vector bytes
  bool stores;       // whether it stores (only then does a store cache hint matter)
};

inline constexpr StreamKernelInfo kStreamKernels[] = {
    {StreamKernel::kRead, "read", 1, 1, false},
    {StreamKernel::kReadL2Only, "read_cg", 1, 1, false},       // ld.global.cg: L1 bypassed
    {StreamKernel::kReadNonCoherent, "read_nc", 1, 1, false},  // ld.global.nc: read-only data path
    {StreamKernel::kWrite, "write", 1, 1, true},
    {StreamKernel::kCopy, "copy", 2, 2, true},
    {StreamKernel::kTriad, "triad", 3, 3, true},
};

__device__ __forceinline__ unsigned lanes_xor(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned lanes_xor(float2 v) { return __float_as_uint(v.x) ^ __float_as_uint(v.y); }
__device__ __forceinline__ unsigned lanes_xor(float4 v) {
  return __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
}
template <class V> __device__ __forceinline__ V splat(float v);
template <> __device__ __forceinline__ float splat<float>(float v) { return v; }
template <> __device__ __forceinline__ float2 splat<float2>(float v) { return {v, v}; }
template <> __device__ __forceinline__ float4 splat<float4>(float v) { return {v, v, v, v}; }

// Arrays of one kernel start this far apart beyond their size, so that two streams never walk
// addresses that differ only in high bits (same DRAM bank and channel at every step).
constexpr std::uint64_t kArrayPadding = (std::uint64_t(1) << 20) + (std::uint64_t(5) << 10);

// Bytes one sample moves at least: enough that a sample lasts >= ~250 us even at L1 speed, so the
// launch latency and the last wave's tail inside the event pair stay a small fraction.
constexpr double kMinBytesPerSample = 8e9;

// Device memory: one pool of random data in [1, 2), grown on demand, shared by the bandwidth probes (one
// pool, so that two of them never hold two large buffers), and a word for the kernels' unused results.
char* bandwidth_memory(std::uint64_t bytes);
unsigned* bandwidth_sink();

// memory.l2_bandwidth's entries (memory_l2_bandwidth.cu), registered by register_memory_bandwidth_probes.
void register_l2_bandwidth_probes();

}  // namespace bandwidth
}  // namespace gpuprobe
