// Which L2 flush evicts on this GPU, and which leaves dirty lines whose write-back lands in the
// next timed kernel? A self-contained experiment (gpuprobe's check macro only) behind the harness's
// flush_l2 design (docs/perf/gemv.md, "L2 flush").
//
//   build/lab/experiments/l2_flush   (or: nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/l2_flush.cu -o l2_flush)
//
// Part 1: a 1 MiB random pointer chain (128-byte lines, ld.global.cg so L1 is bypassed) is warmed
// for `laps` laps, its L2-resident latency taken, then a flush method runs, then one lap is timed
// again. Evicted: ~DRAM latency (~680 cycles on an H100); survived: ~L2 (~280).
// Part 2: after each flush method, a 64 MiB streaming read is timed with events (median of 21):
// a flush that leaves dirty lines makes that read pay their write-back.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"


constexpr int kLineWords = 32;  // 128-byte line of uint32

__global__ void chase(const unsigned* chain, unsigned start, int steps, unsigned* sink, double* cycles) {
  unsigned j = start;
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = __ldcg(chain + j);
  const long long t1 = clock64();
  *sink = j;
  *cycles = double(t1 - t0) / steps;
}

__global__ void read_kernel(const uint4* data, size_t count, unsigned* sink, int write_sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (write_sink) *sink = acc;
}

__global__ void write_kernel(uint4* data, size_t count, unsigned value) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    data[i] = make_uint4(value, value, value, value);
}

// discard.global.L2: the line is dropped from L2 without a write-back (its contents become undefined).
__global__ void discard_kernel(char* data, size_t lines) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < lines; i += size_t(gridDim.x) * blockDim.x)
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(data + i * 128) : "memory");
}

int run() {
  int device = 0, l2 = 0, sms = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, L2 %d bytes, %d SMs\n", prop.name, l2, sms);
  const int grid = sms * 8, block = 256;

  // The chain: a random cycle over 1 MiB of 128-byte lines.
  const size_t chain_lines = (size_t(1) << 20) / 128;
  std::vector<unsigned> order(chain_lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(5));
  std::vector<unsigned> host(chain_lines * kLineWords, 0);
  for (size_t i = 0; i < chain_lines; ++i)
    host[size_t(order[i]) * kLineWords] = order[(i + 1) % chain_lines] * kLineWords;
  unsigned *chain, *sink;
  double* cycles;
  GP_CUDA_CHECK(cudaMalloc(&chain, host.size() * 4));
  GP_CUDA_CHECK(cudaMemcpy(chain, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMalloc(&sink, 4));
  GP_CUDA_CHECK(cudaMallocManaged(&cycles, sizeof(double)));

  const size_t scratch_bytes = 4 * size_t(l2);  // methods use 2x or 4x of it
  char* scratch;
  GP_CUDA_CHECK(cudaMalloc(&scratch, scratch_bytes));
  write_kernel<<<grid, block>>>(reinterpret_cast<uint4*>(scratch), scratch_bytes / 16, 0x3f800000u);
  const size_t stream_bytes = size_t(64) << 20;
  char* stream;
  GP_CUDA_CHECK(cudaMalloc(&stream, stream_bytes));
  write_kernel<<<grid, block>>>(reinterpret_cast<uint4*>(stream), stream_bytes / 16, 0x40000000u);
  GP_CUDA_CHECK(cudaDeviceSynchronize());

  auto read = [&](size_t bytes) { read_kernel<<<grid, block>>>(reinterpret_cast<uint4*>(scratch), bytes / 16, sink, 0); };
  auto write = [&](size_t bytes) { write_kernel<<<grid, block>>>(reinterpret_cast<uint4*>(scratch), bytes / 16, 7u); };
  auto discard = [&](size_t bytes) { discard_kernel<<<grid, block>>>(scratch, bytes / 128); };
  struct Method {
    std::string name;
    std::function<void()> run;
  };
  const size_t two = 2 * size_t(l2), four = 4 * size_t(l2);
  std::vector<Method> methods = {
      {"none", [] {}},
      {"read 2xL2", [&] { read(two); }},
      {"read 4xL2", [&] { read(four); }},
      {"memset 2xL2", [&] { GP_CUDA_CHECK(cudaMemsetAsync(scratch, 0, two)); }},
      {"write 2xL2", [&] { write(two); }},
      {"write 2xL2 + discard", [&] { write(two); discard(two); }},
      {"memset 2xL2 + discard", [&] { GP_CUDA_CHECK(cudaMemsetAsync(scratch, 0, two)); discard(two); }},
      {"memset 2xL2 + read 2xL2", [&] { GP_CUDA_CHECK(cudaMemsetAsync(scratch, 0, two)); read(two); }},
      {"write 1xL2 + discard", [&] { write(size_t(l2)); discard(size_t(l2)); }},
  };

  std::printf("\nPart 1: 1 MiB chain latency (cycles/load), resident -> after flush (median of 5)\n");
  for (int laps : {1, 8}) {
    for (auto& m : methods) {
      std::vector<double> before, after;
      for (int rep = 0; rep < 5; ++rep) {
        for (int l = 0; l < laps; ++l) chase<<<1, 1>>>(chain, 0, int(chain_lines), sink, cycles);
        chase<<<1, 1>>>(chain, 0, int(chain_lines), sink, cycles);
        GP_CUDA_CHECK(cudaDeviceSynchronize());
        before.push_back(*cycles);
        m.run();
        GP_CUDA_CHECK(cudaDeviceSynchronize());
        chase<<<1, 1>>>(chain, 0, int(chain_lines), sink, cycles);
        GP_CUDA_CHECK(cudaDeviceSynchronize());
        after.push_back(*cycles);
      }
      std::sort(before.begin(), before.end());
      std::sort(after.begin(), after.end());
      std::printf("  warm laps %d  %-26s %7.1f -> %7.1f  (after: min %.1f max %.1f)\n", laps, m.name.c_str(), before[2],
                  after[2], after[0], after[4]);
    }
  }

  std::printf("\nPart 2: 64 MiB streaming read timed right after each flush (us, median of 21)\n");
  cudaEvent_t e0, e1;
  GP_CUDA_CHECK(cudaEventCreate(&e0));
  GP_CUDA_CHECK(cudaEventCreate(&e1));
  for (auto& m : methods) {
    std::vector<float> us;
    for (int rep = 0; rep < 21; ++rep) {
      m.run();
      GP_CUDA_CHECK(cudaEventRecord(e0));
      read_kernel<<<grid, block>>>(reinterpret_cast<uint4*>(stream), stream_bytes / 16, sink, 0);
      GP_CUDA_CHECK(cudaEventRecord(e1));
      GP_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      GP_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      us.push_back(ms * 1000);
    }
    std::sort(us.begin(), us.end());
    std::printf("  %-26s %8.2f us  (min %.2f max %.2f)  %7.0f GB/s\n", m.name.c_str(), us[10], us[0], us[20],
                stream_bytes / (us[10] * 1e3));
  }
  GP_CUDA_CHECK(cudaGetLastError());
  return 0;
}

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "l2_flush: %s\n", e.what());
    return 1;
  }
}
