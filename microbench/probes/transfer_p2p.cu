// Peer-to-peer matrix (nvbandwidth's device-to-device tests, cuda-samples' p2pBandwidthLatencyTest),
// for every ordered pair of GPUs with peer access both ways:
//   transfer.p2p          bandwidth of size_bytes (256 MiB) copies: copy engine (cudaMemcpyPeerAsync)
//                         or SMs (a copy kernel), issued by the source (form write: push) or the
//                         destination (form read: pull), one way or both ways at once
//   transfer.p2p_latency  time per 4-byte cudaMemcpyPeerAsync, 100 back to back (the samples' method)
//   transfer.p2p_chase    ns per dependent load of a kernel on dst chasing a chain in src's memory
// Every copy runs on a stream of the device that issues it, forked from and joined back into the
// harness's timed stream (P2pLanes, transfer_p2p.hpp): both directions of a bidirectional transfer
// are in flight at once, and the events span the first start to the last end.
// With fewer than two GPUs (or no peer access) registration prints one line and adds no entry.
// docs/probes.md#peer-to-peer.
#include "probes/transfer_p2p.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuprobe/check.hpp"
#include "harness/device.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "probes/transfer_copy.hpp"
#include "probes/transfer_plan.hpp"

namespace gpuprobe {

// ------------------------------------------------------------------------------------------------
// Shared with the GPU tests (transfer_p2p.hpp)

const char* p2p_engine_name(P2pEngine engine) { return engine == P2pEngine::kCopyEngine ? "ce" : "sm"; }
const char* p2p_form_name(P2pForm form) { return form == P2pForm::kWrite ? "write" : "read"; }
const char* p2p_direction_name(P2pDirection direction) {
  return direction == P2pDirection::kOneWay ? "uni" : "bidir";
}

void p2p_enable_access(int device, int peer) {
  static std::set<std::pair<int, int>> enabled;
  if (enabled.count({device, peer})) return;
  DeviceScope on(device);
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled)
    cudaGetLastError();  // enabled before (by another part of the process): clear the error state
  else
    GP_CUDA_CHECK(status);
  enabled.insert({device, peer});
}

int p2p_issuer(P2pForm form, int src_device, int dst_device) {
  return form == P2pForm::kWrite ? src_device : dst_device;
}

void p2p_enqueue_copy(P2pEngine engine, P2pForm form, const P2pCopy& copy, cudaStream_t stream) {
  DeviceScope on(p2p_issuer(form, copy.src_device, copy.dst_device));
  if (engine == P2pEngine::kCopyEngine)
    GP_CUDA_CHECK(cudaMemcpyPeerAsync(copy.dst, copy.dst_device, copy.src, copy.src_device, copy.bytes, stream));
  else
    transfer_sm_copy(copy.src, copy.dst, copy.bytes, stream);
}

P2pLanes::P2pLanes(int timing_device, const std::vector<int>& devices) : timing_device_(timing_device) {
  {
    DeviceScope on(timing_device);
    GP_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  }
  for (int device : devices) {
    if (std::any_of(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.device == device; })) continue;
    DeviceScope on(device);
    Lane lane{device, nullptr, nullptr};
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
    lanes_.push_back(lane);  // owned from here: the destructor frees what exists
    GP_CUDA_CHECK(cudaEventCreateWithFlags(&lanes_.back().done, cudaEventDisableTiming));
  }
}

P2pLanes::~P2pLanes() {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return;
  // A stream destroyed with work pending is released once that work completes (CUDA's rule).
  for (const Lane& lane : lanes_) {
    if (cudaSetDevice(lane.device) != cudaSuccess) continue;
    if (lane.done) cudaEventDestroy(lane.done);
    cudaStreamDestroy(lane.stream);
  }
  if (cudaSetDevice(timing_device_) == cudaSuccess && fork_) cudaEventDestroy(fork_);
  cudaSetDevice(current);
}

