// Peer-to-peer matrix (nvbandwidth's device-to-device tests), for every GPU pair that includes the
// probed device (--device) and has peer access both ways:
//   transfer.p2p          bandwidth at 256 MiB: copy engine (cudaMemcpyPeerAsync) and SM (a kernel on
//                         the probed device pushing to / pulling from the peer), one way and both ways
//   transfer.p2p_latency  time of one 4-byte cudaMemcpyPeerAsync (CUDA events)
// With fewer than two GPUs (or no peer access) registration prints one line and adds no entry.
// docs/probes.md#peer-to-peer.
#include <cstdio>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "harness/device.hpp"
#include "harness/measure.hpp"
#include "probes/transfer_plan.hpp"
#include "probes/transfer_copy.hpp"

namespace gpuprobe {

namespace {

constexpr std::size_t kP2pBytes = std::size_t(256) << 20;

// A cudaMalloc'd buffer on a given device (DeviceBuffer allocates on the current one).
class PeerBuffer {
 public:
  PeerBuffer(int device, std::size_t bytes) : device_(device) {
    int current = 0;
    GP_CUDA_CHECK(cudaGetDevice(&current));
    GP_CUDA_CHECK(cudaSetDevice(device));
    const cudaError_t status = cudaMalloc(&data_, bytes);
    if (status == cudaSuccess) GP_CUDA_CHECK(cudaMemset(data_, 0x3c, bytes));
    GP_CUDA_CHECK(cudaSetDevice(current));
    GP_CUDA_CHECK(status);
  }
  ~PeerBuffer() {
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device_) == cudaSuccess) {
      cudaFree(data_);
      cudaSetDevice(current);
    }
  }
  PeerBuffer(const PeerBuffer&) = delete;
  PeerBuffer& operator=(const PeerBuffer&) = delete;
  void* data() const { return data_; }
  int device() const { return device_; }

 private:
  int device_;
  void* data_ = nullptr;
};

void enable_peer_access(int from, int to) {
  int current = 0;
  GP_CUDA_CHECK(cudaGetDevice(&current));
  GP_CUDA_CHECK(cudaSetDevice(from));
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
  GP_CUDA_CHECK(cudaSetDevice(current));
  if (status != cudaErrorPeerAccessAlreadyEnabled) GP_CUDA_CHECK(status);
}

const ProbeDescriptor kP2p{"transfer.p2p", Figure::kBandwidth,
                           "256 MiB from src to dst (bidir: also dst to src at once, two streams), CUDA events; "
                           "ce = cudaMemcpyPeerAsync, sm = a 16-byte-word copy kernel on the probed device",
                           "", 10, 2, 0, /*launch_gate=*/false};
// Ungated, as transfer.host: a copy's figure is from the API call to its completion.
const ProbeDescriptor kP2pLatency{"transfer.p2p_latency", Figure::kTimePerOp,
                                  "one 4-byte cudaMemcpyPeerAsync from src to dst, CUDA events", "", 20, 3, 0,
                                  /*launch_gate=*/false};

void p2p_entry(benchmark::State& state, int src, int dst, bool sm, bool bidir) {
  const int self = context().device.index;
  enable_peer_access(self, self == src ? dst : src);
  PeerBuffer a_src(src, kP2pBytes), b_dst(dst, kP2pBytes), b_src(dst, kP2pBytes), a_dst(src, kP2pBytes);
  cudaStream_t side;
  cudaEvent_t fork, join;
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  GP_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  GP_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  auto copy = [&](const PeerBuffer& from, const PeerBuffer& to, cudaStream_t s) {
    if (sm)
      transfer_sm_copy(from.data(), to.data(), kP2pBytes, s);  // runs on the probed device
    else
      GP_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), to.device(), from.data(), from.device(), kP2pBytes, s));
  };
  Measurement m(state, kP2p, Work{(bidir ? 2.0 : 1.0) * kP2pBytes, 0, 1});
  m.param("src_device", src);
  m.param("dst_device", dst);
  m.param("size_bytes", static_cast<double>(kP2pBytes));
  m.tag("engine", sm ? "sm" : "ce");
  m.tag("direction", bidir ? "bidir" : "uni");
  m.time_events([&](cudaStream_t s) {
    if (!bidir) return copy(a_src, b_dst, s);
    GP_CUDA_CHECK(cudaEventRecord(fork, s));
    GP_CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0));
    copy(a_src, b_dst, s);
    copy(b_src, a_dst, side);
    GP_CUDA_CHECK(cudaEventRecord(join, side));
    GP_CUDA_CHECK(cudaStreamWaitEvent(s, join, 0));
  });
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(side);
}

void p2p_latency_entry(benchmark::State& state, int src, int dst) {
  const int self = context().device.index;
  enable_peer_access(self, self == src ? dst : src);
  PeerBuffer from(src, 4), to(dst, 4);
  Measurement m(state, kP2pLatency, Work{0, 0, 1});
  m.param("src_device", src);
  m.param("dst_device", dst);
  m.tag("engine", "ce");
  m.time_events([&](cudaStream_t s) {
    GP_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, 4, s));
  });
}

}  // namespace

void register_p2p_probes() {
  const int count = device_count();
  const P2pPlan plan = plan_p2p(count, [](int a, int b) {
    int ok = 0;
    GP_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, a, b));
    return ok != 0;
  });
  if (!plan.skip_reason.empty()) {
    std::fprintf(stderr, "gpuprobe: %s\n", plan.skip_reason.c_str());
    return;
  }
  const int self = context().device.index;
  for (const auto& [src, dst] : plan.pairs) {
    if (src != self && dst != self) continue;  // SM copies run on the probed device
    for (bool sm : {false, true})
      for (bool bidir : {false, true}) {
        const std::string name = entry_name(kP2p.family, {{"src", std::to_string(src)}, {"dst", std::to_string(dst)},
                                                          {"engine", sm ? "sm" : "ce"},
                                                          {"direction", bidir ? "bidir" : "uni"}});
        register_entry(name, kP2p, [src = src, dst = dst, sm, bidir](benchmark::State& st) {
          p2p_entry(st, src, dst, sm, bidir);
        });
      }
    register_entry(entry_name(kP2pLatency.family, {{"src", std::to_string(src)}, {"dst", std::to_string(dst)}}),
                   kP2pLatency, [src = src, dst = dst](benchmark::State& st) { p2p_latency_entry(st, src, dst); });
  }
}

}  // namespace gpuprobe
