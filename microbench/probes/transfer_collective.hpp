// NCCL collectives over GPUs 0 .. G-1 driven by this one process (built only with NCCL): the
// communicators, the per-rank buffers and the calls that the transfer.collective probe times and
// tests/gpu/collective_test.cu checks against a host reference.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "probes/transfer_collective_plan.hpp"

namespace gpuprobe {

// One blocking NCCL communicator per GPU 0 .. ranks-1, all made by this process (ncclCommInitAll),
// each with a non-blocking stream and an end event created on its GPU. NCCL_NVLS_ENABLE=0 is forced
// before the communicators are made (check_nccl.hpp).
class NcclClique {
 public:
  explicit NcclClique(int ranks);
  // Waits (bounded) for every rank's stream, then destroys the communicators; after an abort, only
  // the streams and events.
  ~NcclClique();
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;

  int ranks() const { return static_cast<int>(comms_.size()); }
  int device(int rank) const { return rank; }
  ncclComm_t comm(int rank) const { return comms_.at(rank); }
  cudaStream_t stream(int rank) const { return streams_.at(rank); }
  cudaEvent_t end_event(int rank) const { return end_events_.at(rank); }

  // Waits until every rank's stream is idle, at most timeout_s in all. On an asynchronous NCCL error,
  // a CUDA error or the timeout it aborts every communicator (their kernels stop) and throws: a
  // collective that cannot complete ends the run with one line, never a hang.
  void synchronize(double timeout_s);
  bool aborted() const { return aborted_; }

 private:
  void abort_all() noexcept;
  void release() noexcept;

  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> end_events_;
  bool aborted_ = false;
};

// How long a bounded wait gives a collective: far above the slowest (1 GiB over PCIe, ~0.1 s), well
// below anything a user would sit through.
constexpr double kCollectiveWaitSeconds = 60.0;

// A cudaMalloc'd float array on one device, freed on that device.
class RankBuffer {
 public:
  RankBuffer() = default;
  RankBuffer(int device, std::size_t count);
  ~RankBuffer();
  RankBuffer(RankBuffer&& other) noexcept;
  RankBuffer& operator=(RankBuffer&& other) noexcept;
  RankBuffer(const RankBuffer&) = delete;
  RankBuffer& operator=(const RankBuffer&) = delete;
  float* data() const { return data_; }
  std::size_t size() const { return count_; }
  int device() const { return device_; }

 private:
  int device_ = 0;
  float* data_ = nullptr;
  std::size_t count_ = 0;
};

// Every rank's send and receive buffer (index = rank).
struct CollectiveBuffers {
  std::vector<RankBuffer> send, recv;
};
// Buffers of send_count and recv_count floats on every rank of the clique, uninitialised.
CollectiveBuffers make_collective_buffers(const NcclClique& clique, std::size_t send_count, std::size_t recv_count);

// Enqueues `op` (float; sum for the reductions; root kCollectiveRoot) on every rank's stream within
// one ncclGroupStart/ncclGroupEnd: all ranks' calls or none. Throws if a buffer is too small.
void enqueue_collective(const NcclClique& clique, CollectiveOp op, const CollectiveCounts& counts,
                        const CollectiveBuffers& buffers);

// The same, bracketed by `origin`, a stream of the current device, with `fork` an event created on
// that device: every rank's stream first waits for what origin has queued so far, and origin then
// waits for every rank's end event. Events on origin before and after span the collective on every
// rank, from the first start to the last end. The current device is left as it was.
void enqueue_collective_joined(const NcclClique& clique, cudaStream_t origin, cudaEvent_t fork, CollectiveOp op,
                               const CollectiveCounts& counts, const CollectiveBuffers& buffers);

// The NCCL library in use (ncclGetVersion), e.g. "2.30.7".
std::string nccl_version_text();
// Every NCCL_* variable of this process's environment, sorted, "NAME=value" separated by spaces
// (';' in a value becomes ','): what decides NCCL's algorithms, protocols and transports.
std::string nccl_environment_text();

}  // namespace gpuprobe
