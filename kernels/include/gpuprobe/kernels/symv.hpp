// SYMV, column-major as BLAS: y = alpha A x + beta y, A symmetric n x n with only the `uplo`
// triangle stored (the other triangle is never read: it may hold anything, NaN included).
//
// BLAS semantics: beta == 0 means y is not read (NaN or garbage in y does not propagate); alpha == 0
// means A and x are not read and y = beta y; n == 0 returns at once. Negative incx/incy are allowed
// (element i of x is at x[(incx > 0 ? i : i - (n - 1)) * incx], as in reference BLAS). Every argument
// is checked before anything is launched; a bad one returns an error Status and nothing runs.
// Allocation: A must be readable as lda x n elements (the 16-byte-load path reads a column's last
// vector whole and discards the rows past n, so the last column may be read up to row lda - 1).
//
// Implementations, kept side by side for analysis (docs/perf/symv.md):
//   kAware      storage-aware, "algorithm 2" of Abdelfattah, Keyes & Ltaief (MAGMA SYMV): the matrix
//               is cut into 64 x 64 tiles; each thread block reads only a segment of its block row of
//               the stored triangle and uses every off-diagonal element twice, as A x (row sums) and
//               A^T x (column dots); column partials of each tile and row partials of each segment go
//               to the workspace; a second kernel sums them in a fixed order (deterministic).
//               Reads n(n+1)/2 elements (+ a half diagonal tile per block row).
//   kOblivious  storage-oblivious, "algorithm 1": each block row is computed whole, the tiles above
//               (below) the diagonal read as the transposes of the stored ones: reads n^2 elements.
//               Row partials of each segment go to the workspace and are summed as for kAware.
//   kAwareAtomic the kAware kernel with partials added straight into y with atomicAdd (y first set to
//               beta y by a small kernel): no workspace, not deterministic (summation order varies).
//   kAwareV3    storage-aware and deterministic like kAware, with units of 4 (float) / 2 (double) block
//               rows x a segment of block columns anchored at absolute column positions for both
//               triangles (1 KB of each column per unit, one column-dot partial per unit and block
//               column: 0.35-0.65 x (float) / 0.5-0.8 x (double) of kAware's workspace for n 2048 ...
//               32768), and its own fixed-order reduction kernel (docs/perf/symv.md).
//   kAwareV3Stream kAwareV3 reading A with evict-first loads (ld.global.cs) when the triangle is
//               larger than the L2: A is read once and no longer pushes the partials out of the L2
//               before the reduction reads them (docs/perf/symv.md).
//   kAwareV5    kAwareV6 with units of 4 block rows in double as well (read in two batches of
//               2 per step: the same 16 loads in flight per thread), so half the column-dot slots
//               and reductions; float: as kAwareV6 (docs/perf/symv.md; grid walked group first
//               since v6; in double one block per SM, 228 registers and no spills, since v5.1).
//   kAwareV6    kAwareV3Stream with its grid walked group first: the blocks launched together are
//               the units of consecutive groups with the same segment, i.e. vertically adjacent
//               pieces of the same block columns, so the columns stream top to bottom instead of 1 KB
//               per column and unit (docs/perf/symv.md; GEMV's segment-major T grid, v5, is the
//               same idea).
//   kAuto       (default) kAwareV6, or kAwareV5 in double when v6's partials would not stay in the
//               L2 (symv_auto_impl below; docs/perf/symv.md).
//
// Workspace: queried with symv_workspace_bytes, allocated once by the caller (device memory, any
// content, 16-byte aligned), at most 1 % of the n x n matrix for n >= 1024 (every impl but
// kAwareAtomic, which needs 0 bytes). The workspace may not be shared by calls running concurrently.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

enum class SymvImpl { kAuto, kAware, kOblivious, kAwareAtomic, kAwareV3, kAwareV3Stream, kAwareV5, kAwareV6 };

// "auto", "aware", "oblivious", "aware_atomic", "aware_v3", "aware_v3_stream", "aware_v5", "aware_v6"
const char* symv_impl_name(SymvImpl impl);

// What symv<T> runs for `impl` on a device whose L2 holds l2_bytes (-1: ask the current device; 0:
// unknown): `impl` itself, except kAuto -> kAwareV6, or kAwareV5 in double when kAwareV6's partials
// (its workspace) would fill more than half the L2 (one near partition on the H100): v5's units of 4
// block rows halve the column-dot slots, so the reduction reads them from the L2 rather than DRAM.
// H100 (2026-11-23, same run): DSYMV 32768 (v6 partials 37.7 MB of the 50 MB L2; ncu: its reduction
// 26.7 us with a 36 % L2 hit rate) v5 3011 / 3016 GB/s against v6 2969 / 2961 (lower / upper); 16384
// (12.6 MB) v6 3037 / 3009 against 3008 / 3010; 8192 v6 +3 %, 4096 v6 +17 % (v5 spills at the
// 128-register cap). v6 itself was faster than v5a in all 12 cases 8192-32768 .
template <class T>
SymvImpl symv_auto_impl(Uplo uplo, int n, SymvImpl impl = SymvImpl::kAuto, long long l2_bytes = -1);

// Bytes of workspace symv<T>(..., n, ..., impl) needs; 0 for n <= 0. kAuto: the largest of kAware's,
// kAwareV3's (= kAwareV3Stream's and kAwareV6's) and kAwareV5's (what it runs may change with the
// measurements; the workspace size does not).
template <class T>
std::size_t symv_workspace_bytes(int n, SymvImpl impl = SymvImpl::kAuto);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue, kNullPointer or
// kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status symv_check_args(Uplo uplo, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, SymvImpl impl = SymvImpl::kAuto);

// Enqueues y = alpha A x + beta y on `stream` (T = float or double). Returns kLaunchFailed if a
// launch itself failed (asynchronous faults surface at the caller's next synchronizing call).
template <class T>
Status symv(Uplo uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream, SymvImpl impl = SymvImpl::kAuto);

}  // namespace gpuprobe::kernels
