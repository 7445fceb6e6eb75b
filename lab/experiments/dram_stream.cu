// Which copy-kernel and write-kernel designs reach the DRAM peak of this GPU at working sets far
// beyond the L2 (>= 1 GiB)? Target on the H100: copy >= 0.99 x cudaMemcpyAsync D2D of the same
// process, write >= 3270 GB/s. memory.bandwidth's stream_kernel (microbench/probes/
// memory_bandwidth.cu) reaches copy 2805 GB/s (memcpy: 2985) and write 3170 GB/s; this experiment
// re-implements it and sets it against access layouts, loads in flight per thread, cache hints,
// grid sizes and the sm_90 bulk-copy engine (TMA, cp.async.bulk), each measured the same way.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/dram_stream.cu -o dram_stream
//   ./dram_stream        (~10 s on an H100; no arguments)
//
// Prints: the device, then a legend (one line per variant: what it tests), then for each size per
// buffer (1, 2, 4 GiB, as device memory allows; two buffers, source and destination):
//   copy table  - one line per variant: median GB/s (read + write bytes: 2 x size / time), ratio to
//                 the first cudaMemcpyAsync row of the same table, [slowest .. fastest] sample in
//                 GB/s, coefficient of variation, the launch (grid x block, resident blocks/SM,
//                 registers/thread), and the check: the variant's output compared element-wise,
//                 on the device, with its source after a run into a destination poisoned with
//                 the bitwise inverse ("ok", or "WRONG <bad>/<n>"; the probe's rows print the
//                 elements its walk never visits and the count predicted from its step, which
//                 must agree); the last row re-times memcpy (drift check).
//   write table - the same against cudaMemsetAsync (size / time), output compared with the value.
//   best        - the best copy ratio and the best write GB/s of the size.
// Timing (every row, one helper): 3 warm-ups, then 25 samples, each one operation between two
// CUDA events on one stream, synchronized after each sample; median, min, max, CV. Buffers hold
// non-zero hashed data (never zeros); writes store a non-zero 16-byte pattern.
// Persistent grids are clamped to the blocks that fit on an SM at once (except the probe's re-
// implementation, which launches 8 x 256-thread blocks per SM whatever the fit, as the probe does).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bulk_copy.cuh"
#include "gpuprobe/check.hpp"

