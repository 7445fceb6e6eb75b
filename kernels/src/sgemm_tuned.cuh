// The tuned sm_90 SGEMM kernel template (FP32 FFMA only; no TF32, no tensor cores).
//
// One thread block computes a kBlockM x kBlockN tile of C. Shapes, in the notation of the CUTLASS
// CuTe tutorials, (extent):(stride), column-major C:
//
//   C block       (kBlockM, kBlockN) : (1, ldc)         m contiguous in global memory
//   op(A) slice   (kBlockM, kBlockK)                    one k-tile of the block row of op(A)
//   op(B) slice   (kBlockK, kBlockN)                    one k-tile of the block column of op(B)
//   As (shared)   (kBlockK, kBlockM) : (kBlockM + pad, 1) per stage: rows of m, padded by 16 or 32 bytes
//   Bs (shared)   (kBlockK, kBlockN) : (kBlockN + pad, 1) per stage: rows of n (pad: see smem_pad)
//   warps         (kWarpsM, kWarpsN) : (1, kWarpsM)     each owns a kWarpM x kWarpN tile of C
//   lanes         (8, 4) : (1, 8)                       lane_m = lane % 8, lane_n = lane / 8
//   thread tile   (kThreadM, kThreadN) = (kThreadM/4 x kThreadN/4) sub-tiles of 4 x 4; sub-tile
//                 (i, j) of lane (lm, ln) starts at warp-tile row lm*4 + i*32, column ln*4 + j*16
//
// Both shared tiles keep m (or n) contiguous, so the inner product reads each operand with 128-bit
// loads (LDS.128) of 4 consecutive rows or columns, whatever the transposition in global memory.
// Per k step a warp's A load covers 8 distinct 16-byte vectors (lane_m) = 128 contiguous bytes and
// its B load 4 distinct vectors (lane_n), each shared by the other lanes as a broadcast: one
// shared-memory wavefront each.
//
// Global -> shared copies, kStages deep (one barrier per k-tile):
//   operand stored MN-contiguous (A with kNoTrans, B with kTrans), ld % 4 == 0 and 16-byte aligned
//       -> kMnVector: 16-byte cp.async.cg, a warp moves 512 contiguous bytes of one k row;
//   same, but unaligned -> kMnScalar: 4-byte cp.async.ca, a warp moves 128 contiguous bytes;
//   operand stored K-contiguous (A with kTrans, B with kNoTrans), ld even and 8-byte aligned
//       -> kKRegister: register staging. 8-byte loads (LDG.64, 2 consecutive k of 4 columns per
//       thread) for the k-tile kStages - 1 ahead are issued at the top of an iteration and stored
//       transposed (STS.128, 4 columns x 1 k) halfway through its inner product (docs/perf/sgemm.md;
//       used by the 8 x 16 tilings of lab/sgemm_variants and its ours_tuned_kregister);
//   same, otherwise (and always where launch_tuned is asked for KContiguousPath::kCpAsyncScalar, as
//       the default 8 x 8 tiling is) -> kKScalar: 4-byte cp.async that
//       transposes on the way: a warp reads 4 columns x 8 consecutive k (four full 32-byte sectors)
//       and writes them as 8 shared rows x 4 elements; the row stride kBlockM + 4 = 4 (mod 32) banks
//       puts those 32 words in 32 distinct banks.
//       Whole tiles take an unpredicated form of that copy (one pointer per column pass).
// Block -> C tile: kGroupM == 0 launches a 2-D grid, blockIdx.x = M tile, blockIdx.y = N tile (the
// scheduler walks down whole columns of M tiles); kGroupM > 0 launches a 1-D grid walked in groups
// of kGroupM M-tile rows, column by column inside a group (sgemm_swizzle.cuh: the L2/DRAM arithmetic).
//
// Out-of-range elements (edge tiles, the k remainder) are zero-filled (cp.async's src-size operand,
// or zeros in the staging registers), so the inner loop has no bounds checks and edge blocks stay correct.
//
// Tried and dropped (docs/perf/sgemm.md): K-contiguous operands by 16-byte cp.async into a K-major
// shared layout read with LDS.64; NN fell from 43.0 to 36.7 TFLOP/s.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sgemm_internal.cuh"
#include "sgemm_swizzle.cuh"

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
__device__ __forceinline__ void cp_async_4_full(float* smem, const float* gmem) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPendingGroups>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPendingGroups) : "memory");
}

