// Collective ceilings through NCCL (built only when NCCL is found; docs/probes.md#collectives):
//   transfer.collective  allreduce (sum), reduce (sum, root 0), reducescatter (sum), allgather and
//                        broadcast (root 0) of floats over the first G GPUs, G = 2, 4, 8 ... up to the
//                        GPUs visible, one rank per GPU in this process (ncclCommInitAll); sizes 8 B to
//                        1 GiB, one per octave. value = algbw (GB/s) = size / time; busbw_gbps =
//                        algbw x nccl-tests' factor (transfer_collective_plan.hpp).
// With fewer than two GPUs registration prints one line and adds no entry; without NCCL,
// transfer_host.cu prints why it is left out.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/check_nccl.hpp"
#include "harness/device.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "probes/transfer_collective.hpp"
#include "probes/transfer_collective_plan.hpp"

extern char** environ;

namespace gpuprobe {

namespace {

// Restores the current device on scope exit (also on the way out of an exception).
class DeviceRestorer {
 public:
  DeviceRestorer() { GP_CUDA_CHECK(cudaGetDevice(&device_)); }
  ~DeviceRestorer() { cudaSetDevice(device_); }
  DeviceRestorer(const DeviceRestorer&) = delete;
  DeviceRestorer& operator=(const DeviceRestorer&) = delete;
  int device() const { return device_; }

 private:
  int device_ = 0;
};

}  // namespace

// ------------------------------------------------------------------------------------------ clique

NcclClique::NcclClique(int ranks) {
  if (ranks < 1) throw UsageError("NCCL clique: at least 1 rank, got " + std::to_string(ranks));
  nccl_force_environment();
  DeviceRestorer restore;
  std::vector<int> devices(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) devices[r] = r;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(ranks), nullptr);
  GP_NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, devices.data()));
  comms_ = std::move(comms);
  try {
    for (int r = 0; r < ranks; ++r) {
      GP_CUDA_CHECK(cudaSetDevice(device(r)));
      cudaStream_t s = nullptr;
      GP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams_.push_back(s);
      cudaEvent_t e = nullptr;
      GP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      end_events_.push_back(e);
    }
  } catch (...) {
    release();
    throw;
  }
}

NcclClique::~NcclClique() {
  if (!aborted_) {
    try {
      synchronize(kCollectiveWaitSeconds);  // aborts on failure: a stuck kernel is never destroyed under
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpuprobe: NCCL clique teardown: %s\n", e.what());
    }
  }
  release();
}

void NcclClique::release() noexcept {
  int current = 0;
  const bool have_current = cudaGetDevice(&current) == cudaSuccess;
  // Communicators of one process are destroyed one after the other from one thread (as nccl-tests
  // does); aborted ones were freed by ncclCommAbort.
  if (!aborted_)
    for (ncclComm_t c : comms_)
      if (c) ncclCommDestroy(c);
  comms_.clear();
  for (std::size_t r = 0; r < streams_.size(); ++r) {
    cudaSetDevice(static_cast<int>(r));
    cudaStreamDestroy(streams_[r]);
  }
  for (std::size_t r = 0; r < end_events_.size(); ++r) {
    cudaSetDevice(static_cast<int>(r));
    cudaEventDestroy(end_events_[r]);
  }
  streams_.clear();
  end_events_.clear();
  if (have_current) cudaSetDevice(current);
}

void NcclClique::abort_all() noexcept {
  if (aborted_) return;
  aborted_ = true;
  for (ncclComm_t c : comms_)
    if (c) ncclCommAbort(c);
}

