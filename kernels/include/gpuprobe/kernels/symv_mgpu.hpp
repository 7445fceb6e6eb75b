// Multi-GPU SYMV and GEMV on a matrix held in the 1D block-column cyclic layout (block_cyclic.hpp),
// the SYMV of the SYTRD (tridiagonalization) of Abdelfattah, Keyes & Ltaief / MAGMA's dsymv_mgpu.
// Design and bound: docs/perf/symv_mgpu.md.
//
// Data:
//   - A: a BlockCyclicMatrix: G local arrays, GPU q's on device devices[q] of the MgpuContext, each
//     column-major rows x local_cols(q) with one leading dimension ldl >= max(1, rows). Each local
//     array must be readable as ldl x local_cols(q) elements (whole columns: a 16-byte vector load
//     may read up to row ldl - 1 and discards what lies outside the problem). SYMV: square, only the
//     `uplo` triangle is ever read; the other triangle, the rows outside the (sub)matrix and the
//     padding rows may hold anything, NaN included.
//   - x is replicated: x[q] on GPU q's device, the same values on every GPU, increment incx.
//   - y lands on every GPU: y[q] on GPU q's device (increment incy) receives the whole result, the
//     same bits on every GPU (the partials are summed in one fixed order everywhere: repeated calls
//     and the G copies are bit-identical). With beta != 0 each GPU reads its own y[q].
//   - BLAS semantics: y = alpha op(A) x + beta y; beta == 0: y is not read (NaN in y does not
//     propagate); alpha == 0: A and x are not read and y = beta y; an empty problem returns at once.
//     Negative increments as in reference BLAS. Every argument is checked before anything is
//     enqueued; a bad one returns an error Status and nothing runs.
//   - Submatrices without a copy: SYMV on A(o:o+n, o:o+n) (offset o, any o, need not be a multiple
//     of b; the SYTRD's trailing matrices are o + n = A's order), GEMV on A(ro:ro+m, co:co+n); x and
//     y are the submatrix's (length n, or m / n for GEMV), element 0 belonging to row / column o.
//
// Execution: `stream` is a stream of devices[0] (nullptr: its legacy default stream). The call is
// ordered on it like a single-GPU call: the work of every GPU starts after what was enqueued on
// `stream` before the call (an event fork into the context's streams), and what is enqueued on
// `stream` after the call starts after every GPU's part, y on every GPU included (an event join).
// GPU 0's part runs on `stream` itself. The calling thread's current device is restored on return.
// A context serves one call at a time (its streams and events are reused).
//
// Per GPU (SYMV): the storage-aware algorithm on the GPU's own block columns, each stored element
// read once and used twice (A x and A^T x): 64 x 64 tiles addressed through the layout, units of 4
// (float) / 2 or 4 (double) row tiles x a segment of local tile columns, column dots into per-tile
// slots and row sums into per-unit row parts, then a fixed-order reduction into the GPU's partial y
// (length n). GEMV: the single-GPU gemv (gemv.hpp, kAuto) on the GPU's contiguous local columns of
// the submatrix (x gathered for them first when not transposed). Then across GPUs:
//   MgpuReduction::kP2P   each GPU waits (cross-device events) for every partial and sums the G of
//                         them in GPU order with peer reads (peer access enabled by the context),
//                         writing alpha sum + beta y into its y; GEMV^T gathers the peers' pieces.
//   MgpuReduction::kNccl  ncclAllReduce (GEMV^T: ncclAllGather) of the partials, then alpha, beta
//                         per GPU. Only when built with NCCL (mgpu_nccl_available()); one process,
//                         one communicator per device: distinct devices only.
// G == 1 writes y directly (no reduction).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "gpuprobe/kernels/blas_types.hpp"
#include "gpuprobe/kernels/block_cyclic.hpp"