namespace {

constexpr int kWarmups = 3;
constexpr int kSamples = 25;
constexpr std::size_t kGiB = std::size_t(1) << 30;
// The probe's distance between arrays beyond their size (kArrayPadding): the offset-destination row.
constexpr std::size_t kDstShift = (std::size_t(1) << 20) + (std::size_t(5) << 10);
constexpr unsigned kSrcSeed = 0x1234567u;
constexpr unsigned char kMemsetByte = 0xA5;

// ------------------------------------------------------------------------------------------------
// Load and store flavours (the PTX each one emits is named in the enum).

enum class Ld {
  kPlain,             // *p on a const __restrict__ pointer: the compiler's choice (ld.global.nc)
  kCs,                // __ldcs: ld.global.cs, evict-first in L1 and L2
  kNcNoAlloc,         // ld.global.nc.L1::no_allocate
  kNc256,             // ld.global.nc.L2::256B: the L2 fetches the whole 256-byte block
  kNcNoAlloc256,      // both hints
};
enum class St {
  kPlain,  // st.global (write-back)
  kCs,     // __stcs: st.global.cs, evict-first
  kWt,     // __stwt: st.global.wt, write-through
};

template <Ld L>
__device__ __forceinline__ uint4 load(const uint4* p) {
  uint4 v;
  if constexpr (L == Ld::kPlain) {
    v = *p;
  } else if constexpr (L == Ld::kCs) {
    v = __ldcs(p);
  } else if constexpr (L == Ld::kNcNoAlloc) {
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (L == Ld::kNc256) {
    asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else {
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  }
  return v;
}

template <St S>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (S == St::kPlain) *p = v;
  else if constexpr (S == St::kCs) __stcs(p, v);
  else __stwt(p, v);
}

// A copy fetches element i of the source; a write has its value.
template <bool kCopy, Ld L>
__device__ __forceinline__ uint4 fetch(const uint4* src, std::size_t i, uint4 value) {
  if constexpr (kCopy) return load<L>(src + i);
  else return value;
}

// ------------------------------------------------------------------------------------------------
// Kernels. One signature for all (launched through cudaLaunchKernel from the variant tables):
// n = elements of 16 bytes; copies ignore `value`, writes ignore `src`.

using Kernel = void (*)(const uint4*, uint4*, std::size_t, uint4);

// (a) memory.bandwidth's stream_kernel, copy / write, vector 16 (uint4 here, float4 there: same
// LDG/STG.128): thread t visits (t + v x step) mod n for v < visits, step = threads + 32,
// visits = ceil(n / threads), 32-bit indices, unroll 8, __launch_bounds__(256) as there. Its walk
// visits threads x visits elements (a few visited twice) and skips a 32-element gap per round
// that the wrap does not reach again: the check reports those as "unvisited", and the GB/s count
// the bytes it moves (threads x visits x 16 per access), as the probe does.
template <bool kCopy>
__global__ void __launch_bounds__(256) probe_walk(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                  std::size_t n64, uint4 value) {
  const std::uint32_t n = static_cast<std::uint32_t>(n64);
  const std::uint32_t threads = gridDim.x * blockDim.x;
  std::uint32_t step = (threads + 32) % n;
  if (step == 0) step = 32;
  const std::uint32_t visits = max(1u, (n + threads - 1) / threads);
  std::uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) % n;
#pragma unroll 8
  for (std::uint32_t v = 0; v < visits; ++v) {
    if constexpr (kCopy) dst[i] = src[i];
    else dst[i] = value;
    const std::uint32_t next = i + step;
    i = min(next, next - n);
  }
}

// Register budget of the kernels below: __launch_bounds__(1024, 64 / kRegs) lets ptxas use up to
// kRegs registers per thread. Without a minimum-blocks figure ptxas aims at 32 and, for K = 8,
// interleaves loads and stores (4 loads, 3 stores, 2 loads, ...) instead of issuing all 8 loads
// first; kRegs = 64 keeps the 8 loads grouped at the price of residency (K = 8 x 16 B x 2048
// threads would be the whole 256 KiB register file of an SM).

// (b, c) Grid-stride by K x threads: thread i loads elements i, i + T, ..., i + (K-1) T
// (T = all threads) into registers, then stores all K. K = 1 is the textbook grid-stride loop.
template <int K, bool kCopy, Ld L, St S, int kRegs = 32>
__global__ void __launch_bounds__(1024, 64 / kRegs) grid_stride(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                    std::size_t n, uint4 value) {
  const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (K - 1) * threads < n; i += K * threads) {
    uint4 v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = fetch<kCopy, L>(src, i + j * threads, value);
#pragma unroll
    for (int j = 0; j < K; ++j) store<S>(dst + i + j * threads, v[j]);
  }
  for (; i < n; i += threads) store<S>(dst + i, fetch<kCopy, L>(src, i, value));
}

// (d, e, one-shot) Tiles of K x V x blockDim contiguous elements, one tile per block and step.
// Thread t of a tile moves V adjacent elements (V = 2: 32 contiguous bytes) at K places
// blockDim x V apart: all K x V loads first, then the stores. kChunked: block b takes the
// contiguous run of tiles [b, b+1) x tiles / grid (one region per block); otherwise tiles are
// dealt round-robin (tile b, b + grid, ...), and a grid of one block per tile is the non-
// persistent "one-shot" layout.
template <int K, int V, bool kCopy, Ld L, St S, bool kChunked, int kRegs = 32>
__global__ void __launch_bounds__(1024, 64 / kRegs) tiles(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                              std::size_t n, uint4 value) {
  const std::size_t jump = std::size_t(blockDim.x) * V;
  const std::size_t per_tile = K * jump;
  const std::size_t count = (n + per_tile - 1) / per_tile;
  std::size_t t, end, stride;
  if constexpr (kChunked) {
    t = count * blockIdx.x / gridDim.x;
    end = count * (blockIdx.x + 1) / gridDim.x;
    stride = 1;
  } else {
    t = blockIdx.x;
    end = count;
    stride = gridDim.x;
  }
  for (; t < end; t += stride) {
    const std::size_t first = t * per_tile + std::size_t(threadIdx.x) * V;
    if ((t + 1) * per_tile <= n) {
      uint4 v[K * V];
#pragma unroll
      for (int j = 0; j < K; ++j)
#pragma unroll
        for (int h = 0; h < V; ++h) v[j * V + h] = fetch<kCopy, L>(src, first + j * jump + h, value);
#pragma unroll
      for (int j = 0; j < K; ++j)
#pragma unroll
        for (int h = 0; h < V; ++h) store<S>(dst + first + j * jump + h, v[j * V + h]);
    } else {  // the partial last tile
      for (int j = 0; j < K; ++j)
        for (int h = 0; h < V; ++h) {
          const std::size_t e = first + j * jump + h;
          if (e < n) store<S>(dst + e, fetch<kCopy, L>(src, e, value));
        }
    }
  }
}