cudaStream_t P2pLanes::stream(int device) const {
  for (const Lane& lane : lanes_)
    if (lane.device == device) return lane.stream;
  throw Error("p2p: no stream for GPU " + std::to_string(device));
}

void P2pLanes::fork(cudaStream_t timed) {
  {
    DeviceScope on(timing_device_);
    GP_CUDA_CHECK(cudaEventRecord(fork_, timed));
  }
  for (const Lane& lane : lanes_) {
    DeviceScope on(lane.device);
    GP_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, fork_, 0));
  }
}

void P2pLanes::join(cudaStream_t timed) {
  for (const Lane& lane : lanes_) {
    {
      DeviceScope on(lane.device);
      GP_CUDA_CHECK(cudaEventRecord(lane.done, lane.stream));
    }
    DeviceScope on(timing_device_);
    GP_CUDA_CHECK(cudaStreamWaitEvent(timed, lane.done, 0));
  }
}

void p2p_enqueue_transfer(P2pLanes& lanes, P2pEngine engine, P2pForm form, const std::vector<P2pCopy>& copies,
                          cudaStream_t timed) {
  lanes.fork(timed);
  for (const P2pCopy& copy : copies)
    p2p_enqueue_copy(engine, form, copy, lanes.stream(p2p_issuer(form, copy.src_device, copy.dst_device)));
  lanes.join(timed);
}

std::uint64_t P2pChain::element_at(std::uint64_t address) const {
  const auto base = reinterpret_cast<std::uint64_t>(memory);
  if (address < base || (address - base) % spacing != 0 || (address - base) / spacing >= elements) return elements;
  return (address - base) / spacing;
}

namespace {

__global__ void p2p_build_chain_kernel(P2pChain chain, ChainOrder order) {
  const std::uint64_t n = chain.elements;
  for (std::uint64_t p = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; p < n;
       p += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t here = chain_position_to_element(order, p);
    const std::uint64_t next = chain_position_to_element(order, p + 1 == n ? 0 : p + 1);
    *reinterpret_cast<std::uint64_t*>(chain.address_of(here)) = chain.address_of(next);
  }
}

__device__ __forceinline__ std::uint64_t p2p_global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread; the loop is nothing but dependent loads: the loaded value is the next address.
__global__ void p2p_chase_kernel(std::uint64_t start, std::uint64_t hops, std::uint64_t* result) {
  std::uint64_t p = start;
  const std::uint64_t t0 = p2p_global_timer_ns();
  const long long c0 = clock64();
#pragma unroll 8
  for (std::uint64_t i = 0; i < hops; ++i) asm volatile("ld.volatile.global.u64 %0, [%0];" : "+l"(p) : : "memory");
  const long long c1 = clock64();
  const std::uint64_t t1 = p2p_global_timer_ns();
  result[0] = p;
  result[1] = static_cast<std::uint64_t>(c1 - c0);
  result[2] = t1 - t0;
}

}  // namespace

