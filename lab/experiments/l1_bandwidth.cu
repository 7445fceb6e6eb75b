// Which kernel design reaches the H100's L1 load bandwidth (128 B/clk/SM, 33.45 TB/s at 1980 MHz)?
// memory.bandwidth's stream kernel plateaus at ~31.7 TB/s with an L1-sized working set, gpu-benches'
// L1 benchmark reports 33.3 TB/s: this self-contained experiment (gpuprobe's check macro only) times
// the suite's kernel next to gpu-benches-style per-block kernels, to find which difference matters
// (sample length, address arithmetic, vector width, load path, block shape, global vs shared).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/l1_bandwidth.cu -o l1_bandwidth
//
// Variants (letters as in the table): (a) the suite's stream kernel (float4, i += step mod n, restrict
// pointers, so LDG.E.128.CONSTANT), once with the suite's 8 GB samples and once with ~4 ms samples;
// (b) each block reads its own array with index threadIdx + k * blockDim (unrolled, compile-time
// offsets: one immediate per load), XOR- or FADD-accumulated; (c) the same with float2, double2 and
// float loads; (d) ld.global.ca and ld.global.nc (__ldg) against the default ld.global; (e) block size
// x resident blocks per SM; (f) the same loop over a shared-memory copy (LDS).
// Every variant: 3 warm-ups, then 21 samples timed with CUDA events; a sample moves 128 GB (~3.9 ms
// at 33 TB/s; the "8GB/sample" line repeats the suite's ~0.25 ms samples).
// Prints one line per variant: median TB/s (bytes loaded / event time), min and max TB/s, CV of the
// times, bytes/clk/SM at 1980 MHz, the SM clock measured in-kernel (clock64 vs %globaltimer on one
// thread per block, median over blocks and samples), the in-kernel TB/s (bytes / globaltimer span
// from the first block's start to the last block's end: launch latency excluded), bytes/clk/SM from
// that span at the measured clock, and the median event time. A '!' after the name: fewer blocks
// were resident per SM than intended, or blocks landed unevenly on the SMs (checked with %smid).
// SASS (CUDA 13.0, sm_90), timed loop, instructions per load: stream kernel 6.4 (IMAD.WIDE, VIADD,
// VIADDMNMX, 2 LOP3 per LDG.E.128.CONSTANT); per-block f4 256 threads x 4 per thread: 4.0 (LDG.E.128
// [R+imm], 2 LOP3, pointer bump per pass); f1: 1.9; LDS.128: 3.6. ld.global.ca is LDG.E.128.STRONG.SM.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"

namespace {

constexpr double kAssumedClockHz = 1.98e9;
constexpr double kTargetBytes = 128e9;   // per sample: ~3.9 ms at 33 TB/s
constexpr double kSuiteBytes = 8e9;      // memory.bandwidth's kMinBytesPerSample
constexpr int kWarmups = 3;
constexpr int kSamples = 21;
constexpr std::size_t kDataBytes = std::size_t(64) << 20;

// ------------------------------------------------------------------------------------------------
// Per-block clock record: thread 0 reads clock64 and %globaltimer at its start and, after a barrier,
// at the block's end; %smid shows where the block ran.

struct BlockClock {
  long long c0, c1;
  unsigned long long g0, g1;
  unsigned sm, pad;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// The start values go to memory at once, so no registers are held across the timed loop.
__device__ __forceinline__ void clock_start(BlockClock* out) {
  if (threadIdx.x == 0) {
    out[blockIdx.x].g0 = global_ns();
    out[blockIdx.x].c0 = clock64();
  }
}
__device__ __forceinline__ void clock_stop(BlockClock* out) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long c1 = clock64();
    out[blockIdx.x].g1 = global_ns();
    out[blockIdx.x].c1 = c1;
    out[blockIdx.x].sm = sm_id();
  }
}

// ------------------------------------------------------------------------------------------------
// Vector helpers: XOR-fold into one word, component-wise add.