// (h) sm_90 bulk copies (the TMA's 1D mode, helpers in bulk_copy.cuh): one thread per block
// drives everything; the data never passes through registers.
using namespace gpuprobe::bulk;

// Copy: block b moves tiles b, b + grid, ... of kTile bytes through a ring of kStages shared-memory
// stages. Iteration k waits for tile k's load, issues its store, then refills the stage of tile
// k - kLag (whose store has finished reading shared memory by then) with tile k - kLag + kStages:
// kStages - kLag loads stay in flight. dynamic shared memory = kStages x kTile; 32 threads, one
// works (the other lanes only help with a tail shorter than a tile).
template <int kStages, int kTile>
__global__ void __launch_bounds__(32) tma_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                               std::size_t n, uint4) {
  constexpr int kLag = 2;
  static_assert(kStages > kLag && kTile % 16 == 0, "stages must exceed the lag; tiles are 16-byte multiples");
  extern __shared__ __align__(128) unsigned char stage_mem[];
  __shared__ std::uint64_t bars[kStages];
  const std::size_t tile_count = n * sizeof(uint4) / kTile;
  if (blockIdx.x == gridDim.x - 1)
    for (std::size_t i = tile_count * (kTile / sizeof(uint4)) + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  if (threadIdx.x != 0 || blockIdx.x >= tile_count) return;
  const std::size_t mine = (tile_count - blockIdx.x + gridDim.x - 1) / gridDim.x;
  const std::uint32_t smem0 = smem_addr(stage_mem), bar0 = smem_addr(bars);
  for (int s = 0; s < kStages; ++s) mbar_init(bar0 + 8 * s, 1);
  mbar_init_fence();
  const char* from = reinterpret_cast<const char*>(src);
  char* to = reinterpret_cast<char*>(dst);
  auto offset = [&](std::size_t k) { return (blockIdx.x + k * gridDim.x) * std::size_t(kTile); };
  auto load_tile = [&](std::size_t k) {
    const std::uint32_t s = static_cast<std::uint32_t>(k % kStages);
    mbar_arrive_expect_tx(bar0 + 8 * s, kTile);
    bulk_load(smem0 + s * kTile, from + offset(k), kTile, bar0 + 8 * s);
  };
  for (std::size_t k = 0; k < mine && k < std::size_t(kStages); ++k) load_tile(k);
  for (std::size_t k = 0; k < mine; ++k) {
    const std::uint32_t s = static_cast<std::uint32_t>(k % kStages);
    mbar_wait(bar0 + 8 * s, static_cast<std::uint32_t>((k / kStages) & 1));
    bulk_store(to + offset(k), smem0 + s * kTile, kTile);
    bulk_commit();
    if (k >= kLag && k - kLag + kStages < mine) {
      bulk_wait_read<kLag>();
      load_tile(k - kLag + kStages);
    }
  }
  bulk_wait_all();
}

// Write: the block fills one kTile stage with the value once, then thread 0 stores it to tiles
// b, b + grid, ... with bulk copies (at most 8 groups still reading the stage).
template <int kTile>
__global__ void __launch_bounds__(256) tma_write(const uint4* __restrict__, uint4* __restrict__ dst, std::size_t n,
                                                 uint4 value) {
  extern __shared__ __align__(128) unsigned char stage_mem[];
  uint4* stage = reinterpret_cast<uint4*>(stage_mem);
  for (int i = threadIdx.x; i < kTile / 16; i += blockDim.x) stage[i] = value;
  fence_proxy_async_shared();
  __syncthreads();
  const std::size_t tile_count = n * sizeof(uint4) / kTile;
  if (blockIdx.x == gridDim.x - 1)
    for (std::size_t i = tile_count * (kTile / sizeof(uint4)) + threadIdx.x; i < n; i += blockDim.x) dst[i] = value;
  if (threadIdx.x != 0) return;
  char* to = reinterpret_cast<char*>(dst);
  const std::uint32_t smem0 = smem_addr(stage_mem);
  for (std::size_t t = blockIdx.x; t < tile_count; t += gridDim.x) {
    bulk_store(to + t * kTile, smem0, kTile);
    bulk_commit();
    bulk_wait_read<8>();
  }
  bulk_wait_all();
}

// Setup and check kernels.
__host__ __device__ inline unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x | 1u;  // never zero
}

