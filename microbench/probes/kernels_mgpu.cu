// Multi-GPU SYMV and GEMV benchmarks (kernels/include/gpuprobe/kernels/symv_mgpu.hpp): the matrix in
// the 1D block-column cyclic layout over G GPUs (b = 64, ldl = n), x replicated, y landing on every
// GPU. Families (docs/probes.md, "Multi-GPU kernels"):
//   kernels.symv_mgpu           one call on the whole n x n matrix; GB/s on the minimal bytes summed over the
//                       GPUs (each GPU's share of the stored triangle + x + y)
//   kernels.gemv_mgpu           one call, A general n x n, trans n / t; GB/s on minimal bytes as above
//   kernels.symv_mgpu_sytrd     the SYTRD's SYMV sequence: the trailing submatrices A(k:n, k:n), k = 1 ... n-1,
//                       back to back; one sample = the sequence; value = its total seconds
//   kernels.symv_mgpu_trailing  one call on a trailing submatrix, at sizes spaced along that sequence; ns
// Axes: gpus (1 and every power of two up to the device count), precision, uplo / trans, reduction
// (none for one GPU; p2p, and nccl when built with NCCL), n (4096 up to the largest that fits in the
// GPUs' memory, plus 131072 in double on two GPUs when each has the 68.7 GB it needs).
//
// Timing: Measurement::time_events on a stream of the probed device (GPU 0 of every layout); the
// library call forks into the other GPUs' streams with an event and joins back (cross-device
// cudaStreamWaitEvent), so the events span the first start to the last end over the GPUs. When a
// GPU's minimal bytes exceed its L2, the L2 of every GPU is flushed before each sample (a read of
// 2 x L2 on each, forked and joined the same way; l2=flushed), else the data stays resident
// (l2=resident), as for kernels.symv. Operands: random in [-1, 1) filled on each device (never
// zeros), shared by the entries of one (precision, gpus, n) and settled per GPU before the first.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv_mgpu.hpp"
#include "harness/device.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/settle.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

using kernels::BlockCyclicLayout;
using kernels::BlockCyclicMatrix;
using kernels::MgpuContext;
using kernels::MgpuReduction;
using kernels::Trans;
using kernels::Uplo;

constexpr int kBlock = 64;          // b: one block = one local 64-column tile at offset 0
constexpr int kSytrdN = 16384;      // the SYTRD sequence's order (double, lower)
constexpr int kSytrdQuickN = 2048;  // --quick
constexpr int kResidentSamples = 50;
constexpr double kMinWarmupSeconds = 2e-3;
// Memory kept free on every GPU besides the operands: NCCL's buffers, the flush scratch, contexts.
constexpr double kMemoryMargin = 2.0 * (1 << 30);

const std::string kTiming =
    "CUDA events on GPU 0's stream around the call, which forks into every GPU's stream with an event and joins back "
    "(cross-device event waits): first start to last end over the GPUs";

// The four families' axes: GPUs, precision, the triangle or transposition (`shape`), the reduction,
// the order n, and for the trailing calls their size; their fields (describe() and the entries); the
// compute ceiling of each precision's work (the entries' precision: precision_name<T>()).
ProbeDescriptor mgpu_record(ProbeDescriptor d, const char* title, const char* shape, std::vector<Axis> more_axes,
                            std::vector<Field> more_fields) {
  std::vector<Axis> axes{numeric_axis("gpus", "GPUs", AxisRole::kGroup), text_axis("precision", AxisRole::kGroup),
                         text_axis(shape, AxisRole::kGroup), text_axis("reduction", AxisRole::kGroup),
                         numeric_axis("n", "rows", AxisRole::kX)};
  axes.insert(axes.end(), more_axes.begin(), more_axes.end());
  std::vector<Field> fields{numeric_field("block", "columns"), numeric_field("ldl", "elements"),
                            numeric_field("element_bytes", "bytes"), text_field("devices"),
                            numeric_field("local_min_bytes_gpu<i>", "bytes"),
                            numeric_field("local_min_bytes_max", "bytes"), text_field("reduction_op"),
                            numeric_field("reduction_bytes", "bytes"), numeric_field("entry_on_operands", "entries"),
                            text_field("l2")};
  fields.insert(fields.end(), more_fields.begin(), more_fields.end());
  return std::move(d).titled(title).with_axes(std::move(axes)).with_fields(std::move(fields))
      .computing_by_precision({{"s", "FP32"}, {"d", "FP64"}});
}

