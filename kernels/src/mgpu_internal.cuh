// Shared by the multi-GPU kernels (symv_mgpu.cu, gemv_mgpu.cu) and the context (mgpu_context.cu):
// the context's resources, the fork/join of one call, the cross-GPU reductions and their kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gpuprobe/kernels/symv_mgpu.hpp"
#include "symv_gemv_common.cuh"

namespace gpuprobe::kernels {

struct MgpuContext::Impl {
  std::vector<int> devices;
  MgpuReduction reduction = kDefaultMgpuReduction;
  std::vector<cudaStream_t> streams;  // per GPU; [0] is null: GPU 0 runs on the caller's stream
  cudaEvent_t fork = nullptr;         // on devices[0]: recorded on the caller's stream
  std::vector<cudaEvent_t> ready;     // per GPU, on its device: its partial is complete
  std::vector<cudaEvent_t> done;      // per GPU, on its device: its part of the call is complete
  std::vector<void*> comms;           // kNccl: one ncclComm_t per GPU (mgpu_context.cu)
};

namespace mgpu {

using blas2::Strided;

// Sub-buffers of a workspace: regions rounded up to whole 256-byte lines (the base is 16-byte
// aligned; the regions stay 16-byte aligned for the vector loads).
inline std::size_t round_bytes(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// One call's fork and join (symv_mgpu.hpp, "Execution"), and the cross-device barrier of the P2P
// reduction. Every CUDA failure is kept as the call's status (the first one); the join runs in any
// case so that the caller's stream stays ordered after whatever was enqueued.
class Exec {
 public:
  Exec(const MgpuContext::Impl& ctx, cudaStream_t caller) : ctx_(ctx), caller_(caller) {
    if (cudaGetDevice(&saved_device_) != cudaSuccess) saved_device_ = -1;
  }
  ~Exec() {
    if (saved_device_ >= 0) cudaSetDevice(saved_device_);
  }
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  int gpus() const { return static_cast<int>(ctx_.devices.size()); }
  cudaStream_t stream(int q) const { return q == 0 ? caller_ : ctx_.streams[q]; }
  // Makes GPU q's device current; false (and the status set) if that failed.
  bool enter(int q) { return check(cudaSetDevice(ctx_.devices[q])); }
  // Records a failure (a CUDA call's result); true when it succeeded.
  bool check(cudaError_t e) {
    if (e != cudaSuccess && status_ == Status::kSuccess) status_ = Status::kLaunchFailed;
    return e == cudaSuccess;
  }
  bool check(Status s) {
    if (s != Status::kSuccess && status_ == Status::kSuccess) status_ = s;
    return s == Status::kSuccess;
  }
  // The streams of GPUs 1.. start after the caller's stream's prior work.
  bool fork() {
    if (gpus() == 1) return true;
    if (!enter(0) || !check(cudaEventRecord(ctx_.fork, caller_))) return false;
    for (int q = 1; q < gpus(); ++q)
      if (!enter(q) || !check(cudaStreamWaitEvent(ctx_.streams[q], ctx_.fork, 0))) return false;
    return true;
  }
  // Every GPU's stream continues only when every GPU's work so far is complete (each records its
  // `ready` event, then waits for the others').
  bool barrier() {
    for (int q = 0; q < gpus(); ++q)
      if (!enter(q) || !check(cudaEventRecord(ctx_.ready[q], stream(q)))) return false;
    for (int q = 0; q < gpus(); ++q) {
      if (!enter(q)) return false;
      for (int r = 0; r < gpus(); ++r)
        if (r != q && !check(cudaStreamWaitEvent(stream(q), ctx_.ready[r], 0))) return false;
    }
    return true;
  }
  // The caller's stream continues after every GPU's part; returns the call's status.
  Status join() {
    if (gpus() > 1) {
      for (int q = 1; q < gpus(); ++q)
        if (enter(q)) check(cudaEventRecord(ctx_.done[q], ctx_.streams[q]));
      if (enter(0))
        for (int q = 1; q < gpus(); ++q) check(cudaStreamWaitEvent(caller_, ctx_.done[q], 0));
    }
    return status_;
  }
  // After GPU q's launches: a failed launch becomes the call's status.
  bool launched() { return check(cudaGetLastError()); }

 private:
  const MgpuContext::Impl& ctx_;
  cudaStream_t caller_;
  int saved_device_ = -1;
  Status status_ = Status::kSuccess;
};

// Pointers to the G partials (or pieces) as every GPU sees them (peer access, or the same device).
template <class T>
struct PeerVectors {
  const T* p[kMgpuMaxGpus];
  int lc0[kMgpuMaxGpus];  // GEMV^T gather: the first local column of each GPU's piece
  int count;
};

// y_e = alpha (p_0[e] + p_1[e] + ... in GPU order) + beta y_e (beta == 0: y not read), e < n: the
// P2P reduction (the G partials), and after NCCL's allreduce (one vector, count = 1).
template <class T>
__global__ void sum_partials_kernel(int n, PeerVectors<T> parts, T alpha, T beta, Strided<T> y) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    T s = parts.p[0][e];
    for (int r = 1; r < parts.count; ++r) s += parts.p[r][e];
    y[e] = beta == T(0) ? alpha * s : alpha * s + beta * y[e];
  }
}

// y_e = alpha piece_{owner}[local index] + beta y_e for the global columns col_offset + e, e < n:
// GEMV^T's gather of the GPUs' pieces (piece r holds GPU r's columns from its local column lc0[r]).
template <class T>
__global__ void gather_pieces_kernel(int n, int col_offset, BlockCyclicLayout layout, PeerVectors<T> pieces, T alpha,
                                     T beta, Strided<T> y) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int j = col_offset + static_cast<int>(e);
    const int r = layout.owner(j);
    const T v = pieces.p[r][layout.local_col(j) - pieces.lc0[r]];
    y[e] = beta == T(0) ? alpha * v : alpha * v + beta * y[e];
  }
}

