// Counter-based hashing shared by host and device code: reproducible pseudo-random data and
// permutations without any generator state.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GP_HOST_DEVICE __host__ __device__
#else
#define GP_HOST_DEVICE
#endif

namespace gpuprobe {

// SplitMix64 finalizer: a bijection on 64-bit words with good avalanche.
GP_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Top 53 bits as a double in [0, 1).
GP_HOST_DEVICE inline double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace gpuprobe
