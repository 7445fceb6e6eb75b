// Does an L2-served pointer chase at a tiny footprint depend on WHERE its lines lie? The question
// behind gpu_probe_invariants' failure on the memory.latency cg curve (1 KiB read 263-267 cycles per
// load against 274-284 from 2 KiB to 16 MiB on the H100). Hypothesis: the L2 is many slices at
// different distances from the SM, an address picks its slice, and 8 lines (1 KiB) sample only a
// few slices, so the 1 KiB figure is that placement's luck; from a few KiB on the chain averages
// over the slices. Test: the same random chase (ld.global.cg, one thread, 4096 timed loads after a
// warm lap) at 32 placements per footprint; a spread that shrinks with the footprint, with the
// small footprints' mean at the large ones' level, confirms it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "gpuprobe/check.hpp"

namespace {

__global__ void chase(const std::uint64_t* start, int warm, int timed, std::uint64_t* out) {
  std::uint64_t p = reinterpret_cast<std::uint64_t>(start);
  for (int i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p) :: "memory");
  const long long c0 = clock64();
  for (int i = 0; i < timed; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p) :: "memory");
  const long long c1 = clock64();
  out[0] = p;
  out[1] = static_cast<std::uint64_t>(c1 - c0);
}

}  // namespace

int main() {
  constexpr std::uint64_t kLine = 128;
  constexpr int kTimed = 4096, kPlacements = 32;
  const std::uint64_t region = std::uint64_t(64) << 20;
  char* pool = nullptr;
  std::uint64_t* out = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&pool, region));
  GP_CUDA_CHECK(cudaMalloc(&out, 2 * sizeof(std::uint64_t)));
  std::mt19937_64 rng(7);
  std::printf("%10s %9s %9s %9s %9s   (cycles per ld.global.cg, %d placements each)\n", "footprint", "min",
              "median", "max", "mean", kPlacements);
  for (std::uint64_t footprint : {1024ull, 2048ull, 4096ull, 8192ull, 16384ull, 65536ull, 1ull << 20}) {
    const std::uint64_t n = footprint / kLine;
    std::vector<double> cycles;
    for (int k = 0; k < kPlacements; ++k) {
      // Placements a few MiB apart, each shifted by a different number of lines.
      const std::uint64_t offset = (std::uint64_t(k) * ((std::uint64_t(1) << 21) + 37 * kLine)) % (region - footprint);
      const std::uint64_t base = offset / kLine * kLine;
      std::vector<std::uint64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<std::uint64_t> image(footprint / 8, 0);
      for (std::uint64_t i = 0; i < n; ++i)
        image[order[i] * kLine / 8] =
            reinterpret_cast<std::uint64_t>(pool + base + order[(i + 1) % n] * kLine);
      GP_CUDA_CHECK(cudaMemcpy(pool + base, image.data(), footprint, cudaMemcpyHostToDevice));
      const auto* start = reinterpret_cast<const std::uint64_t*>(pool + base + order[0] * kLine);
      chase<<<1, 1>>>(start, static_cast<int>(2 * n + 64), kTimed, out);
      GP_CUDA_CHECK_LAUNCH();
      std::uint64_t host[2];
      GP_CUDA_CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
      cycles.push_back(double(host[1]) / kTimed);
    }
    std::sort(cycles.begin(), cycles.end());
    const double mean = std::accumulate(cycles.begin(), cycles.end(), 0.0) / cycles.size();
    std::printf("%10llu %9.1f %9.1f %9.1f %9.1f\n", static_cast<unsigned long long>(footprint), cycles.front(),
                cycles[cycles.size() / 2], cycles.back(), mean);
  }
  GP_CUDA_CHECK(cudaFree(pool));
  GP_CUDA_CHECK(cudaFree(out));
  return 0;
}
