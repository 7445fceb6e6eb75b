// GEMV, column-major as BLAS: y = alpha op(A) x + beta y, A stored m x n (lda >= max(1, m)),
// op(A) = A (trans = kNoTrans: x has n elements, y has m) or A^T (kTrans: x has m, y has n).
//
// BLAS semantics: beta == 0 means y is not read; alpha == 0 means A and x are not read and
// y = beta y; m == 0 or n == 0 returns at once with y untouched (reference BLAS quick return).
// Negative incx/incy are allowed, as in reference BLAS. Every argument is checked before anything
// is launched; a bad one returns an error Status and nothing runs.
// Allocation: A must be readable as lda x n elements (one more than reference BLAS needs when m is
// not a multiple of 16 bytes / sizeof(T)): the 16-byte-load path reads a column's last vector
// whole and discards the rows past m, so the last column may be read up to row lda - 1.
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
//
// Implementations, kept side by side for analysis (docs/perf/gemv.md):
//   kAuto              (default) picks one of the below by shape (gemv_auto_impl below).
//   kSplitReduce       the design above: when split, partials to the workspace and a second kernel
//                      (launched as a programmatic dependent) sums them.
//   kSinglePass        one kernel per call: the last block of a unit to finish (an arrival counter in
//                      the workspace) sums the unit's segment partials in a fixed order, in two levels
//                      when there are many segments (deterministic: the order does not depend on which
//                      block arrives last). Block shapes for the thin cases: 16 row lanes for m <= 64
//                      (float) / 32 (double) rows, 4 row vectors per thread for tall matrices with few
//                      columns and for N from 32768 x 8192; lda not a multiple of 16 bytes: each scalar
//                      load is coalesced (consecutive lanes, consecutive elements). A is read with
//                      evict-first loads (ld.global.cs) when the matrix is larger than the L2: it is
//                      streamed once and so leaves the L2's other contents (and their dirty lines) in
//                      place. Deep shape: when y has 96 ... 264 units of 32 outputs (about one wave of
//                      one or two blocks per SM) and the reduced dimension is >= 2048, no split: each
//                      block reads whole rows (N) / columns (T) of its 32 outputs, 16 loads in flight
//                      per thread, and writes y (no workspace); N with 96 ... 191 units (the 4096
//                      squares: one block per SM) in blocks of 1024 threads with 8 16-byte loads each,
//                      or, on the scalar path (lda not a multiple of 16 bytes), of 512 threads with 16
//                      loads, read without the evict-first hint.
//   kSinglePassNoHint  kSinglePass with plain loads (no evict-first hint), to tell the two apart.
//   kSinglePassUnitMajor  kSinglePass with its first kTrans grid order (units of 32 columns first,
//                      then segments); kSinglePass dispatches kTrans blocks segment-first, so the
//                      blocks resident together read consecutive row segments of the same columns.
//                      kNoTrans as kSinglePass.
//   kColumnBlocks      kTrans: cuBLAS's DGEMV T design as Nsight Compute shows it (32768 x 32768): one
//                      block of 128 threads per column of A (y element), no split, no workspace; the
//                      block reads its column top to bottom (8 KB a step: 4 x 16-byte loads per thread,
//                      coalesced scalar loads when lda is not a multiple of 16 bytes; evict-first when
//                      A is larger than the L2, as kSinglePass), dots it with x (16-byte loads of x
//                      when incx == 1 and x is 16-byte aligned), reduces by warp shuffles and then over
//                      the 4 warps in a fixed order (deterministic), and writes y[col]; columns of 8192
//                      rows or more in steps of 16 KB (8 loads per thread, 4 blocks per SM). One column
//                      read contiguously by one block beats kSinglePass's 512-byte pieces of 32 columns
//                      at T shapes with long enough columns and enough of them. kNoTrans runs exactly
//                      kSinglePass (same kernels, same workspace).
//   kRowBlocks         kNoTrans: the mirror of kColumnBlocks, one 256-thread block per 64 bytes of
//                      every column (16 float / 8 double rows) over all n columns: no split, no
//                      workspace, one kernel; 4 lanes a column, 64 column groups, 8 loads of 16 bytes
//                      in flight per thread; the groups' row sums are added in a fixed order
//                      (deterministic). Built for the small, L2-resident squares, where kSinglePass's
//                      whole-row blocks (32 rows each) are too few to fill the GPU. kTrans runs
//                      kColumnBlocks.
//   kRowBlocksSector   kRowBlocks with 32-byte pieces (8 float / 4 double rows, 2 lanes a column, 128
//                      column groups): twice the blocks, one sector per column piece.
// The kSinglePass workspace (and kAuto's, which may run it) starts with arrival counters that must
// be zero before its first use: call gemv_workspace_init once after allocating it (and again after a
// failed call, or after the buffer was used for anything else); every completed call leaves them at
// zero. kSplitReduce's partials come after that counter area, so one buffer serves in turn every impl
// and shape it is large enough for (kAuto switches between kSplitReduce and kSinglePass by shape).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

