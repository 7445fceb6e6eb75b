// Bandwidth probes: memory.bandwidth (read, write, copy, triad x 4/8/16-byte accesses x working
// set 16 KiB .. --max-footprint, on all SMs), memory.occupancy (DRAM bandwidth vs blocks per SM) and
// memory.stride (V&D SC08 section 3.5: bandwidth vs stride and misalignment).
// Byte counts: every load and store a kernel performs, counted once (a copy moves read + write,
// a triad two reads + one write); the figures derive from StreamKernel's table below.
#include <algorithm>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/sweep.hpp"
#include "probes/memory_probes.hpp"

namespace gpuprobe {
namespace {

// ------------------------------------------------------------------------------------------------
// The stream kernels and their byte accounting (one table drives names, bytes and footprints).

enum class StreamKernel { kRead, kReadL2Only, kReadNonCoherent, kWrite, kCopy, kTriad };

struct StreamKernelInfo {
  StreamKernel kernel;
  const char* name;
  int arrays;        // distinct arrays touched: the working set is arrays x elements x vector bytes
  int accesses;      // loads + stores per element visit: bytes = accesses x vector bytes
  bool stores;       // whether it stores (only then does a store cache hint matter)
};

constexpr StreamKernelInfo kStreamKernels[] = {
    {StreamKernel::kRead, "read", 1, 1, false},
    {StreamKernel::kReadL2Only, "read_cg", 1, 1, false},       // ld.global.cg: L1 bypassed
    {StreamKernel::kReadNonCoherent, "read_nc", 1, 1, false},  // ld.global.nc: read-only data path
    {StreamKernel::kWrite, "write", 1, 1, true},
    {StreamKernel::kCopy, "copy", 2, 2, true},
    {StreamKernel::kTriad, "triad", 3, 3, true},
};

constexpr int kBlockThreads = 256;

template <int kBytes> struct VectorOf;
template <> struct VectorOf<4> { using type = float; };
template <> struct VectorOf<8> { using type = float2; };
template <> struct VectorOf<16> { using type = float4; };

__device__ __forceinline__ unsigned lanes_xor(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned lanes_xor(float2 v) { return __float_as_uint(v.x) ^ __float_as_uint(v.y); }
__device__ __forceinline__ unsigned lanes_xor(float4 v) {
  return __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
}
__device__ __forceinline__ float axpy(float s, float x, float y) { return fmaf(s, x, y); }
__device__ __forceinline__ float2 axpy(float s, float2 x, float2 y) { return {fmaf(s, x.x, y.x), fmaf(s, x.y, y.y)}; }
__device__ __forceinline__ float4 axpy(float s, float4 x, float4 y) {
  return {fmaf(s, x.x, y.x), fmaf(s, x.y, y.y), fmaf(s, x.z, y.z), fmaf(s, x.w, y.w)};
}
template <class V> __device__ __forceinline__ V splat(float v);
template <> __device__ __forceinline__ float splat<float>(float v) { return v; }
template <> __device__ __forceinline__ float2 splat<float2>(float v) { return {v, v}; }
template <> __device__ __forceinline__ float4 splat<float4>(float v) { return {v, v, v, v}; }

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

// ------------------------------------------------------------------------------------------------
// Device memory: one pool of random data in [1, 2), grown on demand, shared by these probes.

char* bandwidth_memory(std::uint64_t bytes) {
  static DeviceBuffer<float> pool;
  if (pool.bytes() < bytes) {
    pool = DeviceBuffer<float>();
    pool = DeviceBuffer<float>((bytes + 3) / 4);
    fill_uniform(pool.data(), pool.size(), 7, 1.f, 2.f);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return reinterpret_cast<char*>(pool.data());
}
unsigned* bandwidth_sink() {
  static DeviceBuffer<unsigned> sink(1);
  return sink.data();
}

const ProbeDescriptor kBandwidth{
    "memory.bandwidth", Figure::kBandwidth,
    "all SMs, 256-thread blocks; each thread visits elements i, i+step, ... mod n (coalesced, reuse "
    "distance = working set); CUDA events; bytes = accesses x vector bytes",
    "", 10, 2};
const ProbeDescriptor kOccupancy{
    "memory.occupancy", Figure::kBandwidth,
    "as memory.bandwidth at a DRAM-sized and an L2-sized working set, varying resident 256-thread "
    "blocks per SM and the store cache hint (default or st.global.cs)", "", 10, 2};
const ProbeDescriptor kStride{
    "memory.stride", Figure::kBandwidth,
    "all SMs; thread t reads float (t + j x threads) x stride from base + offset; bytes = 4 per load "
    "(useful bytes: the effective bandwidth a strided code sees); CUDA events",
    "", 10, 5};

struct StreamConfig {
  StreamKernelInfo kernel;
  int vector_bytes;
  std::uint64_t working_set;  // bytes over all arrays
  int blocks_per_sm;
  bool streaming_stores = false;
};

// Arrays of one kernel start this far apart beyond their size, so that two streams never walk
// addresses that differ only in high bits (same DRAM bank and channel at every step).
constexpr std::uint64_t kArrayPadding = (std::uint64_t(1) << 20) + (std::uint64_t(5) << 10);

// Bytes one sample moves at least: enough that a sample lasts >= ~250 us even at L1 speed, so the
// launch latency and the last wave's tail inside the event pair stay a small fraction.
constexpr double kMinBytesPerSample = 8e9;

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
  const double visits_wanted =
      dram_sized ? double(elements) : std::max(kMinBytesPerSample / (cfg.kernel.accesses * sizeof(V)), double(elements));
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
  const double bytes = double(threads) * visits * cfg.kernel.accesses * sizeof(V);

  Measurement m(state, d, Work{bytes, 0, 0});
  m.param("footprint_bytes", double(elements * sizeof(V) * cfg.kernel.arrays));
  m.param("vector_bytes", sizeof(V));
  m.param("blocks_per_sm", cfg.blocks_per_sm);
  m.param("threads", double(threads));
  m.tag("kernel", cfg.kernel.name);
  m.tag("store", cfg.streaming_stores ? "cs" : "default");
  unsigned* sink = bandwidth_sink();
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
  m.param("stride_elements", double(stride));
  m.param("offset_bytes", double(offset_bytes));
  m.param("span_bytes", loads * 4.0 * stride);
  unsigned* sink = bandwidth_sink();
  m.time_events([&](cudaStream_t s) {
    strided_read_kernel<<<blocks, kBlockThreads, 0, s>>>(base, stride, loads_per_thread, sink, 0);
  });
}

}  // namespace

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
        const StreamConfig cfg{k, vector_bytes, ws, full_occupancy};
        register_entry(entry_name(kBandwidth.family, {{"kernel", k.name}, {"vector", std::to_string(vector_bytes)},
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
          register_entry(entry_name(kOccupancy.family, {{"kernel", k.name}, {"vector", "16"},
                                                        {"store", streaming ? "cs" : "default"},
                                                        {"footprint", std::to_string(ws)},
                                                        {"blocks_per_sm", std::to_string(bps)}}),
                         kOccupancy, [cfg](benchmark::State& st) { stream_entry(st, kOccupancy, cfg); });
        }
      }
    }
  }

  // Stride (offset 0) and misalignment (stride 1), in DRAM.
  std::vector<std::uint64_t> strides = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  if (quick) strides = {1, 2, 32, 1024};
  for (std::uint64_t stride : strides)
    register_entry(entry_name(kStride.family, {{"stride", std::to_string(stride)}, {"offset", "0"}}), kStride,
                   [stride](benchmark::State& st) { strided_entry(st, stride, 0); });
  for (std::uint64_t offset = 4; offset <= 128; offset += quick ? 60 : 4)
    register_entry(entry_name(kStride.family, {{"stride", "1"}, {"offset", std::to_string(offset)}}), kStride,
                   [offset](benchmark::State& st) { strided_entry(st, 1, offset); });
}

}  // namespace gpuprobe
