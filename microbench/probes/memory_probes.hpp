// The memory probe groups (registered by register_memory_probes in memory_registry.cpp).
#pragma once

#include <cstdint>

namespace gpuprobe {

void register_memory_latency_probes();    // memory_latency.cu: memory.latency, memory.tlb
void register_memory_bandwidth_probes();  // memory_bandwidth.cu: memory.bandwidth, .occupancy, .stride
void register_memory_shared_probes();     // memory_shared.cu: memory.shared_bandwidth, .bank_conflicts

// Largest footprint the memory sweeps reach: --max-footprint, capped at a quarter of device memory.
std::uint64_t memory_sweep_limit();
// Largest footprint of the TLB sweep: at least memory_sweep_limit(), and up to 64 GiB (capped at 60 %
// of device memory) because its chains are short (one element per stride) yet must reach past the
// last TLB level. Chains beyond memory_sweep_limit() get their own allocation, freed after the entry.
std::uint64_t tlb_sweep_limit();

}  // namespace gpuprobe