const ProbeDescriptor& kSymvDescriptor = declare_family(mgpu_record(
    {"kernels.symv_mgpu", Figure::kBandwidth,
     "one y = alpha A x + beta y on G GPUs per sample (A symmetric n x n, one triangle stored, 1D block-column cyclic "
     "with b = 64, ldl = n; x replicated, y lands on every GPU; alpha = 1, beta = 0), " + kTiming +
         "; bytes = minimal summed over the GPUs (each GPU's stored elements + x + y); flops = 2n^2",
     "", 10, 2, kMinWarmupSeconds},
    "Multi-GPU SYMV", "uplo", {}, {numeric_field("workspace_bytes", "bytes")}));
const ProbeDescriptor& kGemvDescriptor = declare_family(mgpu_record(
    {"kernels.gemv_mgpu", Figure::kBandwidth,
     "one y = alpha op(A) x + beta y on G GPUs per sample (A n x n, 1D block-column cyclic with b = 64, ldl = n; x "
     "replicated, y lands on every GPU; alpha = 1, beta = 0), " + kTiming +
         "; bytes = minimal summed over the GPUs (each GPU's columns + its x + y); flops = 2n^2",
     "", 10, 2, kMinWarmupSeconds},
    "Multi-GPU GEMV", "trans", {}, {numeric_field("workspace_bytes", "bytes")}));
// Not gated: submitting thousands of dependent calls is part of what the sequence costs.
const ProbeDescriptor& kSytrdDescriptor = declare_family(mgpu_record(
    {"kernels.symv_mgpu_sytrd", Figure::kValue,
     "the SYTRD's SYMV sequence per sample: one call on each trailing submatrix A(k:n, k:n), k = 1 ... n-1 (sizes "
     "n-1 down to 1) of one n x n matrix, as kernels.symv_mgpu otherwise, enqueued back to back on GPU 0's stream; "
     "CUDA events around the whole sequence, not behind a launch gate (the host's submission is part of it); value "
     "= the sequence's seconds",
     "s", 3, 1, 0, /*launch_gate=*/false, Premise{}, true, /*lower_value_is_better=*/true},
    "Multi-GPU SYMV: the SYTRD sequence", "uplo", {},
    {numeric_field("calls", "calls"), numeric_field("size_first", "rows"), numeric_field("size_last", "rows"),
     numeric_field("seq_local_min_bytes_max_sum", "bytes"), numeric_field("seq_local_min_bytes_max_sum_dram", "bytes"),
     numeric_field("seq_local_min_bytes_max_sum_l2", "bytes"), numeric_field("seq_reduction_bytes_sum", "bytes")}));
const ProbeDescriptor& kTrailingDescriptor = declare_family(mgpu_record(
    {"kernels.symv_mgpu_trailing", Figure::kTimePerOp,
     "one y = alpha A(o:n, o:n) x + beta y per sample on a trailing submatrix of size n - o of the n x n matrix of "
     "kernels.symv_mgpu_sytrd (as kernels.symv_mgpu otherwise), " + kTiming +
         "; value = ns per call; bytes = minimal summed over the GPUs",
     "", 10, 2, kMinWarmupSeconds},
    "Multi-GPU SYMV: trailing submatrices of the SYTRD sequence", "uplo",
    {numeric_axis("size", "rows", AxisRole::kFixed)}, {numeric_field("offset", "rows")}));

template <class T>
constexpr const char* precision_name() {
  return sizeof(T) == 4 ? "s" : "d";
}
const char* uplo_name(Uplo u) { return u == Uplo::kLower ? "lower" : "upper"; }

void check_status(kernels::Status st, const char* what) {
  if (st != kernels::Status::kSuccess) throw Error(std::string(what) + " returned " + kernels::status_text(st));
}

// A buffer of bytes on a given device, at least 16 bytes: a workspace of 0 bytes is still passed as a
// valid pointer.
using BufferOn = DeviceBuffer<unsigned char>;
std::unique_ptr<BufferOn> buffer_on(int device, std::size_t bytes) {
  return std::make_unique<BufferOn>(device, std::max<std::size_t>(bytes, 16));
}

int probed_device() { return context().device.index; }

// The G devices of a layout: the probed device first (its stream times the call), then the next ones.
std::vector<int> devices_for(int gpus) {
  std::vector<int> d;
  const int count = device_count();
  for (int q = 0; q < gpus; ++q) d.push_back((probed_device() + q) % count);
  return d;
}