void p2p_build_chain(int memory_device, const P2pChain& chain) {
  if (chain.elements < 2 || chain.spacing < 8 || chain.spacing % 8 != 0)
    throw Error("p2p: a chain needs at least 2 elements and a spacing that is a multiple of 8 bytes");
  DeviceScope on(memory_device);
  const std::uint64_t blocks = std::min<std::uint64_t>((chain.elements + 255) / 256, 4096);
  p2p_build_chain_kernel<<<static_cast<unsigned>(blocks), 256>>>(chain, chain.order());
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

void p2p_chase(std::uint64_t start, std::uint64_t hops, std::uint64_t* result, cudaStream_t stream) {
  p2p_chase_kernel<<<1, 1, 0, stream>>>(start, hops, result);
  GP_CUDA_CHECK_LAUNCH();
}

// ------------------------------------------------------------------------------------------------
// The probes

namespace {

constexpr std::size_t kP2pMaxBytes = std::size_t(256) << 20;
// cuda-samples' p2pBandwidthLatencyTest times 100 back-to-back 4-byte copies behind a blocking kernel;
// so does transfer.p2p_latency (behind the launch gate).
constexpr int kLatencyCopies = 100;
// nvbandwidth's device-to-device latency chain: 2 MiB, one pointer per 128-byte line (16384 elements).
// It stays in the owner's L2 (tens of MiB on the GPUs this runs on): a hop is the link's round trip
// plus an L2 hit on the far side, not a DRAM or TLB miss there.
constexpr std::uint64_t kChainElements = std::uint64_t(1) << 14;
constexpr std::uint64_t kChainSpacing = 128;
// Hops per sample: at about a microsecond each, a sample takes milliseconds, so the launch and the
// fork/join between devices (microseconds) add well under 1 % to the time per hop.
constexpr std::uint64_t kChaseHops = std::uint64_t(1) << 13;

// Behind the launch gate: every copy and event of a sample is queued (on two or more devices) before
// the first starts, so the interval holds the GPUs' time, not the host's time to submit it. Device
// memory on both sides: no copy is staged by the host (what keeps transfer.host ungated).
// Every peer-to-peer family names the ordered pair (src, dst): the cell of its matrices (sections/p2p.py).
std::vector<Axis> pair_axes(std::vector<Axis> more = {}) {
  std::vector<Axis> axes{numeric_axis("src", "device", AxisRole::kFixed), numeric_axis("dst", "device", AxisRole::kFixed)};
  axes.insert(axes.end(), more.begin(), more.end());
  return axes;
}
const Field kRank = numeric_field("p2p_performance_rank", "rank");

const ProbeDescriptor& kP2p = declare_family(
    ProbeDescriptor{"transfer.p2p", Figure::kBandwidth,
                    "copies of size bytes (256 MiB) from src to dst (bidir: one each way, both in flight), each on a "
                    "stream of the device that issues it (form write: the source, read: the destination) forked "
                    "from and joined into the timed stream, CUDA events from the first start to the last end; "
                    "bytes = size per copy; ce = cudaMemcpyPeerAsync, sm = a kernel on all SMs of the issuing "
                    "device copying 16-byte words",
                    "", 10, 2}
        .titled("Peer-to-peer bandwidth")
        .with_axes(pair_axes({text_axis("engine", AxisRole::kGroup), text_axis("form", AxisRole::kGroup),
                              text_axis("direction", AxisRole::kGroup)}))
        .with_fields({numeric_field("size", "bytes"), numeric_field("copies", "copies"),
                      numeric_field("issuing_device", "device"), kRank}));
const ProbeDescriptor& kP2pLatency = declare_family(
    ProbeDescriptor{"transfer.p2p_latency", Figure::kTimePerOp,
                    "100 back-to-back 4-byte cudaMemcpyPeerAsync from src to dst on a stream of src (forked from "
                    "and joined into the timed stream), CUDA events / 100",
                    "", 20, 3}
        .titled("Peer-to-peer copy latency")
        .with_axes(pair_axes())
        .with_fields({numeric_field("size", "bytes"), text_field("engine"), text_field("form"), kRank}));
const ProbeDescriptor& kP2pChase = declare_family(
    ProbeDescriptor{"transfer.p2p_chase", Figure::kTimePerOp,
                    "one thread on dst follows 8192 dependent pointers (ld.volatile.global) through a random 2 MiB "
                    "chain in src's memory (one pointer per 128-byte line), on a stream of dst forked from and "
                    "joined into the timed stream; value = CUDA events / hops, cycles_per_op = clock64 in the "
                    "kernel / hops",
                    "", 10, 2}
        .titled("Peer-to-peer load latency (pointer chase)")
        .with_axes(pair_axes())
        .with_fields({numeric_field("chain_bytes", "bytes"), numeric_field("chain_spacing_bytes", "bytes"),
                      text_field("load"), kRank}));

std::size_t p2p_copy_bytes() {
  const Context& ctx = context();
  const std::uint64_t bound = transfer_max_bytes(ctx.options.max_footprint_bytes, ctx.device.total_mem_bytes);
  return static_cast<std::size_t>(std::min<std::uint64_t>(kP2pMaxBytes, bound) / 16 * 16);
}

// Per device: a source of random data (never zeros) and a destination, allocated by the first entry
// that needs the device and kept for the process: 512 MiB allocated and filled per entry would
// cost more than the entry's samples.
struct DeviceBuffers {
  std::unique_ptr<P2pBuffer> source, destination;
};
const DeviceBuffers& p2p_buffers(int device, std::size_t bytes) {
  static std::map<int, DeviceBuffers> buffers;
  auto it = buffers.find(device);
  if (it != buffers.end() && it->second.source->bytes() >= bytes) return it->second;
  DeviceBuffers b;
  b.source = std::make_unique<P2pBuffer>(device, bytes);
  b.destination = std::make_unique<P2pBuffer>(device, bytes);
  DeviceScope on(device);
  fill_uniform(reinterpret_cast<float*>(b.source->data()), bytes / sizeof(float), 0x9e37 + device, 1.f, 2.f);
  GP_CUDA_CHECK(cudaMemset(b.destination->data(), 0x3c, bytes));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  return buffers[device] = std::move(b);
}

// The peer access a copy needs: the issuer's SMs reach the other device's memory (sm); the copy
// engines, both ways (ce: as cuda-samples and nvbandwidth enable it; without it the driver may stage
// the copy through the host).
void enable_for(P2pEngine engine, P2pForm form, const P2pCopy& copy) {
  const int issuer = p2p_issuer(form, copy.src_device, copy.dst_device);
  const int other = issuer == copy.src_device ? copy.dst_device : copy.src_device;
  p2p_enable_access(issuer, other);
  if (engine == P2pEngine::kCopyEngine) p2p_enable_access(other, issuer);
}

// The driver's relative rank of the link between two GPUs (cudaDevP2PAttrPerformanceRank: 0 = best);
// src and dst come from the entry's name.
void record_pair(Measurement& m, int src, int dst) {
  int rank = 0;
  if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, src, dst) == cudaSuccess)
    m.param("p2p_performance_rank", rank);
  else
    cudaGetLastError();
}

