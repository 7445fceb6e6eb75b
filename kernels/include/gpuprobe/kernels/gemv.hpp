// GEMV, column-major as BLAS: y = alpha op(A) x + beta y, A stored m x n (lda >= max(1, m)),
// op(A) = A (trans = kNoTrans: x has n elements, y has m) or A^T (kTrans: x has m, y has n).
//
// BLAS semantics: beta == 0 means y is not read; alpha == 0 means A and x are not read and
// y = beta y; m == 0 or n == 0 returns at once with y untouched (reference BLAS quick return).
// Negative incx/incy are allowed, as in reference BLAS. Every argument is checked before anything
// is launched; a bad one returns an error Status and nothing runs.
//
// Design (docs/perf/gemv.md), after Abdelfattah, Keyes & Ltaief's GEMV: 256-thread blocks, 16-byte
// loads, each warp reading a contiguous 512-byte piece of a column, several loads in flight per
// thread. kNoTrans: a block owns 32x16B rows and a segment of the columns and accumulates row sums
// in registers; kTrans: a block owns 32 columns and a segment of the rows and accumulates column
// dots. When the blocks of whole rows (columns) are too few to fill the GPU, the other dimension is
// cut into segments whose partial results go to the workspace and a second kernel sums them in a
// fixed order (deterministic).
//
// Workspace: queried with gemv_workspace_bytes (0 when no split is needed), allocated once by the
// caller (device memory, 16-byte aligned); not to be shared by concurrent calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

// Bytes of workspace gemv<T>(trans, m, n, ...) needs; 0 for an empty problem or when not split.
template <class T>
std::size_t gemv_workspace_bytes(Trans trans, int m, int n);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue, kNullPointer or
// kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status gemv_check_args(Trans trans, int m, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes);

// Enqueues y = alpha op(A) x + beta y on `stream` (T = float or double).
template <class T>
Status gemv(Trans trans, int m, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace gpuprobe::kernels
