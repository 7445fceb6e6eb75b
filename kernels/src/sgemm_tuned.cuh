// The tuned sm_90 SGEMM kernel template (FP32 FFMA only; no TF32, no tensor cores).
//
// One thread block computes a kBlockM x kBlockN tile of C. Shapes, in the notation of the CUTLASS
// CuTe tutorials, (extent):(stride), column-major C:
//
//   C block       (kBlockM, kBlockN) : (1, ldc)         m contiguous in global memory
//   op(A) slice   (kBlockM, kBlockK)                    one k-tile of the block row of op(A)
//   op(B) slice   (kBlockK, kBlockN)                    one k-tile of the block column of op(B)
//   As, Bs       per stage, in the MN layout or the K layout (OperandLayout below), by operand storage
//   warps         (kWarpsM, kWarpsN) : (1, kWarpsM)     each owns a kWarpM x kWarpN tile of C
//   lanes         (8, 4) : (1, 8)                       lane_m = lane % 8, lane_n = lane / 8
//   thread tile   (kThreadM, kThreadN) = (kThreadM/4 x kThreadN/4) sub-tiles of 4 x 4; sub-tile
//                 (i, j) of lane (lm, ln) starts at warp-tile row lm*4 + i*32, column ln*4 + j*16
//
// Global -> shared copies are cp.async, kStages deep (one barrier per k-tile), and never transpose:
//   operand stored MN-contiguous (A with kNoTrans, B with kTrans) -> MN layout, rows of m (or n) per k,
//       16-byte cp.async.cg (a warp moves 512 contiguous bytes of one k row), read per k step with one
//       LDS.128 per 4x4 sub-tile (8 lanes x 16 B = 128 contiguous bytes for A: one wavefront; lanes
//       sharing a row read the same address: broadcast);
//   operand stored K-contiguous (A with kTrans, B with kNoTrans) -> K layout, rows of k per (permuted)
//       m or n, 16-byte cp.async of 4 consecutive k (a warp moves 8 columns x 64 contiguous bytes), read
//       with one LDS.64 per element covering 2 k steps; the row permutation and the row stride
//       kBlockK + 4 = 4 (mod 8) make those reads conflict-free.
//   Unaligned storage (base not 16-byte aligned or ld % 4 != 0) takes 4-byte cp.async into the same
//   layouts (correct, slower). v1 of this kernel transposed K-contiguous operands with 4-byte copies
//   into the MN layout; that cost 8 % per such operand (docs/perf/sgemm.md).
// Out-of-range elements (edge tiles, the k remainder) are zero-filled by cp.async's src-size
// operand, so the inner loop has no bounds checks and edge blocks stay correct.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "sgemm_internal.cuh"

namespace gpuprobe::kernels::detail {

// ---- cp.async (sm_80+); src_bytes < copy size zero-fills the rest of the destination ----------
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPendingGroups>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPendingGroups) : "memory");
}

