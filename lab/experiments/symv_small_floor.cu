// How fast could any storage-aware SYMV be at n = 2048, where the matrix is L2-resident? The
// question behind the issue's "our SYMV beats our GEMV at every n >= 2048" (docs/perf/symv.md,
// "Where the remaining time goes"): our SYMV (two kernels) takes 9.0 us gated in float against our
// GEMV T's 6.2 us (one kernel, one step of 16-byte loads per block), and the one-kernel SYMVs tried
// (v7 arrival counters, v10 clusters + counters) were slower still. A SYMV reads half of GEMV's
// bytes but must add partial results across blocks; this measures skeletons that do *less* than a
// SYMV must, so that each is a lower bound on its design:
//   tile_read       one block per stored 64 x 64 tile of the lower triangle (528 at n = 2048), all
//                   of the tile's 16-byte loads issued at once (float 4, double 8 per thread), each
//                   thread's sum written as the tile's partial: the read alone, no combine (no
//                   SYMV can be faster than this plus its combine)
//   tile_read_sync  the same, then cooperative groups' grid.sync() (and nothing after it)
//   read_sync_combine  the same, then grid.sync() and the combine: each output
//                   element the sum of its 33 tile partials (4 threads per element, 16-byte-free
//                   scalar loads, fixed order), written to y. The shape of a one-kernel SYMV with a
//                   grid barrier, minus the SYMV arithmetic (a lower bound on such a design)
//   read_sync_warp  the same with the combine coalesced: 32 output elements per block, one per
//                   lane, each of 4 warps loading 9 of the 33 terms of all 32, then summed in order
//   empty           528 blocks that do nothing; empty_sync: the same with one grid.sync()
//   gemv_T, gemv_N  our GEMV (kAuto) on the same n x n matrix; symv: our SYMV (kAuto), lower
// Two timings per row, us: "queued" = the mean of 200 launches queued back to back between two
// events (the GPU's time per call without the host's launch cost, as the harness's launch gate
// measures), "single" = the median of 50 launches timed one by one (host launch included).
//
//   build/lab/experiments/symv_small_floor [n=2048]   (float, then double; ~2 s on an H100)
//
// Answer on the H100 (2026-11-25, night; docs/perf/symv.md "What bounds it", queued us, 4 runs on
// one machine): float: gemv_T 5.76-5.81, read_sync_warp 6.48-6.53, read_sync_combine 7.04-7.10,
// tile_read_sync 5.40-5.46, tile_read 3.9-5.3; double: gemv_T 8.35-8.50, read_sync_warp
// 7.61-7.64, read_sync_combine 8.45-8.47, tile_read_sync 6.67-6.69. A one-kernel SYMV with a grid
// barrier cannot beat GEMV T in float: its skeleton, without SYMV's arithmetic, is 12 % slower
// (the combine after the barrier costs 1.0-1.1 us, and the barrier-only skeleton is 0.3-0.4 us under
// GEMV T). In double the same skeleton is 9-10 % faster than GEMV T: room for such a SYMV there.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "event_median.hpp"
#include "gpuprobe/check.hpp"
#include "gpuprobe/kernels/gemv.hpp"
#include "gpuprobe/kernels/symv.hpp"

namespace {

namespace gk = gpuprobe::kernels;
constexpr int kNB = 64;
constexpr int kThreads = 256;
constexpr int kPartial = 2 * kNB;  // a tile's partial: 64 row sums (y block r), 64 column dots (y block j)

template <class T>
__global__ void fill_kernel(T* a, long long count, unsigned salt) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = static_cast<T>(0.5 + static_cast<double>(((i + salt) * 2654435761ll) & 1023) / 1024.0);  // never zero
}

// Tile b of the lower triangle's stored tiles in row order: (r, j), j <= r.
__device__ __forceinline__ void tile_of(int b, int& r, int& j) {
  r = static_cast<int>((sqrtf(8.0f * b + 1.0f) - 1.0f) * 0.5f);
  while ((r + 1) * (r + 2) / 2 <= b) ++r;
  while (r * (r + 1) / 2 > b) --r;
  j = b - r * (r + 1) / 2;
}

enum class After { kNothing, kSync, kSyncCombine, kSyncCombineWarp };

