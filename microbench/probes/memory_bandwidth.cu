// Bandwidth probes: memory.bandwidth (read, write, copy, triad x 4/8/16-byte accesses x working set 16 KiB
// .. --max-footprint, on all SMs), memory.occupancy (DRAM bandwidth vs blocks per SM), memory.l1_peak (L1
// load bandwidth with per-block resident arrays) and memory.stride (V&D SC08 section 3.5: bandwidth vs
// stride and misalignment); memory.l2_bandwidth is in memory_l2_bandwidth.cu, registered from here.
// Byte counts: every load and store a kernel performs, counted once (a copy moves read + write,
// a triad two reads + one write); the figures derive from StreamKernel's table
// (memory_bandwidth_common.cuh).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/settle.hpp"
#include "harness/sweep.hpp"
#include "probes/memory_bandwidth_common.cuh"
#include "probes/memory_probes.hpp"

namespace gpuprobe {
using namespace bandwidth;
namespace {

constexpr int kBlockThreads = 256;

__device__ __forceinline__ float axpy(float s, float x, float y) { return fmaf(s, x, y); }
__device__ __forceinline__ float2 axpy(float s, float2 x, float2 y) { return {fmaf(s, x.x, y.x), fmaf(s, x.y, y.y)}; }
__device__ __forceinline__ float4 axpy(float s, float4 x, float4 y) {
  return {fmaf(s, x.x, y.x), fmaf(s, x.y, y.y), fmaf(s, x.z, y.z), fmaf(s, x.w, y.w)};
}

// Streaming stores (st.global.cs, evict-first) leave less written data lingering in L2.
template <bool kStreaming, class V>
__device__ __forceinline__ void store(V* p, V v) {
  if constexpr (kStreaming) __stcs(p, v);
  else *p = v;
}

// Each thread visits `visits` elements: index i, then i + step, ... modulo n, with step = (total
// threads + 32) mod n. Consecutive threads touch consecutive elements, and every warp's 32
// elements stay aligned to 32 x sizeof(V) (n, threads and step are multiples of 32), so no access
// straddles sectors. The extra 32 shifts each thread's slice by one warp-chunk per round, so over
// time every SM touches the whole working set: an SM's reuse distance is the working set itself,
// and L1 hits happen only when it fits in L1. Indices are 32-bit (n < 2^32) to keep the
// per-access instruction count low enough for L1 speed; the wrap is a branch-free unsigned min.
template <class V, StreamKernel kKernel, bool kStreamingStores>
__global__ void __launch_bounds__(kBlockThreads) stream_kernel(V* __restrict__ a, const V* __restrict__ b,
                                                               const V* __restrict__ c, std::uint32_t n,
                                                               std::uint32_t step, std::uint32_t visits,
                                                               unsigned* __restrict__ sink, int write_sink) {
  const std::uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t i = tid % n;
  unsigned acc = 0;
  constexpr float kScale = 0.5f;
#pragma unroll 8
  for (std::uint32_t v = 0; v < visits; ++v) {
    if constexpr (kKernel == StreamKernel::kRead) acc ^= lanes_xor(a[i]);
    if constexpr (kKernel == StreamKernel::kReadL2Only) acc ^= lanes_xor(__ldcg(a + i));
    if constexpr (kKernel == StreamKernel::kReadNonCoherent) acc ^= lanes_xor(__ldg(a + i));
    if constexpr (kKernel == StreamKernel::kWrite) store<kStreamingStores>(a + i, splat<V>(1.5f));
    if constexpr (kKernel == StreamKernel::kCopy) store<kStreamingStores>(a + i, b[i]);
    if constexpr (kKernel == StreamKernel::kTriad) store<kStreamingStores>(a + i, axpy(kScale, c[i], b[i]));
    const std::uint32_t next = i + step;
    i = min(next, next - n);  // next - n wraps to a huge value unless next >= n
  }
  // write_sink is 0 at run time, unknown at compile time: the loads must stay.
  if constexpr (kKernel == StreamKernel::kRead || kKernel == StreamKernel::kReadL2Only ||
                kKernel == StreamKernel::kReadNonCoherent)
    if (write_sink) sink[0] = acc;
}

struct StreamArgs {
  unsigned blocks;
  std::uint32_t n, step, visits;
  unsigned* sink;
  cudaStream_t stream;
};

template <class V, StreamKernel kKernel, bool kStreaming>
void launch_stream(V* a, const V* b, const V* c, const StreamArgs& x) {
  stream_kernel<V, kKernel, kStreaming><<<x.blocks, kBlockThreads, 0, x.stream>>>(a, b, c, x.n, x.step, x.visits, x.sink, 0);
}

template <class V, bool kStreaming>
void launch_stream(StreamKernel k, V* a, const V* b, const V* c, const StreamArgs& x) {
  switch (k) {
    case StreamKernel::kRead: return launch_stream<V, StreamKernel::kRead, kStreaming>(a, b, c, x);
    case StreamKernel::kReadL2Only: return launch_stream<V, StreamKernel::kReadL2Only, kStreaming>(a, b, c, x);
    case StreamKernel::kReadNonCoherent: return launch_stream<V, StreamKernel::kReadNonCoherent, kStreaming>(a, b, c, x);
    case StreamKernel::kWrite: return launch_stream<V, StreamKernel::kWrite, kStreaming>(a, b, c, x);
    case StreamKernel::kCopy: return launch_stream<V, StreamKernel::kCopy, kStreaming>(a, b, c, x);
    case StreamKernel::kTriad: return launch_stream<V, StreamKernel::kTriad, kStreaming>(a, b, c, x);
  }
}

// DRAM-sized working sets (memory.bandwidth): one pass in which each block moves one contiguous tile
// of kTileLoads x kBlockThreads vectors and exits; the grid is the tile count and the hardware
// schedules the blocks. Every thread issues its kTileLoads loads before any store. On the H100
// (lab/experiments/dram_stream.cu, 1-4 GiB per array) this design reached copy 0.993-0.994 x cudaMemcpy
// D2D and write 3247-3288 GB/s, where stream_kernel's sweep reached 0.93 x and 3129-3172 GB/s, and
// persistent-block tiles (contiguous or round-robin) 0.94 x: what helps is the short-lived blocks.
constexpr int kTileLoads = 4;
constexpr std::uint64_t kTileVectors = std::uint64_t(kTileLoads) * kBlockThreads;

template <class V, StreamKernel kKernel, bool kStreamingStores>
__global__ void __launch_bounds__(kBlockThreads) tile_kernel(V* __restrict__ a, const V* __restrict__ b,
                                                             const V* __restrict__ c, std::uint64_t n,
                                                             unsigned* __restrict__ sink, int write_sink) {
  const std::uint64_t first = std::uint64_t(blockIdx.x) * kTileVectors + threadIdx.x;
  constexpr float kScale = 0.5f;
  unsigned acc = 0;
  V u[kTileLoads], w[kTileLoads];  // loaded operands of copy / triad, held until the stores
#pragma unroll
  for (int j = 0; j < kTileLoads; ++j) {
    const std::uint64_t i = first + std::uint64_t(j) * kBlockThreads;
    u[j] = w[j] = splat<V>(0.f);
    if (i >= n) continue;
    if constexpr (kKernel == StreamKernel::kRead) acc ^= lanes_xor(a[i]);
    if constexpr (kKernel == StreamKernel::kReadL2Only) acc ^= lanes_xor(__ldcg(a + i));
    if constexpr (kKernel == StreamKernel::kReadNonCoherent) acc ^= lanes_xor(__ldg(a + i));
    if constexpr (kKernel == StreamKernel::kCopy || kKernel == StreamKernel::kTriad) u[j] = b[i];
    if constexpr (kKernel == StreamKernel::kTriad) w[j] = c[i];
  }
#pragma unroll
  for (int j = 0; j < kTileLoads; ++j) {
    const std::uint64_t i = first + std::uint64_t(j) * kBlockThreads;
    if (i >= n) continue;
    if constexpr (kKernel == StreamKernel::kWrite) store<kStreamingStores>(a + i, splat<V>(1.5f));
    if constexpr (kKernel == StreamKernel::kCopy) store<kStreamingStores>(a + i, u[j]);
    if constexpr (kKernel == StreamKernel::kTriad) store<kStreamingStores>(a + i, axpy(kScale, w[j], u[j]));
  }
  if constexpr (kKernel == StreamKernel::kRead || kKernel == StreamKernel::kReadL2Only ||
                kKernel == StreamKernel::kReadNonCoherent)
    if (write_sink) sink[0] = acc;
}

template <class V, StreamKernel kKernel, bool kStreaming>
void launch_tiles(V* a, const V* b, const V* c, std::uint64_t n, unsigned* sink, cudaStream_t stream) {
  const auto tiles = static_cast<unsigned>((n + kTileVectors - 1) / kTileVectors);
  tile_kernel<V, kKernel, kStreaming><<<tiles, kBlockThreads, 0, stream>>>(a, b, c, n, sink, 0);
}

template <class V, bool kStreaming>
void launch_tiles(StreamKernel k, V* a, const V* b, const V* c, std::uint64_t n, unsigned* sink, cudaStream_t s) {
  switch (k) {
    case StreamKernel::kRead: return launch_tiles<V, StreamKernel::kRead, kStreaming>(a, b, c, n, sink, s);
    case StreamKernel::kReadL2Only: return launch_tiles<V, StreamKernel::kReadL2Only, kStreaming>(a, b, c, n, sink, s);
    case StreamKernel::kReadNonCoherent:
      return launch_tiles<V, StreamKernel::kReadNonCoherent, kStreaming>(a, b, c, n, sink, s);
    case StreamKernel::kWrite: return launch_tiles<V, StreamKernel::kWrite, kStreaming>(a, b, c, n, sink, s);
    case StreamKernel::kCopy: return launch_tiles<V, StreamKernel::kCopy, kStreaming>(a, b, c, n, sink, s);
    case StreamKernel::kTriad: return launch_tiles<V, StreamKernel::kTriad, kStreaming>(a, b, c, n, sink, s);
  }
}

// L1 peak (memory.l1_peak): each block reads its own kL1PeakBlockBytes array over and over (L1-resident:
// kL1PeakBlocksPerSm x 16 KiB per SM), every load at a compile-time offset from one pointer, so the loop
// is loads and XORs only. `zero` (0 at run time) is added to the pointer every pass so the compiler
// cannot hoist the loop-invariant loads. lab/experiments/l1_bandwidth.cu on the H100: 33.1-33.3 TB/s (126.6-
// 127.5 B/clk/SM of 128) for float2/float4, where the stream kernel's sweep of a 32 KiB set reaches 32.8.
constexpr int kL1PeakBlockBytes = 16 * 1024;
constexpr int kL1PeakBlocksPerSm = 8;

template <class V>
__global__ void __launch_bounds__(kBlockThreads, kL1PeakBlocksPerSm)
    l1_peak_kernel(const V* data, std::uint32_t passes, long long zero, unsigned* sink, int write_sink) {
  constexpr int kPerThread = kL1PeakBlockBytes / int(sizeof(V)) / kBlockThreads;
  static_assert(kPerThread * kBlockThreads * int(sizeof(V)) == kL1PeakBlockBytes, "whole vectors per thread");
  const V* p = data + std::size_t(blockIdx.x) * (kL1PeakBlockBytes / sizeof(V)) + threadIdx.x;
  unsigned acc[2] = {0, 0};  // two independent chains of XORs
#pragma unroll 2
  for (std::uint32_t pass = 0; pass < passes; ++pass) {
    p += zero;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) acc[k & 1] ^= lanes_xor(p[k * kBlockThreads]);
  }
  if (write_sink) sink[0] = acc[0] ^ acc[1];
}

// Reads one float per thread and load at index (t + j * threads) * stride, from base + offset bytes.
__global__ void __launch_bounds__(kBlockThreads) strided_read_kernel(const float* __restrict__ base,
                                                                     std::uint64_t stride, std::uint32_t loads,
                                                                     unsigned* __restrict__ sink, int write_sink) {
  const std::uint64_t threads = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t element = (blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x) * stride;
  const std::uint64_t jump = threads * stride;
  unsigned acc = 0;
#pragma unroll 8
  for (std::uint32_t j = 0; j < loads; ++j, element += jump) acc ^= __float_as_uint(base[element]);
  if (write_sink) sink[0] = acc;
}

const ProbeDescriptor& kBandwidth = declare_family(
    ProbeDescriptor{
        "memory.bandwidth", Figure::kBandwidth,
        "all SMs, 256-thread blocks; each thread visits elements i, i+step, ... mod n (coalesced, reuse "
        "distance = working set; pattern=sweep); working sets > 4 x L2: one pass, one contiguous tile of 4 x 256 "
        "vectors per block, 4 loads in flight per thread (pattern=tiles); CUDA events; bytes = accesses x vector "
        "bytes; a freshly allocated pool is read until its read rate is stable before any sample",
        "", 10, 2}
        .titled("Bandwidth vs working set")
        .premise_by_entry("DRAM for working sets beyond 4 x the L2 (every counted byte moved to or from DRAM once)")
        .with_axes({text_axis("kernel", AxisRole::kGroup), numeric_axis("vector", "bytes", AxisRole::kGroup),
                    numeric_axis("footprint", "bytes", AxisRole::kX),
                    numeric_axis("blocks_per_sm", "blocks", AxisRole::kGroup).outside_name()})
        .with_fields({numeric_field("threads", "threads"), text_field("store"), text_field("pattern")}));
const ProbeDescriptor& kL1Peak = declare_family(
    ProbeDescriptor{"memory.l1_peak", Figure::kBandwidth,
                    "8 blocks x 256 threads per SM, each block re-reading its own 16 KiB array (L1-resident), loads "
                    "at compile-time offsets; ~4 ms samples; CUDA events; bytes = loads x vector bytes",
                    "", 10, 2, 0, true, Premise::l1()}
        .titled("L1 load bandwidth, per-block resident arrays")
        .with_axes({numeric_axis("vector", "bytes", AxisRole::kGroup)})
        .with_fields({numeric_field("blocks_per_sm", "blocks"), numeric_field("block_bytes", "bytes")}));
const ProbeDescriptor& kOccupancy = declare_family(
    ProbeDescriptor{"memory.occupancy", Figure::kBandwidth,
                    "as memory.bandwidth at a DRAM-sized and an L2-sized working set, varying resident 256-thread "
                    "blocks per SM and the store cache hint (default or st.global.cs)",
                    "", 10, 2}
        .titled("Bandwidth vs resident blocks per SM and store hint")
        .premise_by_entry("DRAM for working sets beyond 4 x the L2 (every counted byte moved to or from DRAM once)")
        .with_axes({text_axis("kernel", AxisRole::kGroup), numeric_axis("vector", "bytes", AxisRole::kGroup),
                    text_axis("store", AxisRole::kGroup), numeric_axis("footprint", "bytes", AxisRole::kGroup),
                    numeric_axis("blocks_per_sm", "blocks", AxisRole::kX)})
        .with_fields({numeric_field("threads", "threads"), text_field("pattern")}));
const ProbeDescriptor& kStride = declare_family(
    ProbeDescriptor{"memory.stride", Figure::kBandwidth,
                    "all SMs; thread t reads float (t + j x threads) x stride from base + offset; bytes = 4 per load "
                    "(useful bytes: the effective bandwidth a strided code sees); CUDA events",
                    "", 10, 5}
        .titled("Strided and misaligned access")
        .with_axes({numeric_axis("stride", "elements", AxisRole::kX), numeric_axis("offset", "bytes", AxisRole::kGroup)})
        .with_fields({numeric_field("span_bytes", "bytes")}));

struct StreamConfig {
  StreamKernelInfo kernel;
  int vector_bytes;
  std::uint64_t working_set;  // bytes over all arrays
  int blocks_per_sm;
  bool streaming_stores = false;
  bool tiles_when_dram = false;  // DRAM-sized working sets: tile_kernel instead of the sweep
};

// 8 x kMinBytesPerSample for L1-sized working sets (any GPU's L1 is below 1 MiB per SM), ~2 ms at L1 speed:
// on the H100 a 32 KiB sweep read 31.99 TB/s with 0.25 ms samples and 32.81 with 3.9 ms ones
// (lab/experiments/l1_bandwidth.cu), the ramp-up of 1056 blocks being ~2.5 % of a 0.25 ms sample.
constexpr double kMinBytesPerL1Sample = 64e9;
constexpr std::uint64_t kL1SizedWorkingSet = std::uint64_t(1) << 20;

template <class V>
void stream_entry_typed(benchmark::State& state, const ProbeDescriptor& d, const StreamConfig& cfg) {
  const DeviceInfo& dev = context().device;
  const std::uint64_t elements = cfg.working_set / (cfg.kernel.arrays * sizeof(V));
  const unsigned blocks = static_cast<unsigned>(dev.sm_count * cfg.blocks_per_sm);
  const std::uint64_t threads = std::uint64_t(blocks) * kBlockThreads;
  // Working sets far beyond the L2 (DRAM) are swept exactly once per sample, so no line is
  // rewritten or re-read from the L2 within a sample; smaller ones are swept repeatedly until the
  // sample has moved kMinBytesPerSample.
  const bool dram_sized = cfg.working_set > 4 * dev.l2_bytes;
  // Only loads can be served at L1 speed: stores go to the L2 at any working set, and 64e9 bytes of
  // stores took ~16 ms a sample there (write, copy and triad at L1-sized sets were 28 s of the sweep).
  const bool l1_speed = cfg.working_set <= kL1SizedWorkingSet && !cfg.kernel.stores;
  const double min_bytes = l1_speed ? kMinBytesPerL1Sample : kMinBytesPerSample;
  const double visits_wanted =
      dram_sized ? double(elements) : std::max(min_bytes / (cfg.kernel.accesses * sizeof(V)), double(elements));
  const auto visits = static_cast<std::uint32_t>(std::max(1.0, std::ceil(visits_wanted / threads)));
  if (elements >= (std::uint64_t(1) << 32) || threads >= (std::uint64_t(1) << 31))
    throw UsageError("memory.bandwidth: working set or grid too large for 32-bit indices");
  std::uint64_t step = (threads + 32) % elements;
  if (step == 0) step = 32;  // n divides threads + 32: a one-warp-chunk step still covers n

  const std::uint64_t array_stride = elements * sizeof(V) + kArrayPadding;
  char* base = bandwidth_memory(array_stride * cfg.kernel.arrays);
  V* a = reinterpret_cast<V*>(base);
  V* b = reinterpret_cast<V*>(base + array_stride);
  V* c = reinterpret_cast<V*>(base + 2 * array_stride);
  const bool tiles = cfg.tiles_when_dram && dram_sized;
  const double bytes = tiles ? double(elements) * cfg.kernel.accesses * sizeof(V)
                             : double(threads) * visits * cfg.kernel.accesses * sizeof(V);

  Measurement m(state, d, Work{bytes, 0, 0});
  // Only a working set far beyond the L2 claims DRAM; smaller ones are curve points of whichever
  // levels serve them (the L2 and L1 ceilings come from memory.l2_bandwidth and memory.l1_peak).
  if (dram_sized) m.premise(Premise::dram());
  // kernel and vector (and for memory.occupancy store) come from the entry's name; the footprint is
  // the one the arrays hold, the name's rounded down to whole vectors per array.
  m.param("footprint", double(elements * sizeof(V) * cfg.kernel.arrays));
  m.param("blocks_per_sm", cfg.blocks_per_sm);
  m.param("threads", tiles ? double((elements + kTileVectors - 1) / kTileVectors * kBlockThreads) : double(threads));
  m.tag("store", cfg.streaming_stores ? "cs" : "default");
  m.tag("pattern", tiles ? "tiles" : "sweep");
  unsigned* sink = bandwidth_sink();
  if (tiles) {
    m.time_events([&](cudaStream_t s) {
      if (cfg.streaming_stores)
        launch_tiles<V, true>(cfg.kernel.kernel, a, b, c, elements, sink, s);
      else
        launch_tiles<V, false>(cfg.kernel.kernel, a, b, c, elements, sink, s);
    });
    return;
  }
  m.time_events([&](cudaStream_t s) {
    const StreamArgs args{blocks, static_cast<std::uint32_t>(elements), static_cast<std::uint32_t>(step), visits,
                          sink, s};
    if (cfg.streaming_stores)
      launch_stream<V, true>(cfg.kernel.kernel, a, b, c, args);
    else
      launch_stream<V, false>(cfg.kernel.kernel, a, b, c, args);
  });
}

void stream_entry(benchmark::State& state, const ProbeDescriptor& d, const StreamConfig& cfg) {
  switch (cfg.vector_bytes) {
    case 4: return stream_entry_typed<float>(state, d, cfg);
    case 8: return stream_entry_typed<float2>(state, d, cfg);
    case 16: return stream_entry_typed<float4>(state, d, cfg);
  }
  throw UsageError("vector width must be 4, 8 or 16 bytes");
}

template <class V>
void l1_peak_entry(benchmark::State& state) {
  const DeviceInfo& dev = context().device;
  const unsigned blocks = static_cast<unsigned>(dev.sm_count * kL1PeakBlocksPerSm);
  const double bytes_per_pass = double(blocks) * kL1PeakBlockBytes;
  const auto passes = static_cast<std::uint32_t>(std::ceil(128e9 / bytes_per_pass));  // ~4 ms at L1 speed
  const V* data = reinterpret_cast<const V*>(bandwidth_memory(std::uint64_t(blocks) * kL1PeakBlockBytes));
  // All of the unified L1/shared SRAM to L1 (the kernel uses no shared memory).
  GP_CUDA_CHECK(cudaFuncSetAttribute(l1_peak_kernel<V>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  Measurement m(state, kL1Peak, Work{bytes_per_pass * passes, 0, 0});  // premise L1 (the record's)
  m.param("blocks_per_sm", kL1PeakBlocksPerSm);
  m.param("block_bytes", kL1PeakBlockBytes);
  unsigned* sink = bandwidth_sink();
  m.time_events([&](cudaStream_t s) {
    l1_peak_kernel<V><<<blocks, kBlockThreads, 0, s>>>(data, passes, 0, sink, 0);
  });
}

void strided_entry(benchmark::State& state, std::uint64_t stride, std::uint64_t offset_bytes) {
  const DeviceInfo& dev = context().device;
  constexpr int kBlocksPerSm = 8;
  const unsigned blocks = static_cast<unsigned>(dev.sm_count * kBlocksPerSm);
  const std::uint64_t threads = std::uint64_t(blocks) * kBlockThreads;
  // Distinct sectors for every load (no L2 reuse within a sample): the span grows with the stride,
  // up to a pool of min(8 GiB, device/8); at most 2^26 loads (256 MB of useful data).
  const std::uint64_t pool_bytes = std::min<std::uint64_t>(std::uint64_t(8) << 30, dev.total_mem_bytes / 8);
  const std::uint64_t max_loads = std::min<std::uint64_t>(std::uint64_t(1) << 26, (pool_bytes - 256) / (4 * stride));
  const auto loads_per_thread = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, max_loads / threads));
  const double loads = double(threads) * loads_per_thread;
  const float* base = reinterpret_cast<const float*>(bandwidth_memory(pool_bytes) + offset_bytes);

  Measurement m(state, kStride, Work{4.0 * loads, 0, loads});
  m.param("span_bytes", loads * 4.0 * stride);  // stride and offset come from the entry's name
  unsigned* sink = bandwidth_sink();
  m.time_events([&](cudaStream_t s) {
    strided_read_kernel<<<blocks, kBlockThreads, 0, s>>>(base, stride, loads_per_thread, sink, 0);
  });
}

}  // namespace

