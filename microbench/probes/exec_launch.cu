// Kernel launch overhead (V&D SC08 §3.8 measured it at 3-7 us on G80-class GPUs):
//   exec.launch_rate    K back-to-back launches of a near-empty kernel, CUDA events / K
//   exec.launch_submit  host time of the K launch calls alone (std::chrono), / K
//   exec.launch_gap     device side: launches queued behind a gate kernel (so the GPU, not the host,
//                       sets the pace); %globaltimer at the start of each; (last - first) / (K-1)
//   exec.launch_sync    one launch + cudaStreamSynchronize, host time per round trip
// for <<<>>>, cudaLaunchKernelEx, cooperative launch, a ~4 KB parameter block, the driver's
// cuLaunchKernel called directly (no runtime layer: on the H100 VM it saved 0.3-0.6 us of the ~4 us
// host cost per launch, lab/experiments/launch_host.cu and docs/perf/launch.md), and CUDA graphs (K kernel nodes launched as one
// graph), at several grid sizes. docs/probes.md#launch-overhead.
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/driver_api.hpp"
#include "harness/launch_gate.hpp"
#include "harness/measure.hpp"
#include "probes/exec_probes.hpp"

namespace gpuprobe {
namespace {

constexpr int kLaunchBlock = 128;     // threads per block of the launched kernel
constexpr unsigned kBatch = 1000;     // launches per sample (rate)
constexpr unsigned kSubmitBatch = 256;  // launches per sample (submit): below the launch queue's depth
constexpr unsigned kSyncBatch = 100;  // round trips per sample (sync)
// Launches queued behind the gate per sample (gap): few enough that the launch queue holds them
// all, 4 KB parameter blocks included (1000 of those filled it on the H100 machine).
constexpr unsigned kGapBatch = 256;

// Block 0 of launch `index` stamps its start time; nothing else runs.
__global__ void stamp_kernel(unsigned long long* stamps, unsigned index) {
  if (stamps && blockIdx.x == 0 && threadIdx.x == 0) stamps[index] = exec_global_timer_ns();
}

// A parameter block of about 4 KB (the classic kernel-parameter limit is 4096 bytes).
struct BigParams {
  unsigned long long* stamps;
  unsigned index;
  unsigned char payload[4000 - sizeof(unsigned long long*) - sizeof(unsigned)];
};
static_assert(sizeof(BigParams) <= 4096, "the 4 KB launch must fit the classic parameter limit");

__global__ void stamp_kernel_big(BigParams p) {
  if (p.stamps && blockIdx.x == 0 && threadIdx.x == 0) p.stamps[p.index] = exec_global_timer_ns();
}

// cuLaunchKernel and stamp_kernel's driver handle, resolved once (driver_api.hpp: libcuda not linked).
struct DriverLaunch {
  using LaunchFn = CUresult(CUDAAPI*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      CUstream, void**, void**);
  LaunchFn launch = driver_entry_point<LaunchFn>("cuLaunchKernel");
  CUfunction function = driver_function(reinterpret_cast<const void*>(stamp_kernel));

  static const DriverLaunch& get() {
    static const DriverLaunch d;
    return d;
  }
};

enum class LaunchApi { kTriple, kEx, kCooperative, kParams4k, kDriver, kGraph };
const char* api_name(LaunchApi api) {
  switch (api) {
    case LaunchApi::kTriple: return "triple_chevron";
    case LaunchApi::kEx: return "launch_kernel_ex";
    case LaunchApi::kCooperative: return "cooperative";
    case LaunchApi::kParams4k: return "params_4k";
    case LaunchApi::kDriver: return "driver_cu_launch_kernel";
    case LaunchApi::kGraph: return "graph";
  }
  return "?";
}

// One launch of the stamp kernel through `api` (kGraph: a plain launch, used while capturing).
void launch_once(LaunchApi api, int grid, cudaStream_t stream, unsigned long long* stamps, unsigned index) {
  switch (api) {
    case LaunchApi::kTriple:
    case LaunchApi::kGraph:
      stamp_kernel<<<grid, kLaunchBlock, 0, stream>>>(stamps, index);
      break;
    case LaunchApi::kEx: {
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(grid);
      config.blockDim = dim3(kLaunchBlock);
      config.stream = stream;
      GP_CUDA_CHECK(cudaLaunchKernelEx(&config, stamp_kernel, stamps, index));
      break;
    }
    case LaunchApi::kCooperative: {
      void* args[] = {&stamps, &index};
      GP_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(stamp_kernel), dim3(grid), dim3(kLaunchBlock),
                                                args, 0, stream));
      break;
    }
    case LaunchApi::kParams4k: {
      BigParams p{};
      p.stamps = stamps;
      p.index = index;
      for (std::size_t i = 0; i < sizeof p.payload; ++i) p.payload[i] = static_cast<unsigned char>(i);
      stamp_kernel_big<<<grid, kLaunchBlock, 0, stream>>>(p);
      break;
    }
    case LaunchApi::kDriver: {
      const DriverLaunch& d = DriverLaunch::get();
      void* args[] = {&stamps, &index};
      GP_CU_CHECK(d.launch(d.function, static_cast<unsigned>(grid), 1, 1, kLaunchBlock, 1, 1, 0,
                           reinterpret_cast<CUstream>(stream), args, nullptr));
      break;
    }
  }
}