// ---- mbarriers in shared memory (sm_80+; kMbarrier pipeline) -----------------------------------
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned expected_arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(expected_arrivals)
               : "memory");
}
// One of `bar`'s expected arrivals, made when every cp.async this thread has issued so far has landed
// (.noinc: the asynchronous arrival counts against the expected count).
__device__ __forceinline__ void cp_async_mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// Release semantics: this thread's earlier shared-memory reads happen before the phase completes.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(
                   shared_address(bar))
               : "memory");
}
// Waits (acquire) until the phase of parity `parity` has completed. Valid while `bar` is at most one
// phase past it, which the pipeline's ordering guarantees (see the kMbarrier loop).
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ float component(const float4& v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

enum class OperandCopy { kMnVector, kMnScalar, kKScalar, kKRegister };

constexpr int kVec = 4;  // floats per 128-bit access
// Floats added to every shared row (a multiple of 4 keeps rows 16-byte aligned). The transposing
// 4-byte cp.async (kKScalar) needs a row stride of 4 (mod 32) banks, the register-staged transpose
// (kKRegister, STS.128 of 4 columns x 1 k) one of 8 (mod 32): see TileCopier.
constexpr int smem_pad(OperandCopy copy) { return copy == OperandCopy::kKRegister ? 8 : 4; }
constexpr int kMaxSmemPad = 8;

// kGroupM: 0 = plain 2-D rasterization; G > 0 = grouped rasterization with G M-tile rows per group.
// G is part of the tiling (compile time) rather than a host-computed launch argument because
//  - the plain kernels stay exactly as they were (no extra argument, same SASS), so the two mappings
//    are timed side by side with nothing else changed;
//  - the best G depends on the number of co-resident blocks (about sqrt(2 x SMs): 16 on the H100
//    SXM's 132 SMs, 15 on the PCIe card's 114), not on the GEMM shape, so there is nothing to compute
//    per call; a grid of fewer than G M-tiles is one group, i.e. the plain walk, which is the best
//    order there anyway.
// (The two divisions of the mapping, by G x n_tiles and by the group's height, are by runtime values
// either way: about 100 instructions once per block, against about 2550 per k-tile of 32.)
//
// StageSync: how the threads of a block agree that a stage has landed and that it may be overwritten.
//   kBlockBarrier  one __syncthreads per k-tile; k-tiles kt+1 .. kt+kStages-1 in flight while kt is
//                  multiplied. Every warp waits for the block's slowest at every k-tile.
//   kMbarrier per stage a "full" mbarrier (each thread's cp.async arrive on it when they
//                  land: cp.async.mbarrier.arrive.noinc) and an "empty" one (each warp arrives once it
//                  has read the stage). Only k-tile kt+1 is in flight while kt is multiplied (one k-tile
//                  is ~11000 cycles per SMSP on the H100, far above the L2/DRAM latency), which leaves
//                  one stage of slack: a warp may run a whole k-tile ahead of the block's slowest before
//                  it waits. ncu at NN 4096 (docs/perf/sgemm.md) had the barrier version's warps
//                  0.37 per issued instruction at the barrier (cuBLAS's kernel 0.10).
enum class StageSync { kBlockBarrier, kMbarrier };
// FfmaOrder: the order of a thread's kThreadM x kThreadN FFMAs per k step. kRowMajor: row by row,
// consecutive FFMAs share op(A)'s element; kSerpentine: odd rows walk right to left, so the FFMA
// after a row's last one shares op(B)'s element too (CUTLASS's SIMT thread MMA walks this way for
// the register reuse caches).
enum class FfmaOrder { kRowMajor, kSerpentine };
// CopyIssue (kBlockBarrier pipeline, cp.async paths): where in its iteration a thread issues the
// copies of the k-tile kStages - 1 ahead.
//   kTileStart            right after the barrier, before the first fragment loads (the copies are
//                         asm with a memory clobber, so nothing in shared memory moves above them:
//                         the first LDS.128 and their latency come after ~130 copy instructions);
//   kAfterFirstFragments  after k step 0's fragment loads, so that their latency hides behind the
//                         copy instructions;
//   kSplitOperands        op(A)'s copies there, op(B)'s halfway through the k-tile: half the
//                         burst of copy instructions after the barrier.
enum class CopyIssue { kTileStart, kAfterFirstFragments, kSplitOperands };

template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpsM_, int kWarpsN_, int kThreadM_, int kThreadN_,
          int kStages_, int kMinBlocksPerSm_, int kGroupM_ = 0, StageSync kSync_ = StageSync::kBlockBarrier,
          FfmaOrder kFfmaOrder_ = FfmaOrder::kRowMajor, CopyIssue kCopyIssue_ = CopyIssue::kTileStart>
struct TunedTiling {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreadM = kThreadM_, kThreadN = kThreadN_;
  static constexpr int kStages = kStages_, kMinBlocksPerSm = kMinBlocksPerSm_;
  static constexpr int kGroupM = kGroupM_;
  static constexpr StageSync kSync = kSync_;
  static constexpr FfmaOrder kFfmaOrder = kFfmaOrder_;
  static constexpr CopyIssue kCopyIssue = kCopyIssue_;

  static constexpr int kLanesM = 8, kLanesN = 4;
  static constexpr int kWarpM = kLanesM * kThreadM;  // warp tile
  static constexpr int kWarpN = kLanesN * kThreadN;
  static constexpr int kSubStrideM = kLanesM * kVec;  // distance between a thread's 4x4 sub-tiles
  static constexpr int kSubStrideN = kLanesN * kVec;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;

  // Shared row strides depend on each operand's copy path (TileCopier::kStride); a stage is sized
  // for the widest padding so that every path of a tiling uses one shared-memory size.
  static constexpr int kStageOffsetB = kBlockK * (kBlockM + kMaxSmemPad);  // floats, from the stage start
  static constexpr int kStageFloats = kBlockK * (kBlockM + kBlockN + 2 * kMaxSmemPad);
  static constexpr std::size_t kSmemBytes = std::size_t(kStages) * kStageFloats * sizeof(float);

  static_assert(kLanesM * kLanesN == 32, "lane grid is one warp");
  static_assert(kWarpM * kWarpsM == kBlockM, "warp tiles must cover the block along m");
  static_assert(kWarpN * kWarpsN == kBlockN, "warp tiles must cover the block along n");
  static_assert(kThreadM % kVec == 0 && kThreadN % kVec == 0, "thread tile is made of 4x4 sub-tiles");
  static_assert(kBlockK % 8 == 0, "K-contiguous copies move groups of 8 consecutive k (one 32-byte sector)");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kBlockM % 32 == 0 && kBlockN % 32 == 0, "row strides mod 32 banks are set by the padding");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block exceeds sm_90's 227 KB");
  static_assert(kGroupM >= 0, "kGroupM: 0 (plain 2-D grid) or M-tile rows per group");
  static_assert(kSync == StageSync::kBlockBarrier || kStages >= 3,
                "the mbarrier pipeline keeps one stage of slack beside the one in flight and the one read");
  static_assert(kCopyIssue == CopyIssue::kTileStart || kSync == StageSync::kBlockBarrier,
                "where the copies are issued is a choice of the block-barrier pipeline");
};