std::string device_list(const std::vector<int>& devices) {
  std::string s;
  for (std::size_t i = 0; i < devices.size(); ++i) s += (i ? "," : "") + std::to_string(devices[i]);
  return s;
}

// One context per (gpus, reduction) for the whole run (NCCL communicators take long to create).
const MgpuContext& context_for(int gpus, MgpuReduction reduction) {
  static auto& cache = *new std::map<std::pair<int, int>, std::unique_ptr<MgpuContext>>();  // never destroyed
  auto& slot = cache[{gpus, static_cast<int>(reduction)}];
  if (!slot)
    check_status(MgpuContext::create(devices_for(gpus), reduction, &slot),
                 ("MgpuContext::create(" + device_list(devices_for(gpus)) + ", " +
                  kernels::mgpu_reduction_name(reduction) + ")")
                     .c_str());
  return *slot;
}

// Flushes the L2 of every GPU of a device list before a sample: a read of 2 x L2 of scratch on each,
// GPU 0's on the timer's stream, the others' on their own streams forked from and joined into it.
class MultiGpuFlush {
 public:
  explicit MultiGpuFlush(const std::vector<int>& devices) {
    for (int d : devices) {
      DeviceScope scope(d);
      PerDevice p;
      p.device = d;
      int l2 = 0;
      GP_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
      p.bytes = 2 * std::max<std::size_t>(static_cast<std::size_t>(l2), std::size_t(1) << 20);
      p.scratch = buffer_on(d, p.bytes);
      GP_CUDA_CHECK(cudaMemset(p.scratch->data(), 0x3c, p.bytes));
      GP_CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
      GP_CUDA_CHECK(cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming));
      GP_CUDA_CHECK(cudaEventCreateWithFlags(&p.fork, cudaEventDisableTiming));
      per_.push_back(std::move(p));
    }
  }
  // Enqueues the flush on `stream`, a stream of devices[0].
  void operator()(cudaStream_t stream) const {
    const PerDevice& first = per_[0];
    {
      DeviceScope scope(first.device);
      GP_CUDA_CHECK(cudaEventRecord(first.fork, stream));
      read_through(first.scratch->data(), first.bytes, stream);
    }
    for (std::size_t q = 1; q < per_.size(); ++q) {
      DeviceScope scope(per_[q].device);
      GP_CUDA_CHECK(cudaStreamWaitEvent(per_[q].stream, first.fork, 0));
      read_through(per_[q].scratch->data(), per_[q].bytes, per_[q].stream);
      GP_CUDA_CHECK(cudaEventRecord(per_[q].done, per_[q].stream));
    }
    DeviceScope scope(first.device);
    for (std::size_t q = 1; q < per_.size(); ++q) GP_CUDA_CHECK(cudaStreamWaitEvent(stream, per_[q].done, 0));
  }

 private:
  struct PerDevice {
    int device = 0;
    std::size_t bytes = 0;
    std::unique_ptr<BufferOn> scratch;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr, fork = nullptr;
  };
  std::vector<PerDevice> per_;
};

const MultiGpuFlush& flush_for(int gpus) {
  static auto& cache = *new std::map<int, std::unique_ptr<MultiGpuFlush>>();  // never destroyed
  auto& slot = cache[gpus];
  if (!slot) slot = std::make_unique<MultiGpuFlush>(devices_for(gpus));
  return *slot;
}

// Bytes one GPU holds for a (precision, gpus, n) problem: its local array, x, y, the workspaces.
template <class T>
double bytes_per_gpu(int gpus, int n) {
  const BlockCyclicLayout L{n, n, kBlock, gpus};
  double ws = static_cast<double>(kernels::symv_mgpu_workspace_bytes<T>(L));
  for (Trans t : {Trans::kNoTrans, Trans::kTrans})
    ws += static_cast<double>(kernels::gemv_mgpu_workspace_bytes<T>(t, n, n, 0, L));
  return static_cast<double>(n) * L.local_cols(0) * sizeof(T) + 2.0 * n * sizeof(T) + ws;
}

// Free memory of each device now.
double free_bytes(int device) {
  DeviceScope scope(device);
  std::size_t free = 0, total = 0;
  GP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<double>(free);
}

