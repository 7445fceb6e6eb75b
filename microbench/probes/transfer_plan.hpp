// Host-side planning of the transfer probes (pure C++, tested on the CPU): the size sweep and the
// peer-to-peer pairs, including the one-GPU skip.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe {

// Transfer sizes: 1 B up to max_bytes, one per octave (--quick: one per 4 octaves), plus max_bytes
// itself. Throws UsageError when max_bytes < 1.
std::vector<std::uint64_t> transfer_sizes(std::uint64_t max_bytes, bool quick);

// The largest transfer: 1 GiB, bounded by --max-footprint and a quarter of the GPU's memory
// (a bidirectional run holds two device buffers of that size).
std::uint64_t transfer_max_bytes(std::uint64_t max_footprint, std::uint64_t device_memory);

struct P2pPlan {
  std::vector<std::pair<int, int>> pairs;  // (source, destination) with peer access, source != destination
  std::string skip_reason;                 // non-empty: no entries, print this one line
};
// `can_access(a, b)`: whether device a can access device b's memory (cudaDeviceCanAccessPeer).
P2pPlan plan_p2p(int device_count, const std::function<bool(int, int)>& can_access);

}  // namespace gpuprobe