// Copies the k-tile [k0, k0 + kBlockK) of one operand, seen as X(mn, k) with mn in [0, kTileMn) of
// this block, into a shared tile (kBlockK, kTileMn) : (kStride, 1), kStride = kTileMn + smem_pad(kCopy).
//   MN-contiguous source: X(mn, k) = src[mn + k * ld];   K-contiguous: X(mn, k) = src[k + mn * ld].
// `src` points at X(0, 0) of this block; mn_valid = rows of this block inside the matrix.
// Two steps: fetch() starts the copy of a k-tile, store() completes it into shared memory. The
// cp.async paths do everything in fetch() (store() is empty); kKRegister loads into registers
// (Staging) in fetch() and writes shared memory in store(), so the kernel calls fetch() before the
// current tile's inner product and store() halfway through it, hiding the global latency behind the
// FFMAs.
template <int kTileMn, int kBlockK, int kThreads, OperandCopy kCopy>
struct TileCopier {
  static constexpr int kStride = kTileMn + smem_pad(kCopy);
  static_assert(kStride % kVec == 0, "shared rows must stay 16-byte aligned");

  // kKRegister: a warp moves 16 columns x 16 k; lane (g, kp) = (lane % 4, lane / 4) loads k pair
  // [2 kp, 2 kp + 2) of columns 4 g .. 4 g + 3 (4 LDG.64; per instruction the warp reads 4 columns
  // x 64 contiguous bytes = 8 full sectors) and stores them as 2 k rows x 4 columns (2 STS.128).
  // An STS.128 is served 8 lanes at a time: lanes 0-7 are g = 0..3, kp = 0..1, i.e. banks
  // 4 g + (2 kp) x kStride = 4 g + 16 kp (mod 32) with kStride = 8 (mod 32): 32 distinct banks.
  static constexpr int kRegColumnsPerWarp = 16;
  static constexpr int kRegColumnsPerPass = kRegColumnsPerWarp * (kThreads / 32);
  static constexpr int kRegPasses = kCopy == OperandCopy::kKRegister ? kTileMn / kRegColumnsPerPass : 0;
  struct Empty {};
  struct Registers {
    float2 v[kRegPasses > 0 ? kRegPasses : 1][kVec];  // [pass][column]: (k, k + 1) of one column
  };
  using Staging = std::conditional_t<kCopy == OperandCopy::kKRegister, Registers, Empty>;