void NcclClique::synchronize(double timeout_s) {
  if (aborted_) throw Error("NCCL clique: the communicators were aborted earlier");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (int r = 0; r < ranks(); ++r) {
    for (;;) {
      const cudaError_t status = cudaStreamQuery(streams_[r]);
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady) {
        abort_all();
        GP_CUDA_CHECK(status);
      }
      ncclResult_t async = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comms_[r], &async);
      if (query != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
        const ncclResult_t bad = query != ncclSuccess ? query : async;
        abort_all();
        throw NcclError(bad, std::string("NCCL error on rank ") + std::to_string(r) + " (" +
                                 ncclGetErrorString(bad) + "): communicators aborted");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        abort_all();
        throw Error("an NCCL collective on rank " + std::to_string(r) + " did not complete within " +
                    std::to_string(static_cast<int>(timeout_s)) + " s: communicators aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

// ----------------------------------------------------------------------------------------- buffers

RankBuffer::RankBuffer(int device, std::size_t count) : device_(device), count_(count) {
  DeviceRestorer restore;
  GP_CUDA_CHECK(cudaSetDevice(device));
  GP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(count, 1) * sizeof(float)));
}

RankBuffer::~RankBuffer() {
  if (!data_) return;
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device_) == cudaSuccess) {
    cudaFree(data_);
    cudaSetDevice(current);
  }
}

RankBuffer::RankBuffer(RankBuffer&& other) noexcept
    : device_(other.device_), data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}