__device__ __forceinline__ float component(const float4& v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

// How one operand travels to shared memory, and in which layout it lands there.
//   kMnVector / kMnScalar: stored MN-contiguous; shared tile in the "MN layout" (rows of mn per k).
//   kKVector / kKScalar:   stored K-contiguous;  shared tile in the "K layout" (rows of k per mn).
// Vector = 16-byte cp.async (needs a 16-byte aligned base and ld % 4 == 0), scalar = 4-byte cp.async.
enum class OperandCopy { kMnVector, kMnScalar, kKVector, kKScalar };

constexpr bool k_layout(OperandCopy c) { return c == OperandCopy::kKVector || c == OperandCopy::kKScalar; }

constexpr int kVec = 4;      // floats per 128-bit access
constexpr int kSmemPad = 4;  // floats added to every shared row (16 bytes: keeps rows 16-byte aligned)
constexpr int kKStep = 2;    // k values per fragment load (LDS.64 along k in the K layout)

// The two shared layouts of a kTileMn x kBlockK operand tile.
//
//   MN layout  (kBlockK, kTileMn) : (kTileMn + 4, 1)      a k row holds kTileMn consecutive mn
//   K layout   (kTileMn, kBlockK) : (kBlockK + 4, 1)      a (permuted) mn row holds kBlockK consecutive k
//
// K layout rows are permuted, row(mn) = (mn % 4) * (kTileMn / 4) + mn / 4, so that the rows a warp
// reads together (mn = 4 * lane + const: the lanes' 4 x 4 sub-tiles) are consecutive rows, and with a
// row stride of kBlockK + 4 = 4 (mod 8) words, consecutive rows start in distinct 8-byte bank pairs:
// the 8 (or 4) distinct LDS.64 addresses of a warp are conflict-free.
template <int kTileMn, int kBlockK>
struct OperandLayout {
  static constexpr int kMnStride = kTileMn + kSmemPad;
  static constexpr int kKStride = kBlockK + kSmemPad;
  static constexpr int kRowsPerResidue = kTileMn / 4;
  static constexpr int kTileFloats =
      kBlockK * kMnStride > kTileMn * kKStride ? kBlockK * kMnStride : kTileMn * kKStride;
  static_assert(kTileMn % kVec == 0, "the K layout's row permutation works on groups of 4 rows");
  static_assert(kMnStride % kVec == 0 && kKStride % kVec == 0, "shared rows must stay 16-byte aligned");
  static_assert(kKStride % 8 == 4, "K layout: consecutive rows must start in distinct bank pairs");
  __device__ static __forceinline__ int row_of(int mn) { return (mn % 4) * kRowsPerResidue + mn / 4; }
  __device__ static __forceinline__ int mn_of(int row) { return (row % kRowsPerResidue) * 4 + row / kRowsPerResidue; }
};

template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpsM_, int kWarpsN_, int kThreadM_, int kThreadN_,
          int kStages_, int kMinBlocksPerSm_>
struct TunedTiling {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreadM = kThreadM_, kThreadN = kThreadN_;
  static constexpr int kStages = kStages_, kMinBlocksPerSm = kMinBlocksPerSm_;

  static constexpr int kLanesM = 8, kLanesN = 4;
  static constexpr int kWarpM = kLanesM * kThreadM;  // warp tile
  static constexpr int kWarpN = kLanesN * kThreadN;
  static constexpr int kSubStrideM = kLanesM * kVec;  // distance between a thread's 4x4 sub-tiles
  static constexpr int kSubStrideN = kLanesN * kVec;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;

  using LayoutA = OperandLayout<kBlockM, kBlockK>;
  using LayoutB = OperandLayout<kBlockN, kBlockK>;
  static constexpr int kStageFloats = LayoutA::kTileFloats + LayoutB::kTileFloats;
  static constexpr std::size_t kSmemBytes = std::size_t(kStages) * kStageFloats * sizeof(float);

  static_assert(kLanesM * kLanesN == 32, "lane grid is one warp");
  static_assert(kWarpM * kWarpsM == kBlockM, "warp tiles must cover the block along m");
  static_assert(kWarpN * kWarpsN == kBlockN, "warp tiles must cover the block along n");
  static_assert(kThreadM % kVec == 0 && kThreadN % kVec == 0, "thread tile is made of 4x4 sub-tiles");
  static_assert(kBlockK % 8 == 0 && kBlockK % kKStep == 0, "k-tile: whole 16-byte chunks, whole k steps");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block exceeds sm_90's 227 KB");
};

// Copies the k-tile [k0, k0 + kBlockK) of one operand, seen as X(mn, k) with mn in [0, kTileMn) of
// this block, into its shared tile (layout by kCopy, see OperandLayout).
//   MN-contiguous source: X(mn, k) = src[mn + k * ld];   K-contiguous: X(mn, k) = src[k + mn * ld].
// `src` points at X(0, 0) of this block; mn_valid = rows of this block inside the matrix. Elements
// outside (mn_valid, k_total) are zero-filled (cp.async src-size 0 or short), never read.
template <int kTileMn, int kBlockK, int kThreads, OperandCopy kCopy>
struct TileCopier {
  using Layout = OperandLayout<kTileMn, kBlockK>;
  const float* src;
  int ld;
  int mn_valid;
  int k_total;

  __device__ __forceinline__ void operator()(float* tile, int k0, int tid) const {
    if constexpr (kCopy == OperandCopy::kMnVector) {
      // A warp moves 512 contiguous bytes of one k row (32 x 16 B).
      constexpr int kChunksPerRow = kTileMn / kVec;
      static_assert(kThreads % kChunksPerRow == 0, "threads must cover whole k rows");
      constexpr int kRowsPerPass = kThreads / kChunksPerRow;
      static_assert(kBlockK % kRowsPerPass == 0, "passes must cover the k-tile exactly");
      const int mn = (tid % kChunksPerRow) * kVec;
      const int row0 = tid / kChunksPerRow;
      const int left = mn_valid - mn;
      const int mn_bytes = left >= kVec ? 16 : (left > 0 ? 4 * left : 0);
#pragma unroll
      for (int pass = 0; pass < kBlockK / kRowsPerPass; ++pass) {
        const int kk = row0 + pass * kRowsPerPass;
        const int bytes = (k0 + kk < k_total) ? mn_bytes : 0;
        const float* g = bytes ? src + mn + static_cast<std::ptrdiff_t>(k0 + kk) * ld : src;
        cp_async_16(tile + kk * Layout::kMnStride + mn, g, bytes);
      }
    } else if constexpr (kCopy == OperandCopy::kMnScalar) {
      static_assert(kThreads % kTileMn == 0, "threads must cover whole k rows");
      constexpr int kRowsPerPass = kThreads / kTileMn;
      static_assert(kBlockK % kRowsPerPass == 0, "passes must cover the k-tile exactly");
      const int mn = tid % kTileMn;
      const int row0 = tid / kTileMn;
      const bool mn_in = mn < mn_valid;
#pragma unroll
      for (int pass = 0; pass < kBlockK / kRowsPerPass; ++pass) {
        const int kk = row0 + pass * kRowsPerPass;
        const bool in = mn_in && (k0 + kk < k_total);
        const float* g = in ? src + mn + static_cast<std::ptrdiff_t>(k0 + kk) * ld : src;
        cp_async_4(tile + kk * Layout::kMnStride + mn, g, in ? 4 : 0);
      }
    } else if constexpr (kCopy == OperandCopy::kKVector) {
      // 16-byte chunks of 4 consecutive k; a warp moves 8 columns x 64 contiguous bytes (kBlockK = 16),
      // into 8 consecutive shared rows.
      constexpr int kChunksPerRow = kBlockK / kVec;
      static_assert(kThreads % kChunksPerRow == 0, "threads must cover whole rows");
      constexpr int kRowsPerPass = kThreads / kChunksPerRow;
      static_assert(kTileMn % kRowsPerPass == 0, "passes must cover the tile exactly");
      const int kc = (tid % kChunksPerRow) * kVec;
      const int row0 = tid / kChunksPerRow;
      const int k_left = k_total - (k0 + kc);
      const int k_bytes = k_left >= kVec ? 16 : (k_left > 0 ? 4 * k_left : 0);
#pragma unroll
      for (int pass = 0; pass < kTileMn / kRowsPerPass; ++pass) {
        const int row = row0 + pass * kRowsPerPass;
        const int mn = Layout::mn_of(row);
        const int bytes = mn < mn_valid ? k_bytes : 0;
        const float* g = bytes ? src + (k0 + kc) + static_cast<std::ptrdiff_t>(mn) * ld : src;
        cp_async_16(tile + row * Layout::kKStride + kc, g, bytes);
      }
    } else {  // kKScalar: 4-byte copies, kBlockK consecutive lanes walk consecutive k of one column
      static_assert(kThreads % kBlockK == 0, "threads must cover whole rows");
      constexpr int kRowsPerPass = kThreads / kBlockK;
      static_assert(kTileMn % kRowsPerPass == 0, "passes must cover the tile exactly");
      const int kk = tid % kBlockK;
      const int row0 = tid / kBlockK;
      const bool k_in = k0 + kk < k_total;
#pragma unroll
      for (int pass = 0; pass < kTileMn / kRowsPerPass; ++pass) {
        const int row = row0 + pass * kRowsPerPass;
        const int mn = Layout::mn_of(row);
        const bool in = k_in && mn < mn_valid;
        const float* g = in ? src + (k0 + kk) + static_cast<std::ptrdiff_t>(mn) * ld : src;
        cp_async_4(tile + row * Layout::kKStride + kk, g, in ? 4 : 0);
      }
    }
  }
};

// A thread's fragment of one operand: frag[e][t] = X(first + (e / 4) * kSubStride + e % 4, kk + t)
// for its kThread elements e (sub-tile e / 4, element e % 4) and k steps t.
// MN layout: per k step and sub-tile one LDS.128 of 4 consecutive mn (fills column t).
template <class Layout, int kThread, int kSubStride>
__device__ __forceinline__ void load_fragment_mn(float (&frag)[kThread][kKStep], int t, const float* tile, int first,
                                                 int kk) {
#pragma unroll
  for (int sub = 0; sub < kThread / kVec; ++sub) {
    const float4 v = *reinterpret_cast<const float4*>(tile + kk * Layout::kMnStride + first + sub * kSubStride);
    frag[sub * kVec + 0][t] = v.x;
    frag[sub * kVec + 1][t] = v.y;
    frag[sub * kVec + 2][t] = v.z;
    frag[sub * kVec + 3][t] = v.w;
  }
}

// K layout: per element one LDS.64 of 2 consecutive k (fills both k steps).
template <class Layout, int kThread, int kSubStride>
__device__ __forceinline__ void load_fragment_k(float (&frag)[kThread][kKStep], const float* tile, int first, int kk) {
  static_assert(kKStep == 2, "the K layout loads 2 k per LDS.64");
  // row_of(first + sub * kSubStride + r) = r * kRowsPerResidue + first / 4 + sub * kSubStride / 4
  const float* base = tile + (first / 4) * Layout::kKStride + kk;
#pragma unroll
  for (int sub = 0; sub < kThread / kVec; ++sub)
#pragma unroll
    for (int r = 0; r < kVec; ++r) {
      const float2 v = *reinterpret_cast<const float2*>(
          base + (r * Layout::kRowsPerResidue + sub * (kSubStride / 4)) * Layout::kKStride);
      frag[sub * kVec + r][0] = v.x;
      frag[sub * kVec + r][1] = v.y;
    }
}

template <class T, OperandCopy kCopyA, OperandCopy kCopyB>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_tuned_kernel(int m, int n, int k, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc,
                       bool c_vector_ok) {
  extern __shared__ __align__(16) float smem[];
  const int tid = static_cast<int>(threadIdx.x);
  const int block_m0 = static_cast<int>(blockIdx.x) * T::kBlockM;
  const int block_n0 = static_cast<int>(blockIdx.y) * T::kBlockN;

  // op(A)(mn, k): kNoTrans -> A[mn + k lda] (MN-contiguous), kTrans -> A[k + mn lda] (K-contiguous).
  // op(B)(k, mn): kNoTrans -> B[k + mn ldb] (K-contiguous),  kTrans -> B[mn + k ldb] (MN-contiguous).
  constexpr bool kAK = k_layout(kCopyA);
  constexpr bool kBK = k_layout(kCopyB);
  const TileCopier<T::kBlockM, T::kBlockK, T::kThreads, kCopyA> copy_a{
      A + (kAK ? static_cast<std::ptrdiff_t>(block_m0) * lda : block_m0), lda, m - block_m0, k};
  const TileCopier<T::kBlockN, T::kBlockK, T::kThreads, kCopyB> copy_b{
      B + (kBK ? static_cast<std::ptrdiff_t>(block_n0) * ldb : block_n0), ldb, n - block_n0, k};

  auto stage_a = [&](int stage) { return smem + stage * T::kStageFloats; };
  auto stage_b = [&](int stage) { return smem + stage * T::kStageFloats + T::LayoutA::kTileFloats; };

  const int k_tiles = (k + T::kBlockK - 1) / T::kBlockK;

  // Prologue: k-tiles 0 .. kStages-2 in flight, one commit group each (empty groups keep the count).
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < k_tiles) {
      copy_a(stage_a(s), s * T::kBlockK, tid);
      copy_b(stage_b(s), s * T::kBlockK, tid);
    }
    cp_async_commit();
  }

  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % T::kWarpsM, warp_n = warp / T::kWarpsM;
  const int a_frag = warp_m * T::kWarpM + (lane % T::kLanesM) * kVec;  // first row of sub-tile 0
  const int b_frag = warp_n * T::kWarpN + (lane / T::kLanesM) * kVec;  // first column of sub-tile 0

  float acc[T::kThreadM][T::kThreadN];
