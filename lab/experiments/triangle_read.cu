// Is reading one triangle of a large column-major matrix slower per byte than reading the whole
// matrix, whatever the kernel does with the data? The question behind DSYMV n = 32768 lower
// (docs/perf/symv.md, v12): three different storage-aware kernels (ours v5 and v1-atomic, cuBLAS's
// with atomics) all take 1406-1421 us for the 4.3 GB triangle under ncu (~3050 GB/s), a plain
// 16-byte read of 4 GiB reaches 3188 GB/s, and 2.0x cuBLAS's default SYMV needs ~3096 GB/s for the
// whole call. If plain loads in SYMV v5's geometry (no arithmetic) also stop near 3050 GB/s, the gap
// is the access pattern; if they reach the flat read's rate, it is in the SYMV kernels.
// Answer on the H100 (2026-11-25, docs/perf/symv.md "What bounds it"): in between.
// The triangle in address order reads at 3169 GB/s, short 2D units at 3116-3125, v5-like units at
// 3092-3094: the layouts a SYMV can use cost 2-3 % against the flat read before any partials.
// Later the same night (docs/perf/symv.md "What bounds it"): tall units, whose every load batch reads
// 8-16 KB runs down 4-8 columns, read at 3097-3112 GB/s, and persistent strip walkers (a block
// owns a strip of 2048 rows and walks its columns: the layout that keeps a SYMV's row sums in
// registers) at 2820-2862: no SYMV layout read with 16-byte loads reaches the address-order read.
// The copy engine does: bulk_units at 3149-3172 GB/s, bulk_ring (v5's long units) at 3122-3146. But
// SYMV v14, v5 fed by that ring, took v5's time (docs/perf/symv.md, v14): inside a SYMV the read
// mechanism is not what costs the remaining time.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/triangle_read.cu -o triangle_read
//   ./triangle_read [n=32768]      (double, lda = n: 8.6 GB; ~15 s on an H100)
//
// Rows (every one reads 16-byte vectors with ld.global.cs, evict-first as SYMV v5 does, and adds
// them into a per-thread sum stored once, so that nothing is optimised away):
//   flat_chunks      the whole n x n matrix as one array, short-lived blocks of 16 KB in address
//                    order (memory.bandwidth's DRAM kernel): the ceiling
//   triangle_chunks  the same over the stored column parts of the lower triangle only, in address
//                    order (no SYMV unit could read this way: its partials would be as large as A)
//   flat_full        the whole matrix, persistent grid-stride blocks
//   flat_half        the first half of that array: the triangle's byte count, contiguous
//   v5_geometry      SYMV v5's units (4 block rows x segments of 16 block columns of 64 x 64 tiles,
//                    stored tiles of the lower triangle only, 256 threads as 32 row lanes x 8 column
//                    groups, 8 columns per thread; v5 itself takes t = 8 at n = 32768), grid walked
//                    group first (v6 / v5's order)
//   v5_segment_first the same units, grid walked segment first (v3's order)
//   v5_t1_sub4/8     short-lived 2D units: one block column x 4 (8) block rows each, group first
//   columns_down     units of 4 block columns x segments of 16 block rows: each unit reads 8 KB
//                    runs down each of its 256 columns (the transpose of v5's unit)
//   tall_units_h1024 / _h2048  units of one block column x a strip of 1024 / 2048 rows: each load
//                    batch reads 8 (4) columns' runs of the strip, 16 loads per thread, strips
//                    fastest in the grid; _occup: the 2048 one compiled for full occupancy
//   bulk_units_subK  v5_t1_subK's units read by cp.async.bulk (one copy per column run) into shared
//                    memory, all at once, then summed from there (sm_90 only)
//   bulk_ring_sS_tT  v5's long units (4 block rows x T block columns, group first) fed by bulk copies
//                    through a ring of S 32 KB stages (16 columns each); _x2: two blocks per SM
//   walkers_h2048_xK persistent: K blocks per SM walk the strips' 4-column batches in strip-major
//                    order, cut into runs of equal bytes
// v5_geometry, v5_segment_first and columns_down run twice: as many blocks per SM as fit, then one
// block per SM (dynamic shared memory of more than half an SM: v5's occupancy; these kernels do
// not batch their loads as v5 does, so that half shows occupancy sensitivity, not v5's rate).
// GB/s = bytes read (the stored 64 x 64 tiles, diagonal ones whole) / median time; 3 warm-ups, 15
// samples, CUDA events around each launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bulk_copy.cuh"
#include "event_median.hpp"
#include "gpuprobe/check.hpp"