// Why a problem cannot be held now ("" when it can): each GPU needs its bytes plus the margin free,
// and at most --max-footprint when given.
template <class T>
std::string memory_shortfall(int gpus, int n) {
  const double need = bytes_per_gpu<T>(gpus, n);
  const Options& o = context().options;
  if (o.max_footprint_given && need > static_cast<double>(o.max_footprint_bytes))
    return "needs " + std::to_string(need / 1e9) + " GB per GPU, above --max-footprint";
  for (int d : devices_for(gpus)) {
    const double free = free_bytes(d);
    if (need + kMemoryMargin > free)
      return "needs " + std::to_string(need / 1e9) + " GB per GPU (+ " + std::to_string(kMemoryMargin / 1e9) +
             " GB margin), GPU " + std::to_string(d) + " has " + std::to_string(free / 1e9) + " GB free";
  }
  return "";
}

// The operands of one (precision, gpus, n): per GPU its local columns of A (random), x (the same
// values on every GPU), y and the workspaces; settled per GPU. Shared by the entries of the problem.
template <class T>
struct Operands {
  int gpus = 0, n = 0;
  std::vector<int> devices;
  BlockCyclicLayout layout;
  std::vector<std::unique_ptr<BufferOn>> local, x, y, symv_ws, gemv_ws[2];
  std::vector<const T*> local_ptrs, x_ptrs;
  std::vector<T*> y_ptrs;
  std::vector<void*> symv_ws_ptrs, gemv_ws_ptrs[2];
  std::size_t symv_ws_bytes = 0, gemv_ws_bytes[2] = {0, 0};
  std::vector<SettleResult> settle;
  int entries = 0;

  BlockCyclicMatrix<T> matrix() const { return {layout, local_ptrs.data(), n}; }
};

void fill(float* p, std::size_t count, std::uint64_t seed) { fill_uniform(p, count, seed, -1.f, 1.f); }
void fill(double* p, std::size_t count, std::uint64_t seed) { fill_uniform(p, count, seed, -1.0, 1.0); }

template <class T>
Operands<T>& operand_cache() {
  static Operands<T>& cached = *new Operands<T>();  // never destroyed (see kernels_blas2.cu)
  return cached;
}
// Frees the operands of both precisions (a double problem after the float ones needs the memory).
void release_operands() {
  operand_cache<float>() = Operands<float>();
  operand_cache<double>() = Operands<double>();
}

// The operands of (gpus, n), allocated and filled unless they are the ones held (free memory checked
// by the caller).
template <class T>
Operands<T>& operands(int gpus, int n) {
  Operands<T>& o = operand_cache<T>();
  if (o.gpus == gpus && o.n == n) return o;
  release_operands();
  o.gpus = gpus;
  o.n = n;
  o.devices = devices_for(gpus);
  o.layout = BlockCyclicLayout{n, n, kBlock, gpus};
  for (int q = 0; q < gpus; ++q) {
    const int d = o.devices[q];
    const std::size_t count = static_cast<std::size_t>(n) * o.layout.local_cols(q);
    o.local.push_back(buffer_on(d, count * sizeof(T)));
    o.x.push_back(buffer_on(d, n * sizeof(T)));
    o.y.push_back(buffer_on(d, n * sizeof(T)));
    o.local_ptrs.push_back(reinterpret_cast<const T*>(o.local.back()->data()));
    o.x_ptrs.push_back(reinterpret_cast<const T*>(o.x.back()->data()));
    o.y_ptrs.push_back(reinterpret_cast<T*>(o.y.back()->data()));
    DeviceScope scope(d);
    fill(reinterpret_cast<T*>(o.local.back()->data()), count, 41 + q);
    fill(reinterpret_cast<T*>(o.x.back()->data()), n, 40);  // the same x on every GPU
    fill(reinterpret_cast<T*>(o.y.back()->data()), n, 39);
  }
  o.symv_ws_bytes = kernels::symv_mgpu_workspace_bytes<T>(o.layout);
  for (int t = 0; t < 2; ++t)
    o.gemv_ws_bytes[t] =
        kernels::gemv_mgpu_workspace_bytes<T>(t == 0 ? Trans::kNoTrans : Trans::kTrans, n, n, 0, o.layout);
  for (int q = 0; q < gpus; ++q) {
    o.symv_ws.push_back(buffer_on(o.devices[q], o.symv_ws_bytes));
    o.symv_ws_ptrs.push_back(o.symv_ws.back()->data());
    for (int t = 0; t < 2; ++t) {
      o.gemv_ws[t].push_back(buffer_on(o.devices[q], o.gemv_ws_bytes[t]));
      o.gemv_ws_ptrs[t].push_back(o.gemv_ws[t].back()->data());
    }
  }
  const MgpuContext& ctx = context_for(gpus, MgpuReduction::kP2P);
  for (int t = 0; t < 2; ++t)  // once per buffer: gemv's arrival counters start at zero
    check_status(kernels::gemv_mgpu_workspace_init(o.gemv_ws_ptrs[t].data(), o.gemv_ws_bytes[t], ctx, nullptr),
                 "gemv_mgpu_workspace_init");
  for (int q = 0; q < gpus; ++q) {
    DeviceScope scope(o.devices[q]);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    // The rule's 0.3 s cap allows too few passes over tens of GB to call the rate stable (16 at least):
    // allow 20 passes at ~2 TB/s.
    SettleRule rule;
    rule.max_seconds = std::max(rule.max_seconds, 20.0 * static_cast<double>(o.local[q]->bytes()) / 2e12);
    o.settle.push_back(settle_reads(o.local[q]->data(), o.local[q]->bytes(), rule));
  }
  return o;
}