void p2p_bandwidth_entry(benchmark::State& state, int src, int dst, P2pEngine engine, P2pForm form,
                         P2pDirection direction) {
  const int self = context().device.index;
  const std::size_t bytes = p2p_copy_bytes();
  const DeviceBuffers& a = p2p_buffers(src, bytes);
  const DeviceBuffers& b = p2p_buffers(dst, bytes);
  std::vector<P2pCopy> copies{{src, a.source->data(), dst, b.destination->data(), bytes}};
  if (direction == P2pDirection::kBoth) copies.push_back({dst, b.source->data(), src, a.destination->data(), bytes});
  std::vector<int> issuers;
  for (const P2pCopy& c : copies) {
    enable_for(engine, form, c);
    issuers.push_back(p2p_issuer(form, c.src_device, c.dst_device));
  }
  P2pLanes lanes(self, issuers);
  Measurement m(state, kP2p, Work{static_cast<double>(bytes) * copies.size(), 0, 1});
  record_pair(m, src, dst);
  m.param("size", static_cast<double>(bytes));
  m.param("copies", static_cast<double>(copies.size()));
  m.param("issuing_device", issuers.front());
  m.time_events([&](cudaStream_t s) { p2p_enqueue_transfer(lanes, engine, form, copies, s); });
}