namespace gpuprobe::kernels {

// The matrix: the layout, and per GPU q a pointer to its local array (nullptr allowed for a GPU with
// no local column) with the shared leading dimension.
template <class T>
struct BlockCyclicMatrix {
  BlockCyclicLayout layout;
  const T* const* local = nullptr;  // local[q], q < layout.gpus
  int ldl = 0;
};

enum class MgpuReduction { kP2P, kNccl };
// The reduction a context uses unless told otherwise: the one place the default is chosen.
constexpr MgpuReduction kDefaultMgpuReduction = MgpuReduction::kP2P;
// "p2p", "nccl"
const char* mgpu_reduction_name(MgpuReduction reduction);
// Whether this build has the NCCL reduction (NCCL was found at configure time).
bool mgpu_nccl_available();

// The most GPUs (local arrays) one call takes.
constexpr int kMgpuMaxGpus = 64;

// Execution resources of the multi-GPU calls on one device list: a stream and events per GPU (GPU 0
// uses the caller's stream), peer access between the devices (kP2P), or one NCCL communicator per
// device (kNccl). The device list may repeat a device (kP2P only): {0, 0} is a two-"GPU" layout on
// one GPU, its two parts running on two streams of device 0.
class MgpuContext {
 public:
  // kSuccess, or: kInvalidValue (empty list, more than kMgpuMaxGpus, a negative device),
  // kNotSupported (kNccl in a build without NCCL or with a repeated device; kP2P between two
  // devices without peer access), kDeviceError (a CUDA or NCCL call failed: no such device, ...).
  // Creating NCCL communicators takes up to seconds: create a context once, reuse it.
  static Status create(const std::vector<int>& devices, MgpuReduction reduction, std::unique_ptr<MgpuContext>* out);
  ~MgpuContext();
  MgpuContext(const MgpuContext&) = delete;
  MgpuContext& operator=(const MgpuContext&) = delete;

  int gpus() const;
  int device(int q) const;
  MgpuReduction reduction() const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit MgpuContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- SYMV: y = alpha A(o:o+n, o:o+n) x + beta y, A symmetric (the `uplo` triangle stored) ----

// Workspace of every GPU for any call on this layout (any n, offset: one buffer serves the whole
// SYTRD sequence), T = float or double: the same size for each GPU; about 0.4-0.8 % of a GPU's local
// array plus O(n). workspace[q] on devices[q], 16-byte aligned, any content, one per GPU (distinct
// buffers even when devices repeat), not shared by calls running concurrently.
template <class T>
std::size_t symv_mgpu_workspace_bytes(const BlockCyclicLayout& layout);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue (uplo, n < 0, offset < 0,
// offset + n > A's order, A not square, block < 1, gpus < 1 or > kMgpuMaxGpus, ldl < max(1, rows),
// incx or incy == 0), kNullPointer (an array or a pointer of a GPU
// that needs it) or kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status symv_mgpu_check_args(Uplo uplo, int n, int offset, const BlockCyclicMatrix<T>& A, const T* const* x, int incx,
                            T* const* y, int incy, void* const* workspace, std::size_t workspace_bytes);

// Enqueues the call (see the top of this file); kInvalidValue also when ctx.gpus() != A.layout.gpus,
// kLaunchFailed when a launch, an event or an NCCL call failed (asynchronous faults
// surface at the caller's next synchronizing call).
template <class T>
Status symv_mgpu(Uplo uplo, int n, int offset, T alpha, const BlockCyclicMatrix<T>& A, const T* const* x, int incx,
                 T beta, T* const* y, int incy, void* const* workspace, std::size_t workspace_bytes,
                 const MgpuContext& ctx, cudaStream_t stream);

// ---- GEMV: y = alpha op(A(ro:ro+m, co:co+n)) x + beta y ----
// kNoTrans: x has n elements, y has m; kTrans: x has m, y has n. kNoTrans sums G partial y's (as
// SYMV); kTrans has each GPU compute the elements of y of its own columns, then gathers them.

// Workspace of every GPU for this shape (the single-GPU gemv's, for each GPU's local shape, plus
// the gathered x and the partials), as for SYMV; it starts with gemv's arrival counters: prepare it
// once with gemv_mgpu_workspace_init (every completed call leaves it prepared).
template <class T>
std::size_t gemv_mgpu_workspace_bytes(Trans trans, int m, int n, int col_offset, const BlockCyclicLayout& layout);

// Zeroes the counter area of each GPU's workspace (a cudaMemsetAsync per GPU on `stream`'s fork).
Status gemv_mgpu_workspace_init(void* const* workspace, std::size_t workspace_bytes, const MgpuContext& ctx,
                                cudaStream_t stream);

// As symv_mgpu_check_args: kInvalidValue for trans, m or n < 0, offsets < 0 or past A's rows /
// columns, the layout and increments as for SYMV.
template <class T>
Status gemv_mgpu_check_args(Trans trans, int m, int n, int row_offset, int col_offset, const BlockCyclicMatrix<T>& A,
                            const T* const* x, int incx, T* const* y, int incy, void* const* workspace,
                            std::size_t workspace_bytes);

template <class T>
Status gemv_mgpu(Trans trans, int m, int n, int row_offset, int col_offset, T alpha, const BlockCyclicMatrix<T>& A,
                 const T* const* x, int incx, T beta, T* const* y, int incy, void* const* workspace,
                 std::size_t workspace_bytes, const MgpuContext& ctx, cudaStream_t stream);

}  // namespace gpuprobe::kernels