// p[i] = hashed words (or their bitwise inverse: differs from the pattern in every element).
__global__ void fill_pattern(uint4* p, std::size_t n, unsigned seed, bool invert) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned w = static_cast<unsigned>(4 * i) ^ seed;
    uint4 v = make_uint4(mix(w), mix(w + 1), mix(w + 2), mix(w + 3));
    if (invert) v = make_uint4(~v.x, ~v.y, ~v.z, ~v.w);
    p[i] = v;
  }
}

__global__ void fill_value(uint4* p, std::size_t n, uint4 value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = value;
}

// *bad += elements of a that differ from ref (or from value where ref is null).
__global__ void count_diff(const uint4* a, const uint4* ref, std::size_t n, uint4 value, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 x = a[i];
    const uint4 y = ref ? ref[i] : value;
    local += (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
  }
  if (local) atomicAdd(bad, local);
}

// ------------------------------------------------------------------------------------------------
// Variant tables.

struct Variant {
  const char* name;
  Kernel kernel;               // nullptr: the library call (cudaMemcpyAsync / cudaMemsetAsync)
  int threads;                 // per block
  int blocks_per_sm;           // persistent grid = SMs x this; 0 = one block per threads x per_thread elements
  int per_thread;              // one-shot grids only
  std::size_t smem;            // dynamic shared memory per block
  std::size_t dst_offset;      // bytes added to the destination
  bool probe;                  // the probe's walk: exact grid (no clamp), its own byte count and coverage
  const char* what;
};

Variant library(const char* name, std::size_t dst_offset, const char* what) {
  return {name, nullptr, 0, 0, 0, 0, dst_offset, false, what};
}
Variant probe(const char* name, Kernel k, const char* what) { return {name, k, 256, 8, 0, 0, 0, true, what}; }
Variant persistent(const char* name, Kernel k, int threads, int blocks_per_sm, const char* what,
                   std::size_t dst_offset = 0) {
  return {name, k, threads, blocks_per_sm, 0, 0, dst_offset, false, what};
}
Variant one_shot(const char* name, Kernel k, int threads, int per_thread, const char* what) {
  return {name, k, threads, 0, per_thread, 0, 0, false, what};
}
Variant bulk(const char* name, Kernel k, int threads, int blocks_per_sm, std::size_t smem, const char* what) {
  return {name, k, threads, blocks_per_sm, 0, smem, 0, false, what};
}

template <int K, Ld L = Ld::kPlain, St S = St::kPlain, int kRegs = 32>
constexpr Kernel kGsCopy = grid_stride<K, true, L, S, kRegs>;
template <int K, St S = St::kPlain, int kRegs = 32>
constexpr Kernel kGsWrite = grid_stride<K, false, Ld::kPlain, S, kRegs>;

