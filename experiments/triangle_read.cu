// Is reading one triangle of a large column-major matrix slower per byte than reading the whole
// matrix, whatever the kernel does with the data? The question behind DSYMV n = 32768 lower
// (docs/perf/symv.md, v12): three different storage-aware kernels (ours v5 and v1-atomic, cuBLAS's
// with atomics) all take 1406-1421 us for the 4.3 GB triangle under ncu (~3050 GB/s), a plain
// 16-byte read of 4 GiB reaches 3188 GB/s, and 2.0x cuBLAS's default SYMV needs ~3096 GB/s for the
// whole call. If plain loads in SYMV v5's geometry (no arithmetic) also stop near 3050 GB/s, the gap
// is the access pattern; if they reach the flat read's rate, it is in the SYMV kernels.
// Answer on the H100 (2026-11-25, docs/perf/symv.md "Where the remaining time goes"): in between.
// The triangle in address order reads at 3169 GB/s, short 2D units at 3116-3125, v5-like units at
// 3092-3094: the layouts a SYMV can use cost 2-3 % against the flat read before any partials.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include experiments/triangle_read.cu -o triangle_read
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
// v5_geometry, v5_segment_first and columns_down run twice: as many blocks per SM as fit, then one
// block per SM (dynamic shared memory of more than half an SM: v5's occupancy; these kernels do
// not batch their loads as v5 does, so that half shows occupancy sensitivity, not v5's rate).
// GB/s = bytes read (the stored 64 x 64 tiles, diagonal ones whole) / median time; 3 warm-ups, 15
// samples, CUDA events around each launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

__global__ void fill_kernel(double* a, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = 1.0 + static_cast<double>((i * 2654435761ll) & 1023) / 1024.0;  // never zero
}

__device__ __forceinline__ double2 ld_cs(const double* p) { return __ldcs(reinterpret_cast<const double2*>(p)); }

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

template <class Launch>
float median_ms(Launch launch) {
  cudaEvent_t start, stop;
  GP_CUDA_CHECK(cudaEventCreate(&start));
  GP_CUDA_CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < 3; ++w) launch();
  std::vector<float> ms;
  for (int s = 0; s < 15; ++s) {
    GP_CUDA_CHECK(cudaEventRecord(start));
    launch();
    GP_CUDA_CHECK(cudaEventRecord(stop));
    GP_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  GP_CUDA_CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  GP_CUDA_CHECK(cudaEventDestroy(start));
  GP_CUDA_CHECK(cudaEventDestroy(stop));
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 32768;
  if (n <= 0 || n % (kNB * kSegTiles) != 0) {
    std::fprintf(stderr, "n must be a positive multiple of %d\n", kNB * kSegTiles);
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
  GP_CUDA_CHECK(cudaFree(a));
  GP_CUDA_CHECK(cudaFree(sink));
  return 0;
}
