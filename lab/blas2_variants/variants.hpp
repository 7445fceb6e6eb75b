// The SYMV variants kept for study: launchers of the product's kernel templates
// (kernels/src/symv_v1.cuh, symv_v3.cuh) in configurations no default reaches, one record each in
// kVariants. Names are the benchmark impl names they had while gpuprobe timed them (impl:<name>), so
// that older result files and docs/perf/symv.md find them. A new variant: a Kernels struct below, its
// definitions in symv_variants.cu, and its record in kVariants.
//
// What each changes against the product's default design (kAwareV6, ours_aware_v6: groups of 4
// (float) / 2 (double) block rows, segments anchored at absolute columns, grid walked group first,
// evict-first loads of A when the triangle exceeds the L2):
//   ours_aware            one block row per unit (v1, "algorithm 2" as MAGMA has it): one column-dot
//                         partial per stored off-diagonal tile, a fixed-order reduction kernel; the
//                         kernel of the product's atomic baseline with deterministic partials.
//   ours_aware_v3         the grid walked segment first, plain loads of A.
//   ours_aware_v3_stream  the grid walked segment first (v6's predecessor), evict-first loads of A.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/symv.hpp"
#include "symv_internal.cuh"  // kernels/src: SymvArgs, symv_with_launch

namespace gpuprobe::blas2_lab {

// Entry points as the product's (kernels::detail::symv_launchers): defined in symv_variants.cu.
#define GPUPROBE_BLAS2_LAB_KERNELS(Name)                                                  \
  struct Name {                                                                           \
    template <class T>                                                                    \
    static std::size_t workspace_bytes(int n);                                            \
    template <class T>                                                                    \
    static cudaError_t launch(const kernels::detail::SymvArgs<T>& args, cudaStream_t stream); \
  };
GPUPROBE_BLAS2_LAB_KERNELS(SymvAwareKernels)
GPUPROBE_BLAS2_LAB_KERNELS(SymvAwareV3Kernels)
GPUPROBE_BLAS2_LAB_KERNELS(SymvAwareV3StreamKernels)
#undef GPUPROBE_BLAS2_LAB_KERNELS

struct SymvVariant {
  const char* name;
  kernels::detail::SymvLaunchers launchers;
  bool deterministic;  // bit-identical repeated calls (every variant here: fixed-order reductions)
  const char* what;    // what it changes against ours_aware_v6
};

inline constexpr SymvVariant kSymvVariants[] = {
    {"ours_aware", kernels::detail::symv_launchers<SymvAwareKernels>(), true,
     "one block row per unit (v1), a column-dot partial per stored tile, fixed-order reduction"},
    {"ours_aware_v3", kernels::detail::symv_launchers<SymvAwareV3Kernels>(), true,
     "grid walked segment first, plain loads of A"},
    {"ours_aware_v3_stream", kernels::detail::symv_launchers<SymvAwareV3StreamKernels>(), true,
     "grid walked segment first, evict-first loads of A beyond the L2"},
};

// Names of their own, none taken by a product implementation's benchmark entry, launchers complete.
constexpr bool variants_are_consistent() {
  constexpr std::size_t count = sizeof(kSymvVariants) / sizeof(kSymvVariants[0]);
  for (std::size_t i = 0; i < count; ++i) {
    if (kSymvVariants[i].launchers.set() != 4) return false;
    for (const kernels::SymvImplRecord& product : kernels::kSymvImpls)
      if (kernels::detail::same_text(kSymvVariants[i].name, product.entry)) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (kernels::detail::same_text(kSymvVariants[i].name, kSymvVariants[j].name)) return false;
  }
  return true;
}
static_assert(variants_are_consistent(), "kSymvVariants: a name twice, a product entry's name, or a launcher missing");

}  // namespace gpuprobe::blas2_lab
