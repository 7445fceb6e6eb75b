// Pointer-chase latency probes: memory.latency (per load flavour, random and fixed-stride chains,
// footprints 1 KiB .. --max-footprint, and shared memory) and memory.tlb (large strides over huge
// footprints). See docs/probes.md#memory-latency for how they measure what they claim.
#include "probes/memory_latency.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/measure.hpp"
#include "harness/sweep.hpp"
#include "probes/memory_probes.hpp"

namespace gpuprobe {

// ------------------------------------------------------------------------------------------------
// Kernels

namespace {

__global__ void build_chain_kernel(char* base, ChainSpec spec, ChainOrder order) {
  const std::uint64_t n = spec.elements;
  for (std::uint64_t p = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; p < n;
       p += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t here = chain_position_to_element(order, p);
    const std::uint64_t next = chain_position_to_element(order, p + 1 == n ? 0 : p + 1);
    auto* slot = reinterpret_cast<std::uint64_t*>(base + chain_element_offset(here, spec.spacing, spec.skew_lines));
    *slot = reinterpret_cast<std::uint64_t>(base + chain_element_offset(next, spec.spacing, spec.skew_lines));
  }
}

template <ChaseLoad kLoad>
__device__ __forceinline__ std::uint64_t chase_step(std::uint64_t address) {
  std::uint64_t next;
  if constexpr (kLoad == ChaseLoad::kCached)
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(next) : "l"(address) : "memory");
  else if constexpr (kLoad == ChaseLoad::kL2Only)
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(next) : "l"(address) : "memory");
  else
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(next) : "l"(address) : "memory");
  return next;
}

// A full lap's worth of untimed loads by one block's threads at once: every element loaded once, in
// the chain's own (pseudo-random or strided) order split across the threads, with the chase's load
// flavour. One block, like the chase itself: on the H100 a lap touched from every SM left 8-16 MiB
// chains at 363-395 cycles a load against 276 after a one-SM lap (the L2 keeps a line in the
// partition near the SMs that asked for it). It leaves the caches and TLBs holding what a serial
// lap would, in milliseconds where a serial lap of 2^22 loads took seconds.
template <ChaseLoad kLoad>
__global__ void touch_lap_kernel(const char* base, ChainSpec spec, ChainOrder order, std::uint64_t* sink) {
  std::uint64_t acc = 0;
  for (std::uint64_t p = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; p < spec.elements;
       p += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t here = chain_position_to_element(order, p);
    acc ^= chase_step<kLoad>(reinterpret_cast<std::uint64_t>(
        base + chain_element_offset(here, spec.spacing, spec.skew_lines)));
  }
  if (acc == 0) sink[0] = acc;  // a chain holds no null pointer: never taken, keeps the loads
}

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread. cursor[0]: where the chase stands (read at entry, written at exit);
// cursor[1], cursor[2]: clock64 cycles and globaltimer ns of the timed loop.
// The timed loop is nothing but dependent loads: the loaded value is the next address.
template <ChaseLoad kLoad>
__global__ void chase_kernel(std::uint64_t* cursor, std::uint64_t warm_steps, std::uint64_t timed_groups) {
  std::uint64_t p = cursor[0];
  for (std::uint64_t i = 0; i < warm_steps; ++i) p = chase_step<kLoad>(p);
  const std::uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  for (std::uint64_t g = 0; g < timed_groups; ++g) {
#pragma unroll
    for (int u = 0; u < int(PointerChase::kUnroll); ++u) p = chase_step<kLoad>(p);
  }
  // The last load may still be in flight here (the clock read does not wait for it): an error of
  // at most one load in timed_groups * kUnroll.
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  cursor[0] = p;
  cursor[1] = static_cast<std::uint64_t>(c1 - c0);
  cursor[2] = t1 - t0;
}

// One thread: builds a random chain of shared-memory addresses, walks one lap untimed, then times.
__global__ void shared_chase_kernel(std::uint32_t elements, std::uint64_t timed_groups, std::uint64_t seed,
                                    std::uint64_t* result) {
  extern __shared__ std::uint32_t chain[];
  const ChainOrder order = make_chain_order(ChainPattern::kRandom, elements, seed);
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(chain));
  for (std::uint32_t p = 0; p < elements; ++p) {
    const auto here = static_cast<std::uint32_t>(chain_position_to_element(order, p));
    const auto next = static_cast<std::uint32_t>(chain_position_to_element(order, p + 1 == elements ? 0 : p + 1));
    chain[here] = base + 4u * next;
  }
  __syncwarp();
  std::uint32_t a = base + 4u * static_cast<std::uint32_t>(chain_position_to_element(order, 0));
  for (std::uint32_t i = 0; i < elements; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a) :: "memory");
  const std::uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  for (std::uint64_t g = 0; g < timed_groups; ++g) {
#pragma unroll
    for (int u = 0; u < int(PointerChase::kUnroll); ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a) :: "memory");
  }
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  result[0] = a;
  result[1] = static_cast<std::uint64_t>(c1 - c0);
  result[2] = t1 - t0;
}