// The entry's fields common to the families: the layout, each GPU's minimal bytes and their
// maximum (the bound's numerator), the reduction, the operands' settling.
template <class T>
void describe(Measurement& m, Operands<T>& o, const std::vector<double>& local_bytes,
              const char* reduction_op, double reduction_bytes) {
  // gpus, precision, the reduction and n come from the entry's name.
  m.param("block", kBlock);
  m.param("ldl", o.n);
  m.param("element_bytes", sizeof(T));
  m.tag("devices", device_list(o.devices));
  for (std::size_t q = 0; q < local_bytes.size(); ++q) m.param("local_min_bytes_gpu" + std::to_string(q), local_bytes[q]);
  m.param("local_min_bytes_max", *std::max_element(local_bytes.begin(), local_bytes.end()));
  m.tag("reduction_op", o.gpus > 1 ? reduction_op : "none");
  m.param("reduction_bytes", reduction_bytes);
  for (int q = 0; q < o.gpus; ++q) record_settle(m, "a_gpu" + std::to_string(q), o.settle[q]);
  m.param("entry_on_operands", o.entries++);
}

// L2 policy, as kernels.symv: flushed on every GPU when a GPU's minimal bytes exceed its L2.
void tag_l2(Measurement& m, int gpus, double max_local_bytes) {
  const bool flush = max_local_bytes > static_cast<double>(context().device.l2_bytes);
  m.tag("l2", flush ? "flushed" : "resident");
  if (flush) {
    const MultiGpuFlush& f = flush_for(gpus);
    m.before_each_sample([&f](cudaStream_t s) { f(s); });
  }
}

// 50 samples for L2-resident calls (short, launch-bound), 5 for calls of more than kLargeBytes per GPU
// (several milliseconds each, steady), the descriptor's 10 otherwise.
constexpr double kLargeBytes = 4e9;
constexpr int kLargeSamples = 5;
int samples_for(double max_local_bytes) {
  if (max_local_bytes <= static_cast<double>(context().device.l2_bytes)) return kResidentSamples;
  return max_local_bytes > kLargeBytes ? kLargeSamples : 0;
}

MgpuReduction reduction_of(const std::string& name) {
  return name == "nccl" ? MgpuReduction::kNccl : MgpuReduction::kP2P;  // "none" (one GPU): the P2P context
}

// A symv_mgpu call on the operands, A(offset:n, offset:n).
template <class T>
void symv_call(const Operands<T>& o, const MgpuContext& ctx, Uplo uplo, int offset, cudaStream_t s) {
  const int size = o.n - offset;
  check_status(kernels::symv_mgpu<T>(uplo, size, offset, T(1), o.matrix(), o.x_ptrs.data(), 1, T(0), o.y_ptrs.data(),
                                     1, o.symv_ws_ptrs.data(), o.symv_ws_bytes, ctx, s),
               "symv_mgpu");
}

// Takes the problem's operands, or says why not (the entry is then skipped with that message).
template <class T>
Operands<T>* operands_or_skip(benchmark::State& state, int gpus, int n) {
  const Operands<T>& cached = operand_cache<T>();
  if (cached.gpus != gpus || cached.n != n) {
    release_operands();
    const std::string why = memory_shortfall<T>(gpus, n);
    if (!why.empty()) {
      std::fprintf(stderr, "gpuprobe: kernels.*_mgpu*: skipped %s n=%d on %d GPUs: %s\n", precision_name<T>(), n, gpus,
                   why.c_str());
      state.SkipWithError(("skipped: " + why).c_str());
      return nullptr;
    }
  }
  return &operands<T>(gpus, n);
}