__device__ __forceinline__ unsigned fold(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned fold(float2 v) { return __float_as_uint(v.x) ^ __float_as_uint(v.y); }
__device__ __forceinline__ unsigned fold(float4 v) {
  return __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
}
__device__ __forceinline__ unsigned fold(double2 v) {
  return unsigned(__double2loint(v.x)) ^ unsigned(__double2hiint(v.x)) ^ unsigned(__double2loint(v.y)) ^
         unsigned(__double2hiint(v.y));
}
__device__ __forceinline__ float4 add(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
__device__ __forceinline__ double2 add(double2 a, double2 b) { return {a.x + b.x, a.y + b.y}; }

enum class Load { kDefault, kCa, kNc, kShared };  // ld.global, ld.global.ca, ld.global.nc, ld.shared
enum class Acc { kXor, kAdd };

template <Load kLoad, class V>
__device__ __forceinline__ V load(const V* p) {
  if constexpr (kLoad == Load::kNc) return __ldg(p);
  else if constexpr (kLoad == Load::kCa) return __ldca(p);
  else return *p;  // data is not __restrict__, so this stays a plain ld.global (or ld.shared)
}

// ------------------------------------------------------------------------------------------------
// (a) memory.bandwidth's stream_kernel<float4, kRead>, as in microbench/probes/memory_bandwidth.cu,
// plus the clock probe outside the loop.

constexpr int kStreamBlock = 256;

__global__ void __launch_bounds__(kStreamBlock) stream_read_kernel(const float4* __restrict__ a, std::uint32_t n,
                                                                  std::uint32_t step, std::uint32_t visits,
                                                                  unsigned* __restrict__ sink, int write_sink,
                                                                  BlockClock* __restrict__ clocks) {
  clock_start(clocks);
  const std::uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t i = tid % n;
  unsigned acc = 0;
#pragma unroll 8
  for (std::uint32_t v = 0; v < visits; ++v) {
    acc ^= fold(a[i]);
    const std::uint32_t next = i + step;
    i = min(next, next - n);
  }
  if (write_sink) sink[0] = acc;
  clock_stop(clocks);
}

// ------------------------------------------------------------------------------------------------
// (b)-(f): block b reads data[b * block_stride + threadIdx.x + k * kBlock], k < kPerThread, `iters`
// times (block_stride 0: all blocks read one array). The k loop is unrolled with compile-time
// offsets (one immediate per load); `zero` (0 at run time) is added to the pointer every pass so the
// compiler cannot hoist the loop-invariant loads. kLoad == kShared first copies the block's array
// into shared memory and reads that instead.

template <class V, Load kLoad, Acc kAcc, int kBlock, int kPerThread>
__global__ void __launch_bounds__(kBlock, 2048 / kBlock)
    block_read_kernel(const V* data, std::uint32_t block_stride, std::uint32_t iters, long long zero,
                      unsigned* sink, int write_sink, BlockClock* clocks) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int kAccs = kAcc == Acc::kXor ? 2 : 1;  // independent accumulators (registers are capped at 32)
  constexpr int kUnroll = kPerThread >= 16 ? 1 : 16 / kPerThread;  // >= 16 loads per loop trip
  clock_start(clocks);
  const V* p = data + std::size_t(blockIdx.x) * block_stride + threadIdx.x;
  if constexpr (kLoad == Load::kShared) {
    V* s = reinterpret_cast<V*>(smem_raw) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) s[k * kBlock] = p[k * kBlock];
    __syncthreads();
    p = s;
  }
  unsigned x[kAccs] = {};
  V f[kAccs] = {};
#pragma unroll kUnroll
  for (std::uint32_t it = 0; it < iters; ++it) {
    p += zero;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const V v = load<kLoad>(p + k * kBlock);
      if constexpr (kAcc == Acc::kXor) x[k % kAccs] ^= fold(v);
      else f[k % kAccs] = add(f[k % kAccs], v);
    }
  }
  unsigned acc = 0;