#pragma unroll
  for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = 0.f;

  int read_stage = 0;
  int write_stage = T::kStages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has landed once at most kStages-2 younger groups are pending; the barrier also tells
    // every thread that the stage written next (read in iteration kt-1) is no longer being read.
    cp_async_wait<T::kStages - 2>();
    __syncthreads();
    const int next = kt + T::kStages - 1;
    if (next < k_tiles) {
      copy_a(stage_a(write_stage), next * T::kBlockK, tid);
      copy_b(stage_b(write_stage), next * T::kBlockK, tid);
    }
    cp_async_commit();

    const float* as = stage_a(read_stage);
    const float* bs = stage_b(read_stage);
#pragma unroll
    for (int kk = 0; kk < T::kBlockK; kk += kKStep) {
      // K layout: both k steps in one LDS.64 per element; MN layout: one k step at a time (LDS.128),
      // which keeps the live fragment registers (and the 128-register cap) in check.
      float a[T::kThreadM][kKStep], b[T::kThreadN][kKStep];
      if constexpr (kAK) load_fragment_k<typename T::LayoutA, T::kThreadM, T::kSubStrideM>(a, as, a_frag, kk);
      if constexpr (kBK) load_fragment_k<typename T::LayoutB, T::kThreadN, T::kSubStrideN>(b, bs, b_frag, kk);
#pragma unroll
      for (int t = 0; t < kKStep; ++t) {
        if constexpr (!kAK) load_fragment_mn<typename T::LayoutA, T::kThreadM, T::kSubStrideM>(a, t, as, a_frag, kk + t);
        if constexpr (!kBK) load_fragment_mn<typename T::LayoutB, T::kThreadN, T::kSubStrideN>(b, t, bs, b_frag, kk + t);
#pragma unroll
        for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
          for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = fmaf(a[i][t], b[j][t], acc[i][j]);
      }
    }
    read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();  // only empty groups can be pending here; leave none behind

  // Epilogue: each 4x4 sub-tile column is 4 consecutive rows of a C column: one 16-byte access when
  // C allows it (ldc % 4 == 0, 16-byte aligned), else element by element. beta == 0: C is not read.
