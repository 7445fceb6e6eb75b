// Host<->device transfers (V&D SC08 §3.1, nvbandwidth's host matrix):
//   transfer.host     H2D, D2H and bidirectional (both at once, two streams); pinned, pageable,
//                     write-combined and cudaHostRegister'ed host memory through the copy engines
//                     (cudaMemcpyAsync), and pinned memory mapped into the GPU read/written by a
//                     kernel (SM-driven, zero-copy); sizes 1 B .. 1 GiB. The alpha-beta model is the
//                     analysis' (sections/transfers.py), fitted from these entries.
//   transfer.memcpy_baseline  plain blocking cudaMemcpy from/to pinned memory, host-timed: the
//                     reference rate a user gets without any care.
// Context keys: PCIe link generation/width (current and max, NVML) and the host thread's NUMA
// node beside gpu_numa_node. docs/probes.md#host-device-transfers.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"
#include "probes/registry.hpp"
#include "probes/transfer_collective_plan.hpp"
#include "probes/transfer_copy.hpp"
#include "probes/transfer_plan.hpp"

namespace gpuprobe {

void register_p2p_probes();  // transfer_p2p.cu
#ifdef GPUPROBE_HAVE_NCCL
void register_collective_probes();  // transfer_collective.cu, built only with NCCL
#endif

namespace {

enum class HostMemory { kPinned, kPageable, kWriteCombined, kRegistered };
enum class Engine { kCopyEngine, kSm };
enum class Direction { kH2D, kD2H, kBidirectional };

const char* memory_name(HostMemory m) {
  switch (m) {
    case HostMemory::kPinned: return "pinned";
    case HostMemory::kPageable: return "pageable";
    case HostMemory::kWriteCombined: return "write_combined";
    case HostMemory::kRegistered: return "registered";
  }
  return "?";
}
const char* engine_name(Engine e) { return e == Engine::kCopyEngine ? "ce" : "sm"; }
const char* direction_name(Direction d) {
  switch (d) {
    case Direction::kH2D: return "h2d";
    case Direction::kD2H: return "d2h";
    case Direction::kBidirectional: return "bidir";
  }
  return "?";
}

// A host allocation of one kind; every byte written once (pageable pages are then resident).
class HostBuffer {
 public:
  HostBuffer(HostMemory kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    switch (kind) {
      case HostMemory::kPinned: GP_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocMapped)); break;
      case HostMemory::kWriteCombined:
        GP_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocWriteCombined | cudaHostAllocMapped));
        break;
      case HostMemory::kPageable:
      case HostMemory::kRegistered:
        data_ = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (!data_) throw Error("transfer: could not allocate " + std::to_string(bytes) + " bytes of host memory");
        std::memset(data_, 0x5a, bytes);
        if (kind == HostMemory::kRegistered) GP_CUDA_CHECK(cudaHostRegister(data_, bytes, cudaHostRegisterMapped));
        break;
    }
    if (kind == HostMemory::kPinned || kind == HostMemory::kWriteCombined) std::memset(data_, 0x5a, bytes);
  }
  ~HostBuffer() {
    if (kind_ == HostMemory::kPinned || kind_ == HostMemory::kWriteCombined) {
      cudaFreeHost(data_);
    } else {
      if (kind_ == HostMemory::kRegistered) cudaHostUnregister(data_);
      std::free(data_);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* data() const { return data_; }
  // The GPU's address of mapped memory (pinned, write-combined, registered).
  void* device_pointer() const {
    void* p = nullptr;
    GP_CUDA_CHECK(cudaHostGetDevicePointer(&p, data_, 0));
    return p;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  HostMemory kind_;
  std::size_t bytes_;
  void* data_ = nullptr;
};

// Buffers for one mode, kept while consecutive entries use the same kind (allocating and pinning
// a GiB takes longer than the whole sweep of a mode).
struct TransferBuffers {
  HostMemory kind;
  std::unique_ptr<HostBuffer> host_src, host_dst;
  DeviceBuffer<unsigned char> dev_src, dev_dst;
};
TransferBuffers& buffers_for(HostMemory kind, std::size_t bytes) {
  static std::unique_ptr<TransferBuffers> current;
  if (!current || current->kind != kind || current->host_src->bytes() < bytes) {
    current.reset();  // free the previous mode's memory first
    auto b = std::make_unique<TransferBuffers>();
    b->kind = kind;
    b->host_src = std::make_unique<HostBuffer>(kind, bytes);
    b->host_dst = std::make_unique<HostBuffer>(kind, bytes);
    b->dev_src = DeviceBuffer<unsigned char>(bytes);
    b->dev_dst = DeviceBuffer<unsigned char>(bytes);
    GP_CUDA_CHECK(cudaMemset(b->dev_src.data(), 0xa5, bytes));
    current = std::move(b);
  }
  return *current;
}

// SM-driven copy: 16-byte words over a grid-stride loop, the tail byte by byte.
__global__ void sm_copy_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                               std::size_t bytes) {
  const std::size_t words = bytes / 16;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* s = reinterpret_cast<const uint4*>(src);
  auto* d = reinterpret_cast<uint4*>(dst);
  for (std::size_t i = first; i < words; i += stride) d[i] = s[i];
  for (std::size_t i = words * 16 + first; i < bytes; i += stride) dst[i] = src[i];
}

}  // namespace