  const float* src;
  int ld;
  int mn_valid;
  int k_total;

  __device__ __forceinline__ void fetch(float* tile, int k0, int tid, Staging& staging) const {
    if constexpr (kCopy == OperandCopy::kMnVector) {
      constexpr int kChunksPerRow = kTileMn / kVec;
      static_assert(kTileMn % kVec == 0 && kThreads % kChunksPerRow == 0, "threads must cover whole k rows");
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
        cp_async_16(tile + kk * kStride + mn, g, bytes);
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
        cp_async_4(tile + kk * kStride + mn, g, in ? 4 : 0);
      }
    } else if constexpr (kCopy == OperandCopy::kKScalar) {
      // Lane groups of 8 walk 8 consecutive k of one column: a warp reads 4 columns x 8 k (four full
      // 32-byte sectors) and writes 8 shared rows x 4 elements; kStride = 4 (mod 32) banks puts
      // those 32 words in 32 distinct banks.
      static_assert(kStride % 32 == 4, "transposing 4-byte copies need row stride = 4 (mod 32) banks");
      constexpr int kKGroup = 8;
      constexpr int kColumnsPerPass = kThreads / kKGroup;
      static_assert(kBlockK % kKGroup == 0, "K-contiguous copies move groups of 8 consecutive k");
      static_assert(kThreads % kKGroup == 0 && kTileMn % kColumnsPerPass == 0, "passes must cover the tile");
      const int kk_lo = tid % kKGroup;
      const int mn0 = tid / kKGroup;
      if (mn_valid >= kTileMn && k0 + kBlockK <= k_total) {
        // Whole tile inside the matrix (every tile of an interior block but the k remainder): no
        // predicates, one pointer per column pass, the k offsets folded into the instructions.
        const float* column = src + (k0 + kk_lo) + static_cast<std::ptrdiff_t>(mn0) * ld;
        const std::ptrdiff_t pass_step = static_cast<std::ptrdiff_t>(kColumnsPerPass) * ld;
#pragma unroll
        for (int mp = 0; mp < kTileMn / kColumnsPerPass; ++mp) {
#pragma unroll
          for (int kp = 0; kp < kBlockK / kKGroup; ++kp)
            cp_async_4_full(tile + (kk_lo + kp * kKGroup) * kStride + mn0 + mp * kColumnsPerPass,
                            column + kp * kKGroup);
          column += pass_step;
        }
        return;
      }
#pragma unroll
      for (int kp = 0; kp < kBlockK / kKGroup; ++kp) {
        const int kk = kk_lo + kp * kKGroup;
        const bool k_in = k0 + kk < k_total;
#pragma unroll
        for (int mp = 0; mp < kTileMn / kColumnsPerPass; ++mp) {
          const int mn = mn0 + mp * kColumnsPerPass;
          const bool in = k_in && mn < mn_valid;
          const float* g = in ? src + (k0 + kk) + static_cast<std::ptrdiff_t>(mn) * ld : src;
          cp_async_4(tile + kk * kStride + mn, g, in ? 4 : 0);
        }
      }
    } else {  // kKRegister: needs ld even and src 8-byte aligned (launch_tuned checks)
      static_assert(kBlockK == 2 * 8, "a warp's 8 k pairs (lane / 4) cover the k-tile");
      static_assert(kStride % 32 == 8, "STS.128 of 2 k rows x 16 columns per 8 lanes need stride = 8 (mod 32)");
      static_assert(kRegPasses >= 1 && kTileMn % kRegColumnsPerPass == 0, "passes must cover the tile");
      const int lane = tid % 32;
      const int k_pair = 2 * (lane / 4);
      const int column0 = (tid / 32) * kRegColumnsPerWarp + (lane % 4) * kVec;
      if (mn_valid >= kTileMn && k0 + kBlockK <= k_total) {
        const float* p = src + (k0 + k_pair) + static_cast<std::ptrdiff_t>(column0) * ld;
#pragma unroll
        for (int pass = 0; pass < kRegPasses; ++pass)
#pragma unroll
          for (int c = 0; c < kVec; ++c)
            staging.v[pass][c] = *reinterpret_cast<const float2*>(
                p + static_cast<std::ptrdiff_t>(pass * kRegColumnsPerPass + c) * ld);
        return;
      }
      // Edge tile: element by element, zeros outside the matrix (as cp.async's zero fill).
#pragma unroll
      for (int pass = 0; pass < kRegPasses; ++pass)
#pragma unroll
        for (int c = 0; c < kVec; ++c) {
          const int mn = column0 + pass * kRegColumnsPerPass + c;
          const float* p = src + (k0 + k_pair) + static_cast<std::ptrdiff_t>(mn) * ld;
          const bool mn_in = mn < mn_valid;
          staging.v[pass][c].x = (mn_in && k0 + k_pair < k_total) ? p[0] : 0.f;
          staging.v[pass][c].y = (mn_in && k0 + k_pair + 1 < k_total) ? p[1] : 0.f;
        }
    }
  }

  __device__ __forceinline__ void store(float* tile, int tid, const Staging& staging) const {
    if constexpr (kCopy == OperandCopy::kKRegister) {
      const int lane = tid % 32;
      const int k_pair = 2 * (lane / 4);
      const int column0 = (tid / 32) * kRegColumnsPerWarp + (lane % 4) * kVec;
#pragma unroll
      for (int pass = 0; pass < kRegPasses; ++pass) {
        const float2* v = staging.v[pass];
        float* row = tile + k_pair * kStride + column0 + pass * kRegColumnsPerPass;
        *reinterpret_cast<float4*>(row) = make_float4(v[0].x, v[1].x, v[2].x, v[3].x);
        *reinterpret_cast<float4*>(row + kStride) = make_float4(v[0].y, v[1].y, v[2].y, v[3].y);
      }
    }
  }
};

