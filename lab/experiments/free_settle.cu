// Does freeing (or allocating) device memory slow the DRAM for a while
// afterwards? A self-contained experiment (gpuprobe's check macro only) behind
// the kernel benchmarks' operand handling (microbench/probes/kernels_blas2.cu,
// docs/perf/gemv.md "order effects").
//
//   build/lab/experiments/free_settle [GiB [--skip-part1]]
//   (or: nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/free_settle.cu -o free_settle)
//
// Why: on the H100 the same kernel on the same operands ran 10-15 % slower as
// the first entries of a problem (right after the previous problem's buffers
// were freed and the new ones allocated) than as the last ones, seconds later.
// If the driver scrubs freed memory in the background, that traffic competes
// with the timed kernels until it ends.
//
// Method: a 1 GiB buffer is read by a grid-stride kernel, timed with events
// (one read = one sample). Baseline: 40 samples on a quiet GPU. Then, for each
// event below, samples are taken back to back for `window` seconds right after
// it, and printed per 0.25 s bin as the median time relative to the baseline:
//   alloc+fill : cudaMalloc of GiB gigabytes and a kernel writing all of it
//   (synchronized) free       : cudaFree of that buffer alloc only : cudaMalloc
//   of GiB gigabytes, nothing written (then freed after the window, not timed)
// Part 2 (allocation states): 8 buffers of 1 GiB, then 8 of 256 MiB, allocated
// one after another and kept, each filled and its own read timed (median of 9)
// right away and again once all are allocated: does an allocation have a fixed
// "speed", and do allocations differ? Part 4 (time course): fresh buffers of
// 256 MiB and 1 GiB, each filled, then read back to back for 400 ms: GB/s of
// selected passes and when the read first reached 97 % of its last 20 passes.
// Part 3 (the benchmarks' sequence): an 8 GiB buffer read back to back for 2 s,
// freed, a 512 MiB one allocated and filled, and *its* read timed per 0.25 s
// bin for 12 s.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"

__global__ void read_kernel(const uint4 *data, size_t count, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;  // practically never: keeps the loads
}