#pragma unroll
  for (int i4 = 0; i4 < T::kThreadM / kVec; ++i4) {
    const int row = block_m0 + a_frag + i4 * T::kSubStrideM;
#pragma unroll
    for (int j = 0; j < T::kThreadN; ++j) {
      const int col = block_n0 + b_frag + (j / kVec) * T::kSubStrideN + j % kVec;
      if (col >= n || row >= m) continue;
      float* c = C + static_cast<std::ptrdiff_t>(col) * ldc + row;
      float4 v = make_float4(alpha * acc[i4 * kVec + 0][j], alpha * acc[i4 * kVec + 1][j],
                             alpha * acc[i4 * kVec + 2][j], alpha * acc[i4 * kVec + 3][j]);
      if (c_vector_ok && row + kVec <= m) {
        if (beta != 0.f) {
          const float4 old = *reinterpret_cast<const float4*>(c);
          v.x = fmaf(beta, old.x, v.x);
          v.y = fmaf(beta, old.y, v.y);
          v.z = fmaf(beta, old.z, v.z);
          v.w = fmaf(beta, old.w, v.w);
        }
        *reinterpret_cast<float4*>(c) = v;
      } else {
#pragma unroll
        for (int r = 0; r < kVec; ++r) {
          if (row + r < m) c[r] = beta != 0.f ? fmaf(beta, c[r], component(v, r)) : component(v, r);
        }
      }
    }
  }
}