#pragma unroll
  for (int j = 0; j < kAccs; ++j) acc ^= x[j] ^ fold(f[j]);
  if (write_sink) sink[0] = acc;  // write_sink is 0 at run time, unknown at compile time
  clock_stop(clocks);
}

__global__ void fill_kernel(float* p, std::size_t n) {
  const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += threads) {
    unsigned h = unsigned(i) * 2654435761u;
    h ^= h >> 15;
    p[i] = 1.0f + float(h >> 9) * (1.0f / 8388608.0f);  // [1, 2): never zero
  }
}

// ------------------------------------------------------------------------------------------------
// Host side: a table of variants, one timing helper.

struct Buffers {
  int sms = 0, max_grid = 0;  // clocks holds max_grid records
  const float* data = nullptr;
  unsigned* sink = nullptr;
  BlockClock* clocks = nullptr;
};

struct Variant {
  std::string name;
  const void* kernel;
  int block, blocks_per_sm;
  std::size_t smem;
  double bytes;  // loaded per launch
  std::function<void()> launch;
};

template <class V, Load kLoad, Acc kAcc, int kBlock, int kPerThread>
Variant block_variant(const std::string& name, const Buffers& b, int blocks_per_sm, bool one_array = false) {
  constexpr int kUnroll = kPerThread >= 16 ? 1 : 16 / kPerThread;
  const int grid = b.sms * blocks_per_sm;
  const std::uint32_t per_block = kBlock * kPerThread;  // elements
  const double bytes_per_pass = double(grid) * per_block * sizeof(V);
  std::uint32_t iters = std::uint32_t(std::ceil(kTargetBytes / bytes_per_pass));
  iters = (iters + kUnroll - 1) / kUnroll * kUnroll;
  const std::uint32_t stride = one_array ? 0 : per_block;
  if (double(grid) * per_block * sizeof(V) > double(kDataBytes)) throw std::runtime_error(name + ": data too small");
  const std::size_t smem = kLoad == Load::kShared ? per_block * sizeof(V) : 0;
  auto kernel = block_read_kernel<V, kLoad, kAcc, kBlock, kPerThread>;
  GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     kLoad == Load::kShared ? int(cudaSharedmemCarveoutMaxShared)
                                                            : int(cudaSharedmemCarveoutMaxL1)));
  if (smem > 48 * 1024)
    GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const V* data = reinterpret_cast<const V*>(b.data);
  return Variant{name, reinterpret_cast<const void*>(kernel), kBlock, blocks_per_sm, smem, bytes_per_pass * iters,
                 [=] { kernel<<<grid, kBlock, smem>>>(data, stride, iters, 0, b.sink, 0, b.clocks); }};
}