// A graph of `count` stamp-kernel nodes in a row, captured from a stream.
struct LaunchGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  LaunchGraph(int grid, unsigned count, unsigned long long* stamps) {
    cudaStream_t s;
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GP_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (unsigned i = 0; i < count; ++i) launch_once(LaunchApi::kGraph, grid, s, stamps, i);
    GP_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    GP_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    GP_CUDA_CHECK(cudaStreamDestroy(s));
  }
  ~LaunchGraph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;
};

// Enqueues `count` launches (graph: one launch of a graph holding them).
void enqueue_batch(LaunchApi api, int grid, unsigned count, cudaStream_t stream, unsigned long long* stamps,
                   const LaunchGraph* graph) {
  if (api == LaunchApi::kGraph) {
    GP_CUDA_CHECK(cudaGraphLaunch(graph->exec, stream));
    return;
  }
  for (unsigned i = 0; i < count; ++i) launch_once(api, grid, stream, stamps, i);
  GP_CUDA_CHECK_LAUNCH();
}

// The four measures of a launch share their axes: the launch API and the grid.
ProbeDescriptor launch_record(ProbeDescriptor d, const char* title, std::vector<Field> fields = {}) {
  fields.insert(fields.begin(), numeric_field("block_threads", "threads"));
  return std::move(d).titled(title).with_axes({text_axis("api", AxisRole::kGroup),
                                               numeric_axis("grid", "blocks", AxisRole::kGroup)})
      .with_fields(std::move(fields));
}

const ProbeDescriptor& kRate = declare_family(launch_record(
    {"exec.launch_rate", Figure::kTimePerOp,
     "1000 back-to-back launches of a kernel whose block 0 stores one timestamp; "
     "CUDA events around them / 1000 (graph: one graph of 1000 nodes)",
     "", 10, 2, 0, /*launch_gate=*/false},  // the host's pace is the figure
    "Kernel launch cost: back-to-back rate"));
const ProbeDescriptor& kSubmit = declare_family(launch_record(
    {"exec.launch_submit", Figure::kTimePerOp,
     "host std::chrono time of 256 launch calls (graph: one cudaGraphLaunch of 256 "
     "nodes), synchronized after the timed region / 256",
     "", 10, 2},
    "Kernel launch cost: host submission"));
const ProbeDescriptor& kGap = declare_family(launch_record(
    {"exec.launch_gap", Figure::kTimePerOp,
     "device side: 256 launches queued behind a gate kernel that waits for the host to "
     "finish queuing; %globaltimer stamped by block 0 of each; (last - first) / 255 = "
     "start-to-start interval at the GPU's pace",
     "", 10, 2},
    "Kernel launch cost: start-to-start gap on the GPU", {numeric_field("gate_timeouts", "time-outs")}));
const ProbeDescriptor& kSync = declare_family(launch_record(
    {"exec.launch_sync", Figure::kTimePerOp,
     "host std::chrono time of 100 x (one launch + cudaStreamSynchronize) / 100 "
     "(graph: a one-node graph)",
     "", 10, 2},
    "Kernel launch cost: launch and synchronize"));

