// What the SYMV launchers share (symv.cu, and lab/blas2_variants, which includes it too): the
// validated arguments a launcher receives and the argument path of symv() for a given launcher.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"
#include "gpuprobe/kernels/symv.hpp"
#include "symv_gemv_common.cuh"

namespace gpuprobe::kernels::detail {

// Arguments symv_with_launch validated: n > 0, alpha != 0, the workspace at least the launcher's
// workspace_bytes(n) (nullptr only when that is 0).
template <class T>
struct SymvArgs {
  Uplo uplo;
  int n;
  T alpha;
  const T* A;
  int lda;
  const T* x;
  int incx;
  T beta;
  T* y;
  int incy;
  void* workspace;

  bool lower() const { return uplo == Uplo::kLower; }
  // A read with 16-byte loads: lda a multiple of 16 bytes and A 16-byte aligned (blas2::load_rows).
  bool vector_a() const { return lda % blas2::Vec16<T>::kCount == 0 && blas2::aligned16(A); }
  blas2::Strided<const T> xs() const { return blas2::make_strided(x, n, incx); }
  blas2::Strided<T> ys() const { return blas2::make_strided(y, n, incy); }
  T* ws() const { return static_cast<T*>(workspace); }
};

// symv() for a given launcher: the argument checks (against the launcher's workspace), the BLAS
// quick returns and alpha == 0 of the public entry point, then `launch`. The product dispatches
// through it with a kSymvImpls record's launcher; the lab with its variants', so that both run the
// same argument path. kLaunchFailed when a launch was refused.
template <class T>
Status symv_with_launch(const SymvLaunch<T>& launch, Uplo uplo, int n, T alpha, const T* A, int lda, const T* x,
                        int incx, T beta, T* y, int incy, void* workspace, std::size_t workspace_bytes,
                        cudaStream_t stream);

}  // namespace gpuprobe::kernels::detail