// xl[k] = x[global column of local column lc0 + k - col_offset], k < count: the elements of x at a
// GPU's local columns, contiguous.
template <class T>
__global__ void gather_x_kernel(int count, int lc0, int col_offset, BlockCyclicLayout layout, int gpu,
                                Strided<const T> x, T* __restrict__ xl) {
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long long>(gridDim.x) * blockDim.x)
    xl[k] = blas2::load_x(x, layout.global_col(gpu, lc0 + static_cast<int>(k)) - col_offset);
}

inline dim3 elementwise_grid(long long n) {
  const long long blocks = (n + 255) / 256;
  return dim3(static_cast<unsigned>(blocks < 2048 ? (blocks > 0 ? blocks : 1) : 2048));
}

// NCCL (mgpu_context.cu; kNotSupported in a build without NCCL): in-place sum of the G buffers of
// `count` elements, and the gather of G pieces of `count` elements each into every GPU's recv
// buffer (GPU r's piece at recv + r count), on the call's streams, as one NCCL group.
Status nccl_all_reduce_sum(const MgpuContext::Impl& ctx, Exec& ex, void* const* buffers, std::size_t count,
                           std::size_t element_bytes);
Status nccl_all_gather(const MgpuContext::Impl& ctx, Exec& ex, const void* const* send, void* const* recv,
                       std::size_t count, std::size_t element_bytes);

// Checks shared by SYMV and GEMV: the layout, ldl, increments (kInvalidValue) and the per-GPU arrays
// (kNullPointer): local[q] may be null only for a GPU without local columns.
template <class T>
Status check_layout(const BlockCyclicMatrix<T>& A, int incx, int incy) {
  const BlockCyclicLayout& L = A.layout;
  if (L.rows < 0 || L.cols < 0 || L.block < 1 || L.gpus < 1 || L.gpus > kMgpuMaxGpus) return Status::kInvalidValue;
  if (A.ldl < (L.rows > 1 ? L.rows : 1) || incx == 0 || incy == 0) return Status::kInvalidValue;
  return Status::kSuccess;
}

template <class T>
Status check_pointers(const BlockCyclicMatrix<T>& A, const T* const* x, T* const* y, void* const* workspace,
                      bool need_workspace) {
  if (!A.local || !x || !y || (need_workspace && !workspace)) return Status::kNullPointer;
  for (int q = 0; q < A.layout.gpus; ++q) {
    if (!x[q] || !y[q] || (need_workspace && !workspace[q])) return Status::kNullPointer;
    if (!A.local[q] && A.layout.local_cols(q) > 0) return Status::kNullPointer;
  }
  return Status::kSuccess;
}

}  // namespace mgpu
}  // namespace gpuprobe::kernels