namespace {

constexpr int kNB = 64;
constexpr int kThreads = 256;
constexpr int kLanes = 32;                  // row lanes: 2 doubles (16 bytes) each, 64 rows
constexpr int kGroups = kThreads / kLanes;  // 8 column groups
constexpr int kColsPerThread = kNB / kGroups;
constexpr int kSub = 4;       // block rows per unit (v5)
constexpr int kSegTiles = 16; // block columns per segment (v5 at n = 32768)
constexpr int kOneBlockSmem = 150 * 1024;  // more than half an SM's shared memory: one block per SM
constexpr int kBulkUnitSmem = kNB * kNB * sizeof(double);  // one landed 64 x 64 tile

__global__ void fill_kernel(double* a, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = 1.0 + static_cast<double>((i * 2654435761ll) & 1023) / 1024.0;  // never zero
}

__device__ __forceinline__ double2 ld_cs(const double* p) { return __ldcs(reinterpret_cast<const double2*>(p)); }

// ld_cs if `ok`, else {0, 0}: one predicated instruction, no branch, so that ptxas can issue a
// whole batch of them before the first use (`ok ? ld_cs(p) : 0` became a branch per load: 32
// registers for 16 loads, i.e. not all of them in flight).
__device__ __forceinline__ double2 ld_cs_if(const double* p, bool ok) {
  double2 d{0, 0};
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %3, 0;\n @q ld.global.cs.v2.f64 {%0, %1}, [%2];\n}"
      : "+d"(d.x), "+d"(d.y)
      : "l"(p), "r"(static_cast<int>(ok)));
  return d;
}

__global__ void __launch_bounds__(kThreads) flat_kernel(const double* a, long long vecs, double* sink) {
  double s = 0;
  for (long long v = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; v < vecs;
       v += static_cast<long long>(gridDim.x) * kThreads) {
    const double2 d = ld_cs(a + 2 * v);
    s += d.x + d.y;
  }
  if (s == -1.0) *sink = s;  // never true for the data: the loads stay, the store does not happen
}

// Unit (g, k): block rows [g sub, g sub + sub), block columns [k t, k t + t) of the lower
// triangle's stored tiles (tile (r, j) stored for r >= j). kSub: the largest sub (loads unrolled).
template <int kMaxSub>
__global__ void __launch_bounds__(kThreads) v5_geometry_kernel(const double* a, int n, int seg, bool group_first,
                                                                double* sink) {
  const int g = group_first ? blockIdx.x : blockIdx.y, k = group_first ? blockIdx.y : blockIdx.x;
  const int tiles = n / kNB, r0 = g * kMaxSub;
  const int jb = k * seg, je = min(min(jb + seg, r0 + kMaxSub), tiles);
  const int lane = threadIdx.x % kLanes, grp = threadIdx.x / kLanes;
  double s = 0;
  for (int j = jb; j < je; ++j) {
#pragma unroll
    for (int i = 0; i < kMaxSub; ++i) {
      if (r0 + i < j || r0 + i >= tiles) continue;  // unstored tile or past the matrix
      const double* p = a + static_cast<long long>(j * kNB + grp) * n + (r0 + i) * kNB + 2 * lane;
#pragma unroll
      for (int u = 0; u < kColsPerThread; ++u) {
        const double2 d = ld_cs(p + static_cast<long long>(u) * kGroups * n);
        s += d.x + d.y;
      }
    }
  }
  if (s == -1.0) *sink = s;
}

