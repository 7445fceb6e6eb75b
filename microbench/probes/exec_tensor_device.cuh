// Device side of exec.tensor shared by its translation units: the operand fragment layouts of
// mma.sync and wgmma (PTX ISA, "Matrix fragments for mma.m16n8k*" and "Register fragments and shared
// memory matrix layouts" for wgmma), the shared-memory tile layout wgmma's descriptors describe, and the
// clocks. Every layout here is checked against a CPU reference by tests/gpu/exec_tensor_test.cu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probes/exec_probes.hpp"
#include "probes/exec_tensor.hpp"

namespace gpuprobe {
namespace tensor_device {

// Every A and B row of the 16-, 32- and 8-bit forms is 32 bytes: k16 x 2 B, k8 x 4 B, k32 x 1 B.
constexpr int kRowBytes = 32;
static_assert(16 * 2 == kRowBytes && 8 * 4 == kRowBytes && 32 * 1 == kRowBytes,
              "one row of A or B is two 16-byte core-matrix rows for every non-f64 form");

// A fragment register r (0..3) of a lane for 16 rows starting at row0: row g (+8 for odd r), the
// lane's 4 bytes at column byte 4t (+16 for r >= 2). The same formula covers f16/bf16 (2 elements),
// tf32 (1) and 8-bit types (4), because every row is 32 bytes.
__device__ __forceinline__ std::uint32_t load_a_reg(const std::uint8_t* a, int row0, int lane, int r) {
  const int g = lane >> 2, t = lane & 3;
  return *reinterpret_cast<const std::uint32_t*>(a + (row0 + g + 8 * (r & 1)) * kRowBytes + 4 * t + 16 * (r >> 1));
}
// B fragment register r (0..1) of a lane: column n = g of the n-major image, bytes 4t (+16 for r = 1).
__device__ __forceinline__ std::uint32_t load_b_reg(const std::uint8_t* b, int lane, int r) {
  const int g = lane >> 2, t = lane & 3;
  return *reinterpret_cast<const std::uint32_t*>(b + g * kRowBytes + 4 * t + 16 * r);
}

// wgmma's shared-memory tiles, K-major without swizzle: core matrices of 8 rows x 16 bytes (128
// contiguous bytes); the two core matrices of a row group along K kLeadingBytes apart, consecutive
// 8-row groups kStrideBytes apart. Descriptor: ((8, rows/8), 2) : ((16 B, SBO), LBO).
constexpr int kLeadingBytes = 128;
constexpr int kStrideBytes = 256;
__device__ __forceinline__ int smem_tile_offset(int row, int chunk /* 16-byte chunk along K, 0 or 1 */) {
  return (row >> 3) * kStrideBytes + chunk * kLeadingBytes + (row & 7) * 16;
}
// Copies a row-major image of `rows` x 32 bytes into that layout; the block's threads share the work.
__device__ __forceinline__ void stage_tile(const std::uint8_t* image, int rows, std::uint8_t* tile) {
  for (int i = threadIdx.x; i < rows * 2; i += blockDim.x) {
    const int row = i >> 1, chunk = i & 1;
    *reinterpret_cast<uint4*>(tile + smem_tile_offset(row, chunk)) =
        *reinterpret_cast<const uint4*>(image + row * kRowBytes + chunk * 16);
  }
}
// Matrix descriptor of such a tile (start address, LBO and SBO in 16-byte units; no swizzle).
__device__ __forceinline__ std::uint64_t smem_descriptor(const void* tile) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(tile));
  return ((address & 0x3FFFF) >> 4) | (std::uint64_t(kLeadingBytes >> 4) << 16) |
         (std::uint64_t(kStrideBytes >> 4) << 32);
}

// Element index (in the m x n row-major accumulator image) of the first element in accumulator
// register j of a lane, and how many elements that register packs (f16: two).
// mma.sync m16n8, 32-bit accumulators (f32, s32): rows g, g+8; columns 2t, 2t+1.
__device__ __forceinline__ int mma_acc_index_32(int lane, int j) {
  const int g = lane >> 2, t = lane & 3;
  return (g + 8 * (j >> 1)) * 8 + 2 * t + (j & 1);
}
// mma.sync m16n8 with f16 accumulators: register j holds row g + 8j, columns 2t and 2t+1.
__device__ __forceinline__ int mma_acc_index_16(int lane, int j) {
  const int g = lane >> 2, t = lane & 3;
  return (g + 8 * j) * 8 + 2 * t;
}
// wgmma m64nN, 32-bit accumulators: warp w owns rows 16w..16w+15; register j: row g (+8 when bit 1 of
// j is set), column 8 (j / 4) + 2t + (j & 1).
__device__ __forceinline__ int wgmma_acc_index_32(int thread, int n, int j) {
  const int w = thread >> 5, lane = thread & 31, g = lane >> 2, t = lane & 3;
  return (16 * w + g + 8 * ((j >> 1) & 1)) * n + 8 * (j >> 2) + 2 * t + (j & 1);
}
// wgmma m64nN with f16 accumulators: register j packs the two f16 of 32-bit registers 2j and 2j+1.
__device__ __forceinline__ int wgmma_acc_index_16(int thread, int n, int j) {
  const int w = thread >> 5, lane = thread & 31, g = lane >> 2, t = lane & 3;
  return (16 * w + g + 8 * (j & 1)) * n + 8 * (j >> 1) + 2 * t;
}

