// Grouped ("swizzled") rasterization of SGEMM block tiles: linear block id -> (M tile, N tile).
// Plain C++17 with host/device qualifiers under nvcc, so that CPU tests include it as well
// (tests/cpu/sgemm_swizzle_test.cpp).
//
// The scheme of CUTLASS's threadblock swizzle and Triton's GROUP_M: tiles are walked in groups of
// kGroupM consecutive M-tile rows, column by column inside a group (M fastest within a column), so
// that a window of consecutive block ids -- which is what the block scheduler keeps resident -- is
// a compact kGroupM x (window / kGroupM) patch of C instead of (window / m_tiles) whole columns.
// The last group takes the m_tiles % kGroupM remaining rows (its columns are that much shorter);
// every (M tile, N tile) pair is produced exactly once for ids in [0, m_tiles * n_tiles).
//
// Arithmetic for the default tiling (128 x 128 block tiles, 2 blocks per SM on the H100 SXM's 132
// SMs = 264 co-resident blocks; L2 50 MiB; an A row-panel or B column-panel is 128 x k floats):
// the resident blocks advance through k roughly in step (same work per block, launched a wave at a
// time), so blocks sharing a panel hit in L2 on each other's k-tiles within microseconds, and DRAM
// reads each panel touched by a wave about once per wave. What the L2 cannot hold is a panel from one
// wave to the next. DRAM bytes per wave ~ (A panels + B panels touched) x 512 k bytes (panels per
// 264 consecutive ids, mean over the waves of the grid; tests/cpu/sgemm_swizzle_test.cpp counts them):
//
//   m = n = k = 16384 (128 x 128 tiles, panel 8 MiB, wave 141.7 GFLOP):
//     plain (blockIdx.x = M tile): 264 ids = 2.06 columns -> all 128 A + 3 B = 131 panels = 1048 MiB
//     grouped, G = 16:             16 M tiles x 16.5 columns -> 16 A + 17 B  =  33 panels =  264 MiB
//                                  (35 = 277 MiB in the mean: some waves straddle two groups)
//     -> DRAM 7.8e-3 vs 2.1e-3 bytes per flop (each operand once: 6 / n = 3.7e-4), i.e. 357 vs
//        94 GB/s at 46 TFLOP/s. Neither set fits in the 50 MiB L2 (no panel survives from one wave
//        to the next either way); the grouped walk reads 3.7x less.
//   m = n = k = 8192 (64 x 64 tiles, panel 4 MiB, wave 70.9 GFLOP):
//     plain 4.1 columns -> 64 A + 5 B = 69 panels = 276 MiB; grouped 36 = 145 MiB (4.1e-3 vs 2.1e-3 B/flop)
//   m = n = k = 4096 (32 x 32 tiles, panel 2 MiB, wave 35.4 GFLOP):
//     plain 8.25 columns -> 32 A + 9 B = 41 panels = 82 MiB; grouped 33 (first wave) to 38 (mean) =
//     66-77 MiB (2.4e-3 vs 2.3e-3 B/flop); the 16 A panels of a group (32 MiB) may partly survive
//     in L2 into the group's second wave. About the same traffic: little to gain at 4096.
// The live part of those panels at any moment is a few k-tiles (33 panels x 16 KiB per k-tile of
// 32), well inside the L2, so in-wave sharing does not depend on the panels fitting.
// G + ceil(264 / G) is smallest at G = sqrt(264) ~ 16 (mean panels per wave at 16384: G = 8 -> 43,
// 16 -> 35, 32 -> 42).
#pragma once

#if defined(__CUDACC__)
#define GPUPROBE_SGEMM_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_SGEMM_HD inline
#endif

namespace gpuprobe::kernels::detail {

struct TileCoord {
  int m_tile, n_tile;
};

// id in [0, m_tiles * n_tiles) (the caller checks that the product and kGroupM * n_tiles fit in an
// int); kGroupM >= 1. Two integer divisions by runtime values (ids per group; the group's height,
// shorter for the last group), once per block.
template <int kGroupM>
GPUPROBE_SGEMM_HD TileCoord grouped_tile(int id, int m_tiles, int n_tiles) {
  static_assert(kGroupM >= 1, "a group holds at least one M-tile row");
  const int ids_per_group = kGroupM * n_tiles;
  const int group = id / ids_per_group;
  const int first_m = group * kGroupM;
  const int rows = m_tiles - first_m < kGroupM ? m_tiles - first_m : kGroupM;  // the last group may be short
  const int in_group = id - group * ids_per_group;
  return TileCoord{first_m + in_group % rows, in_group / rows};
}

}  // namespace gpuprobe::kernels::detail
