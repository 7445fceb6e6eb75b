// The memory probe groups (registered by register_memory_probes in memory_registry.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprobe {

void register_memory_latency_probes();    // memory_latency.cu: memory.latency, memory.tlb
void register_memory_bandwidth_probes();  // memory_bandwidth.cu: memory.bandwidth, .occupancy, .l1_peak,
                                          // .stride; memory_l2_bandwidth.cu: memory.l2_bandwidth
void register_memory_shared_probes();     // memory_shared.cu: memory.shared_bandwidth, .bank_conflicts,
                                          // .shared_atomics

// memory.shared_atomics's kernel (memory_shared.cu), for its GPU test: `blocks` blocks of 1024 threads;
// thread t of a block atomicAdds (t mod 7) + 1 to shared word t / contention `atomics_per_thread`
// times, the words starting at their index. Writes each block's clock64 span to cycles[block] and its
// 1024 / contention words to words[block * (1024 / contention) + w]. contention: a power of two, 1..32
// (UsageError otherwise).
void enqueue_shared_atomics(int blocks, int contention, int atomics_per_thread, unsigned long long* cycles,
                            std::uint32_t* words, cudaStream_t stream);
void enqueue_shared_atomics(int blocks, int contention, int atomics_per_thread, unsigned long long* cycles,
                            float* words, cudaStream_t stream);

// Largest footprint the memory sweeps reach: --max-footprint, capped at a quarter of device memory.
std::uint64_t memory_sweep_limit();
// Largest footprint of the TLB sweep: at least memory_sweep_limit(), and up to 64 GiB (capped at 60 %
// of device memory) because its chains are short (one element per stride) yet must reach past the
// last TLB level. Chains beyond memory_sweep_limit() get their own allocation, freed after the entry.
std::uint64_t tlb_sweep_limit();

}  // namespace gpuprobe