std::vector<Variant> copy_variants() {
  return {
      library("cudaMemcpyAsync D2D", 0, "baseline: the runtime's device-to-device copy; ratios are to this row"),
      probe("a probe stream_kernel", probe_walk<true>,
            "memory.bandwidth's copy re-implemented: 8 x 256 / SM, step threads+32 mod n, unroll 8"),
      persistent("b grid-stride K=1", kGsCopy<1>, 256, 8, "textbook grid-stride loop, one 16 B load per trip"),
      persistent("c grid-stride K=2", kGsCopy<2>, 256, 8, "2 independent 16 B loads hoisted before 2 stores"),
      persistent("c grid-stride K=4", kGsCopy<4>, 256, 8, "4 loads in flight per thread (reference for f, g)"),
      persistent("c grid-stride K=8", kGsCopy<8, Ld::kPlain, St::kPlain, 64>, 256, 8,
                 "8 loads in flight per thread: 64-register budget, fewer blocks fit (grid clamped)"),
      persistent("d tiles K=4 round-robin", tiles<4, 1, true, Ld::kPlain, St::kPlain, false>, 256, 8,
                 "block moves a contiguous 16 KiB tile per trip, tiles dealt round-robin"),
      persistent("d chunk K=4", tiles<4, 1, true, Ld::kPlain, St::kPlain, true>, 256, 8,
                 "block moves one contiguous chunk n / blocks (persistent), 16 KiB per trip"),
      one_shot("d one-shot K=4", tiles<4, 1, true, Ld::kPlain, St::kPlain, false>, 256, 4,
               "non-persistent: one 16 KiB tile per block, n / 1024 blocks (hardware schedules)"),
      persistent("e 32 B/thread x2 tiles", tiles<2, 2, true, Ld::kPlain, St::kPlain, false>, 256, 8,
                 "two adjacent 16 B per thread (half-sector per instruction), 4 loads in flight"),
      persistent("f K=4 st.global.cs", kGsCopy<4, Ld::kPlain, St::kCs>, 256, 8,
                 "streaming (evict-first) stores: dirty lines leave L2 first"),
      persistent("f K=4 st.global.wt", kGsCopy<4, Ld::kPlain, St::kWt>, 256, 8, "write-through stores"),
      persistent("f K=4 ld.global.cs", kGsCopy<4, Ld::kCs, St::kPlain>, 256, 8,
                 "evict-first loads: read lines make room for dirty lines"),
      persistent("f K=4 ld.nc.L1::no_allocate", kGsCopy<4, Ld::kNcNoAlloc, St::kPlain>, 256, 8,
                 "loads bypass L1 allocation"),
      persistent("f K=4 ld.nc.L2::256B", kGsCopy<4, Ld::kNc256, St::kPlain>, 256, 8,
                 "L2 fetches 256 B blocks (2 lines) per miss: longer DRAM bursts"),
      persistent("g K=4 1 x 256 / SM", kGsCopy<4>, 256, 1, "grid size: 16 KiB of loads in flight per SM"),
      persistent("g K=4 2 x 256 / SM", kGsCopy<4>, 256, 2, "grid size: 32 KiB in flight per SM"),
      persistent("g K=4 4 x 256 / SM", kGsCopy<4>, 256, 4, "grid size: 64 KiB in flight per SM"),
      persistent("g K=4 2 x 1024 / SM", kGsCopy<4>, 1024, 2, "1024-thread blocks, same threads as 8 x 256"),
      persistent("c K=4, dst + 1 MiB + 5 KiB", kGsCopy<4>, 256, 8,
                 "destination shifted as the probe's arrays are (DRAM channel/bank aliasing of src/dst)", kDstShift),
      library("memcpy, dst + 1 MiB + 5 KiB", kDstShift, "the baseline with the same shifted destination"),
      persistent("h tiles K=8 nc.na.256B + st.cs", tiles<8, 1, true, Ld::kNcNoAlloc256, St::kCs, false, 64>, 256, 8,
                 "combination: 8 loads in flight, no L1 allocation, 256 B L2 fetch, streaming stores"),
      bulk("h TMA bulk 1 / SM, 8 x 16 KiB", tma_copy<8, 16384>, 32, 1, 8 * 16384,
           "cp.async.bulk G->S (mbarrier) + S->G, one thread per SM, 6 x 16 KiB loads in flight"),
      bulk("h TMA bulk 2 / SM, 6 x 16 KiB", tma_copy<6, 16384>, 32, 2, 6 * 16384,
           "as above, two blocks per SM, 2 x 4 x 16 KiB loads in flight"),
      library("cudaMemcpyAsync D2D (again)", 0, "the baseline re-timed last: drift over the table"),
  };
}