// Block timing (exec_tensor.hpp: stamps): the grid's globaltimer span, block 0's clock, the SMs that ran a
// block, and per SM the earliest block start and latest block end in that SM's own clock64 (one counter
// per SM, so the span covers all its blocks whatever the clock did) and how many blocks it ran.
__device__ __forceinline__ unsigned sm_id() {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}
__device__ __forceinline__ void stamp_start(unsigned long long* stamps, std::uint64_t t0, long long c0) {
  if (threadIdx.x != 0) return;
  const unsigned sm = sm_id() % kTensorStampSms;
  atomicMin(&stamps[0], static_cast<unsigned long long>(t0));
  atomicMin(&stamps[kTensorStampHeader + sm], static_cast<unsigned long long>(c0));
}
__device__ __forceinline__ void stamp_end(unsigned long long* stamps, std::uint64_t t0, long long c0) {
  if (threadIdx.x != 0) return;
  const std::uint64_t t1 = exec_global_timer_ns();
  const long long c1 = clock64();
  const unsigned sm = sm_id() % kTensorStampSms;
  atomicMax(&stamps[1], static_cast<unsigned long long>(t1));
  if (blockIdx.x == 0) {
    stamps[2] = static_cast<unsigned long long>(c1 - c0);
    stamps[3] = t1 - t0;
  }
  atomicOr(&stamps[4 + (sm >> 6) % 4], 1ull << (sm & 63));
  atomicMax(&stamps[kTensorStampHeader + kTensorStampSms + sm], static_cast<unsigned long long>(c1));
  atomicAdd(&stamps[kTensorStampHeader + 2 * kTensorStampSms + sm], 1ull);
}

// One form's three kernels (the test's single instruction, throughput, latency), as both translation
// units tabulate them.
using TensorOnceKernel = void (*)(const std::uint8_t*, const std::uint8_t*, const std::uint8_t*, std::uint8_t*);
using TensorThroughputKernel = void (*)(const std::uint8_t*, const std::uint8_t*, const std::uint8_t*, unsigned,
                                        unsigned long long*, std::uint32_t*);
using TensorLatencyKernel = void (*)(const std::uint8_t*, const std::uint8_t*, unsigned, unsigned long long*,
                                     std::uint32_t*);
struct TensorKernels {
  TensorForm form;
  TensorOnceKernel once;
  TensorThroughputKernel throughput;
  TensorLatencyKernel latency;
};

// The tables, one per instruction and translation unit; exec_tensor.cu lists their forms (mma.sync first)
// and launches through them.
const std::vector<TensorKernels>& mma_kernels();    // exec_tensor_mma.cu
const std::vector<TensorKernels>& wgmma_kernels();  // exec_tensor_wgmma.cu, built for sm_90a alone
// Why the binary holds no wgmma form, "" when it holds them: their wrappers are generated at build time
// by gen_wgmma_forms.py, and a build without Python leaves them out (microbench/CMakeLists.txt).
std::string wgmma_forms_left_out();

// Keeps accumulators alive without writing them: a store no real result takes.
template <class T, int N>
__device__ __forceinline__ void keep(const T (&d)[N], std::uint32_t* sink) {
  std::uint32_t x = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (sizeof(T) == 8) {
      const auto bits = static_cast<std::uint64_t>(__double_as_longlong(static_cast<double>(d[j])));
      x ^= static_cast<std::uint32_t>(bits) ^ static_cast<std::uint32_t>(bits >> 32);
    } else if constexpr (sizeof(T) == 4) {
      std::uint32_t bits;
      memcpy(&bits, &d[j], 4);
      x ^= bits;
    }
  }
  if (x == 0x9E3779B9u) sink[0] = x;
}

}  // namespace tensor_device
}  // namespace gpuprobe