void transfer_sm_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  constexpr int kThreads = 512;
  // The SMs of the device that runs the copy (a peer-to-peer copy may run on a GPU other than the
  // probed one), read once per device: the call sits inside timed host-transfer samples.
  static std::map<int, int> sm_counts;
  int device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  int& sms = sm_counts[device];
  if (sms == 0) GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t needed = (bytes / 16 + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(4) * sms)));
  sm_copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const unsigned char*>(src),
                                                   static_cast<unsigned char*>(dst), bytes);
  GP_CUDA_CHECK_LAUNCH();
}

namespace {

struct Mode {
  HostMemory memory;
  Engine engine;
  Direction direction;
};

// Enqueues one transfer of `bytes` in `mode` on `stream` (bidirectional: the D2H half on a second
// stream forked from and joined back into `stream`, so events on `stream` bracket both).
class TransferOp {
 public:
  TransferOp(const Mode& mode, TransferBuffers& b) : mode_(mode), b_(b) {
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    GP_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    GP_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ~TransferOp() {
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
    cudaStreamDestroy(side_);
  }
  TransferOp(const TransferOp&) = delete;
  TransferOp& operator=(const TransferOp&) = delete;

  void enqueue(std::size_t bytes, cudaStream_t stream) {
    if (mode_.direction == Direction::kH2D) return h2d(bytes, stream);
    if (mode_.direction == Direction::kD2H) return d2h(bytes, stream);
    GP_CUDA_CHECK(cudaEventRecord(fork_, stream));
    GP_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
    h2d(bytes, stream);
    d2h(bytes, side_);
    GP_CUDA_CHECK(cudaEventRecord(join_, side_));
    GP_CUDA_CHECK(cudaStreamWaitEvent(stream, join_, 0));
  }

 private:
  void h2d(std::size_t bytes, cudaStream_t s) {
    if (mode_.engine == Engine::kCopyEngine)
      GP_CUDA_CHECK(cudaMemcpyAsync(b_.dev_dst.data(), b_.host_src->data(), bytes, cudaMemcpyHostToDevice, s));
    else
      transfer_sm_copy(b_.host_src->device_pointer(), b_.dev_dst.data(), bytes, s);
  }
  void d2h(std::size_t bytes, cudaStream_t s) {
    if (mode_.engine == Engine::kCopyEngine)
      GP_CUDA_CHECK(cudaMemcpyAsync(b_.host_dst->data(), b_.dev_src.data(), bytes, cudaMemcpyDeviceToHost, s));
    else
      transfer_sm_copy(b_.dev_src.data(), b_.host_dst->device_pointer(), bytes, s);
  }
  Mode mode_;
  TransferBuffers& b_;
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

// The sweep stops at 256 MiB (--quick at 64 MiB): every mode has reached its asymptotic rate by then
// (H100, PCIe 5: pinned 54.6 GB/s at 256 MiB and 54.8 at 1 GiB; pageable 6.2 and 6.3), while the
// pageable sizes beyond it took 13 s of the main job. transfer.memcpy_baseline still reaches the
// largest size transfer_max_bytes allows.
std::uint64_t transfer_sweep_max(const Context& ctx) {
  const std::uint64_t max = transfer_max_bytes(ctx.options.max_footprint_bytes, ctx.device.total_mem_bytes);
  return std::min<std::uint64_t>(max, std::uint64_t(ctx.options.quick ? 64 : 256) << 20);
}

// The PCIe link as NVML reports it after an entry's samples (record_link).
const Field kLinkGen = numeric_field("pcie_link_gen_after", "PCIe generation");
const Field kLinkWidth = numeric_field("pcie_link_width_after", "lanes");

const ProbeDescriptor& kHost = declare_family(
    ProbeDescriptor{"transfer.host", Figure::kBandwidth,
                    "one transfer of size bytes (bidir: one each way at once on two streams) timed with CUDA "
                    "events; bytes = size (bidir: 2 x size); copy engine = cudaMemcpyAsync, sm = a kernel copying "
                    "16-byte words through the mapped host pointer",
                    "", 15, 2, 0, /*launch_gate=*/false}  // pageable copies are staged by the host
        .titled("Host-device transfers")
        .with_axes({text_axis("memory", AxisRole::kGroup), text_axis("engine", AxisRole::kGroup),
                    text_axis("direction", AxisRole::kGroup), numeric_axis("size", "bytes", AxisRole::kX)})
        .with_fields({kLinkGen, kLinkWidth}));

const ProbeDescriptor& kBaseline = declare_family(
    ProbeDescriptor{"transfer.memcpy_baseline", Figure::kBandwidth,
                    "plain blocking cudaMemcpy between pinned host memory and the device, host std::chrono around "
                    "the call",
                    "", 20, 2}
        .titled("Blocking cudaMemcpy baseline")
        .with_axes({text_axis("direction", AxisRole::kGroup), numeric_axis("size", "bytes", AxisRole::kX)})
        .with_fields({text_field("memory"), kLinkGen, kLinkWidth}));

void record_link(Measurement& m) {
  const Nvml* nvml = context().nvml;
  if (!nvml) return;
  // Read after the samples: an idle PCIe link may train down to a lower generation.
  if (auto gen = nvml->pcie_link_generation()) m.param("pcie_link_gen_after", *gen);
  if (auto width = nvml->pcie_link_width()) m.param("pcie_link_width_after", *width);
}

void host_entry(benchmark::State& state, Mode mode, std::size_t bytes) {
  TransferBuffers& b = buffers_for(mode.memory, transfer_sweep_max(context()));
  TransferOp op(mode, b);
  const double moved = mode.direction == Direction::kBidirectional ? 2.0 * bytes : double(bytes);
  Measurement m(state, kHost, Work{moved, 0, 1});
  // memory, engine, direction and size come from the entry's name.
  m.time_events([&](cudaStream_t s) { op.enqueue(bytes, s); });
  record_link(m);
}

void baseline_entry(benchmark::State& state, Direction direction, std::size_t bytes, std::size_t buffer_bytes) {
  TransferBuffers& b = buffers_for(HostMemory::kPinned, buffer_bytes);
  Measurement m(state, kBaseline, Work{double(bytes), 0, 1});
  m.tag("memory", "pinned");  // direction and size come from the entry's name
  auto copy = [&] {
    if (direction == Direction::kH2D)
      GP_CUDA_CHECK(cudaMemcpy(b.dev_dst.data(), b.host_src->data(), bytes, cudaMemcpyHostToDevice));
    else
      GP_CUDA_CHECK(cudaMemcpy(b.host_dst->data(), b.dev_src.data(), bytes, cudaMemcpyDeviceToHost));
  };
  m.time_host(copy);
  record_link(m);
}

void add_link_context() {
  const Nvml* nvml = context().nvml;
  auto text = [](std::optional<unsigned> v) { return v ? std::to_string(*v) : std::string("unavailable"); };
  benchmark::AddCustomContext("gpu_pcie_link_gen_at_start", text(nvml ? nvml->pcie_link_generation() : std::nullopt));
  benchmark::AddCustomContext("gpu_pcie_link_width_at_start", text(nvml ? nvml->pcie_link_width() : std::nullopt));
  benchmark::AddCustomContext("gpu_pcie_link_gen_max", text(nvml ? nvml->pcie_max_link_generation() : std::nullopt));
  benchmark::AddCustomContext("gpu_pcie_link_width_max", text(nvml ? nvml->pcie_max_link_width() : std::nullopt));
  unsigned cpu = 0, node = 0;
  benchmark::AddCustomContext("host_thread_numa_node", getcpu(&cpu, &node) == 0 ? std::to_string(node) : "-1");
}

}  // namespace

void register_transfer_probes() {
  const Context& ctx = context();
  add_link_context();
  const std::uint64_t max_bytes = transfer_sweep_max(ctx);
  const std::vector<std::uint64_t> sizes = transfer_sizes(max_bytes, ctx.options.quick);

  // The baseline first: the reference the transfer.host figures are compared to.
  // 256 MiB and the largest size: on a shared PCIe fabric a whole entry can fall on a burst of
  // neighbours' traffic, so the comparison uses the best of several plateau sizes on both sides.
  std::vector<std::uint64_t> baseline_sizes{std::min<std::uint64_t>(std::uint64_t(256) << 20, max_bytes)};
  if (baseline_sizes.back() != max_bytes) baseline_sizes.push_back(max_bytes);
  for (Direction d : {Direction::kH2D, Direction::kD2H})
    for (std::uint64_t bytes : baseline_sizes)
      register_entry(entry_name(kBaseline, {{"direction", direction_name(d)}, {"size", std::to_string(bytes)}}),
                     kBaseline, [d, bytes, max_bytes](benchmark::State& st) { baseline_entry(st, d, bytes, max_bytes); });

  std::vector<Mode> modes;
  for (HostMemory memory : {HostMemory::kPinned, HostMemory::kPageable, HostMemory::kWriteCombined,
                            HostMemory::kRegistered})
    for (Direction d : {Direction::kH2D, Direction::kD2H, Direction::kBidirectional})
      modes.push_back(Mode{memory, Engine::kCopyEngine, d});
  for (Direction d : {Direction::kH2D, Direction::kD2H, Direction::kBidirectional})
    modes.push_back(Mode{HostMemory::kPinned, Engine::kSm, d});
  if (ctx.options.quick) modes.resize(3);  // pinned copy-engine modes only

  for (const Mode& mode : modes)
    for (const std::size_t bytes : sizes) {
      register_entry(entry_name(kHost, {{"memory", memory_name(mode.memory)},
                                               {"engine", engine_name(mode.engine)},
                                               {"direction", direction_name(mode.direction)},
                                               {"size", std::to_string(bytes)}}),
                     kHost, [mode, bytes](benchmark::State& st) { host_entry(st, mode, bytes); });
    }
  register_p2p_probes();
#ifdef GPUPROBE_HAVE_NCCL
  register_collective_probes();
#else
  context().skip_notes.push_back(collective_skip_reason(false, 0));
#endif
}

}  // namespace gpuprobe
