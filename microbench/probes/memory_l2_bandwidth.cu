// memory.l2_bandwidth: L2 read, write and copy bandwidth, one walker per SM (walk=shared, own_slice) or
// many short blocks (walk=blocks), working sets up to the L2's size. Byte counts as the other bandwidth
// probes' (memory_bandwidth_common.cuh): every load and store a kernel performs, counted once.
#include <algorithm>
#include <cmath>
#include <string>

#include "gpuprobe/check.hpp"
#include "harness/measure.hpp"
#include "harness/sweep.hpp"
#include "probes/memory_bandwidth_common.cuh"

namespace gpuprobe {
namespace bandwidth {
namespace {

// L2 bandwidth (memory.l2_bandwidth): every counted byte must reach the L2 as its own request. Two
// things merge loads before the L2 counts them, and each design below avoids them:
//  - within an SM, a load to a sector whose miss is still in flight merges in L1 (the stream kernel's
//    small working sets: all of an SM's threads sweep the same few sectors). Here each SM runs one
//    block (the dynamic shared memory it asks for leaves no room for a second one) that walks a ring
//    of chunks far larger than what it has in flight, so it asks for a sector again only a lap later;
//  - across SMs, GH100's L2 request coalescer (LRC, counters lrc__*) merges reads of one sector by
//    several SMs: with every SM walking the whole working set (walk=shared) only 78-83 % of the
//    loads reached the L2 at 4-33 MiB on the H100, 44 % at 1 MiB (SM-sourced L2 read sectors against
//    the count; the L1 hit rate was 0). With walk=own_slice each SM reads only its own 1/SMs of the
//    working set: no sector is wanted by two SMs, so nothing can merge. walk=blocks (below) lets
//    blocks that run at once share pieces only in small working sets, where its premise fails.
// Each walk's loads per thread is an axis: more in flight per SM, larger chunks.
// Loads are ld.global.cg and stores st.global.cg: L1 never holds the data. Writes and copies are not
// merged (their premise held with walk=shared: 1.00 and 0.99-1.00).
enum class L2Walk { kShared, kOwnSlice, kBlocks };
const char* l2_walk_name(L2Walk w) {
  return w == L2Walk::kShared ? "shared" : w == L2Walk::kOwnSlice ? "own_slice" : "blocks";
}

constexpr int kL2Threads = 1024;
// Loads (or stores) in flight per thread and chunk: 4 or 8 (a chunk of 64 or 128 KiB). A thread loads
// an address again only a ring later, after its own earlier load of it completed (the XOR waits for
// it). Yet a ring of one chunk per SM (own_slice at 8.25 MiB on the H100) had half its loads missing at
// the L2 (premise ratio 0.50; two chunks: 1.00), so own_slice rings hold at least kL2MinOwnChunks.
// walk=shared starts at 8 chunks, so that the SMs start at different chunks.
constexpr std::uint64_t l2_chunk_bytes(int loads) { return std::uint64_t(kL2Threads) * loads * 16; }
static_assert(l2_chunk_bytes(4) == 64 * 1024 && l2_chunk_bytes(8) == 128 * 1024, "chunk sizes as documented above");
constexpr std::uint32_t kL2MinOwnChunks = 2;
constexpr std::uint32_t kL2MinSharedChunks = 8;

// Block b walks chunks ring_base(b) + (start(b) + it) mod ring of `chunks`, it = 0 .. iterations-1.
//   shared:    ring = all chunks, ring_base = 0, start = b x step (the SMs spread over the set);
//   own_slice: ring = chunks / blocks, ring_base = b x ring, start = 0.
template <StreamKernel kKernel, int kLoads>
__global__ void __launch_bounds__(kL2Threads, 1)
    l2_kernel(float4* __restrict__ a, const float4* __restrict__ b, std::uint32_t ring, std::uint32_t base_step,
              std::uint32_t start_step, std::uint32_t iterations, unsigned* __restrict__ sink, int write_sink) {
  static_assert(kKernel == StreamKernel::kReadL2Only || kKernel == StreamKernel::kWrite ||
                    kKernel == StreamKernel::kCopy,
                "memory.l2_bandwidth runs read (ld.global.cg), write and copy");
  constexpr std::uint32_t kChunkVectors = std::uint32_t(kL2Threads) * kLoads;
  const std::uint32_t ring_base = blockIdx.x * base_step;
  std::uint32_t position = static_cast<std::uint32_t>(std::uint64_t(blockIdx.x) * start_step % ring);
  unsigned acc = 0;
  for (std::uint32_t it = 0; it < iterations; ++it) {
    const std::uint32_t first = (ring_base + position) * kChunkVectors + threadIdx.x;
    [[maybe_unused]] float4 v[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      if constexpr (kKernel == StreamKernel::kReadL2Only) v[j] = __ldcg(a + first + j * kL2Threads);
      if constexpr (kKernel == StreamKernel::kCopy) v[j] = __ldcg(b + first + j * kL2Threads);
    }
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      if constexpr (kKernel == StreamKernel::kReadL2Only) acc ^= lanes_xor(v[j]);
      if constexpr (kKernel == StreamKernel::kWrite) __stcg(a + first + j * kL2Threads, splat<float4>(1.5f));
      if constexpr (kKernel == StreamKernel::kCopy) __stcg(a + first + j * kL2Threads, v[j]);
    }
    position = position + 1 == ring ? 0 : position + 1;
  }
  if constexpr (kKernel == StreamKernel::kReadL2Only)
    if (write_sink) sink[0] = acc;
}

// Dynamic shared memory that lets one l2_kernel block, and no second one, reside on an SM.
std::size_t l2_one_block_shared_bytes(const DeviceInfo& dev) {
  return (dev.smem_per_sm_bytes / 2 / 1024 + 1) * 1024;
}

struct L2Launch {
  std::uint32_t ring, base_step, start_step, iterations;
};

template <StreamKernel kKernel, int kLoads>
void launch_l2_typed(const DeviceInfo& dev, float4* a, const float4* b, const L2Launch& x, unsigned* sink,
                     cudaStream_t s) {
  const auto shared = l2_one_block_shared_bytes(dev);
  static bool prepared = false;  // per instantiation: raise its shared-memory limit once, and check
  if (!prepared) {
    GP_CUDA_CHECK(cudaFuncSetAttribute(l2_kernel<kKernel, kLoads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
    int resident = 0;
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, l2_kernel<kKernel, kLoads>, kL2Threads,
                                                                shared));
    if (resident != 1)
      throw Error("memory.l2_bandwidth: " + std::to_string(resident) +
                  " blocks per SM resident (needs exactly 1 for its one-walker-per-SM design)");
    prepared = true;
  }
  l2_kernel<kKernel, kLoads><<<static_cast<unsigned>(dev.sm_count), kL2Threads, shared, s>>>(
      a, b, x.ring, x.base_step, x.start_step, x.iterations, sink, 0);
}

template <int kLoads>
void launch_l2(StreamKernel k, const DeviceInfo& dev, float4* a, const float4* b, const L2Launch& x, unsigned* sink,
               cudaStream_t s) {
  switch (k) {
    case StreamKernel::kReadL2Only: return launch_l2_typed<StreamKernel::kReadL2Only, kLoads>(dev, a, b, x, sink, s);
    case StreamKernel::kWrite: return launch_l2_typed<StreamKernel::kWrite, kLoads>(dev, a, b, x, sink, s);
    case StreamKernel::kCopy: return launch_l2_typed<StreamKernel::kCopy, kLoads>(dev, a, b, x, sink, s);
    default: throw UsageError("memory.l2_bandwidth runs read_cg, write and copy");
  }
}

// walk=blocks: many short-lived 1024-thread blocks (the pattern of RRZE gpu-benches' gpu-l2-cache).
// Each array is `loads` rows of `runs` 8 KiB pieces; block b reads (or writes) piece b mod runs of
// every row, one 8-byte ld.global.cg (st.global.cg) per thread and row. Blocks resident together
// touch different pieces only when runs exceeds them; below that the L2's request coalescer merges
// some loads, which the premise check reports (on the H100 it held from 8 MiB on).
template <StreamKernel kKernel, int kLoads>
__global__ void __launch_bounds__(kL2Threads) l2_kernel_blocks(float2* __restrict__ a, const float2* __restrict__ b,
                                                              std::uint32_t runs, unsigned* __restrict__ sink,
                                                              int write_sink) {
  const std::size_t first = std::size_t(blockIdx.x % runs) * kL2Threads + threadIdx.x;
  const std::size_t row = std::size_t(runs) * kL2Threads;
  unsigned acc = 0;
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    if constexpr (kKernel == StreamKernel::kReadL2Only) acc ^= lanes_xor(__ldcg(a + first + j * row));
    if constexpr (kKernel == StreamKernel::kWrite) __stcg(a + first + j * row, splat<float2>(1.5f));
    if constexpr (kKernel == StreamKernel::kCopy) __stcg(a + first + j * row, __ldcg(b + first + j * row));
  }
  if constexpr (kKernel == StreamKernel::kReadL2Only)
    if (write_sink) sink[0] = acc;
}

const ProbeDescriptor& kL2Bandwidth = declare_family(
    ProbeDescriptor{
        "memory.l2_bandwidth", Figure::kBandwidth,
        "walk=shared and walk=own_slice: one 1024-thread block per SM (its shared-memory request leaves room for "
        "no second one) walking a ring of chunks, 16-byte ld.global.cg loads or st.global.cg stores; shared: every "
        "SM over the whole working set from its own starting chunk; own_slice: every SM over its own 1/SMs of it "
        "(no sector is read by two SMs, so the L2's request coalescer cannot merge them); loads = 16-byte accesses "
        "per thread per chunk (a chunk is 1024 x loads x 16 B). walk=blocks: many short 1024-thread blocks, block b "
        "accessing piece b mod runs (8 KiB) of each of 32 rows, 8-byte ld/st.global.cg. Working sets up to the L2 "
        "size; CUDA events; bytes = accesses x vector bytes",
        "", 10, 2, 0, true, Premise::l2()}
        .titled("L2 bandwidth (ld/st.global.cg walks)")
        .with_axes({text_axis("kernel", AxisRole::kGroup), text_axis("walk", AxisRole::kGroup),
                    numeric_axis("loads", "accesses per thread per chunk or block", AxisRole::kGroup),
                    numeric_axis("footprint", "bytes", AxisRole::kX)})
        .with_fields({numeric_field("vector", "bytes"), numeric_field("blocks_per_sm", "blocks"),
                      numeric_field("threads", "threads")}));

// The smallest working set of a walk (over all arrays): kL2MinOwnChunks chunks per SM for own_slice,
// or kL2MinSharedChunks chunks shared by all.
// walk=blocks: one 8 KiB piece per row and block, kL2MinBlockRuns pieces per row at least.
constexpr std::uint64_t l2_block_bytes(int loads) { return std::uint64_t(kL2Threads) * loads * 8; }
constexpr std::uint32_t kL2MinBlockRuns = 8;

std::uint64_t l2_min_footprint(L2Walk walk, int loads, const StreamKernelInfo& kernel, int sms) {
  if (walk == L2Walk::kBlocks) return l2_block_bytes(loads) * kL2MinBlockRuns * kernel.arrays;
  const std::uint64_t chunk = l2_chunk_bytes(loads) * kernel.arrays;
  return walk == L2Walk::kOwnSlice ? chunk * kL2MinOwnChunks * std::uint64_t(sms) : chunk * kL2MinSharedChunks;
}

void l2_blocks_entry(benchmark::State& state, const StreamKernelInfo& kernel, int loads, std::uint64_t footprint) {
  constexpr int kBlockLoads = 32;
  if (loads != kBlockLoads || footprint < l2_min_footprint(L2Walk::kBlocks, loads, kernel, 0))
    throw UsageError("memory.l2_bandwidth: working set below its walk's smallest size");
  const std::uint64_t block_bytes = l2_block_bytes(loads);
  const auto runs = static_cast<std::uint32_t>(footprint / kernel.arrays / block_bytes);
  const std::uint64_t array_bytes = std::uint64_t(runs) * block_bytes;
  const auto blocks =
      static_cast<unsigned>(std::ceil(kMinBytesPerSample / double(block_bytes * kernel.accesses)));
  const std::uint64_t array_stride = array_bytes + kArrayPadding;
  char* base = bandwidth_memory(array_stride * kernel.arrays);
  auto* a = reinterpret_cast<float2*>(base);
  const auto* b = reinterpret_cast<const float2*>(base + array_stride);

  Measurement m(state, kL2Bandwidth, Work{double(blocks) * block_bytes * kernel.accesses, 0, 0});
  m.param("footprint", double(array_bytes) * kernel.arrays);
  m.param("vector", 8);
  m.param("threads", double(blocks) * kL2Threads);
  unsigned* sink = bandwidth_sink();
  m.time_events([&](cudaStream_t s) {
    switch (kernel.kernel) {
      case StreamKernel::kReadL2Only:
        return l2_kernel_blocks<StreamKernel::kReadL2Only, kBlockLoads><<<blocks, kL2Threads, 0, s>>>(a, b, runs, sink, 0);
      case StreamKernel::kWrite:
        return l2_kernel_blocks<StreamKernel::kWrite, kBlockLoads><<<blocks, kL2Threads, 0, s>>>(a, b, runs, sink, 0);
      case StreamKernel::kCopy:
        return l2_kernel_blocks<StreamKernel::kCopy, kBlockLoads><<<blocks, kL2Threads, 0, s>>>(a, b, runs, sink, 0);
      default: throw UsageError("memory.l2_bandwidth runs read_cg, write and copy");
    }
  });
}

void l2_entry(benchmark::State& state, const StreamKernelInfo& kernel, L2Walk walk, int loads,
              std::uint64_t footprint) {
  const DeviceInfo& dev = context().device;
  if (walk == L2Walk::kBlocks) return l2_blocks_entry(state, kernel, loads, footprint);
  const auto sms = static_cast<std::uint32_t>(dev.sm_count);
  const std::uint64_t chunk_bytes = l2_chunk_bytes(loads);
  const std::uint64_t array_bytes = footprint / kernel.arrays;
  const auto chunks = static_cast<std::uint32_t>(array_bytes / chunk_bytes);
  if ((loads != 4 && loads != 8) || footprint < l2_min_footprint(walk, loads, kernel, dev.sm_count))
    throw UsageError("memory.l2_bandwidth: working set below its walk's smallest size");
  L2Launch x{};
  if (walk == L2Walk::kOwnSlice) {
    x.ring = chunks / sms;  // each SM's slice; the remainder of chunks is not touched (and not counted)
    x.base_step = x.ring;
    x.start_step = 0;
  } else {
    // The SMs start evenly spread over the chunks, so that at any moment they cover the whole set.
    x.ring = chunks;
    x.base_step = 0;
    x.start_step = std::max<std::uint32_t>(1, chunks / sms);
  }
  const double bytes_per_iteration = double(sms) * chunk_bytes * kernel.accesses;
  x.iterations = static_cast<std::uint32_t>(std::ceil(kMinBytesPerSample / bytes_per_iteration));
  const std::uint64_t array_stride = array_bytes + kArrayPadding;
  char* base = bandwidth_memory(array_stride * kernel.arrays);
  auto* a = reinterpret_cast<float4*>(base);
  const auto* b = reinterpret_cast<const float4*>(base + array_stride);

  Measurement m(state, kL2Bandwidth, Work{bytes_per_iteration * x.iterations, 0, 0});  // premise L2 (the record's)
  // The bytes the walk touches (own_slice leaves the remainder of chunks / SMs untouched).
  const double touched = walk == L2Walk::kOwnSlice ? double(x.ring) * sms * chunk_bytes : double(chunks) * chunk_bytes;
  m.param("footprint", touched * kernel.arrays);
  m.param("vector", 16);
  m.param("blocks_per_sm", 1);
  m.param("threads", double(sms) * kL2Threads);
  unsigned* sink = bandwidth_sink();
  m.time_events([&](cudaStream_t s) {
    if (loads == 8)
      launch_l2<8>(kernel.kernel, dev, a, b, x, sink, s);
    else
      launch_l2<4>(kernel.kernel, dev, a, b, x, sink, s);
  });
}

}  // namespace