// Unit (c, q): block columns [c kSub, c kSub + kSub), block rows [q t, q t + t), lower triangle.
__global__ void __launch_bounds__(kThreads) columns_down_kernel(const double* a, int n, double* sink) {
  const int q = blockIdx.x, c = blockIdx.y;
  const int tiles = n / kNB, c0 = c * kSub;
  const int rb = max(q * kSegTiles, c0), re = min(q * kSegTiles + kSegTiles, tiles);
  const int lane = threadIdx.x % kLanes, grp = threadIdx.x / kLanes;
  double s = 0;
  for (int r = rb; r < re; ++r) {
#pragma unroll
    for (int jj = 0; jj < kSub; ++jj) {
      if (r < c0 + jj) continue;
      const double* p = a + static_cast<long long>((c0 + jj) * kNB + grp) * n + r * kNB + 2 * lane;
#pragma unroll
      for (int u = 0; u < kColsPerThread; ++u) {
        const double2 d = ld_cs(p + static_cast<long long>(u) * kGroups * n);
        s += d.x + d.y;
      }
    }
  }
  if (s == -1.0) *sink = s;
}

// Short-lived blocks, memory.bandwidth's DRAM design: block b reads up to kChunkVecs consecutive
// 16-byte vectors [first, end) (each thread kChunkLoads of them, all issued before any add) and
// exits. `chunks` null: the flat array in order; else block b's range, so that the blocks sweep the
// triangle's stored column parts in address order, a chunk never crossing a column's end.
constexpr int kChunkLoads = 4;
constexpr int kChunkVecs = kChunkLoads * kThreads;  // 16 KB
struct Chunk {
  long long first, end;
};
__global__ void __launch_bounds__(kThreads) chunk_kernel(const double* a, const Chunk* chunks, double* sink) {
  const Chunk c = chunks ? chunks[blockIdx.x]
                         : Chunk{static_cast<long long>(blockIdx.x) * kChunkVecs,
                                 static_cast<long long>(blockIdx.x + 1) * kChunkVecs};
  double2 d[kChunkLoads];
#pragma unroll
  for (int u = 0; u < kChunkLoads; ++u) {
    const long long v = c.first + u * kThreads + threadIdx.x;
    d[u] = v < c.end ? ld_cs(a + 2 * v) : double2{0, 0};
  }
  double s = 0;
#pragma unroll
  for (int u = 0; u < kChunkLoads; ++u) s += d[u].x + d[u].y;
  if (s == -1.0) *sink = s;
}


// Tall units (the question of 2026-11-25, late): can a SYMV read the triangle at the address-order
// rate if each of its loads batches covers long runs of a column? Unit (s, j): rows [s H, s H + H)
// of block column j, from tile row j on (lower); per batch kCols columns, the block reading each
// column's H rows as H / 512 16-byte vectors per thread (one 8 H-byte run): 16 loads per thread in
// flight. Strips fastest in the grid: the units launched together read
// vertically adjacent runs of the same columns.
template <int kH>
struct TallGeometry {
  static constexpr int kVecsPerCol = kH / 2 / kThreads;  // 16-byte vectors per thread and column
  static constexpr int kCols = 16 / kVecsPerCol;         // columns per load batch: 16 loads in flight
  static_assert(kH % (2 * kThreads) == 0 && kH % kNB == 0, "a strip is whole tiles and whole vectors");
  static_assert(kNB % kCols == 0, "a batch never crosses a block column");
};

