// Pointer-chase latency: the kernels' host interface, shared by the probes and the GPU tests.
#pragma once

#include <cstdint>

#include "probes/memory_chains.hpp"

namespace gpuprobe {

enum class ChaseLoad {
  kCached,    // ld.global.ca: allocate in L1 (and L2)
  kL2Only,    // ld.global.cg: bypass L1, cache in L2
  kVolatile,  // ld.volatile.global
};
const char* chase_load_name(ChaseLoad load);  // "ca", "cg", "volatile"

struct ChainSpec {
  ChainPattern pattern = ChainPattern::kRandom;
  std::uint64_t elements = 0;    // chain length (one lap)
  std::uint64_t spacing = 128;   // bytes between consecutive elements in memory
  std::uint64_t skew_lines = 0;  // see chain_element_offset()
  std::uint64_t seed = 1;
};

// Bytes of device memory a chain spans.
std::uint64_t chain_span_bytes(const ChainSpec& spec);

struct ChaseTiming {
  std::uint64_t cycles = 0;  // clock64 over the timed loads
  std::uint64_t ns = 0;      // %globaltimer over the same region
};

// A chain built in caller-owned device memory, and a chase along it by a single thread.
// The chase position persists between calls, so consecutive samples continue the lap instead of
// re-reading the same first elements (which would turn DRAM footprints into cache hits).
class PointerChase {
 public:
  static constexpr std::uint64_t kUnroll = 32;  // loads per unrolled group in the timed loop
  // Chains up to this many elements get an untimed lap in the same launch before the timed loads.
  static constexpr std::uint64_t kInKernelWarmLimit = std::uint64_t(1) << 15;

  // Builds the chain in `memory` (at least chain_span_bytes(spec) bytes, 8-byte aligned).
  PointerChase(void* memory, const ChainSpec& spec);
  ~PointerChase();
  PointerChase(const PointerChase&) = delete;
  PointerChase& operator=(const PointerChase&) = delete;

  // Untimed loads (fills caches and TLBs along the lap). A whole lap of a long chain runs on all
  // threads at once (each element loaded once), leaving the cursor where it stands.
  void warm(ChaseLoad load, std::uint64_t steps);
  // `steps` (rounded up to a multiple of kUnroll) timed dependent loads.
  ChaseTiming chase(ChaseLoad load, std::uint64_t steps);
  // Address the chase stands on now, and the chain's first element (for tests: a full lap returns).
  std::uint64_t cursor() const;
  std::uint64_t start() const { return start_; }
  const ChainSpec& spec() const { return spec_; }

 private:
  ChainSpec spec_;
  std::uint64_t start_ = 0;
  const char* base_ = nullptr;
  std::uint64_t* device_cursor_ = nullptr;  // [0] = position; [1], [2] = cycles, ns; [3] = warm-up sink
};

// Shared-memory latency: one thread chases a random chain of 32-bit shared addresses over
// `footprint_bytes` (4-byte spacing). Returns the timing of `steps` loads.
ChaseTiming shared_memory_chase(std::uint32_t footprint_bytes, std::uint64_t steps, std::uint64_t seed);

}  // namespace gpuprobe