enum class GemvImpl {
  kAuto,
  kSplitReduce,
  kSinglePass,
  kSinglePassNoHint,
  kSinglePassUnitMajor,
  kColumnBlocks,
  kRowBlocks,
  kRowBlocksSector
};

// "auto", "split_reduce", "single_pass", "single_pass_nohint", "single_pass_unit_major",
// "column_blocks", "row_blocks", "row_blocks_sector"
const char* gemv_impl_name(GemvImpl impl);

// What gemv<T> runs for `impl` (T = float or double): `impl` itself, except kColumnBlocks with
// kNoTrans -> kSinglePass, kRowBlocks / kRowBlocksSector with kTrans -> kColumnBlocks, and kAuto:
//   - kNoTrans with A of at most 8 MiB, at most 1024 columns and not thin (below): row blocks of 8
//     rows, kRowBlocksSector in float and kRowBlocks in double;
//   - kTrans with columns of more than 2048 bytes (m sizeof(T) > 2048: m > 512 in float, m > 256 in
//     double) and n >= 512: kColumnBlocks (bytes, not rows, decide: with columns of 2 KB or less it
//     loses to the others);
//   - else kSinglePass when A is thin (at most 512 rows or columns and at least 64 x as many of the
//     other), large (m n >= 2^26 elements: 256 MiB in float) or deep for this `trans` (y in units of
//     32 gives 96 ... 264 units, with >= 2048 reduced: the one-kernel shapes, e.g. the 3041 ... 8448
//     squares), or small N with more than 1024 columns (A of at most 4 MiB);
//   - kSplitReduce otherwise.
// Each rule is the faster of the measured choices at the benchmark shapes; the figures are in
// docs/perf/gemv.md.
template <class T>
GemvImpl gemv_auto_impl(Trans trans, int m, int n, GemvImpl impl = GemvImpl::kAuto);

// Bytes of workspace gemv<T>(trans, m, n, ..., impl) needs; 0 for an empty problem or when not split.
template <class T>
std::size_t gemv_workspace_bytes(Trans trans, int m, int n, GemvImpl impl = GemvImpl::kAuto);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue, kNullPointer or
// kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status gemv_check_args(Trans trans, int m, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, GemvImpl impl = GemvImpl::kAuto);

// Enqueues y = alpha op(A) x + beta y on `stream` (T = float or double).
template <class T>
Status gemv(Trans trans, int m, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
            GemvImpl impl = GemvImpl::kAuto);

// Prepares a workspace for kSinglePass / kSinglePassNoHint: zeroes its counter area (a cudaMemsetAsync
// of at most its first 16 KiB on `stream`). Needed once per buffer, not per call; harmless for the
// other implementations. kSuccess for an empty workspace (nullptr, 0 bytes), kNullPointer for nullptr
// with bytes > 0, kLaunchFailed if the memset could not be enqueued.
Status gemv_workspace_init(void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace gpuprobe::kernels