template <class T, After kAfter>
__global__ void __launch_bounds__(kThreads) tile_read_kernel(const T* a, int n, T* partial, T* y) {
  constexpr int kVecPerCol = kNB * static_cast<int>(sizeof(T)) / 16;  // 16-byte vectors in a tile column
  constexpr int kLoads = kNB * kVecPerCol / kThreads;                 // per thread: float 4, double 8
  constexpr int kPerVec = 16 / static_cast<int>(sizeof(T));
  int r, j;
  tile_of(blockIdx.x, r, j);
  const T* tile = a + static_cast<long long>(j) * kNB * n + r * kNB;
  using Vec = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
  Vec v[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const int vec = threadIdx.x + u * kThreads, col = vec / kVecPerCol, row = vec % kVecPerCol * kPerVec;
    v[u] = *reinterpret_cast<const Vec*>(tile + static_cast<long long>(col) * n + row);
  }
  T s = 0;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const T* e = reinterpret_cast<const T*>(&v[u]);
#pragma unroll
    for (int k = 0; k < kPerVec; ++k) s += e[k];
  }
  if (threadIdx.x < kPartial) partial[static_cast<long long>(blockIdx.x) * kPartial + threadIdx.x] = s;
  if constexpr (kAfter != After::kNothing) cooperative_groups::this_grid().sync();
  if constexpr (kAfter == After::kSyncCombine) {
    // Output element i (block row R = i / 64, offset o): row parts of tiles (R, 0..R), column parts
    // of tiles (R..N-1, R); 4 consecutive threads per element, each a fixed quarter of the terms.
    const int g = blockIdx.x * kThreads + threadIdx.x, i = g / 4, q = g % 4;
    if (i < n) {
      const int R = i / kNB, o = i % kNB, N = n / kNB, terms = N + 1;
      T t[9];
#pragma unroll
      for (int k = 0; k < 9; ++k) {
        const int term = q * 9 + k;  // 0..R: row parts; R+1..N: column parts of tiles (R + term - R - 1, R)
        long long at = -1;
        if (term <= R) at = (static_cast<long long>(R) * (R + 1) / 2 + term) * kPartial + o;
        else if (term < terms) {
          const int rr = term - 1;  // tile (rr, R), rr = R .. N - 1
          at = (static_cast<long long>(rr) * (rr + 1) / 2 + R) * kPartial + kNB + o;
        }
        t[k] = at >= 0 ? partial[at] : T(0);
      }
      T s2 = 0;
#pragma unroll
      for (int k = 0; k < 9; ++k) s2 += t[k];
      s2 += __shfl_xor_sync(0xffffffffu, s2, 1);
      s2 += __shfl_xor_sync(0xffffffffu, s2, 2);
      if (q == 0) y[i] = s2;
    }
  }
  if constexpr (kAfter == After::kSyncCombineWarp) {
    // 32 output elements per block (the first n / 32 blocks), one per lane; warp w loads terms
    // [9 w, 9 w + 9) of all 32 at once (each warp load: 32 consecutive partials, coalesced), the
    // four warps' sums are added in a fixed order through shared memory.
    __shared__ T quarter[4][32];
    if (blockIdx.x < n / 32) {
      const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
      const int i = blockIdx.x * 32 + lane, R = i / kNB, o = i % kNB, N = n / kNB;
      if (w < 4) {
        T t[9];
#pragma unroll
        for (int k = 0; k < 9; ++k) {
          const int term = w * 9 + k;
          long long at = -1;
          if (term <= R) at = (static_cast<long long>(R) * (R + 1) / 2 + term) * kPartial + o;
          else if (term <= N) at = (static_cast<long long>(term - 1) * term / 2 + R) * kPartial + kNB + o;
          t[k] = at >= 0 ? partial[at] : T(0);
        }
        T s2 = 0;
#pragma unroll
        for (int k = 0; k < 9; ++k) s2 += t[k];
        quarter[w][lane] = s2;
      }
      __syncthreads();
      if (w == 0) y[i] = ((quarter[0][lane] + quarter[1][lane]) + quarter[2][lane]) + quarter[3][lane];
    }
  }
}

template <bool kSync>
__global__ void empty_kernel() {
  if constexpr (kSync) cooperative_groups::this_grid().sync();
}

struct Timing {
  float queued_us, single_us;
};

template <class Launch>
Timing time_it(Launch launch) {
  for (int w = 0; w < 20; ++w) launch();
  constexpr int kQueued = 200;
  cudaEvent_t start, stop;
  GP_CUDA_CHECK(cudaEventCreate(&start));
  GP_CUDA_CHECK(cudaEventCreate(&stop));
  GP_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < kQueued; ++i) launch();
  GP_CUDA_CHECK(cudaEventRecord(stop));
  GP_CUDA_CHECK(cudaEventSynchronize(stop));
  float total = 0;
  GP_CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
  GP_CUDA_CHECK(cudaEventDestroy(start));
  GP_CUDA_CHECK(cudaEventDestroy(stop));
  const float single_ms = gpuprobe_experiments::median_event_ms(launch, 0, 50);  // warm already
  return {total * 1e3f / kQueued, single_ms * 1e3f};
}

void report(const char* precision, const char* name, Timing t) {
  std::printf("%-6s %-17s queued %7.2f us   single %7.2f us\n", precision, name, t.queued_us, t.single_us);
}

void cooperative(const void* kernel, int blocks, void** args) {
  GP_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(blocks), dim3(kThreads), args, 0, nullptr));
}