Variant stream_variant(const std::string& name, const Buffers& b, std::uint32_t working_set, double sample_bytes) {
  constexpr int kBlocksPerSm = 8;
  const int grid = b.sms * kBlocksPerSm;
  const std::uint64_t threads = std::uint64_t(grid) * kStreamBlock;
  const std::uint32_t n = working_set / sizeof(float4);
  std::uint32_t step = std::uint32_t((threads + 32) % n);
  if (step == 0) step = 32;
  const auto visits = std::uint32_t(std::max(1.0, std::ceil(sample_bytes / sizeof(float4) / double(threads))));
  const auto* a = reinterpret_cast<const float4*>(b.data);
  return Variant{name, reinterpret_cast<const void*>(stream_read_kernel), kStreamBlock, kBlocksPerSm, 0,
                 double(threads) * visits * sizeof(float4),
                 [=] { stream_read_kernel<<<grid, kStreamBlock>>>(a, n, step, visits, b.sink, 0, b.clocks); }};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void measure(const Variant& v, const Buffers& b) {
  int resident = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, v.kernel, v.block, v.smem));
  const int grid = b.sms * v.blocks_per_sm;
  if (grid > b.max_grid) throw std::runtime_error(v.name + ": grid larger than the clock records");
  cudaEvent_t e0, e1;
  GP_CUDA_CHECK(cudaEventCreate(&e0));
  GP_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> ms, mhz, span_ns;
  std::vector<BlockClock> clk(grid);
  bool uneven = resident < v.blocks_per_sm;
  for (int s = 0; s < kWarmups + kSamples; ++s) {
    GP_CUDA_CHECK(cudaEventRecord(e0));
    v.launch();
    GP_CUDA_CHECK(cudaGetLastError());
    GP_CUDA_CHECK(cudaEventRecord(e1));
    GP_CUDA_CHECK(cudaEventSynchronize(e1));
    if (s < kWarmups) continue;
    float t = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
    GP_CUDA_CHECK(cudaMemcpy(clk.data(), b.clocks, grid * sizeof(BlockClock), cudaMemcpyDeviceToHost));
    std::vector<double> f;
    std::vector<int> per_sm(b.sms + 64, 0);
    unsigned long long first = ~0ull, last = 0;
    for (const BlockClock& c : clk) {
      if (c.g1 > c.g0) f.push_back(double(c.c1 - c.c0) / double(c.g1 - c.g0) * 1e3);
      first = std::min(first, c.g0);
      last = std::max(last, c.g1);
      if (c.sm < per_sm.size() && ++per_sm[c.sm] > v.blocks_per_sm) uneven = true;
    }
    if (!f.empty()) mhz.push_back(median(f));
    span_ns.push_back(double(last - first));
  }
  GP_CUDA_CHECK(cudaEventDestroy(e0));
  GP_CUDA_CHECK(cudaEventDestroy(e1));

  double mean = 0, var = 0;
  for (double t : ms) mean += t;
  mean /= ms.size();
  for (double t : ms) var += (t - mean) * (t - mean);
  const double cv = std::sqrt(var / (ms.size() - 1)) / mean;
  const double t_med = median(ms), t_min = *std::min_element(ms.begin(), ms.end()),
               t_max = *std::max_element(ms.begin(), ms.end());
  const double tbs = v.bytes / (t_med * 1e-3) / 1e12;
  const double f_mhz = mhz.empty() ? 0 : median(mhz);
  const double span_tbs = v.bytes / (median(span_ns) * 1e-9) / 1e12;
  std::printf("%-34s%s %6.2f %6.2f %6.2f %5.2f %7.1f %6.0f %7.2f %7.1f %6.2f\n", v.name.c_str(), uneven ? "!" : " ",
              tbs, v.bytes / (t_max * 1e-3) / 1e12, v.bytes / (t_min * 1e-3) / 1e12, 100 * cv,
              tbs * 1e12 / (b.sms * kAssumedClockHz), f_mhz, span_tbs,
              f_mhz > 0 ? span_tbs * 1e12 / (b.sms * f_mhz * 1e6) : 0.0, t_med);
}