// Reads rows [row_first, s H + H) of columns [c0, c0 + kCols) of strip s (row_first tile-aligned).
template <int kH>
__device__ __forceinline__ double read_batch(const double* a, int n, int s, int c0, int row_first) {
  using G = TallGeometry<kH>;
  double2 d[G::kCols][G::kVecsPerCol];
#pragma unroll
  for (int c = 0; c < G::kCols; ++c)
#pragma unroll
    for (int u = 0; u < G::kVecsPerCol; ++u) {
      const int row = s * kH + 2 * (static_cast<int>(threadIdx.x) + u * kThreads);
      d[c][u] = ld_cs_if(a + static_cast<long long>(c0 + c) * n + row, row >= row_first);
    }
  double sum = 0;
#pragma unroll
  for (int c = 0; c < G::kCols; ++c)
#pragma unroll
    for (int u = 0; u < G::kVecsPerCol; ++u) sum += d[c][u].x + d[c][u].y;
  return sum;
}

// kMinBlocks 2 (at most 128 registers) makes ptxas keep all 16 loads in flight (80 registers);
// with the default bound (or 8) it takes 32 registers for full occupancy and overlaps fewer loads.
template <int kH, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) tall_units_kernel(const double* a, int n, double* sink) {
  const int s = blockIdx.x, j = blockIdx.y;
  if (j * kNB >= s * kH + kH) return;  // above the diagonal: nothing stored
  const int row_first = max(s * kH, j * kNB);
  double sum = 0;
  for (int c0 = j * kNB; c0 < j * kNB + kNB; c0 += TallGeometry<kH>::kCols) sum += read_batch<kH>(a, n, s, c0, row_first);
  if (sum == -1.0) *sink = sum;
}

// Persistent strip walkers: the batches of all strips in strip-major order (strip s: columns
// [0, s H + H)), cut into gridDim.x runs of about equal bytes (first[b] .. first[b + 1]); block b
// walks its run, so that a SYMV's row sums would stay in registers along it.
template <int kH>
__global__ void __launch_bounds__(kThreads, 2) strip_walkers_kernel(const double* a, int n, const long long* first,
                                                                 double* sink) {
  constexpr int kCols = TallGeometry<kH>::kCols;
  long long step = first[blockIdx.x];
  const long long end = first[blockIdx.x + 1];
  int s = 0;
  long long strip_first = 0;  // global index of strip s's first batch
  while (step >= strip_first + (static_cast<long long>(s) * kH + kH) / kCols) {
    strip_first += (static_cast<long long>(s) * kH + kH) / kCols;
    ++s;
  }
  double sum = 0;
  for (; step < end; ++step) {
    long long q = step - strip_first;
    if (q * kCols >= static_cast<long long>(s) * kH + kH) {  // next strip
      strip_first += (static_cast<long long>(s) * kH + kH) / kCols;
      ++s;
      q = 0;
    }
    const int c0 = static_cast<int>(q) * kCols;
    sum += read_batch<kH>(a, n, s, c0, max(s * kH, c0 / kNB * kNB));
  }
  if (sum == -1.0) *sink = sum;
}

// Host side of strip_walkers_kernel: the first batch of each of `blocks` runs of about equal bytes.
template <int kH>
std::vector<long long> strip_walker_runs(int n, int blocks) {
  constexpr int kCols = TallGeometry<kH>::kCols;
  std::vector<double> weight;  // rows read per batch
  for (int s = 0; s < n / kH; ++s)
    for (int c0 = 0; c0 < s * kH + kH; c0 += kCols) weight.push_back(s * kH + kH - std::max(s * kH, c0 / kNB * kNB));
  double total = 0;
  for (double w : weight) total += w;
  std::vector<long long> first(blocks + 1, static_cast<long long>(weight.size()));
  double acc = 0;
  int b = 0;
  for (long long i = 0; i < static_cast<long long>(weight.size()) && b < blocks; ++i) {
    while (b < blocks && acc >= total * b / blocks) first[b++] = i;
    acc += weight[i];
  }
  return first;
}