struct LaunchSetup {
  cudaStream_t stream = nullptr;
  DeviceBuffer<unsigned long long> stamps{kBatch};
  LaunchSetup() { GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~LaunchSetup() { cudaStreamDestroy(stream); }
  LaunchSetup(const LaunchSetup&) = delete;
  LaunchSetup& operator=(const LaunchSetup&) = delete;
};

// api and grid come from the entry's name.
void tag_entry(Measurement& m) { m.param("block_threads", kLaunchBlock); }

void rate_entry(benchmark::State& state, LaunchApi api, int grid) {
  std::unique_ptr<LaunchGraph> graph;
  if (api == LaunchApi::kGraph) graph = std::make_unique<LaunchGraph>(grid, kBatch, nullptr);
  Measurement m(state, kRate, Work{0, 0, double(kBatch)});
  tag_entry(m);
  m.time_events([&](cudaStream_t s) { enqueue_batch(api, grid, kBatch, s, nullptr, graph.get()); });
}

void submit_entry(benchmark::State& state, LaunchApi api, int grid) {
  LaunchSetup setup;
  std::unique_ptr<LaunchGraph> graph;
  if (api == LaunchApi::kGraph) graph = std::make_unique<LaunchGraph>(grid, kSubmitBatch, nullptr);
  Measurement m(state, kSubmit, Work{0, 0, double(kSubmitBatch)});
  tag_entry(m);
  auto replay = [&] {
    enqueue_batch(api, grid, kSubmitBatch, setup.stream, nullptr, graph.get());
    GP_CUDA_CHECK(cudaStreamSynchronize(setup.stream));
  };
  m.run(
      [&] {
        const HostTime t0 = host_now();
        enqueue_batch(api, grid, kSubmitBatch, setup.stream, nullptr, graph.get());
        Sample s;
        s.seconds = host_seconds_since(t0);
        GP_CUDA_CHECK(cudaStreamSynchronize(setup.stream));
        return s;
      },
      replay);
}

void gap_entry(benchmark::State& state, LaunchApi api, int grid) {
  LaunchSetup setup;
  std::unique_ptr<LaunchGraph> graph;
  if (api == LaunchApi::kGraph) graph = std::make_unique<LaunchGraph>(grid, kGapBatch, setup.stamps.data());
  // Holds the stream until the host has queued the whole batch, so the kernels behind it start back
  // to back at the GPU's own pace; its time-out keeps a full launch queue from deadlocking the host.
  constexpr unsigned long long kGateTimeoutNs = 100000000ull;  // the host queues 256 launches in ~2 ms
  LaunchGate gate(kGateTimeoutNs);

  Measurement m(state, kGap, Work{0, 0, double(kGapBatch - 1)});
  tag_entry(m);
  auto gated_batch = [&] {
    gate.hold(setup.stream);
    enqueue_batch(api, grid, kGapBatch, setup.stream, setup.stamps.data(), graph.get());
    gate.release();
    GP_CUDA_CHECK(cudaStreamSynchronize(setup.stream));
  };
  m.run(
      [&] {
        GP_CUDA_CHECK(cudaMemsetAsync(setup.stamps.data(), 0, kGapBatch * sizeof(unsigned long long), setup.stream));
        gated_batch();
        std::vector<unsigned long long> t(kGapBatch);
        GP_CUDA_CHECK(cudaMemcpy(t.data(), setup.stamps.data(), kGapBatch * sizeof t[0], cudaMemcpyDeviceToHost));
        for (unsigned i = 1; i < kGapBatch; ++i)
          if (t[i] < t[i - 1] || t[0] == 0) throw Error("launch gap: kernel start stamps are missing or out of order");
        Sample s;
        s.seconds = static_cast<double>(t[kGapBatch - 1] - t[0]) * 1e-9;
        return s;
      },
      gated_batch);
  const unsigned gate_timeouts = gate.timeouts();
  // Non-zero: the host could not queue the batch within the timeout (a full launch queue), so
  // those samples were paced by the host after all.
  m.param("gate_timeouts", gate_timeouts);
}

void sync_entry(benchmark::State& state, LaunchApi api, int grid) {
  LaunchSetup setup;
  std::unique_ptr<LaunchGraph> graph;
  if (api == LaunchApi::kGraph) graph = std::make_unique<LaunchGraph>(grid, 1, nullptr);
  Measurement m(state, kSync, Work{0, 0, double(kSyncBatch)});
  tag_entry(m);
  auto one = [&] {
    enqueue_batch(api, grid, 1, setup.stream, nullptr, graph.get());
    GP_CUDA_CHECK(cudaStreamSynchronize(setup.stream));
  };
  m.run(
      [&] {
        const HostTime t0 = host_now();
        for (unsigned i = 0; i < kSyncBatch; ++i) one();
        Sample s;
        s.seconds = host_seconds_since(t0);
        return s;
      },
      one);
}

}  // namespace

void register_launch_probes() {
  const Context& ctx = context();
  int coop_blocks_per_sm = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&coop_blocks_per_sm, stamp_kernel, kLaunchBlock, 0));
  const int co_resident = coop_blocks_per_sm * ctx.device.sm_count;
  const std::vector<int> grids = ctx.options.quick ? std::vector<int>{1}
                                                   : std::vector<int>{1, ctx.device.sm_count, 8 * ctx.device.sm_count};
  using Body = void (*)(benchmark::State&, LaunchApi, int);
  const std::pair<const ProbeDescriptor*, Body> measures[] = {
      {&kRate, rate_entry}, {&kSubmit, submit_entry}, {&kGap, gap_entry}, {&kSync, sync_entry}};
  for (const auto& [descriptor, body] : measures)
    for (LaunchApi api : {LaunchApi::kTriple, LaunchApi::kEx, LaunchApi::kCooperative, LaunchApi::kParams4k,
                          LaunchApi::kDriver, LaunchApi::kGraph})
      for (int grid : grids) {
        if (api == LaunchApi::kCooperative && (!ctx.device.cooperative_launch || grid > co_resident)) continue;
        const Body b = body;
        register_entry(entry_name(*descriptor, {{"api", api_name(api)}, {"grid", std::to_string(grid)}}),
                       *descriptor, [b, api, grid](benchmark::State& st) { b(st, api, grid); });
      }
}

}  // namespace gpuprobe
