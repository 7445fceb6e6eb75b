#include "probes/transfer_plan.hpp"

#include <algorithm>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

std::vector<std::uint64_t> transfer_sizes(std::uint64_t max_bytes, bool quick) {
  if (max_bytes < 1) throw UsageError("transfer: the largest size must be at least 1 byte");
  const int step = quick ? 4 : 1;  // octaves between sizes
  std::vector<std::uint64_t> sizes;
  for (int k = 0; k < 64; k += step) {
    const std::uint64_t s = std::uint64_t(1) << k;
    if (s > max_bytes) break;
    sizes.push_back(s);
  }
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

std::uint64_t transfer_max_bytes(std::uint64_t max_footprint, std::uint64_t device_memory) {
  const std::uint64_t gib = std::uint64_t(1) << 30;
  return std::max<std::uint64_t>(1, std::min({gib, max_footprint / 2, device_memory / 4}));
}

P2pPlan plan_p2p(int device_count, const std::function<bool(int, int)>& can_access) {
  P2pPlan plan;
  if (device_count < 2) {
    plan.skip_reason = "transfer.p2p: skipped, " + std::to_string(device_count) +
                       " GPU visible (peer-to-peer needs at least 2)";
    return plan;
  }
  for (int a = 0; a < device_count; ++a)
    for (int b = 0; b < device_count; ++b)
      if (a != b && can_access(a, b) && can_access(b, a)) plan.pairs.emplace_back(a, b);
  if (plan.pairs.empty())
    plan.skip_reason = "transfer.p2p: skipped, " + std::to_string(device_count) +
                       " GPUs visible but no pair has peer access both ways";
  return plan;
}

}  // namespace gpuprobe
