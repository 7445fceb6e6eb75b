#include "fill.hpp"

#include "gpuprobe/check.hpp"
#include "gpuprobe/hash.hpp"

namespace gpuprobe {
namespace {

constexpr int kFillThreads = 256;

unsigned fill_blocks(std::size_t count) {
  const std::size_t blocks = (count + kFillThreads - 1) / kFillThreads;
  return static_cast<unsigned>(blocks < 65535u * 16 ? (blocks ? blocks : 1) : 65535u * 16);
}

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t count, std::uint64_t seed, T lo, T hi) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double u = unit_interval(mix64(seed ^ mix64(i)));
    data[i] = static_cast<T>(lo + (hi - lo) * u);
  }
}

template <class T>
__global__ void fill_constant_kernel(T* data, std::size_t count, T value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = value;
}

template <class T>
void launch_uniform(T* data, std::size_t count, std::uint64_t seed, T lo, T hi, cudaStream_t stream) {
  if (count == 0) return;
  fill_uniform_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count, seed, lo, hi);
  GP_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_constant(T* data, std::size_t count, T value, cudaStream_t stream) {
  if (count == 0) return;
  fill_constant_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count, value);
  GP_CUDA_CHECK_LAUNCH();
}

// write_sink is 0 at run time and unknown at compile time: the loads cannot be optimized away.
__global__ void read_through_kernel(const uint4* data, std::size_t count, unsigned* sink, int write_sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (write_sink) *sink = acc;
}

}  // namespace

void read_through(const void* data, std::size_t bytes, cudaStream_t stream) {
  const std::size_t count = bytes / sizeof(uint4);
  if (count == 0) return;
  read_through_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(static_cast<const uint4*>(data), count,
                                                                       nullptr, 0);
  GP_CUDA_CHECK_LAUNCH();
}

void fill_uniform(float* d, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t s) {
  launch_uniform(d, n, seed, lo, hi, s);
}
void fill_uniform(double* d, std::size_t n, std::uint64_t seed, double lo, double hi, cudaStream_t s) {
  launch_uniform(d, n, seed, lo, hi, s);
}
void fill_constant(float* d, std::size_t n, float v, cudaStream_t s) { launch_constant(d, n, v, s); }
void fill_constant(double* d, std::size_t n, double v, cudaStream_t s) { launch_constant(d, n, v, s); }

}  // namespace gpuprobe