template <class T>
std::vector<double> symv_local_bytes(const BlockCyclicLayout& L, Uplo uplo, int size, int offset) {
  std::vector<double> b;
  for (int q = 0; q < L.gpus; ++q)
    b.push_back(kernels::symv_mgpu_local_min_bytes(L, q, uplo, size, offset, sizeof(T), false));
  return b;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

template <class T>
void symv_entry(benchmark::State& state, int gpus, int n, Uplo uplo, const std::string& reduction) {
  Operands<T>* o = operands_or_skip<T>(state, gpus, n);
  if (!o) return;
  const std::vector<double> local = symv_local_bytes<T>(o->layout, uplo, n, 0);
  const double max_local = *std::max_element(local.begin(), local.end());
  Measurement m(state, kSymvDescriptor, Work{sum(local), kernels::symv_flops(n), 0});
  describe(m, *o, local, "allreduce", kernels::symv_mgpu_reduction_bytes(gpus, n, sizeof(T)));
  m.param("workspace_bytes", static_cast<double>(o->symv_ws_bytes));
  tag_l2(m, gpus, max_local);
  const MgpuContext& ctx = context_for(gpus, reduction_of(reduction));
  GP_CUDA_CHECK(cudaSetDevice(probed_device()));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  m.time_events([&](cudaStream_t s) { symv_call(*o, ctx, uplo, 0, s); });
}

template <class T>
void gemv_entry(benchmark::State& state, int gpus, int n, Trans trans, const std::string& reduction) {
  Operands<T>* o = operands_or_skip<T>(state, gpus, n);
  if (!o) return;
  std::vector<double> local;
  for (int q = 0; q < gpus; ++q)
    local.push_back(kernels::gemv_mgpu_local_min_bytes(o->layout, q, trans, n, n, 0, sizeof(T), false));
  const double max_local = *std::max_element(local.begin(), local.end());
  Measurement m(state, kGemvDescriptor, Work{sum(local), kernels::gemv_flops(n, n), 0});
  describe(m, *o, local, kernels::gemv_mgpu_reduction_op(trans),
           kernels::gemv_mgpu_reduction_bytes(trans, gpus, n, n, sizeof(T)));
  const int t = trans == Trans::kNoTrans ? 0 : 1;
  m.param("workspace_bytes", static_cast<double>(o->gemv_ws_bytes[t]));
  tag_l2(m, gpus, max_local);
  const MgpuContext& ctx = context_for(gpus, reduction_of(reduction));
  GP_CUDA_CHECK(cudaSetDevice(probed_device()));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  m.time_events([&, o, t](cudaStream_t s) {
    check_status(kernels::gemv_mgpu<T>(trans, n, n, 0, 0, T(1), o->matrix(), o->x_ptrs.data(), 1, T(0),
                                       o->y_ptrs.data(), 1, o->gemv_ws_ptrs[t].data(), o->gemv_ws_bytes[t], ctx, s),
                 "gemv_mgpu");
  });
}

// The SYTRD sequence: sizes n-1 down to 1 (offsets 1 ... n-1). Its bound needs, per call, the largest
// GPU share and the reduced vector: their sums over the sequence are fields of the entry.
template <class T>
void sytrd_entry(benchmark::State& state, int gpus, int n, Uplo uplo, const std::string& reduction) {
  Operands<T>* o = operands_or_skip<T>(state, gpus, n);
  if (!o) return;
  // The largest GPU shares summed apart for the calls whose share exceeds the L2 (read from DRAM)
  // and the others (their trailing matrix can stay in the L2 from the call before).
  const double l2 = static_cast<double>(context().device.l2_bytes);
  double total_bytes = 0, max_local_sum = 0, max_local_dram = 0, flops = 0, reduction_sum = 0;
  for (int offset = 1; offset < n; ++offset) {
    const std::vector<double> local = symv_local_bytes<T>(o->layout, uplo, n - offset, offset);
    total_bytes += sum(local);
    const double largest = *std::max_element(local.begin(), local.end());
    max_local_sum += largest;
    if (largest > l2) max_local_dram += largest;
    flops += kernels::symv_flops(n - offset);
    reduction_sum += kernels::symv_mgpu_reduction_bytes(gpus, n - offset, sizeof(T));
  }
  Measurement m(state, kSytrdDescriptor, Work{total_bytes, flops, static_cast<double>(n - 1)});
  describe(m, *o, symv_local_bytes<T>(o->layout, uplo, n - 1, 1), "allreduce",
           kernels::symv_mgpu_reduction_bytes(gpus, n - 1, sizeof(T)));
  m.tag("l2", "as_left");  // the sequence runs as a factorization would: no flush between its calls
  m.param("calls", n - 1);
  m.param("size_first", n - 1);
  m.param("size_last", 1);
  m.param("seq_local_min_bytes_max_sum", max_local_sum);
  m.param("seq_local_min_bytes_max_sum_dram", max_local_dram);
  m.param("seq_local_min_bytes_max_sum_l2", max_local_sum - max_local_dram);
  m.param("seq_reduction_bytes_sum", reduction_sum);
  const MgpuContext& ctx = context_for(gpus, reduction_of(reduction));
  GP_CUDA_CHECK(cudaSetDevice(probed_device()));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  m.time_events(
      [&](cudaStream_t s) {
        for (int offset = 1; offset < n; ++offset) symv_call(*o, ctx, uplo, offset, s);
      },
      [](Sample& s) { s.value = s.seconds; });
}

template <class T>
void trailing_entry(benchmark::State& state, int gpus, int n, int size, Uplo uplo, const std::string& reduction) {
  Operands<T>* o = operands_or_skip<T>(state, gpus, n);
  if (!o) return;
  const int offset = n - size;
  const std::vector<double> local = symv_local_bytes<T>(o->layout, uplo, size, offset);
  const double max_local = *std::max_element(local.begin(), local.end());
  Measurement m(state, kTrailingDescriptor, Work{sum(local), kernels::symv_flops(size), 1});
  describe(m, *o, local, "allreduce", kernels::symv_mgpu_reduction_bytes(gpus, size, sizeof(T)));
  m.param("offset", offset);  // size comes from the entry's name
  tag_l2(m, gpus, max_local);
  const MgpuContext& ctx = context_for(gpus, reduction_of(reduction));
  GP_CUDA_CHECK(cudaSetDevice(probed_device()));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  m.time_events([&](cudaStream_t s) { symv_call(*o, ctx, uplo, offset, s); });
}

// GPU counts: 1 and every power of two up to the device count, where every pair has peer access.
std::vector<int> gpu_counts() {
  const int count = device_count();
  std::vector<int> out{1};
  for (int g = 2; g <= count; g *= 2) {
    const std::vector<int> d = devices_for(g);
    bool peers = true;
    for (int a : d)
      for (int b : d) {
        int ok = 1;
        if (a != b) GP_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, a, b));
        peers = peers && ok;
      }
    if (peers)
      out.push_back(g);
    else
      context().skip_notes.push_back("kernels.*_mgpu*: " + std::to_string(g) + " GPUs (" + device_list(d) +
                                     ") skipped: no peer access between them");
  }
  return out;
}