int run() {
  int device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  Buffers b;
  b.sms = prop.multiProcessorCount;
  float* data = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&data, kDataBytes));
  fill_kernel<<<b.sms * 8, 256>>>(data, kDataBytes / sizeof(float));
  GP_CUDA_CHECK(cudaGetLastError());
  b.data = data;
  GP_CUDA_CHECK(cudaMalloc(&b.sink, sizeof(unsigned)));
  b.max_grid = b.sms * 8;
  GP_CUDA_CHECK(cudaMalloc(&b.clocks, sizeof(BlockClock) * b.max_grid));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("%s, %d SMs, max shared %zu KiB/SM; ideal %.2f TB/s (128 B/clk/SM at 1980 MHz)\n", prop.name, b.sms,
              prop.sharedMemPerMultiprocessor / 1024, 128.0 * b.sms * kAssumedClockHz / 1e12);

  using L = Load;
  using A = Acc;
  const std::vector<Variant> variants = {
      stream_variant("a stream f4 32K 256x8", b, 32 << 10, kTargetBytes),
      stream_variant("a stream f4 32K 256x8 8GB/sample", b, 32 << 10, kSuiteBytes),
      stream_variant("a stream f4 64K 256x8", b, 64 << 10, kTargetBytes),
      block_variant<float4, L::kDefault, A::kXor, 256, 4>("b blk f4 16K/blk xor 256x8", b, 8),
      block_variant<float4, L::kDefault, A::kXor, 256, 2>("b blk f4  8K/blk xor 256x8", b, 8),
      block_variant<float4, L::kDefault, A::kXor, 256, 1>("b blk f4  4K/blk xor 256x8", b, 8),
      block_variant<float4, L::kDefault, A::kAdd, 256, 4>("b blk f4 16K/blk fadd 256x8", b, 8),
      block_variant<float4, L::kDefault, A::kXor, 256, 4>("b one f4 16K all-blocks xor 256x8", b, 8, true),
      block_variant<float2, L::kDefault, A::kXor, 256, 8>("c blk f2 16K/blk xor 256x8", b, 8),
      block_variant<double2, L::kDefault, A::kAdd, 256, 4>("c blk d2 16K/blk dadd 256x8", b, 8),
      block_variant<float, L::kDefault, A::kXor, 256, 16>("c blk f1 16K/blk xor 256x8", b, 8),
      block_variant<float4, L::kCa, A::kXor, 256, 4>("d blk f4 16K/blk .ca 256x8", b, 8),
      block_variant<float4, L::kNc, A::kXor, 256, 4>("d blk f4 16K/blk .nc 256x8", b, 8),
      block_variant<float, L::kNc, A::kXor, 256, 16>("d blk f1 16K/blk .nc 256x8", b, 8),
      block_variant<float4, L::kDefault, A::kXor, 256, 4>("e blk f4 16K/blk 256x1", b, 1),
      block_variant<float4, L::kDefault, A::kXor, 256, 4>("e blk f4 16K/blk 256x2", b, 2),
      block_variant<float4, L::kDefault, A::kXor, 256, 4>("e blk f4 16K/blk 256x4", b, 4),
      block_variant<float4, L::kDefault, A::kXor, 512, 2>("e blk f4 16K/blk 512x1", b, 1),
      block_variant<float4, L::kDefault, A::kXor, 512, 2>("e blk f4 16K/blk 512x2", b, 2),
      block_variant<float4, L::kDefault, A::kXor, 512, 2>("e blk f4 16K/blk 512x4", b, 4),
      block_variant<float4, L::kDefault, A::kXor, 1024, 2>("e blk f4 32K/blk 1024x1", b, 1),
      block_variant<float4, L::kDefault, A::kXor, 1024, 2>("e blk f4 32K/blk 1024x2", b, 2),
      block_variant<float4, L::kShared, A::kXor, 256, 4>("f shm v4 16K/blk 256x8", b, 8),
      block_variant<float4, L::kShared, A::kXor, 1024, 2>("f shm v4 32K/blk 1024x2", b, 2),
      block_variant<float, L::kShared, A::kXor, 256, 16>("f shm f1 16K/blk 256x8", b, 8),
  };
  std::printf("%-35s %6s %6s %6s %5s %7s %6s %7s %7s %6s\n", "variant (threads x blocks/SM)", "TB/s", "min", "max",
              "CV%", "B/clk", "MHz", "kernel", "B/clk", "ms");
  std::printf("%-35s %6s %6s %6s %5s %7s %6s %7s %7s %6s\n", "", "median", "", "", "time", "@1980", "meas.",
              "TB/s", "@meas.", "median");
  for (int i = 0; i < 50; ++i) variants.front().launch();  // ~200 ms: clocks up before any sample
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  for (const Variant& v : variants) measure(v, b);
  GP_CUDA_CHECK(cudaFree(data));
  GP_CUDA_CHECK(cudaFree(b.sink));
  GP_CUDA_CHECK(cudaFree(b.clocks));
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "l1_bandwidth: %s\n", e.what());
    return 1;
  }
}
