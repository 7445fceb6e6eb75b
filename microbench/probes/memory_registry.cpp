#include <algorithm>

#include "harness/measure.hpp"
#include "probes/memory_probes.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {

std::uint64_t memory_sweep_limit() {
  const Context& ctx = context();
  return std::min<std::uint64_t>(ctx.options.max_footprint_bytes, ctx.device.total_mem_bytes / 4);
}

std::uint64_t tlb_sweep_limit() {
  const std::uint64_t most = context().device.total_mem_bytes / 10 * 6;
  return std::max(memory_sweep_limit(), std::min<std::uint64_t>(std::uint64_t(64) << 30, most));
}

void register_memory_probes() {
  register_memory_latency_probes();
  register_memory_bandwidth_probes();
  register_memory_shared_probes();
}

}  // namespace gpuprobe