constexpr int kMaxDevices = 64;

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class T, OperandCopy kCopyA, OperandCopy kCopyB>
cudaError_t launch_tuned_with(const SgemmArgs& a, cudaStream_t stream) {
  auto kernel = sgemm_tuned_kernel<T, kCopyA, kCopyB>;
  // Above 48 KB a block needs the opt-in, once per device: not on every call, where its host time
  // would sit between the caller's start event and the kernel.
  static std::array<std::once_flag, kMaxDevices> opted_in;
  static std::array<cudaError_t, kMaxDevices> opt_in_status;
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
  std::call_once(opted_in[device], [&] {
    opt_in_status[device] =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::kSmemBytes));
  });
  if (opt_in_status[device] != cudaSuccess) return opt_in_status[device];
  const dim3 grid((a.m + T::kBlockM - 1) / T::kBlockM, (a.n + T::kBlockN - 1) / T::kBlockN);
  const bool c_vector_ok = aligned16(a.C) && a.ldc % kVec == 0;
  kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta,
                                                        a.C, a.ldc, c_vector_ok);
  return cudaGetLastError();
}

// Picks the copy path of each operand from the transposition and the alignment of its storage.
template <class T>
cudaError_t launch_tuned(const SgemmArgs& a, cudaStream_t stream) {
  if (a.n > 65535 * T::kBlockN) return cudaErrorInvalidValue;  // grid.y limit
  const bool a_vector = aligned16(a.A) && a.lda % kVec == 0;
  const bool b_vector = aligned16(a.B) && a.ldb % kVec == 0;
  const OperandCopy copy_a = a.transa == Trans::kTrans ? (a_vector ? OperandCopy::kKVector : OperandCopy::kKScalar)
                                                       : (a_vector ? OperandCopy::kMnVector : OperandCopy::kMnScalar);
  const OperandCopy copy_b = a.transb == Trans::kNoTrans ? (b_vector ? OperandCopy::kKVector : OperandCopy::kKScalar)
                                                         : (b_vector ? OperandCopy::kMnVector : OperandCopy::kMnScalar);
  auto with_b = [&](auto copy_a_tag) -> cudaError_t {
    constexpr OperandCopy ca = decltype(copy_a_tag)::value;
    switch (copy_b) {
      case OperandCopy::kMnVector: return launch_tuned_with<T, ca, OperandCopy::kMnVector>(a, stream);
      case OperandCopy::kMnScalar: return launch_tuned_with<T, ca, OperandCopy::kMnScalar>(a, stream);
      case OperandCopy::kKVector: return launch_tuned_with<T, ca, OperandCopy::kKVector>(a, stream);
      case OperandCopy::kKScalar: return launch_tuned_with<T, ca, OperandCopy::kKScalar>(a, stream);
    }
    return cudaErrorInvalidValue;
  };
  switch (copy_a) {
    case OperandCopy::kMnVector: return with_b(std::integral_constant<OperandCopy, OperandCopy::kMnVector>{});
    case OperandCopy::kMnScalar: return with_b(std::integral_constant<OperandCopy, OperandCopy::kMnScalar>{});
    case OperandCopy::kKVector: return with_b(std::integral_constant<OperandCopy, OperandCopy::kKVector>{});
    case OperandCopy::kKScalar: return with_b(std::integral_constant<OperandCopy, OperandCopy::kKScalar>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuprobe::kernels::detail