void register_l2_bandwidth_probes() {
  const Context& ctx = context();
  const bool quick = ctx.options.quick;
  // L2 bandwidth: read, write and copy, 4 working sets per octave up to the L2's size, so that the
  // near-partition plateau and the edges between are resolved. walk=shared and walk=blocks for each;
  // walk=own_slice (the one no request coalescing can merge) for reads. walk=blocks keeps the L2's
  // output port busier (lts2xbar 94 % of peak against own_slice's 88 % under ncu on the H100), so its
  // premise-held reads set the ceiling there; own_slice is the merge-free cross-check.
  for (const StreamKernelInfo& k : kStreamKernels) {
    if (k.kernel != StreamKernel::kReadL2Only && k.kernel != StreamKernel::kWrite && k.kernel != StreamKernel::kCopy)
      continue;
    struct Walk {
      L2Walk walk;
      int loads;
    };
    for (Walk w : {Walk{L2Walk::kShared, 8}, Walk{L2Walk::kOwnSlice, 4}, Walk{L2Walk::kBlocks, 32}}) {
      if (w.walk == L2Walk::kOwnSlice && k.kernel != StreamKernel::kReadL2Only) continue;
      const std::uint64_t granule =
          w.walk == L2Walk::kBlocks ? l2_block_bytes(w.loads) * k.arrays
                                    : l2_chunk_bytes(w.loads) * k.arrays *
                                          (w.walk == L2Walk::kOwnSlice ? std::uint64_t(ctx.device.sm_count) : 1);
      const std::uint64_t lo = l2_min_footprint(w.walk, w.loads, k, ctx.device.sm_count);
      for (std::uint64_t ws : log_sweep(lo, ctx.device.l2_bytes, quick ? 1 : 4, granule))
        register_entry(entry_name(kL2Bandwidth, {{"kernel", k.name}, {"walk", l2_walk_name(w.walk)},
                                                        {"loads", std::to_string(w.loads)},
                                                        {"footprint", std::to_string(ws)}}),
                       kL2Bandwidth, [k, w, ws](benchmark::State& st) { l2_entry(st, k, w.walk, w.loads, ws); });
    }
  }
}

}  // namespace bandwidth
}  // namespace gpuprobe
