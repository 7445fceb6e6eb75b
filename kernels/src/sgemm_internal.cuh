// What the SGEMM launchers share (sgemm.cu, sgemm_tuned.cu, sgemm_volkov_demmel.cu; lab/sgemm_variants
// includes it too). Launchers receive arguments validated by sgemm_with_launcher, with m, n > 0 and k
// already set to 0 when alpha == 0 (so that A and B are not read); they return the launch's
// cudaGetLastError().
#pragma once

#include <cuda_runtime.h>

#include "gpuprobe/kernels/blas_types.hpp"
#include "gpuprobe/kernels/sgemm.hpp"

namespace gpuprobe::kernels::detail {

// Per-device caches (the opt-in to large shared memory, sgemm_device_traits) cover devices 0 .. kMaxDevices - 1.
constexpr int kMaxDevices = 64;

struct SgemmArgs {
  Trans transa, transb;
  int m, n, k;
  float alpha;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float beta;
  float* C;
  int ldc;
};

// sgemm() for a given launcher: the argument checks, BLAS quick returns and alpha == 0 handling of the
// public entry point, then `launch`. The product dispatches through it with a kSgemmImpls record's
// launcher; the lab with its variants', so that both run the same argument path.
Status sgemm_with_launcher(SgemmLauncher launch, Trans transa, Trans transb, int m, int n, int k, float alpha,
                           const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                           cudaStream_t stream);

}  // namespace gpuprobe::kernels::detail