// Bulk-copy units (the TMA's 1D mode): does the copy engine read the 2D layouts faster than
// 16-byte loads? Unit (g, j) as v5_t1_sub<kSub>: block column j, block rows [g kSub, g kSub + kSub)
// from tile row j on. Warp 0 issues one cp.async.bulk per column (its stored run of up to kSub x
// 512 bytes, contiguous) into shared memory, all 64 at once on one mbarrier; then every thread sums
// its share of the landed data. kSub x 32 KB of shared memory per block: kSub = 4 one block per
// SM (128 KB in flight), 2 three (192 KB), 1 seven (224 KB).
template <int kSub>
__global__ void __launch_bounds__(kThreads) bulk_units_kernel(const double* a, int n, double* sink) {
  extern __shared__ __align__(128) double landed[];
  __shared__ __align__(8) std::uint64_t bar;
  const int g = blockIdx.x, j = blockIdx.y;
  const int row_begin = max(g * kSub, j) * kNB, row_end = (g * kSub + kSub) * kNB;
  if (row_begin >= row_end) return;  // above the diagonal: nothing stored
  const std::uint32_t rows = static_cast<std::uint32_t>(row_end - row_begin), bytes = rows * sizeof(double);
  const std::uint32_t bar_addr = gpuprobe::bulk::smem_addr(&bar);
  if (threadIdx.x == 0) {
    gpuprobe::bulk::mbar_init(bar_addr, 1);
    gpuprobe::bulk::mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) gpuprobe::bulk::mbar_arrive_expect_tx(bar_addr, kNB * bytes);
    __syncwarp();
    for (int c = threadIdx.x; c < kNB; c += 32)
      gpuprobe::bulk::bulk_load(gpuprobe::bulk::smem_addr(landed + c * rows),
                                      a + static_cast<long long>(j * kNB + c) * n + row_begin, bytes, bar_addr);
  }
  gpuprobe::bulk::mbar_wait(bar_addr, 0);
  double s = 0;
  for (std::uint32_t e = threadIdx.x; e < kNB * rows; e += kThreads) s += landed[e];
  if (s == -1.0) *sink = s;
}


// Bulk-copy ring in v5's geometry: unit (g, k) = block rows [4 g, 4 g + 4) x block columns
// [k kSeg, k kSeg + kSeg) of the lower triangle (stored rows only), grid group first (v5's order).
// A stage is 16 columns of one block column (their stored runs of up to 2 KB, one bulk copy each,
// 32 KB), kStages stages in a ring of shared memory: thread 0 keeps kStages stages in flight, every
// thread sums its share of each landed stage, a __syncthreads frees the stage for its refill.
// The question: does a long unit fed by the copy engine keep the short bulk units' read rate?
constexpr int kRingSub = 4;
constexpr int kRingStageCols = 16;
constexpr int kRingStageBytes = kRingStageCols * kRingSub * kNB * static_cast<int>(sizeof(double));  // 32 KB