struct BlockOrigin {
  int m0, n0;  // first row and first column of this block's C tile
};

// This block's C tile: blockIdx.x/y (kGroupM == 0, 2-D grid) or the grouped walk of the 1-D grid.
// The kernel calls it twice, for the copies and again for the epilogue: ptxas recomputes a
// blockIdx-based origin at no cost where it needs it, but a grouped origin (a division by the
// group's height) computed once would stay live across the k loop, and in the 128-register NN
// kernel those 2 registers spilled 20 bytes. %ctaid.x is read by volatile asm so that the two calls
// are not merged into one live value.
template <class T>
__device__ __forceinline__ BlockOrigin block_origin(int m, int n) {
  if constexpr (T::kGroupM > 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(id));
    const TileCoord t =
        grouped_tile<T::kGroupM>(static_cast<int>(id), (m - 1) / T::kBlockM + 1, (n - 1) / T::kBlockN + 1);
    return BlockOrigin{t.m_tile * T::kBlockM, t.n_tile * T::kBlockN};
  } else {
    return BlockOrigin{static_cast<int>(blockIdx.x) * T::kBlockM, static_cast<int>(blockIdx.y) * T::kBlockN};
  }
}

// acc += the k-tile's op(A) slice x op(B) slice, from shared memory: per k step kThreadM / 4 + kThreadN / 4
// LDS.128 and kThreadM x kThreadN FFMAs. `as` / `bs` point at this thread's first sub-tile in the
// stage. at_half_tile(kk) is called once, before k step kBlockK / 2 (the register-staged copies store
// their next k-tile there; see the kBlockBarrier loop); after_first_fragments() once, after k step 0's
// fragment loads and before its FFMAs (CopyIssue::kAfterFirstFragments / kSplitOperands).
template <class T, class CopierA, class CopierB, class AtHalfTile, class AfterFirstFragments>
__device__ __forceinline__ void multiply_k_tile(const float* as, const float* bs, float (&acc)[T::kThreadM][T::kThreadN],
                                                AtHalfTile&& at_half_tile, AfterFirstFragments&& after_first_fragments) {
#pragma unroll
  for (int kk = 0; kk < T::kBlockK; ++kk) {
    if (kk == T::kBlockK / 2) at_half_tile(kk);
    float4 a4[T::kThreadM / kVec], b4[T::kThreadN / kVec];
#pragma unroll
    for (int i = 0; i < T::kThreadM / kVec; ++i)
      a4[i] = *reinterpret_cast<const float4*>(as + kk * CopierA::kStride + i * T::kSubStrideM);
#pragma unroll
    for (int j = 0; j < T::kThreadN / kVec; ++j)
      b4[j] = *reinterpret_cast<const float4*>(bs + kk * CopierB::kStride + j * T::kSubStrideN);
    if (kk == 0) after_first_fragments();
#pragma unroll
    for (int i = 0; i < T::kThreadM; ++i) {
      const float a = component(a4[i / kVec], i % kVec);
      if constexpr (T::kFfmaOrder == FfmaOrder::kSerpentine) {
#pragma unroll
        for (int jj = 0; jj < T::kThreadN; ++jj) {
          const int j = i % 2 == 1 ? T::kThreadN - 1 - jj : jj;
          acc[i][j] = fmaf(a, component(b4[j / kVec], j % kVec), acc[i][j]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = fmaf(a, component(b4[j / kVec], j % kVec), acc[i][j]);
      }
    }
  }
}

// kSplitK: the k-tiles are divided among the gridDim.z blocks of a thread-block cluster of (1, 1, gridDim.z)
// (sm_90), each multiplying a contiguous share; the partial tiles are summed through distributed shared
// memory in rank order (deterministic: no atomics, no workspace) and each rank writes 1 / gridDim.z of the
// C tile. For problems whose C has too few tiles to fill the GPU (docs/perf/sgemm.md, the dispatcher).
template <class T, OperandCopy kCopyA, OperandCopy kCopyB, bool kSplitK = false>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_tuned_kernel(int m, int n, int k, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc,
                       bool c_vector_ok) {
  extern __shared__ __align__(16) float smem[];
  const int tid = static_cast<int>(threadIdx.x);
  static_assert(!kSplitK || T::kSync == StageSync::kBlockBarrier, "split-k: the block-barrier pipeline only");
  static_assert(!kSplitK || T::kBlockM * T::kBlockN <= T::kStages * T::kStageFloats,
                "split-k: the partial C tile is reduced through the pipeline's shared memory");
  const BlockOrigin origin = block_origin<T>(m, n);  // the epilogue asks again (see block_origin)
  const int block_m0 = origin.m0, block_n0 = origin.n0;

  // op(A)(mn, k): kNoTrans -> A[mn + k lda] (MN-contiguous), kTrans -> A[k + mn lda] (K-contiguous).
  // op(B)(k, mn): kNoTrans -> B[k + mn ldb] (K-contiguous),  kTrans -> B[mn + k ldb] (MN-contiguous).
  constexpr bool kAKContiguous = kCopyA == OperandCopy::kKScalar || kCopyA == OperandCopy::kKRegister;
  constexpr bool kBKContiguous = kCopyB == OperandCopy::kKScalar || kCopyB == OperandCopy::kKRegister;
  using CopierA = TileCopier<T::kBlockM, T::kBlockK, T::kThreads, kCopyA>;
  using CopierB = TileCopier<T::kBlockN, T::kBlockK, T::kThreads, kCopyB>;
  const CopierA copy_a{A + (kAKContiguous ? static_cast<std::ptrdiff_t>(block_m0) * lda : block_m0), lda,
                       m - block_m0, k};
  const CopierB copy_b{B + (kBKContiguous ? static_cast<std::ptrdiff_t>(block_n0) * ldb : block_n0), ldb,
                       n - block_n0, k};
  static_assert(T::kBlockK * CopierA::kStride <= T::kStageOffsetB, "op(A) tile overlaps op(B)'s");
  static_assert(T::kStageOffsetB + T::kBlockK * CopierB::kStride <= T::kStageFloats, "op(B) tile overflows a stage");
  typename CopierA::Staging staging_a;  // registers of the next k-tile (kKRegister only; else empty)
  typename CopierB::Staging staging_b;

  auto stage_a = [&](int stage) { return smem + stage * T::kStageFloats; };
  auto stage_b = [&](int stage) { return smem + stage * T::kStageFloats + T::kStageOffsetB; };

  // This block's k-tiles: [kt0, kt0 + k_tiles) (all of them without split-k).
  int kt0 = 0, k_tiles = (k + T::kBlockK - 1) / T::kBlockK;
  if constexpr (kSplitK) {
    const int per_split = (k_tiles + static_cast<int>(gridDim.z) - 1) / static_cast<int>(gridDim.z);
    kt0 = static_cast<int>(blockIdx.z) * per_split;
    k_tiles = max(0, min(k_tiles - kt0, per_split));
  }
  float acc[T::kThreadM][T::kThreadN];
  int a_frag, b_frag;  // this thread's first row of op(A) / column of op(B) in a stage (sub-tile 0)
  // After each pipeline's prologue, so that the copies are issued first, as in the kernel before
  // the mbarrier pipeline was added (the block-barrier kernels kept their code size; their machine
  // code differs only in register allocation: docs/perf/sgemm.md).
  auto start_accumulating = [&] {
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::kWarpsM, warp_n = warp / T::kWarpsM;
    a_frag = warp_m * T::kWarpM + (lane % T::kLanesM) * kVec;
    b_frag = warp_n * T::kWarpN + (lane / T::kLanesM) * kVec;
#pragma unroll
    for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
      for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = 0.f;
  };

  if constexpr (T::kSync == StageSync::kMbarrier) {
    static_assert(kCopyA != OperandCopy::kKRegister && kCopyB != OperandCopy::kKRegister,
                  "the mbarrier pipeline tracks cp.async copies only (register staging stores with st.shared)");
    // full[s]: one arrival per thread (its cp.async into stage s landed); empty[s]: one per warp (it
    // has read stage s). Use u of stage s (k-tile u * kStages + s) is phase u of both.
    __shared__ std::uint64_t full[T::kStages], empty[T::kStages];
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < T::kStages; ++s) {
        mbarrier_init(&full[s], T::kThreads);
        mbarrier_init(&empty[s], T::kThreads / 32);
      }
    }
    __syncthreads();  // the initialized barriers are visible to the block
    if (k_tiles > 0) {
      copy_a.fetch(stage_a(0), 0, tid, staging_a);
      copy_b.fetch(stage_b(0), 0, tid, staging_b);
      cp_async_mbarrier_arrive(&full[0]);
    }
    start_accumulating();
    // Ordering that keeps every wait within one phase of its barrier: a warp reads k-tile kt only
    // after full[kt % S] completed, i.e. after every thread issued kt's copies, each of which first
    // waited for all warps to have read k-tile kt - S (empty). So no warp can arrive on empty[s] for
    // k-tile kt while another still owes its arrival for kt - S, and nobody waits on a phase more than
    // one behind the barrier's.
    int read_stage = 0, read_phase = 0;    // stage and phase of k-tile kt
    int write_stage = 1, write_phase = 0;  // stage and phase of k-tile kt + 1
    for (int kt = 0; kt < k_tiles; ++kt) {
      if (kt + 1 < k_tiles) {
        // Stage write_stage last held k-tile kt + 1 - S: all warps must have read it.
        if (kt + 1 >= T::kStages) mbarrier_wait(&empty[write_stage], write_phase ^ 1);
        copy_a.fetch(stage_a(write_stage), (kt + 1) * T::kBlockK, tid, staging_a);
        copy_b.fetch(stage_b(write_stage), (kt + 1) * T::kBlockK, tid, staging_b);
        cp_async_mbarrier_arrive(&full[write_stage]);
      }
      mbarrier_wait(&full[read_stage], read_phase);
      multiply_k_tile<T, CopierA, CopierB>(stage_a(read_stage) + a_frag, stage_b(read_stage) + b_frag, acc,
                                           [](int) {}, [] {});
      __syncwarp();  // the warp's lanes have all read the stage before its one arrival
      if (tid % 32 == 0) mbarrier_arrive(&empty[read_stage]);
      if (++read_stage == T::kStages) read_stage = 0, read_phase ^= 1;
      if (++write_stage == T::kStages) write_stage = 0, write_phase ^= 1;
    }
  } else {
    static_assert(T::kCopyIssue == CopyIssue::kTileStart ||
                      (kCopyA != OperandCopy::kKRegister && kCopyB != OperandCopy::kKRegister),
                  "register-staged copies are fetched at the tile start and stored halfway");
    // Prologue: k-tiles 0 .. kStages-2 in flight, one commit group each (empty groups keep the count).
#pragma unroll
    for (int s = 0; s < T::kStages - 1; ++s) {
      if (s < k_tiles) {
        copy_a.fetch(stage_a(s), (kt0 + s) * T::kBlockK, tid, staging_a);
        copy_b.fetch(stage_b(s), (kt0 + s) * T::kBlockK, tid, staging_b);
        copy_a.store(stage_a(s), tid, staging_a);
        copy_b.store(stage_b(s), tid, staging_b);
      }
      cp_async_commit();
    }
    start_accumulating();

    int read_stage = 0;
    int write_stage = T::kStages - 1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      // Tile kt has landed once at most kStages-2 younger groups are pending; the barrier also tells
      // every thread that the stage written next (read in iteration kt-1) is no longer being read.
      cp_async_wait<T::kStages - 2>();
      __syncthreads();
      const int next = kt + T::kStages - 1;
      const bool has_next = next < k_tiles;
      const int k_next = (kt0 + next) * T::kBlockK;
      float* const as_next = stage_a(write_stage);
      float* const bs_next = stage_b(write_stage);
      auto fetch_a = [&] {
        if (has_next) copy_a.fetch(as_next, k_next, tid, staging_a);
      };
      auto fetch_b_and_commit = [&] {
        if (has_next) copy_b.fetch(bs_next, k_next, tid, staging_b);
        cp_async_commit();  // one group per iteration, empty or not: the wait above counts them
      };
      if constexpr (T::kCopyIssue == CopyIssue::kTileStart) {
        if (has_next) {  // one branch for both operands: two changed the machine code
          copy_a.fetch(as_next, k_next, tid, staging_a);
          copy_b.fetch(bs_next, k_next, tid, staging_b);
        }
        cp_async_commit();
      }
      // Register-staged operands (fetched into registers above) are written to shared memory
      // halfway through the inner product (multiply_k_tile calls back at k step kBlockK / 2): 8 k
      // steps (about 2000 issue slots per SMSP) cover the load latency, and the staging registers are
      // not live over the second half, which keeps the 8 x 8 tiling within 128 registers without
      // spills. The stage written was last read in iteration kt - 1 (every thread passed this
      // iteration's barrier since) and is read in iteration `next`, after at least one more barrier:
      // so the cp.async copies may also be issued anywhere in this iteration (CopyIssue).
      multiply_k_tile<T, CopierA, CopierB>(
          stage_a(read_stage) + a_frag, stage_b(read_stage) + b_frag, acc,
          [&](int) {
            if (has_next) {
              copy_a.store(as_next, tid, staging_a);
              copy_b.store(bs_next, tid, staging_b);
            }
            if constexpr (T::kCopyIssue == CopyIssue::kSplitOperands) fetch_b_and_commit();
          },
          [&] {
            if constexpr (T::kCopyIssue == CopyIssue::kAfterFirstFragments) {
              fetch_a();
              fetch_b_and_commit();
            } else if constexpr (T::kCopyIssue == CopyIssue::kSplitOperands) {
              fetch_a();
            }
          });
      read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
      write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();  // only empty groups can be pending here; leave none behind
  }

  // Split-k: rank r of the cluster completes the columns j of every thread tile with j % splits == r,
  // summing the ranks' partial sums in rank order; element (i, j) of thread tid is at
  // (i kThreadN + j) kThreads + tid in each block's shared memory (consecutive threads, consecutive banks).
  int split_rank = 0, splits = 1;
  if constexpr (kSplitK) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    split_rank = static_cast<int>(cluster.block_rank());
    splits = static_cast<int>(cluster.num_blocks());
    __syncthreads();  // every warp is done reading the stages that now hold the partial tile
#pragma unroll
    for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
      for (int j = 0; j < T::kThreadN; ++j) smem[(i * T::kThreadN + j) * T::kThreads + tid] = acc[i][j];
    cluster.sync();  // every rank's partial tile is in its shared memory
#pragma unroll
    for (int j = 0; j < T::kThreadN; ++j) {
      if (j % splits != split_rank) continue;
#pragma unroll
      for (int i = 0; i < T::kThreadM; ++i) {
        const int at = (i * T::kThreadN + j) * T::kThreads + tid;
        float sum = 0.f;
        for (int q = 0; q < splits; ++q) sum += cluster.map_shared_rank(smem, q)[at];
        acc[i][j] = sum;
      }
    }
    cluster.sync();  // no rank leaves (its shared memory) while another still reads it
#else
    __trap();  // never launched: split-k is taken only where split_k_code_here() found sm_90 code
#endif
  }

  // Epilogue: each 4x4 sub-tile column is 4 consecutive rows of a C column: one 16-byte access when
  // C allows it (ldc % 4 == 0, 16-byte aligned), else element by element. beta == 0: C is not read.
  const BlockOrigin c_origin = block_origin<T>(m, n);
#pragma unroll
  for (int i4 = 0; i4 < T::kThreadM / kVec; ++i4) {
    const int row = c_origin.m0 + a_frag + i4 * T::kSubStrideM;
#pragma unroll
    for (int j = 0; j < T::kThreadN; ++j) {
      const int col = c_origin.n0 + b_frag + (j / kVec) * T::kSubStrideN + j % kVec;
      if (col >= n || row >= m) continue;
      if (kSplitK && j % splits != split_rank) continue;  // another rank's column
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

}  // namespace gpuprobe::kernels::detail