__global__ void write_kernel(uint4 *data, size_t count, unsigned value) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    data[i] = make_uint4(value, value ^ 1u, value ^ 2u, value ^ 3u);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int run(double gib, bool part1) {
  int device = 0, sms = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %d SMs; event size %.1f GiB\n", prop.name, sms, gib);
  const int grid = sms * 8, block = 256;
  const size_t probe_bytes = size_t(1) << 30;
  uint4 *probe;
  unsigned *sink;
  GP_CUDA_CHECK(cudaMalloc(&probe, probe_bytes));
  GP_CUDA_CHECK(cudaMalloc(&sink, 4));
  write_kernel<<<grid, block>>>(probe, probe_bytes / 16, 0x3f800000u);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  GP_CUDA_CHECK(cudaEventCreate(&e0));
  GP_CUDA_CHECK(cudaEventCreate(&e1));
  // Seconds of one read of [p, p + bytes), CUDA events around the read kernel: every timing below.
  auto read_seconds = [&](const uint4 *p, size_t bytes) {
    GP_CUDA_CHECK(cudaEventRecord(e0));
    read_kernel<<<grid, block>>>(p, bytes / 16, sink);
    GP_CUDA_CHECK(cudaEventRecord(e1));
    GP_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms) * 1e-3;
  };
  auto sample = [&] { return read_seconds(probe, probe_bytes); };
  for (int i = 0; i < 5; ++i) sample();
  std::vector<double> base;
  for (int i = 0; i < 40; ++i) base.push_back(sample());
  const double t0 = median(base);
  std::printf("baseline: 1 GiB read %.1f us (%.0f GB/s), min %.1f max %.1f us\n", t0 * 1e6, probe_bytes / t0 / 1e9,
              *std::min_element(base.begin(), base.end()) * 1e6, *std::max_element(base.begin(), base.end()) * 1e6);

  const double window = 12.0, bin = 0.25;
  using clock = std::chrono::steady_clock;
  auto watch = [&](const char *what) {
    const auto start = clock::now();
    std::vector<std::vector<double>> bins(static_cast<size_t>(window / bin));
    for (;;) {
      const double t = std::chrono::duration<double>(clock::now() - start).count();
      if (t >= window) break;
      bins[std::min(bins.size() - 1, static_cast<size_t>(t / bin))].push_back(sample());
    }
    std::printf("%s: per %.2f s bin, median read time / baseline (samples)\n ", what, bin);
    for (size_t b = 0; b < bins.size(); ++b) {
      std::printf(" %.3f(%zu)", median(bins[b]) / t0, bins[b].size());
      if (b % 8 == 7) std::printf("\n ");
    }
    std::printf("\n");
  };
  const size_t big = static_cast<size_t>(gib * double(size_t(1) << 30)) / 16 * 16;
  uint4 *buf = nullptr;

  auto t = clock::now();
  if (part1) {
    GP_CUDA_CHECK(cudaMalloc(&buf, big));
    write_kernel<<<grid, block>>>(buf, big / 16, 7u);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("alloc+fill took %.3f s\n", std::chrono::duration<double>(clock::now() - t).count());
    watch("after alloc+fill");

    t = clock::now();
    GP_CUDA_CHECK(cudaFree(buf));
    std::printf("free took %.3f s\n", std::chrono::duration<double>(clock::now() - t).count());
    watch("after free");

    t = clock::now();
    GP_CUDA_CHECK(cudaMalloc(&buf, big));
    std::printf("alloc (untouched) took %.3f s\n", std::chrono::duration<double>(clock::now() - t).count());
    watch("after alloc only");
    GP_CUDA_CHECK(cudaFree(buf));
  }

  // Part 2.
  auto read_gbps = [&](const uint4 *p, size_t bytes) {
    std::vector<double> t;
    for (int i = 0; i < 10; ++i) {
      const double seconds = read_seconds(p, bytes);
      if (i > 0) t.push_back(seconds);
    }
    return bytes / median(t) / 1e9;
  };
  for (size_t each : {size_t(1) << 30, size_t(256) << 20}) {
    std::vector<uint4 *> bufs;
    std::vector<double> first;
    for (int i = 0; i < 8; ++i) {
      uint4 *b = nullptr;
      GP_CUDA_CHECK(cudaMalloc(&b, each));
      write_kernel<<<grid, block>>>(b, each / 16, 11u + i);
      GP_CUDA_CHECK(cudaDeviceSynchronize());
      bufs.push_back(b);
      first.push_back(read_gbps(b, each));
    }
    std::printf(
        "allocation states, %zu MiB buffers, read GB/s right after "
        "allocation / after all 8:\n ",
        each >> 20);
    for (int i = 0; i < 8; ++i) std::printf(" %.0f/%.0f", first[i], read_gbps(bufs[i], each));
    std::printf("\n");
    for (uint4 *b : bufs) GP_CUDA_CHECK(cudaFree(b));
  }

  // Part 4.
  for (size_t each : {size_t(256) << 20, size_t(1) << 30, size_t(256) << 20, size_t(1) << 30}) {
    uint4 *b = nullptr;
    GP_CUDA_CHECK(cudaMalloc(&b, each));
    write_kernel<<<grid, block>>>(b, each / 16, 9u);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> gbps, at;
    const auto t1 = clock::now();
    while (std::chrono::duration<double>(clock::now() - t1).count() < 0.4) {
      gbps.push_back(each / read_seconds(b, each) / 1e9);
      at.push_back(std::chrono::duration<double>(clock::now() - t1).count());
    }
    const double last = median(std::vector<double>(gbps.end() - std::min<size_t>(20, gbps.size()), gbps.end()));
    size_t reach = 0;
    while (reach < gbps.size() && gbps[reach] < 0.97 * last) ++reach;
    std::printf(
        "fresh %zu MiB: %zu passes in 0.4 s, last-20 median %.0f GB/s; "
        "97 %% first at pass %zu (%.1f ms)\n  passes:",
        each >> 20, gbps.size(), last, reach + 1, reach < at.size() ? at[reach] * 1e3 : -1.0);
    for (size_t i : {0, 1, 2, 4, 9, 19, 49, 99, 199, 399, 799})
      if (i < gbps.size()) std::printf(" #%zu %.0f", i + 1, gbps[i]);
    std::printf("\n");
    GP_CUDA_CHECK(cudaFree(b));
  }

  // Part 3.
  {
    const size_t huge = size_t(8) << 30, small = size_t(512) << 20;
    uint4 *h = nullptr;
    GP_CUDA_CHECK(cudaMalloc(&h, huge));
    write_kernel<<<grid, block>>>(h, huge / 16, 5u);
    const auto start = clock::now();
    while (std::chrono::duration<double>(clock::now() - start).count() < 2.0) {
      read_kernel<<<grid, block>>>(h, huge / 16, sink);
      GP_CUDA_CHECK(cudaDeviceSynchronize());
    }
    GP_CUDA_CHECK(cudaFree(h));
    uint4 *s = nullptr;
    GP_CUDA_CHECK(cudaMalloc(&s, small));
    write_kernel<<<grid, block>>>(s, small / 16, 6u);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t1 = clock::now();
    std::vector<std::vector<double>> bins(48);
    for (;;) {
      const double t = std::chrono::duration<double>(clock::now() - t1).count();
      if (t >= 12.0) break;
      bins[std::min<size_t>(47, static_cast<size_t>(t / 0.25))].push_back(small / read_seconds(s, small) / 1e9);
    }
    std::printf(
        "after an 8 GiB buffer read for 2 s and freed: a new 512 MiB "
        "buffer's read GB/s per 0.25 s\n ");
    for (size_t b = 0; b < bins.size(); ++b) {
      std::printf(" %.0f", median(bins[b]));
      if (b % 12 == 11) std::printf("\n ");
    }
    std::printf("\n");
    GP_CUDA_CHECK(cudaFree(s));
  }
  GP_CUDA_CHECK(cudaFree(probe));
  GP_CUDA_CHECK(cudaFree(sink));
  return 0;
}

int main(int argc, char **argv) {
  try {
    return run(argc > 1 ? std::atof(argv[1]) : 8.0, !(argc > 2 && std::string(argv[2]) == "--skip-part1"));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "free_settle: %s\n", e.what());
    return 1;
  }
}