RankBuffer& RankBuffer::operator=(RankBuffer&& other) noexcept {
  if (this != &other) {
    RankBuffer old(std::move(*this));  // frees the current array on its device
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

CollectiveBuffers make_collective_buffers(const NcclClique& clique, std::size_t send_count, std::size_t recv_count) {
  CollectiveBuffers b;
  for (int r = 0; r < clique.ranks(); ++r) {
    b.send.emplace_back(clique.device(r), send_count);
    b.recv.emplace_back(clique.device(r), recv_count);
  }
  return b;
}

// ------------------------------------------------------------------------------------------- calls

void enqueue_collective(const NcclClique& clique, CollectiveOp op, const CollectiveCounts& counts,
                        const CollectiveBuffers& buffers) {
  const int ranks = clique.ranks();
  if (static_cast<int>(buffers.send.size()) != ranks || static_cast<int>(buffers.recv.size()) != ranks)
    throw Error("collective: buffers for " + std::to_string(buffers.send.size()) + " ranks, clique of " +
                std::to_string(ranks));
  for (int r = 0; r < ranks; ++r)
    if (buffers.send[r].size() < counts.send || buffers.recv[r].size() < counts.recv)
      throw Error(std::string("collective: ") + collective_name(op) + " needs " + std::to_string(counts.send) +
                  " + " + std::to_string(counts.recv) + " floats per rank, rank " + std::to_string(r) + " has " +
                  std::to_string(buffers.send[r].size()) + " + " + std::to_string(buffers.recv[r].size()));
  DeviceRestorer restore;
  GP_NCCL_CHECK(ncclGroupStart());
  try {
    for (int r = 0; r < ranks; ++r) {
      GP_CUDA_CHECK(cudaSetDevice(clique.device(r)));
      const float* send = buffers.send[r].data();
      float* recv = buffers.recv[r].data();
      const std::size_t n = counts.nccl_count;
      ncclComm_t comm = clique.comm(r);
      cudaStream_t s = clique.stream(r);
      switch (op) {
        case CollectiveOp::kAllReduce: GP_NCCL_CHECK(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, s)); break;
        case CollectiveOp::kReduce:
          GP_NCCL_CHECK(ncclReduce(send, recv, n, ncclFloat, ncclSum, kCollectiveRoot, comm, s));
          break;
        case CollectiveOp::kReduceScatter:
          GP_NCCL_CHECK(ncclReduceScatter(send, recv, n, ncclFloat, ncclSum, comm, s));
          break;
        case CollectiveOp::kAllGather: GP_NCCL_CHECK(ncclAllGather(send, recv, n, ncclFloat, comm, s)); break;
        case CollectiveOp::kBroadcast:
          GP_NCCL_CHECK(ncclBroadcast(send, recv, n, ncclFloat, kCollectiveRoot, comm, s));
          break;
      }
    }
  } catch (...) {
    ncclGroupEnd();  // closes the group (NCCL then drops the calls made so far) before the error goes on
    throw;
  }
  GP_NCCL_CHECK(ncclGroupEnd());
}

void enqueue_collective_joined(const NcclClique& clique, cudaStream_t origin, cudaEvent_t fork, CollectiveOp op,
                               const CollectiveCounts& counts, const CollectiveBuffers& buffers) {
  DeviceRestorer restore;  // the origin's device
  GP_CUDA_CHECK(cudaEventRecord(fork, origin));
  for (int r = 0; r < clique.ranks(); ++r) {
    GP_CUDA_CHECK(cudaSetDevice(clique.device(r)));
    GP_CUDA_CHECK(cudaStreamWaitEvent(clique.stream(r), fork, 0));  // cross-device wait
  }
  enqueue_collective(clique, op, counts, buffers);
  for (int r = 0; r < clique.ranks(); ++r) {
    GP_CUDA_CHECK(cudaSetDevice(clique.device(r)));
    GP_CUDA_CHECK(cudaEventRecord(clique.end_event(r), clique.stream(r)));
  }
  GP_CUDA_CHECK(cudaSetDevice(restore.device()));
  for (int r = 0; r < clique.ranks(); ++r) GP_CUDA_CHECK(cudaStreamWaitEvent(origin, clique.end_event(r), 0));
}

std::string nccl_version_text() {
  int code = 0;
  GP_NCCL_CHECK(ncclGetVersion(&code));
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string nccl_environment_text() {
  std::vector<std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string v(*e);
    if (v.rfind("NCCL_", 0) != 0) continue;
    std::replace(v.begin(), v.end(), ';', ',');  // ';' separates the label's fields
    vars.push_back(v);
  }
  std::sort(vars.begin(), vars.end());
  std::string out;
  for (const std::string& v : vars) out += (out.empty() ? "" : " ") + v;
  return out;
}

// ------------------------------------------------------------------------------------------- probe

namespace {

// The record lives in transfer_collective_plan.cpp, built with or without NCCL.
const ProbeDescriptor& kCollective = collective_record();

// One group's communicators and buffers, kept from one entry to the next (the entries of a group are
// registered together). The buffers hold the largest size on every rank, send and receive, filled
// with random floats once: the collectives are out of place, so the send buffers stay random and the
// receive buffers hold sums and copies of them, never zeros.
struct GroupWorkspace {
  std::unique_ptr<NcclClique> clique;  // declared first: destroyed after the buffers
  CollectiveBuffers buffers;
};

// The group in use; a new group size frees the previous group first.
GroupWorkspace* current_workspace = nullptr;

// At a normal exit the last group is freed by an atexit handler: registered after the CUDA runtime
// and NCCL have set up their own teardown, it runs before theirs, so the communicators are destroyed
// while CUDA still works. A failed run ends with _Exit (fail()), where nothing is torn down.
void free_workspace_at_exit() {
  delete current_workspace;
  current_workspace = nullptr;
}

GroupWorkspace& workspace_for(int ranks, std::uint64_t max_bytes) {
  GroupWorkspace*& current = current_workspace;
  if (current && current->clique->ranks() == ranks) return *current;
  delete current;
  current = nullptr;
  auto ws = std::make_unique<GroupWorkspace>();
  ws->clique = std::make_unique<NcclClique>(ranks);
  const std::size_t count = static_cast<std::size_t>(max_bytes / kCollectiveElementBytes);
  ws->buffers = make_collective_buffers(*ws->clique, count, count);
  {
    DeviceRestorer restore;
    for (int r = 0; r < ranks; ++r) {
      GP_CUDA_CHECK(cudaSetDevice(ws->clique->device(r)));
      cudaStream_t s = ws->clique->stream(r);
      fill_uniform(ws->buffers.send[r].data(), count, 0xc011ec7 + 2 * r, -1.f, 1.f, s);
      fill_uniform(ws->buffers.recv[r].data(), count, 0xc011ec7 + 2 * r + 1, -1.f, 1.f, s);
    }
  }
  ws->clique->synchronize(kCollectiveWaitSeconds);
  current = ws.release();
  // Registered once NCCL has initialised (and set up whatever teardown of its own): runs before it.
  static const bool at_exit = std::atexit(free_workspace_at_exit) == 0;
  if (!at_exit) throw Error("transfer.collective: could not register the communicators' teardown at exit");
  return *current;
}

class ForkEvent {
 public:
  ForkEvent() { GP_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~ForkEvent() { cudaEventDestroy(event_); }
  ForkEvent(const ForkEvent&) = delete;
  ForkEvent& operator=(const ForkEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

void collective_entry(benchmark::State& state, CollectiveOp op, int ranks, std::uint64_t size,
                      std::uint64_t max_bytes) {
  const int self = context().device.index;
  GP_CUDA_CHECK(cudaSetDevice(self));
  GroupWorkspace& ws = workspace_for(ranks, max_bytes);
  GP_CUDA_CHECK(cudaSetDevice(self));
  const CollectiveCounts counts = collective_counts(op, ranks, size);
  // One untimed call first, waited for with a bound: NCCL connects the ranks for an algorithm at its
  // first use, so a path that cannot connect ends the run with an error here rather than hanging the
  // timed samples, and the connection's one-time cost stays out of the warm-up.
  enqueue_collective(*ws.clique, op, counts, ws.buffers);
  ws.clique->synchronize(kCollectiveWaitSeconds);

  const ForkEvent fork;  // on the probed device, where the harness's stream lives
  const double factor = busbw_factor(op, ranks);
  Measurement m(state, kCollective, Work{static_cast<double>(size), 0, 1});
  m.tag("dtype", "float");  // op, ranks and size come from the entry's name
  if (op != CollectiveOp::kAllGather && op != CollectiveOp::kBroadcast) m.tag("redop", "sum");
  m.param("count", static_cast<double>(counts.nccl_count));
  m.param("busbw_factor", factor);
  if (op == CollectiveOp::kReduce || op == CollectiveOp::kBroadcast) m.param("root", kCollectiveRoot);
  m.tag("nccl_version", nccl_version_text());
  m.tag("nccl_env", nccl_environment_text());
  m.time_events([&](cudaStream_t s) { enqueue_collective_joined(*ws.clique, s, fork.get(), op, counts, ws.buffers); });
  // busbw from the figure's own statistics (absent in a counter pass, which takes no samples).
  const std::pair<const char*, const char*> busbw_of[] = {
      {"value_median", "busbw_gbps"}, {"value_min", "busbw_gbps_min"}, {"value_max", "busbw_gbps_max"}};
  for (const auto& [algbw, busbw] : busbw_of) {
    const auto it = state.counters.find(algbw);
    if (it != state.counters.end()) m.extra(busbw, it->second.value * factor);
  }
}

}  // namespace

void register_collective_probes() {
  nccl_force_environment();  // before anything in this process can initialise NCCL
  const int count = device_count();
  const std::string skip = collective_skip_reason(true, count);
  if (!skip.empty()) {
    context().skip_notes.push_back(skip);
    return;
  }
  const Context& ctx = context();
  const std::uint64_t max_bytes =
      collective_max_bytes(ctx.options.max_footprint_bytes, ctx.device.total_mem_bytes, ctx.options.quick);
  const std::vector<std::uint64_t> sizes = collective_sizes(max_bytes, ctx.options.quick);
  for (int ranks : collective_group_sizes(count)) {
    if (ctx.device.index >= ranks) continue;  // the probed GPU's stream brackets the group: it must be in it
    for (CollectiveOp op : collective_ops())
      for (std::uint64_t size : sizes) {
        if (!collective_size_fits(op, ranks, size)) continue;  // below one float per rank
        register_entry(entry_name(kCollective, {{"op", collective_name(op)},
                                                       {"ranks", std::to_string(ranks)},
                                                       {"size", std::to_string(size)}}),
                       kCollective, [op, ranks, size, max_bytes](benchmark::State& st) {
                         collective_entry(st, op, ranks, size, max_bytes);
                       });
      }
  }
}

}  // namespace gpuprobe