std::vector<std::string> reductions_for(int gpus) {
  if (gpus == 1) return {"none"};
  std::vector<std::string> r{"p2p"};
  if (kernels::mgpu_nccl_available()) r.push_back("nccl");
  return r;
}

// Sizes 4096 ... 131072 (powers of two) that fit on `gpus` GPUs now, each GPU needing its bytes plus
// the margin; the ones that do not are named once.
template <class T>
std::vector<int> sizes_for(int gpus, bool quick) {
  std::vector<int> out;
  for (int n = 4096; n <= (quick ? 4096 : 131072); n *= 2) {
    const std::string why = memory_shortfall<T>(gpus, n);
    if (why.empty())
      out.push_back(n);
    else
      context().skip_notes.push_back(std::string("kernels.*_mgpu*: ") + precision_name<T>() + " n=" +
                                     std::to_string(n) + " on " + std::to_string(gpus) +
                                     " GPUs not registered: " + why);
  }
  return out;
}

// The largest GPU share of a call's minimal bytes (it decides l2=resident and the sample count).
template <class T>
double max_local_symv(int gpus, int n, Uplo uplo, int size, int offset) {
  const std::vector<double> b = symv_local_bytes<T>(BlockCyclicLayout{n, n, kBlock, gpus}, uplo, size, offset);
  return *std::max_element(b.begin(), b.end());
}
template <class T>
double max_local_gemv(int gpus, int n, Trans trans) {
  double m = 0;
  for (int q = 0; q < gpus; ++q)
    m = std::max(m, kernels::gemv_mgpu_local_min_bytes(BlockCyclicLayout{n, n, kBlock, gpus}, q, trans, n, n, 0,
                                                       sizeof(T), false));
  return m;
}