char* bandwidth::bandwidth_memory(std::uint64_t bytes) {
  static DeviceBuffer<float> pool;
  if (pool.bytes() < bytes) {
    pool = DeviceBuffer<float>();
    pool = DeviceBuffer<float>((bytes + 3) / 4);
    fill_uniform(pool.data(), pool.size(), 7, 1.f, 2.f);
    settle_reads(pool.data(), pool.bytes());  // fresh memory reads slower at first (harness/settle.hpp)
  }
  return reinterpret_cast<char*>(pool.data());
}
unsigned* bandwidth::bandwidth_sink() {
  static DeviceBuffer<unsigned> sink(1);
  return sink.data();
}

void register_memory_bandwidth_probes() {
  const Context& ctx = context();
  const bool quick = ctx.options.quick;
  // --quick still reaches a DRAM-sized working set (16 x L2), so its DRAM figures mean DRAM.
  const std::uint64_t limit =
      quick ? std::min(memory_sweep_limit(), std::max<std::uint64_t>(std::uint64_t(1) << 30, 16 * ctx.device.l2_bytes))
            : memory_sweep_limit();
  const int full_occupancy = std::max(1, ctx.device.max_threads_per_sm / kBlockThreads);

  // Bandwidth vs working set: two points per octave from 16 KiB.
  for (const StreamKernelInfo& k : kStreamKernels) {
    for (int vector_bytes : {4, 8, 16}) {
      if (quick && vector_bytes != 16) continue;
      for (std::uint64_t ws : log_sweep(16 << 10, limit, quick ? 1 : 2, std::uint64_t(k.arrays) * 16 * 256)) {
        const StreamConfig cfg{k, vector_bytes, ws, full_occupancy, false, true};
        register_entry(entry_name(kBandwidth, {{"kernel", k.name}, {"vector", std::to_string(vector_bytes)},
                                                      {"footprint", std::to_string(ws)}}),
                       kBandwidth, [cfg](benchmark::State& st) { stream_entry(st, kBandwidth, cfg); });
      }
    }
  }

  // Bandwidth vs occupancy (resident blocks per SM) and store hint, at a DRAM working set (>= 1 GiB
  // when the limit allows) and at an L2-resident one (a quarter of the L2).
  const std::uint64_t dram_ws = std::min<std::uint64_t>(
      limit, std::max<std::uint64_t>(std::uint64_t(1) << 30, 16 * ctx.device.l2_bytes));
  const std::uint64_t l2_ws = ctx.device.l2_bytes / 4 / (3 * 16 * 256) * (3 * 16 * 256);
  for (std::uint64_t ws : {dram_ws, l2_ws}) {
    for (const StreamKernelInfo& k : kStreamKernels) {
      for (bool streaming : {false, true}) {
        if (streaming && !k.stores) continue;  // no stores to hint
        for (int bps = 1; bps <= full_occupancy; ++bps) {
          if (quick && bps != 1 && bps != full_occupancy) continue;
          const StreamConfig cfg{k, 16, ws, bps, streaming};
          register_entry(entry_name(kOccupancy, {{"kernel", k.name}, {"vector", "16"},
                                                        {"store", streaming ? "cs" : "default"},
                                                        {"footprint", std::to_string(ws)},
                                                        {"blocks_per_sm", std::to_string(bps)}}),
                         kOccupancy, [cfg](benchmark::State& st) { stream_entry(st, kOccupancy, cfg); });
        }
      }
    }
  }

  register_l2_bandwidth_probes();  // here, so that the entries keep their order: after occupancy, before L1

  // L1 peak: float2 and float4 loads.
  register_entry(entry_name(kL1Peak, {{"vector", "8"}}), kL1Peak,
                 [](benchmark::State& st) { l1_peak_entry<float2>(st); });
  register_entry(entry_name(kL1Peak, {{"vector", "16"}}), kL1Peak,
                 [](benchmark::State& st) { l1_peak_entry<float4>(st); });

  // Stride (offset 0) and misalignment (stride 1), in DRAM.
  std::vector<std::uint64_t> strides = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  if (quick) strides = {1, 2, 32, 1024};
  for (std::uint64_t stride : strides)
    register_entry(entry_name(kStride, {{"stride", std::to_string(stride)}, {"offset", "0"}}), kStride,
                   [stride](benchmark::State& st) { strided_entry(st, stride, 0); });
  for (std::uint64_t offset = 4; offset <= 128; offset += quick ? 60 : 4)
    register_entry(entry_name(kStride, {{"stride", "1"}, {"offset", std::to_string(offset)}}), kStride,
                   [offset](benchmark::State& st) { strided_entry(st, 1, offset); });
}

}  // namespace gpuprobe