template <int kStages, int kSeg>
__global__ void __launch_bounds__(kThreads, 1) bulk_ring_kernel(const double* a, int n, double* sink) {
  namespace bx = gpuprobe::bulk;
  extern __shared__ __align__(128) double ring[];
  __shared__ __align__(8) std::uint64_t bars[kStages];
  const int g = blockIdx.x, k = blockIdx.y, tiles = n / kNB, r0 = g * kRingSub;
  const int j_begin = k * kSeg, j_end = min(min(j_begin + kSeg, r0 + kRingSub), tiles);
  if (j_begin >= j_end) return;
  constexpr int kQuarters = kNB / kRingStageCols;
  const int stages = (j_end - j_begin) * kQuarters;
  const std::uint32_t ring_addr = bx::smem_addr(ring), bar_addr = bx::smem_addr(bars);
  constexpr int kStageDoubles = kRingStageBytes / static_cast<int>(sizeof(double));
  constexpr int kRunDoubles = kRingSub * kNB;  // a column's run in the stage (its stored part at most)
  auto issue = [&](int z) {  // thread 0: stage z of the unit into ring slot z % kStages
    const int j = j_begin + z / kQuarters, q = z % kQuarters, slot = z % kStages;
    const int row_begin = max(r0, j) * kNB, rows = (r0 + kRingSub) * kNB - row_begin;
    const std::uint32_t bytes = static_cast<std::uint32_t>(rows) * sizeof(double);
    bx::mbar_arrive_expect_tx(bar_addr + 8 * slot, kRingStageCols * bytes);
    for (int c = 0; c < kRingStageCols; ++c)
      bx::bulk_load(ring_addr + static_cast<std::uint32_t>((slot * kStageDoubles + c * kRunDoubles) * sizeof(double)),
                    a + static_cast<long long>(j * kNB + q * kRingStageCols + c) * n + row_begin, bytes,
                    bar_addr + 8 * slot);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) bx::mbar_init(bar_addr + 8 * s, 1);
    bx::mbar_init_fence();
    for (int z = 0; z < min(kStages, stages); ++z) issue(z);
  }
  __syncthreads();
  double sum = 0;
  for (int z = 0; z < stages; ++z) {
    const int slot = z % kStages;
    bx::mbar_wait(bar_addr + 8 * slot, static_cast<std::uint32_t>((z / kStages) & 1));
    const int j = j_begin + z / kQuarters;
    const int first = (max(r0, j) - r0) * kNB;  // rows of the run above it were not copied
    const double2* stage = reinterpret_cast<const double2*>(ring + slot * kStageDoubles);
    // 16 columns x 128 double2 per column (rows [first, 256) landed at the run's start)
#pragma unroll
    for (int u = 0; u < kRingStageCols * kRunDoubles / 2 / kThreads; ++u) {
      const int v = threadIdx.x + u * kThreads, c = v / (kRunDoubles / 2), row = 2 * (v % (kRunDoubles / 2));
      if (row >= first) {
        const double2 d = stage[c * (kRunDoubles / 2) + (row - first) / 2];
        sum += d.x + d.y;
      }
    }
    __syncthreads();  // every thread is done with the slot: refill it
    if (threadIdx.x == 0 && z + kStages < stages) issue(z + kStages);
  }
  if (sum == -1.0) *sink = sum;
}