std::uint64_t round_up_to_unroll(std::uint64_t steps) {
  return (steps + PointerChase::kUnroll - 1) / PointerChase::kUnroll;
}

template <ChaseLoad kLoad>
void launch_chase(std::uint64_t* cursor, std::uint64_t warm, std::uint64_t groups) {
  chase_kernel<kLoad><<<1, 1>>>(cursor, warm, groups);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_touch_lap(ChaseLoad load, const char* base, const ChainSpec& spec, std::uint64_t* sink) {
  const ChainOrder order = make_chain_order(spec.pattern, spec.elements, spec.seed);
  constexpr unsigned kThreads = 1024;
  switch (load) {
    case ChaseLoad::kCached: touch_lap_kernel<ChaseLoad::kCached><<<1, kThreads>>>(base, spec, order, sink); break;
    case ChaseLoad::kL2Only: touch_lap_kernel<ChaseLoad::kL2Only><<<1, kThreads>>>(base, spec, order, sink); break;
    case ChaseLoad::kVolatile: touch_lap_kernel<ChaseLoad::kVolatile><<<1, kThreads>>>(base, spec, order, sink); break;
  }
  GP_CUDA_CHECK_LAUNCH();
}

void launch_chase(ChaseLoad load, std::uint64_t* cursor, std::uint64_t warm, std::uint64_t groups) {
  switch (load) {
    case ChaseLoad::kCached: return launch_chase<ChaseLoad::kCached>(cursor, warm, groups);
    case ChaseLoad::kL2Only: return launch_chase<ChaseLoad::kL2Only>(cursor, warm, groups);
    case ChaseLoad::kVolatile: return launch_chase<ChaseLoad::kVolatile>(cursor, warm, groups);
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Host interface

const char* chase_load_name(ChaseLoad load) {
  switch (load) {
    case ChaseLoad::kCached: return "ca";
    case ChaseLoad::kL2Only: return "cg";
    case ChaseLoad::kVolatile: return "volatile";
  }
  return "?";
}

std::uint64_t chain_span_bytes(const ChainSpec& spec) {
  if (spec.elements == 0) return 0;
  const std::uint64_t last = spec.elements - 1;
  std::uint64_t span = chain_element_offset(last, spec.spacing, 0) + 8;
  if (spec.skew_lines) span += (spec.skew_lines - 1) * 128;
  return span;
}

PointerChase::PointerChase(void* memory, const ChainSpec& spec) : spec_(spec) {
  if (spec.elements < 1 || spec.spacing < 8 || spec.spacing % 8 != 0)
    throw UsageError("pointer chase needs >= 1 element and a spacing that is a multiple of 8 bytes");
  const ChainOrder order = make_chain_order(spec.pattern, spec.elements, spec.seed);
  char* base = static_cast<char*>(memory);
  base_ = base;
  const std::uint64_t blocks = std::min<std::uint64_t>((spec.elements + 255) / 256, 65536);
  build_chain_kernel<<<static_cast<unsigned>(blocks), 256>>>(base, spec, order);
  GP_CUDA_CHECK_LAUNCH();
  start_ = reinterpret_cast<std::uint64_t>(
      base + chain_element_offset(chain_position_to_element(order, 0), spec.spacing, spec.skew_lines));
  GP_CUDA_CHECK(cudaMalloc(&device_cursor_, 4 * sizeof(std::uint64_t)));
  GP_CUDA_CHECK(cudaMemcpy(device_cursor_, &start_, sizeof start_, cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

PointerChase::~PointerChase() { cudaFree(device_cursor_); }

void PointerChase::warm(ChaseLoad load, std::uint64_t steps) {
  if (steps == 0) return;
  // A whole lap leaves the cursor where it was, so the parallel lap stands in for it; shorter
  // warm-ups (a part of a lap, which moves the cursor) and short laps are chased.
  if (steps == spec_.elements && steps > kInKernelWarmLimit) {
    launch_touch_lap(load, base_, spec_, device_cursor_ + 3);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  launch_chase(load, device_cursor_, steps, 0);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

ChaseTiming PointerChase::chase(ChaseLoad load, std::uint64_t steps) {
  // A kernel launch starts with an empty L1, so a short chain is walked once, untimed, inside the
  // same launch; longer chains are warmed by warm() (their L2/TLB state survives launches).
  const std::uint64_t in_kernel_warm = spec_.elements <= kInKernelWarmLimit ? spec_.elements : 0;
  launch_chase(load, device_cursor_, in_kernel_warm, round_up_to_unroll(steps));
  std::uint64_t host[3];
  GP_CUDA_CHECK(cudaMemcpy(host, device_cursor_, sizeof host, cudaMemcpyDeviceToHost));
  return ChaseTiming{host[1], host[2]};
}

std::uint64_t PointerChase::cursor() const {
  std::uint64_t position = 0;
  GP_CUDA_CHECK(cudaMemcpy(&position, device_cursor_, sizeof position, cudaMemcpyDeviceToHost));
  return position;
}

ChaseTiming shared_memory_chase(std::uint32_t footprint_bytes, std::uint64_t steps, std::uint64_t seed) {
  const std::uint32_t elements = footprint_bytes / 4;
  if (elements < 1) throw UsageError("shared-memory chase needs at least 4 bytes");
  if (footprint_bytes > 48u * 1024)
    GP_CUDA_CHECK(cudaFuncSetAttribute(shared_chase_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(footprint_bytes)));
  DeviceBuffer<std::uint64_t> result(3);
  shared_chase_kernel<<<1, 1, footprint_bytes>>>(elements, round_up_to_unroll(steps), seed, result.data());
  GP_CUDA_CHECK_LAUNCH();
  std::uint64_t host[3];
  GP_CUDA_CHECK(cudaMemcpy(host, result.data(), sizeof host, cudaMemcpyDeviceToHost));
  return ChaseTiming{host[1], host[2]};
}

// ------------------------------------------------------------------------------------------------
// Probes

namespace {

constexpr std::uint64_t kTimedLoads = 4096;     // per sample: 4096 dependent loads
constexpr std::uint64_t kRandomSpacing = 128;   // one element per 128-byte line
constexpr std::uint64_t kFullWarmLimit = std::uint64_t(1) << 22;  // loads in a full warm-up lap, at most

// Both chase families: one curve per pattern, load flavour and stride, latency against the footprint.
ProbeDescriptor chase_record(ProbeDescriptor d, const char* title) {
  return std::move(d)
      .titled(title)
      .with_axes({text_axis("pattern", AxisRole::kGroup), text_axis("load", AxisRole::kGroup),
                  numeric_axis("stride", "bytes", AxisRole::kGroup), numeric_axis("footprint", "bytes", AxisRole::kX)})
      .with_fields({numeric_field("elements", "elements"), numeric_field("placements", "placements"),
                    numeric_field("warm_loads", "loads")});
}
const ProbeDescriptor& kLatency = declare_family(chase_record(
    {"memory.latency", Figure::kCyclesPerOp,
     "one thread follows a chain of absolute 64-bit pointers (unrolled, nothing but dependent loads); "
     "clock64 and globaltimer around 4096 loads; chase position persists across samples; random chains "
     "below 64 KiB are laid at up to 16 placements and each sample times 4096 loads on every one",
     "", 5, 1},
    "Load latency (pointer chase)"));
const ProbeDescriptor& kTlb = declare_family(chase_record(
    {"memory.tlb", Figure::kCyclesPerOp,
     "fixed-stride pointer chase with L2-only loads (ld.global.cg, so L1 capacity and associativity "
     "play no part), one element per stride-sized slot offset by (i mod skew) x 128 B to spread cache "
     "sets; clock64 around 4096 loads after a full warm lap",
     "", 5, 1},
    "TLB (large-stride pointer chase)"));

// Device memory for chains, grown on demand and reused by every latency entry.
char* chain_memory(std::uint64_t bytes) {
  static DeviceBuffer<char> pool;
  if (pool.size() < bytes) {
    pool = DeviceBuffer<char>();  // free the old one first: the largest chains are GiBs
    pool = DeviceBuffer<char>(bytes);
  }
  return pool.data();
}

// Warm-up before timing: a full lap when the footprint could be cache- or TLB-resident (up to 4x
// the L2, so the L2 plateau and its edge are measured warm), a short one beyond.
std::uint64_t warm_loads(std::uint64_t footprint, std::uint64_t elements) {
  const std::uint64_t cacheable = 4 * context().device.l2_bytes;
  return std::min(elements, footprint <= cacheable ? kFullWarmLimit : std::uint64_t(1) << 14);
}

Sample timing_to_sample(const ChaseTiming& t) {
  Sample s;
  s.cycles = static_cast<double>(t.cycles);
  s.seconds = static_cast<double>(t.ns) * 1e-9;
  if (t.ns > 0) s.clock_mhz = static_cast<double>(t.cycles) / static_cast<double>(t.ns) * 1e3;
  return s;
}

// Where a small chain lies matters: the L2 is many slices at different distances from the SM, an
// address picks its slice, and a 1 KiB chain (8 lines) samples only a few. On the H100 (32 placements
// each, lab/experiments/chase_placement.cu) a 1 KiB ld.global.cg chain took 256-290 cycles per load
// depending on where it lay, mean 274.5, while 1 MiB chains took 272.8-273.9; the single 1 KiB chain
// at the pool's start happened to sit at 263-267 and looked faster than the L2 itself. Small random
// chains are therefore measured at several placements (kPlacementStride apart) and each sample runs
// the full kTimedLoads on every one of them: the figure is the footprint's latency averaged over where
// it lies. (Sharing the loads out instead left ~180 cycles of fixed cost per launch in 256-load
// timings: the L1 chain read 32.8 cycles at 16 placements against 32.0 at one, on the H100.)
constexpr std::uint64_t kPlacementFootprint = 64 * 1024;  // from here on one chain samples enough slices
constexpr std::uint64_t kMaxPlacements = 16;
constexpr std::uint64_t kPlacementStride = (std::uint64_t(2) << 20) + 37 * 128;  // a few MiB, odd lines apart

std::uint64_t chain_placements(const ChainSpec& spec) {
  const std::uint64_t footprint = spec.elements * spec.spacing;
  if (spec.pattern != ChainPattern::kRandom || footprint >= kPlacementFootprint) return 1;
  return std::min(kMaxPlacements, (kPlacementFootprint + footprint - 1) / footprint);
}

// `full_lap`: warm a whole lap whatever the footprint (TLB chains: see register_memory_latency_probes).
void chase_entry(benchmark::State& state, const ProbeDescriptor& descriptor, ChainSpec spec, ChaseLoad load,
                 bool full_lap = false) {
  // Footprints past the sweep limit (TLB chains only) get their own allocation, freed with the entry,
  // so the shared pool never holds tens of GiB while other probes need memory.
  const std::uint64_t placements = chain_placements(spec);
  const std::uint64_t span = chain_span_bytes(spec) + (placements - 1) * kPlacementStride;
  DeviceBuffer<char> own;
  if (span > memory_sweep_limit()) own = DeviceBuffer<char>(span);
  char* memory = own.size() ? own.data() : chain_memory(span);
  std::vector<std::unique_ptr<PointerChase>> chases;
  for (std::uint64_t k = 0; k < placements; ++k)
    chases.push_back(std::make_unique<PointerChase>(memory + k * kPlacementStride, spec));
  const std::uint64_t footprint = spec.elements * spec.spacing;
  const std::uint64_t warm = full_lap ? spec.elements : warm_loads(footprint, spec.elements);
  for (auto& chase : chases) chase->warm(load, warm);
  const std::uint64_t loads_each = kTimedLoads;

  Measurement m(state, descriptor, Work{0, 0, static_cast<double>(loads_each * placements)});
  // pattern, load and stride come from the entry's name; the footprint is the chain's own.
  m.param("footprint", static_cast<double>(footprint));
  m.param("elements", static_cast<double>(spec.elements));
  m.param("placements", static_cast<double>(placements));
  // Lets the analysis tell a steady-state lap (warm_loads >= elements) from first-touch loads.
  m.param("warm_loads", static_cast<double>(warm));
  m.run(
      [&] {
        ChaseTiming total{0, 0};
        for (auto& chase : chases) {
          const ChaseTiming t = chase->chase(load, loads_each);
          total.cycles += t.cycles;
          total.ns += t.ns;
        }
        return timing_to_sample(total);
      },
      [&] {
        for (auto& chase : chases) chase->chase(load, loads_each);
      });
}

void shared_entry(benchmark::State& state, std::uint32_t footprint) {
  Measurement m(state, kLatency, Work{0, 0, static_cast<double>(kTimedLoads)});
  m.param("elements", footprint / 4);  // pattern:random/load:shared/stride:4 in the name
  std::uint64_t seed = 1;
  m.run([&] { return timing_to_sample(shared_memory_chase(footprint, kTimedLoads, seed++)); },
        [&] { shared_memory_chase(footprint, kTimedLoads, seed); });
}

std::string bytes_text(std::uint64_t b) { return std::to_string(b); }

}  // namespace

void register_memory_latency_probes() {
  const Context& ctx = context();
  const bool quick = ctx.options.quick;
  const std::uint64_t max_footprint = quick ? std::uint64_t(256) << 20 : memory_sweep_limit();
  const int per_octave = quick ? 1 : 4;

  // Random chains, one element per line: the latency of each level, per load flavour.
  for (ChaseLoad load : {ChaseLoad::kCached, ChaseLoad::kL2Only, ChaseLoad::kVolatile}) {
    for (std::uint64_t footprint : log_sweep(1024, max_footprint, per_octave, kRandomSpacing)) {
      ChainSpec spec{ChainPattern::kRandom, footprint / kRandomSpacing, kRandomSpacing, 0, footprint};
      register_entry(entry_name(kLatency, {{"pattern", "random"}, {"load", chase_load_name(load)},
                                                  {"stride", bytes_text(kRandomSpacing)},
                                                  {"footprint", bytes_text(footprint)}}),
                     kLatency, [spec, load](benchmark::State& st) { chase_entry(st, kLatency, spec, load); });
    }
  }

  // Fixed-stride chains (Saavedra-style): latency vs footprint per stride, for line/sector sizes
  // and capacities. One point per octave; laps limited to 2^20 elements.
  for (std::uint64_t stride = 8; stride <= (std::uint64_t(2) << 20); stride *= quick ? 16 : 2) {
    for (std::uint64_t footprint : log_sweep(std::max<std::uint64_t>(1024, 16 * stride), max_footprint, 1, stride)) {
      const std::uint64_t elements = footprint / stride;
      if (elements > (std::uint64_t(1) << 20)) break;
      ChainSpec spec{ChainPattern::kStride, elements, stride, 0, 1};
      register_entry(entry_name(kLatency, {{"pattern", "stride"}, {"load", "ca"},
                                                  {"stride", bytes_text(stride)},
                                                  {"footprint", bytes_text(footprint)}}),
                     kLatency,
                     [spec](benchmark::State& st) { chase_entry(st, kLatency, spec, ChaseLoad::kCached); });
    }
  }

  // TLB reach and page size. The page is where latency vs stride saturates (below it P/stride loads
  // share one translation), so the strides must lie on both sides of every candidate page: powers of
  // 4 from 4 KiB to 1 GiB, plus 2 MiB. Per stride, footprints from 8 strides up, 4 per octave (the
  // reach is read to a quarter octave).
  // - Every entry warms one full lap first, so each sample is a steady-state lap: with a short
  //   warm-up, chains longer than the loads made before the last sample were timed on first-touch
  //   loads, which put a knee at the same element count for every stride.
  // - Chains stop at l2_bytes / 512 elements (one 128-B line each in a quarter of the L2): every
  //   load stays an L2 hit, so a knee can only be the TLB's and not an L2 spill (which, like a TLB
  //   knee, moves with the stride).
  std::vector<std::uint64_t> tlb_strides;
  for (std::uint64_t stride = std::uint64_t(4) << 10; stride <= (std::uint64_t(1) << 30); stride *= 4) {
    tlb_strides.push_back(stride);
    if (stride == (std::uint64_t(1) << 20)) tlb_strides.push_back(std::uint64_t(2) << 20);
  }
  const std::uint64_t tlb_max_elements = std::max<std::uint64_t>(64, ctx.device.l2_bytes / 512);
  for (std::uint64_t stride : tlb_strides) {
    if (quick && stride != (std::uint64_t(2) << 20)) continue;
    const std::uint64_t tlb_limit = quick ? max_footprint : tlb_sweep_limit();
    for (std::uint64_t footprint : log_sweep(8 * stride, tlb_limit, quick ? 1 : 4, stride)) {
      if (footprint / stride > tlb_max_elements) break;
      const std::uint64_t skew = std::min<std::uint64_t>(stride / 128, 1024);
      ChainSpec spec{ChainPattern::kStride, footprint / stride, stride, skew, 1};
      register_entry(entry_name(kTlb, {{"pattern", "stride"}, {"load", "cg"},
                                              {"stride", bytes_text(stride)},
                                              {"footprint", bytes_text(footprint)}}),
                     kTlb, [spec](benchmark::State& st) { chase_entry(st, kTlb, spec, ChaseLoad::kL2Only, true); });
    }
  }

  // Shared memory: random chains of 32-bit shared addresses.
  for (std::uint32_t footprint : {1024u, 4096u, 16384u, 49152u}) {
    register_entry(entry_name(kLatency, {{"pattern", "random"}, {"load", "shared"}, {"stride", "4"},
                                                {"footprint", std::to_string(footprint)}}),
                   kLatency, [footprint](benchmark::State& st) { shared_entry(st, footprint); });
  }
}

}  // namespace gpuprobe