template <class T>
void register_precision(bool quick) {
  for (int gpus : gpu_counts())
    for (int n : sizes_for<T>(gpus, quick)) {
      // One (precision, gpus, n) after the other: its entries share the operands.
      const std::string common = std::string("/gpus:") + std::to_string(gpus) + "/precision:" + precision_name<T>();
      for (Uplo uplo : {Uplo::kLower, Uplo::kUpper})
        for (const std::string& red : reductions_for(gpus))
          register_entry(entry_name(kSymvDescriptor, {{"gpus", std::to_string(gpus)},
                                                             {"precision", precision_name<T>()},
                                                             {"uplo", uplo_name(uplo)},
                                                             {"reduction", red},
                                                             {"n", std::to_string(n)}}),
                         kSymvDescriptor,
                         [gpus, n, uplo, red](benchmark::State& st) { symv_entry<T>(st, gpus, n, uplo, red); },
                         samples_for(max_local_symv<T>(gpus, n, uplo, n, 0)));
      for (Trans trans : {Trans::kNoTrans, Trans::kTrans})
        for (const std::string& red : reductions_for(gpus))
          register_entry(entry_name(kGemvDescriptor, {{"gpus", std::to_string(gpus)},
                                                             {"precision", precision_name<T>()},
                                                             {"trans", trans == Trans::kNoTrans ? "n" : "t"},
                                                             {"reduction", red},
                                                             {"n", std::to_string(n)}}),
                         kGemvDescriptor,
                         [gpus, n, trans, red](benchmark::State& st) { gemv_entry<T>(st, gpus, n, trans, red); },
                         samples_for(max_local_gemv<T>(gpus, n, trans)));
    }
}

// The SYTRD sequence in double, lower, at one order, and single calls at sizes along it.
void register_sytrd(bool quick) {
  using T = double;
  const int n = quick ? kSytrdQuickN : kSytrdN;
  const Uplo uplo = Uplo::kLower;
  // Sizes along the sequence: its first, every factor 4/3 or 2 down to 1/128 of n, and the small end.
  const std::vector<int> sizes =
      quick ? std::vector<int>{n - 1, n / 2, 64, 1}
            : std::vector<int>{n - 1, 3 * n / 4, n / 2, 3 * n / 8, n / 4, 3 * n / 16, n / 8, n / 16, n / 32, n / 64,
                               n / 128, 64, 16, 1};
  for (int gpus : gpu_counts()) {
    if (!memory_shortfall<T>(gpus, n).empty()) continue;
    for (const std::string& red : reductions_for(gpus)) {
      register_entry(entry_name(kSytrdDescriptor, {{"gpus", std::to_string(gpus)},
                                                          {"precision", precision_name<T>()},
                                                          {"uplo", uplo_name(uplo)},
                                                          {"reduction", red},
                                                          {"n", std::to_string(n)}}),
                     kSytrdDescriptor,
                     [gpus, n, uplo, red](benchmark::State& st) { sytrd_entry<T>(st, gpus, n, uplo, red); });
      for (int size : sizes) {
        const double local = max_local_symv<T>(gpus, n, uplo, size, n - size);
        register_entry(entry_name(kTrailingDescriptor, {{"gpus", std::to_string(gpus)},
                                                               {"precision", precision_name<T>()},
                                                               {"uplo", uplo_name(uplo)},
                                                               {"reduction", red},
                                                               {"n", std::to_string(n)},
                                                               {"size", std::to_string(size)}}),
                       kTrailingDescriptor,
                       [gpus, n, size, uplo, red](benchmark::State& st) {
                         trailing_entry<T>(st, gpus, n, size, uplo, red);
                       },
                       samples_for(local));
      }
    }
  }
}

}  // namespace

void register_mgpu_benchmarks() {
  // On one GPU the single-GPU kernels.symv/gemv entries already say all there is; the 1-GPU entries
  // here are the baseline of the multi-GPU ones (scaling efficiency), registered only beside them.
  if (gpu_counts().size() < 2) {
    context().skip_notes.push_back(
        "kernels.*_mgpu*: left out, the multi-GPU kernels need 2 or more GPUs with peer access");
    GP_CUDA_CHECK(cudaSetDevice(probed_device()));
    return;
  }
  const bool quick = context().options.quick;
  register_precision<float>(quick);
  register_precision<double>(quick);
  register_sytrd(quick);
  GP_CUDA_CHECK(cudaSetDevice(probed_device()));
}

}  // namespace gpuprobe