// 3 warm-ups, the median of 15 samples (event_median.hpp).
template <class Launch>
float median_ms(Launch launch) {
  return gpuprobe_experiments::median_event_ms(launch, 3, 15);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 32768;
  if (n <= 0 || n % 2048 != 0) {  // whole segments (kNB kSegTiles) and whole 2048-row strips
    std::fprintf(stderr, "n must be a positive multiple of 2048\n");
    return 2;
  }
  int device = 0, sms = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const long long elems = static_cast<long long>(n) * n;
  double *a = nullptr, *sink = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&a, elems * sizeof(double)));
  GP_CUDA_CHECK(cudaMalloc(&sink, sizeof(double)));
  GP_CUDA_CHECK(cudaFuncSetAttribute(v5_geometry_kernel<kSub>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneBlockSmem));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_units_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 * kBulkUnitSmem));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_units_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * kBulkUnitSmem));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_units_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * kBulkUnitSmem));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_ring_kernel<4, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * kRingStageBytes));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_ring_kernel<6, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * kRingStageBytes));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_ring_kernel<6, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * kRingStageBytes));
  GP_CUDA_CHECK(cudaFuncSetAttribute(bulk_ring_kernel<3, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 3 * kRingStageBytes));
  GP_CUDA_CHECK(cudaFuncSetAttribute(columns_down_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneBlockSmem));
  fill_kernel<<<sms * 8, kThreads>>>(a, elems);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  const long long tiles = n / kNB;
  const double tri_bytes = static_cast<double>(tiles * (tiles + 1) / 2) * kNB * kNB * sizeof(double);
  const double full_bytes = static_cast<double>(elems) * sizeof(double);
  const int groups = static_cast<int>(tiles / kSub), segments = static_cast<int>(tiles / kSegTiles);
  auto report = [](const char* name, double bytes, float ms) {
    std::printf("%-18s %8.1f us  %7.1f GB/s\n", name, ms * 1e3, bytes / (ms * 1e-3) / 1e9);
  };
  std::printf("n = %d (double, lda = n), %d SMs; triangle %.3f GB, full %.3f GB\n", n, sms, tri_bytes / 1e9,
              full_bytes / 1e9);
  // The triangle's stored column parts (from the diagonal tile's first row down), in 16 KB chunks.
  std::vector<Chunk> host_chunks;
  for (long long j = 0; j < n; ++j) {
    const long long first = (j * n + j / kNB * kNB) / 2, end = (j * n + n) / 2;  // 16-byte vectors
    for (long long v = first; v < end; v += kChunkVecs) host_chunks.push_back({v, std::min(v + kChunkVecs, end)});
  }
  Chunk* chunks = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&chunks, host_chunks.size() * sizeof(Chunk)));
  GP_CUDA_CHECK(cudaMemcpy(chunks, host_chunks.data(), host_chunks.size() * sizeof(Chunk), cudaMemcpyHostToDevice));
  long long* walker_runs[3] = {};
  for (int per_sm = 1; per_sm <= 3; ++per_sm) {
    const std::vector<long long> runs = strip_walker_runs<2048>(n, sms * per_sm);
    GP_CUDA_CHECK(cudaMalloc(&walker_runs[per_sm - 1], runs.size() * sizeof(long long)));
    GP_CUDA_CHECK(cudaMemcpy(walker_runs[per_sm - 1], runs.data(), runs.size() * sizeof(long long),
                             cudaMemcpyHostToDevice));
  }
  const unsigned tri_blocks = static_cast<unsigned>(host_chunks.size());
  const unsigned flat_blocks = static_cast<unsigned>(elems / 2 / kChunkVecs);
  for (int round = 0; round < 2; ++round) {
    report("flat_chunks", full_bytes, median_ms([&] { chunk_kernel<<<flat_blocks, kThreads>>>(a, nullptr, sink); }));
    report("triangle_chunks", tri_bytes, median_ms([&] { chunk_kernel<<<tri_blocks, kThreads>>>(a, chunks, sink); }));
    // Short-lived 2D units: one block column of 4 / 8 block rows each (128 / 256 KB), group first.
    report("v5_t1_sub4", tri_bytes, median_ms([&] {
             v5_geometry_kernel<4><<<dim3(static_cast<unsigned>(tiles / 4), static_cast<unsigned>(tiles)), kThreads>>>(
                 a, n, 1, true, sink);
           }));
    report("v5_t1_sub8", tri_bytes, median_ms([&] {
             v5_geometry_kernel<8><<<dim3(static_cast<unsigned>(tiles / 8), static_cast<unsigned>(tiles)), kThreads>>>(
                 a, n, 1, true, sink);
           }));
    report("flat_full", full_bytes, median_ms([&] { flat_kernel<<<sms * 8, kThreads>>>(a, elems / 2, sink); }));
    report("flat_half", tri_bytes,
           median_ms([&] { flat_kernel<<<sms * 8, kThreads>>>(a, static_cast<long long>(tri_bytes / 16), sink); }));
    report("bulk_units_sub1", tri_bytes, median_ms([&] {
             bulk_units_kernel<1><<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(tiles)), kThreads,
                                    1 * kBulkUnitSmem>>>(a, n, sink);
           }));
    report("bulk_units_sub2", tri_bytes, median_ms([&] {
             bulk_units_kernel<2><<<dim3(static_cast<unsigned>(tiles / 2), static_cast<unsigned>(tiles)), kThreads,
                                    2 * kBulkUnitSmem>>>(a, n, sink);
           }));
    report("bulk_units_sub4", tri_bytes, median_ms([&] {
             bulk_units_kernel<4><<<dim3(static_cast<unsigned>(tiles / 4), static_cast<unsigned>(tiles)), kThreads,
                                    4 * kBulkUnitSmem>>>(a, n, sink);
           }));
    report("bulk_ring_s4_t8", tri_bytes, median_ms([&] {
             bulk_ring_kernel<4, 8><<<dim3(static_cast<unsigned>(tiles / kRingSub), static_cast<unsigned>(tiles / 8)),
                                      kThreads, 4 * kRingStageBytes>>>(a, n, sink);
           }));
    report("bulk_ring_s6_t8", tri_bytes, median_ms([&] {
             bulk_ring_kernel<6, 8><<<dim3(static_cast<unsigned>(tiles / kRingSub), static_cast<unsigned>(tiles / 8)),
                                      kThreads, 6 * kRingStageBytes>>>(a, n, sink);
           }));
    report("bulk_ring_s6_t4", tri_bytes, median_ms([&] {
             bulk_ring_kernel<6, 4><<<dim3(static_cast<unsigned>(tiles / kRingSub), static_cast<unsigned>(tiles / 4)),
                                      kThreads, 6 * kRingStageBytes>>>(a, n, sink);
           }));
    report("bulk_ring_s3_t8_x2", tri_bytes, median_ms([&] {  // 96 KB: two blocks per SM
             bulk_ring_kernel<3, 8><<<dim3(static_cast<unsigned>(tiles / kRingSub), static_cast<unsigned>(tiles / 8)),
                                      kThreads, 3 * kRingStageBytes>>>(a, n, sink);
           }));
    report("tall_units_h1024", tri_bytes, median_ms([&] {
             tall_units_kernel<1024, 2><<<dim3(n / 1024, static_cast<unsigned>(tiles)), kThreads>>>(a, n, sink);
           }));
    report("tall_units_h2048", tri_bytes, median_ms([&] {
             tall_units_kernel<2048, 2><<<dim3(n / 2048, static_cast<unsigned>(tiles)), kThreads>>>(a, n, sink);
           }));
    report("tall_h2048_occup", tri_bytes, median_ms([&] {
             tall_units_kernel<2048, 8><<<dim3(n / 2048, static_cast<unsigned>(tiles)), kThreads>>>(a, n, sink);
           }));
    for (int per_sm : {1, 2, 3}) {
      char name[32];
      std::snprintf(name, sizeof name, "walkers_h2048_x%d", per_sm);
      report(name, tri_bytes, median_ms([&] {
               strip_walkers_kernel<2048><<<sms * per_sm, kThreads>>>(a, n, walker_runs[per_sm - 1], sink);
             }));
    }
    for (int one_block : {0, 1}) {  // 1: dynamic shared memory that leaves room for one block per SM (v5's)
      const std::size_t smem = one_block ? kOneBlockSmem : 0;
      std::printf("-- %s\n", one_block ? "one block per SM (as v5)" : "as many blocks per SM as fit");
      report("v5_geometry", tri_bytes, median_ms([&] {
               v5_geometry_kernel<kSub><<<dim3(groups, segments), kThreads, smem>>>(a, n, kSegTiles, true, sink);
             }));
      report("v5_segment_first", tri_bytes, median_ms([&] {
               v5_geometry_kernel<kSub><<<dim3(segments, groups), kThreads, smem>>>(a, n, kSegTiles, false, sink);
             }));
      report("columns_down", tri_bytes,
             median_ms([&] { columns_down_kernel<<<dim3(segments, groups), kThreads, smem>>>(a, n, sink); }));
    }
  }
  GP_CUDA_CHECK(cudaFree(chunks));
  for (long long* runs : walker_runs) GP_CUDA_CHECK(cudaFree(runs));
  GP_CUDA_CHECK(cudaFree(a));
  GP_CUDA_CHECK(cudaFree(sink));
  return 0;
}
