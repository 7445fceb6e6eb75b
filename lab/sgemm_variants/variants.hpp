// The SGEMM variants kept for study: one line each in GPUPROBE_SGEMM_LAB_VARIANTS, from which their
// launchers' declarations and the table kVariants derive. A new variant: its launcher
// launch_<name> in a .cu file here (an existing one, or a new one, which the glob in CMakeLists.txt
// picks up) and one X(name, "what it changes") line below.
//
// Every variant is an instantiation of the product's kernel template (kernels/src/sgemm_tuned.cuh)
// and is described by what it changes against the product's kTuned (ours_tuned): block 128 x 128 x 32,
// 8 warps of 64 x 32, 8 x 8 per thread, 3 stages, 2 blocks per SM, K-contiguous operands by 4-byte
// transposing cp.async, groups of 16 M-tile rows, one block barrier per k-tile, next copies after k
// step 0's fragment loads. Names are the benchmark impl names the variants had while gpuprobe timed
// them (impl:<name>), so older result files and docs/perf/sgemm.md find them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "sgemm_internal.cuh"  // kernels/src: SgemmArgs, sgemm_with_launcher

// clang-format off
#define GPUPROBE_SGEMM_LAB_VARIANTS(X)                                                                              \
  X(ours_tuned_128x128_w64x32,      "k-tile 16, plain 2-D raster, copies at the tile start")                      \
  X(ours_tuned_kregister,           "as ours_tuned_128x128_w64x32, K-contiguous operands by register staging")   \
  X(ours_tuned_4stages,             "as ours_tuned_128x128_w64x32 with 4 stages")                                \
  X(ours_tuned_128x256_w64x64,      "128x256x16 blocks, 8 warps of 64x64, 8x16/thread, 1 block/SM, reg. staging, plain raster, tile-start copies") \
  X(ours_tuned_128x128_w64x64,      "128x128x16 blocks, 4 warps of 64x64, 8x16/thread, 4 stages, reg. staging, plain raster, tile-start copies") \
  X(ours_tuned_plain_raster,        "plain 2-D raster, copies at the tile start")                                 \
  X(ours_tuned_copies_at_tile_start, "copies right after the barrier (the product's predecessor)")                \
  X(ours_tuned_mbarrier,            "as ours_tuned_copies_at_tile_start, per-stage mbarriers, not a block barrier") \
  X(ours_tuned_mbarrier_serpentine, "as ours_tuned_mbarrier, FFMAs in serpentine order")                         \
  X(ours_tuned_split_copies,        "op(A)'s copies after k step 0's loads, op(B)'s halfway through the k-tile") \
  X(small_split1,                   "kSmall's 64x64 tiling, no split-k")                                          \
  X(small_split2,                   "kSmall's 64x64 tiling, split-k 2 (cluster of 2)")                            \
  X(small_split4,                   "kSmall's 64x64 tiling, split-k 4 (cluster of 4)")                            \
  X(small_split8,                   "kSmall's 64x64 tiling, split-k 8 (cluster of 8)")                            \
  X(tuned_split2,                   "kTuned's 128x128 tiling, split-k 2 (cluster of 2)")                          \
  X(tuned_split4,                   "kTuned's 128x128 tiling, split-k 4 (cluster of 4)")
// clang-format on

namespace gpuprobe::sgemm_lab {

#define GPUPROBE_SGEMM_LAB_DECLARE(name, what) \
  cudaError_t launch_##name(const kernels::detail::SgemmArgs& args, cudaStream_t stream);
GPUPROBE_SGEMM_LAB_VARIANTS(GPUPROBE_SGEMM_LAB_DECLARE)
#undef GPUPROBE_SGEMM_LAB_DECLARE

struct Variant {
  const char* name;
  kernels::detail::SgemmLauncher launch;
  const char* what;  // what it changes against ours_tuned
};

inline constexpr Variant kVariants[] = {
#define GPUPROBE_SGEMM_LAB_ROW(name, what) {#name, &launch_##name, what},
    GPUPROBE_SGEMM_LAB_VARIANTS(GPUPROBE_SGEMM_LAB_ROW)
#undef GPUPROBE_SGEMM_LAB_ROW
};

// Names of their own, none taken by a product implementation (run beside them as "ours_<name>").
constexpr bool is_product_name(const char* name) {
  constexpr char kPrefix[] = "ours_";
  for (std::size_t i = 0; i + 1 < sizeof(kPrefix); ++i)
    if (name[i] != kPrefix[i]) return false;  // also stops at a shorter name's end
  for (const kernels::SgemmImplRecord& product : kernels::kSgemmImpls)
    if (kernels::detail::same_text(name + sizeof(kPrefix) - 1, product.name)) return true;
  return false;
}
constexpr bool variant_names_are_unique() {
  constexpr std::size_t count = sizeof(kVariants) / sizeof(kVariants[0]);
  for (std::size_t i = 0; i < count; ++i) {
    if (is_product_name(kVariants[i].name)) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (kernels::detail::same_text(kVariants[i].name, kVariants[j].name)) return false;
  }
  return true;
}
static_assert(variant_names_are_unique(), "kVariants: a name twice, or a product implementation's name");

}  // namespace gpuprobe::sgemm_lab