std::vector<Variant> write_variants() {
  return {
      library("cudaMemsetAsync", 0, "baseline: the runtime's memset (byte 0xA5); ratios are to this row"),
      probe("a probe stream_kernel", probe_walk<false>, "memory.bandwidth's write re-implemented"),
      persistent("b grid-stride K=1", kGsWrite<1>, 256, 8, "textbook grid-stride store loop"),
      persistent("c grid-stride K=4", kGsWrite<4>, 256, 8, "4 stores per trip (fewer loop instructions)"),
      persistent("c grid-stride K=8", kGsWrite<8, St::kPlain, 64>, 256, 8, "8 stores per trip (64-register budget)"),
      persistent("d tiles K=4 round-robin", tiles<4, 1, false, Ld::kPlain, St::kPlain, false>, 256, 8,
                 "block writes a contiguous 16 KiB tile per trip"),
      persistent("d chunk K=4", tiles<4, 1, false, Ld::kPlain, St::kPlain, true>, 256, 8,
                 "block writes one contiguous chunk n / blocks"),
      one_shot("d one-shot K=4", tiles<4, 1, false, Ld::kPlain, St::kPlain, false>, 256, 4,
               "non-persistent: one 16 KiB tile per block"),
      persistent("e 32 B/thread x2 tiles", tiles<2, 2, false, Ld::kPlain, St::kPlain, false>, 256, 8,
                 "two adjacent 16 B stores per thread"),
      persistent("f K=4 st.global.cs", kGsWrite<4, St::kCs>, 256, 8, "streaming (evict-first) stores"),
      persistent("g K=4 1 x 256 / SM", kGsWrite<4>, 256, 1, "grid size"),
      persistent("g K=4 2 x 256 / SM", kGsWrite<4>, 256, 2, "grid size"),
      persistent("g K=4 4 x 256 / SM", kGsWrite<4>, 256, 4, "grid size"),
      persistent("g K=4 2 x 1024 / SM", kGsWrite<4>, 1024, 2, "1024-thread blocks"),
      bulk("h TMA bulk store 1 / SM, 16 KiB", tma_write<16384>, 256, 1, 16384,
           "cp.async.bulk S->G of one value-filled 16 KiB stage, one thread per SM issues"),
      bulk("h TMA bulk store 4 / SM, 16 KiB", tma_write<16384>, 256, 4, 16384,
           "as above, four issuing blocks per SM"),
      library("cudaMemsetAsync (again)", 0, "the baseline re-timed last"),
  };
}

// ------------------------------------------------------------------------------------------------
// Timing: the one helper every row goes through.

struct Timing {
  double median_ms, min_ms, max_ms, cv;
};

template <class Op>
Timing time_op(cudaStream_t stream, cudaEvent_t e0, cudaEvent_t e1, Op op) {
  for (int w = 0; w < kWarmups; ++w) op();
  std::vector<double> ms;
  for (int s = 0; s < kSamples; ++s) {
    GP_CUDA_CHECK(cudaEventRecord(e0, stream));
    op();
    GP_CUDA_CHECK(cudaEventRecord(e1, stream));
    GP_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  double mean = 0, var = 0;
  for (double t : ms) mean += t / ms.size();
  for (double t : ms) var += (t - mean) * (t - mean) / ms.size();
  return {ms[ms.size() / 2], ms.front(), ms.back(), std::sqrt(var) / mean};
}

// ------------------------------------------------------------------------------------------------

// Elements the probe's walk never visits (threads, step, n multiples of 32: counted in 32-element
// chunks; each round covers `threads` elements from v x step mod n).
std::size_t probe_unvisited(std::size_t n, std::size_t threads) {
  if (n % 32 || threads % 32) return 0;
  std::size_t step = (threads + 32) % n;
  if (step == 0) step = 32;
  const std::size_t visits = std::max<std::size_t>(1, (n + threads - 1) / threads);
  const std::size_t chunks = n / 32, len = std::min(threads / 32, chunks);
  std::vector<int> diff(chunks + 1, 0);
  for (std::size_t v = 0; v < visits; ++v) {
    const std::size_t start = (v * step % n) / 32, stop = start + len;
    ++diff[start];
    if (stop <= chunks) {
      --diff[stop];
    } else {
      --diff[chunks];
      ++diff[0];
      --diff[stop - chunks];
    }
  }
  std::size_t unvisited = 0;
  int depth = 0;
  for (std::size_t c = 0; c < chunks; ++c) unvisited += (depth += diff[c]) == 0;
  return unvisited * 32;
}

struct Context {
  int sms;
  cudaStream_t stream;
  cudaEvent_t e0, e1;
  uint4* src;
  uint4* dst;
  unsigned long long* bad;
};

struct Launch {
  unsigned grid = 0;
  int resident = 0;  // blocks per SM that fit
  int regs = 0;
};

Launch plan(const Context& c, const Variant& v, std::size_t n) {
  Launch l;
  if (!v.kernel) return l;
  const void* f = reinterpret_cast<const void*>(v.kernel);
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&l.resident, f, v.threads, v.smem));
  cudaFuncAttributes attr{};
  GP_CUDA_CHECK(cudaFuncGetAttributes(&attr, f));
  l.regs = attr.numRegs;
  if (v.blocks_per_sm == 0) {
    const std::size_t per_block = std::size_t(v.threads) * v.per_thread;
    l.grid = static_cast<unsigned>((n + per_block - 1) / per_block);
  } else {
    const int per_sm = v.probe ? v.blocks_per_sm : std::min(v.blocks_per_sm, std::max(1, l.resident));
    l.grid = static_cast<unsigned>(c.sms * per_sm);
  }
  return l;
}