void p2p_latency_entry(benchmark::State& state, int src, int dst) {
  const int self = context().device.index;
  P2pBuffer from(src, 256), to(dst, 256);
  {
    DeviceScope on(src);
    GP_CUDA_CHECK(cudaMemset(from.data(), 0x5a, from.bytes()));
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const P2pCopy copy{src, from.data(), dst, to.data(), 4};
  enable_for(P2pEngine::kCopyEngine, P2pForm::kWrite, copy);
  const std::vector<P2pCopy> copies(kLatencyCopies, copy);  // one after the other on src's stream
  P2pLanes lanes(self, {src});
  Measurement m(state, kP2pLatency, Work{0, 0, static_cast<double>(kLatencyCopies)});
  record_pair(m, src, dst);
  m.param("size", 4);
  m.tag("engine", "ce");
  m.tag("form", "write");
  m.time_events([&](cudaStream_t s) { p2p_enqueue_transfer(lanes, P2pEngine::kCopyEngine, P2pForm::kWrite, copies, s); });
}

void p2p_chase_entry(benchmark::State& state, int src, int dst) {
  const int self = context().device.index;
  p2p_enable_access(dst, src);  // the kernel on dst loads from src's memory
  P2pBuffer chain_memory(src, kChainElements * kChainSpacing);
  P2pBuffer result(dst, 3 * sizeof(std::uint64_t));
  P2pChain chain;
  chain.memory = reinterpret_cast<std::uint64_t*>(chain_memory.data());
  chain.elements = kChainElements;
  chain.spacing = kChainSpacing;
  chain.seed = 0x5eed + 64 * src + dst;
  p2p_build_chain(src, chain);
  const std::uint64_t expected_end = chain.address_of(chain.element_after(kChaseHops));
  P2pLanes lanes(self, {dst});
  Measurement m(state, kP2pChase, Work{0, 0, static_cast<double>(kChaseHops)});
  record_pair(m, src, dst);
  m.param("chain_bytes", static_cast<double>(kChainElements * kChainSpacing));
  m.param("chain_spacing_bytes", static_cast<double>(kChainSpacing));
  m.tag("load", "volatile");
  m.time_events(
      [&](cudaStream_t s) {
        lanes.fork(s);
        {
          DeviceScope on(dst);
          p2p_chase(chain.start(), kChaseHops, reinterpret_cast<std::uint64_t*>(result.data()), lanes.stream(dst));
        }
        lanes.join(s);
      },
      [&](Sample& sample) {
        // The sample has completed (the timed stream waited for dst's lane): read what the kernel measured.
        std::uint64_t words[3] = {0, 0, 0};
        {
          DeviceScope on(dst);
          GP_CUDA_CHECK(cudaMemcpy(words, result.data(), sizeof(words), cudaMemcpyDeviceToHost));
        }
        if (words[0] != expected_end) throw Error("transfer.p2p_chase: the chase ended off its chain");
        sample.cycles = static_cast<double>(words[1]);
        if (words[2] > 0) sample.clock_mhz = static_cast<double>(words[1]) / static_cast<double>(words[2]) * 1e3;
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
    context().skip_notes.push_back(plan.skip_reason);
    return;
  }
  // Every ordered pair, whichever GPU is probed: each copy runs on the GPU that issues it, and only
  // the timed stream (fork and join) belongs to the probed one.
  for (const auto& [src, dst] : plan.pairs) {
    const std::string s = std::to_string(src), d = std::to_string(dst);
    for (P2pEngine engine : {P2pEngine::kCopyEngine, P2pEngine::kSm})
      for (P2pForm form : {P2pForm::kWrite, P2pForm::kRead})
        for (P2pDirection direction : {P2pDirection::kOneWay, P2pDirection::kBoth})
          register_entry(entry_name(kP2p, {{"src", s}, {"dst", d}, {"engine", p2p_engine_name(engine)},
                                                  {"form", p2p_form_name(form)},
                                                  {"direction", p2p_direction_name(direction)}}),
                         kP2p, [src = src, dst = dst, engine, form, direction](benchmark::State& st) {
                           p2p_bandwidth_entry(st, src, dst, engine, form, direction);
                         });
    register_entry(entry_name(kP2pLatency, {{"src", s}, {"dst", d}}), kP2pLatency,
                   [src = src, dst = dst](benchmark::State& st) { p2p_latency_entry(st, src, dst); });
    register_entry(entry_name(kP2pChase, {{"src", s}, {"dst", d}}), kP2pChase,
                   [src = src, dst = dst](benchmark::State& st) { p2p_chase_entry(st, src, dst); });
  }
}

}  // namespace gpuprobe