template <class T>
void run(int n, const char* precision) {
  const int N = n / kNB, tiles = N * (N + 1) / 2;
  const long long elems = static_cast<long long>(n) * n;
  T *a = nullptr, *x = nullptr, *y = nullptr, *partial = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&a, elems * sizeof(T)));
  GP_CUDA_CHECK(cudaMalloc(&x, n * sizeof(T)));
  GP_CUDA_CHECK(cudaMalloc(&y, n * sizeof(T)));
  GP_CUDA_CHECK(cudaMalloc(&partial, static_cast<std::size_t>(tiles) * kPartial * sizeof(T)));
  fill_kernel<<<264, kThreads>>>(a, elems, 1);
  fill_kernel<<<8, kThreads>>>(x, n, 2);
  fill_kernel<<<8, kThreads>>>(y, n, 3);
  GP_CUDA_CHECK_LAUNCH();
  int per_sm = 0, sms = 0, device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  per_sm = 1 << 20;  // the fewest co-resident blocks of any cooperative variant
  for (const void* kernel : {reinterpret_cast<const void*>(tile_read_kernel<T, After::kSync>),
                             reinterpret_cast<const void*>(tile_read_kernel<T, After::kSyncCombine>),
                             reinterpret_cast<const void*>(tile_read_kernel<T, After::kSyncCombineWarp>)}) {
    int fit = 0;
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, 0));
    per_sm = std::min(per_sm, fit);
  }
  const bool co_resident = per_sm * sms >= tiles && tiles * kThreads >= 4 * n;
  std::printf("%s n = %d: %d tiles (%.2f MB stored), %d blocks per SM co-resident (%d SMs)\n", precision, n, tiles,
              tiles * kNB * kNB * sizeof(T) / 1e6, per_sm, sms);

  const std::size_t gemv_ws_t = gk::gemv_workspace_bytes<T>(gk::Trans::kTrans, n, n);
  const std::size_t gemv_ws_n = gk::gemv_workspace_bytes<T>(gk::Trans::kNoTrans, n, n);
  const std::size_t symv_ws = gk::symv_workspace_bytes<T>(n);
  const std::size_t ws_bytes = std::max({gemv_ws_t, gemv_ws_n, symv_ws, std::size_t{16}});
  void* ws = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
  if (gk::gemv_workspace_init(ws, ws_bytes, nullptr) != gk::Status::kSuccess) std::abort();
  auto check = [](gk::Status s) {
    if (s != gk::Status::kSuccess) {
      std::fprintf(stderr, "library call failed\n");
      std::exit(1);
    }
  };
  const T one = 1, half = 0.5;
  report(precision, "gemv_T", time_it([&] {
           check(gk::gemv<T>(gk::Trans::kTrans, n, n, one, a, n, x, 1, half, y, 1, ws, ws_bytes, nullptr));
         }));
  report(precision, "gemv_N", time_it([&] {
           check(gk::gemv<T>(gk::Trans::kNoTrans, n, n, one, a, n, x, 1, half, y, 1, ws, ws_bytes, nullptr));
         }));
  report(precision, "symv", time_it([&] {
           check(gk::symv<T>(gk::Uplo::kLower, n, one, a, n, x, 1, half, y, 1, ws, ws_bytes, nullptr));
         }));
  report(precision, "empty", time_it([&] { empty_kernel<false><<<tiles, kThreads>>>(); }));
  report(precision, "tile_read",
         time_it([&] { tile_read_kernel<T, After::kNothing><<<tiles, kThreads>>>(a, n, partial, y); }));
  if (co_resident) {
    report(precision, "empty_sync",
           time_it([&] { cooperative(reinterpret_cast<const void*>(empty_kernel<true>), tiles, nullptr); }));
    int nn = n;
    void* args[] = {&a, &nn, &partial, &y};
    report(precision, "tile_read_sync", time_it([&] {
             cooperative(reinterpret_cast<const void*>(tile_read_kernel<T, After::kSync>), tiles, args);
           }));
    report(precision, "read_sync_combine", time_it([&] {
             cooperative(reinterpret_cast<const void*>(tile_read_kernel<T, After::kSyncCombine>), tiles, args);
           }));
    report(precision, "read_sync_warp", time_it([&] {
             cooperative(reinterpret_cast<const void*>(tile_read_kernel<T, After::kSyncCombineWarp>), tiles, args);
           }));
  } else {
    std::printf("%s: %d tiles are not co-resident (or too few threads for the combine): no sync rows\n", precision,
                tiles);
  }
  GP_CUDA_CHECK(cudaFree(ws));
  GP_CUDA_CHECK(cudaFree(partial));
  GP_CUDA_CHECK(cudaFree(y));
  GP_CUDA_CHECK(cudaFree(x));
  GP_CUDA_CHECK(cudaFree(a));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  if (n < kNB || n % kNB != 0 || n > 2048) {  // the combine's 4 x 9 terms cover n / 64 + 1 <= 33
    std::fprintf(stderr, "n must be a multiple of %d in [%d, 2048]\n", kNB, kNB);
    return 2;
  }
  for (int round = 0; round < 2; ++round) {
    run<float>(n, "float");
    run<double>(n, "double");
  }
  return 0;
}