// One run of a row (copy: dst <- src; write: dst <- value); returns the bytes it moves.
double run_once(const Context& c, const Variant& v, const Launch& l, std::size_t n, bool copy, uint4 value) {
  uint4* dst = reinterpret_cast<uint4*>(reinterpret_cast<char*>(c.dst) + v.dst_offset);
  const std::size_t bytes = n * sizeof(uint4);
  if (!v.kernel) {
    if (copy) GP_CUDA_CHECK(cudaMemcpyAsync(dst, c.src, bytes, cudaMemcpyDeviceToDevice, c.stream));
    else GP_CUDA_CHECK(cudaMemsetAsync(dst, kMemsetByte, bytes, c.stream));
    return copy ? 2.0 * bytes : double(bytes);
  }
  const uint4* src = c.src;
  void* args[] = {&src, &dst, &n, &value};
  GP_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(v.kernel), dim3(l.grid), dim3(v.threads), args, v.smem,
                                 c.stream));
  if (v.probe) {
    const double threads = double(l.grid) * v.threads;
    return threads * std::ceil(double(n) / threads) * (copy ? 2 : 1) * sizeof(uint4);
  }
  return copy ? 2.0 * bytes : double(bytes);
}

// Poisons the destination, runs the row once, counts elements that differ from the source (copy)
// or the value (write).
std::string check(const Context& c, const Variant& v, const Launch& l, std::size_t n, bool copy, uint4 value) {
  uint4* dst = reinterpret_cast<uint4*>(reinterpret_cast<char*>(c.dst) + v.dst_offset);
  const unsigned grid = static_cast<unsigned>(c.sms * 8);
  const uint4 expect = copy || v.kernel ? value : make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
  if (copy) fill_pattern<<<grid, 256, 0, c.stream>>>(dst, n, kSrcSeed, true);
  else fill_value<<<grid, 256, 0, c.stream>>>(dst, n, make_uint4(~expect.x, ~expect.y, ~expect.z, ~expect.w));
  GP_CUDA_CHECK_LAUNCH();
  run_once(c, v, l, n, copy, value);
  GP_CUDA_CHECK(cudaMemsetAsync(c.bad, 0, sizeof(unsigned long long), c.stream));
  count_diff<<<grid, 256, 0, c.stream>>>(dst, copy ? c.src : nullptr, n, expect, c.bad);
  GP_CUDA_CHECK_LAUNCH();
  unsigned long long bad = 0;
  GP_CUDA_CHECK(cudaMemcpyAsync(&bad, c.bad, sizeof(bad), cudaMemcpyDeviceToHost, c.stream));
  GP_CUDA_CHECK(cudaStreamSynchronize(c.stream));
  if (v.probe) {
    const std::size_t expected = probe_unvisited(n, std::size_t(l.grid) * v.threads);
    return std::to_string(bad) + " unvisited (walk leaves " + std::to_string(expected) + ")" +
           (bad == expected ? "" : " WRONG");
  }
  if (bad == 0) return "ok";
  return "WRONG " + std::to_string(bad) + "/" + std::to_string(n);
}

struct Best {
  std::string name;
  double value = 0;
};

// Times every row of a table at n elements; returns the best kernel row (GB/s).
Best run_table(const Context& c, const std::vector<Variant>& table, std::size_t n, bool copy, uint4 value) {
  double baseline = 0;
  Best best;
  for (const Variant& v : table) {
    const Launch l = plan(c, v, n);
    const std::string verdict = check(c, v, l, n, copy, value);
    double bytes = 0;
    const Timing t = time_op(c.stream, c.e0, c.e1, [&] { bytes = run_once(c, v, l, n, copy, value); });
    GP_CUDA_CHECK(cudaGetLastError());
    const double gbs = bytes / (t.median_ms * 1e6);
    if (baseline == 0) baseline = gbs;
    char launch[96] = "library";
    if (v.kernel)
      std::snprintf(launch, sizeof launch, "%7u x %-4d res/SM %d, %2d regs", l.grid, v.threads, l.resident, l.regs);
    std::printf("  %-34s %6.0f GB/s  x%.3f  [%5.0f .. %5.0f]  cv %4.1f%%  %-36s %s\n", v.name, gbs, gbs / baseline,
                bytes / (t.max_ms * 1e6), bytes / (t.min_ms * 1e6), 100 * t.cv, launch, verdict.c_str());
    const bool correct = verdict == "ok";
    if (v.kernel && correct && gbs > best.value) best = {v.name, gbs};
  }
  best.value /= copy ? baseline : 1.0;
  return best;
}

int run() {
  int device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  Context c{};
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
  int l2 = 0, mem_khz = 0, bus_bits = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  std::printf("device %s, %d SMs, L2 %d MiB", prop.name, c.sms, l2 >> 20);
  // Theoretical DRAM bandwidth (double data rate), where the runtime still reports it.
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess && mem_khz > 0)
    std::printf(", DRAM %d-bit at %d MHz: %.0f GB/s theoretical", bus_bits, mem_khz / 1000,
                2.0 * mem_khz * 1e3 * bus_bits / 8 / 1e9);
  else
    (void)cudaGetLastError();
  std::printf("\n%d warm-ups, median of %d samples per row; GB/s = bytes moved / median time\n", kWarmups, kSamples);

  const std::vector<Variant> copies = copy_variants(), writes = write_variants();
  std::printf("\nlegend (copy table, then write table):\n");
  for (const auto* table : {&copies, &writes})
    for (const Variant& v : *table) std::printf("  %-34s %s\n", v.name, v.what);
  for (const auto* table : {&copies, &writes})
    for (const Variant& v : *table)
      if (v.smem > 48 * 1024)
        GP_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(v.kernel),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, int(v.smem)));

  // Sizes per buffer that fit twice (plus the shifted destination's slack and 1 GiB to spare).
  std::size_t free_bytes = 0, total_bytes = 0;
  GP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::vector<std::size_t> sizes;
  for (std::size_t s : {1 * kGiB, 2 * kGiB, 4 * kGiB})
    if (2 * (s + 2 * kDstShift) + kGiB <= free_bytes) sizes.push_back(s);
  if (sizes.empty()) throw gpuprobe::Error("needs 3 GiB of free device memory");
  const std::size_t max_bytes = sizes.back() + 2 * kDstShift;
  GP_CUDA_CHECK(cudaMalloc(&c.src, max_bytes));
  GP_CUDA_CHECK(cudaMalloc(&c.dst, max_bytes));
  GP_CUDA_CHECK(cudaMalloc(&c.bad, sizeof(unsigned long long)));
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  GP_CUDA_CHECK(cudaEventCreate(&c.e0));
  GP_CUDA_CHECK(cudaEventCreate(&c.e1));
  fill_pattern<<<c.sms * 8, 256, 0, c.stream>>>(c.src, max_bytes / sizeof(uint4), kSrcSeed, false);
  fill_pattern<<<c.sms * 8, 256, 0, c.stream>>>(c.dst, max_bytes / sizeof(uint4), kSrcSeed, true);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaStreamSynchronize(c.stream));

  const uint4 value = make_uint4(0x3FC00000u, 0xA5A5A5A5u, 0x12345679u, 0xDEADBEEFu);
  for (std::size_t size : sizes) {
    const std::size_t n = size / sizeof(uint4);
    std::printf("\n%zu GiB per buffer: copy (GB/s = 2 x size / time)   ratio  [slowest .. fastest]  cv  "
                "grid x block, resident blocks/SM, regs   check\n", size / kGiB);
    const Best copy = run_table(c, copies, n, true, value);
    std::printf("%zu GiB per buffer: write (GB/s = size / time)\n", size / kGiB);
    const Best write = run_table(c, writes, n, false, value);
    std::printf("%zu GiB best: copy %s x%.3f of memcpy (target 0.99); write %s %.0f GB/s (target 3270)\n",
                size / kGiB, copy.name.c_str(), copy.value, write.name.c_str(), write.value);
  }

  GP_CUDA_CHECK(cudaEventDestroy(c.e0));
  GP_CUDA_CHECK(cudaEventDestroy(c.e1));
  GP_CUDA_CHECK(cudaStreamDestroy(c.stream));
  GP_CUDA_CHECK(cudaFree(c.bad));
  GP_CUDA_CHECK(cudaFree(c.dst));
  GP_CUDA_CHECK(cudaFree(c.src));
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dram_stream: %s\n", e.what());
    return 1;
  }
}
