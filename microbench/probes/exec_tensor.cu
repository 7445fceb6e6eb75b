// Tensor-core probes:
//   exec.tensor          throughput of each mma.sync and wgmma form, FLOP/s and FLOP per clock per SM,
//                        with the SM clock and board power of the samples, on random and zero operands
//   exec.tensor_latency  a dependent chain of one form in one warp (mma.sync) or warpgroup (wgmma)
// The kernels live in exec_tensor_mma.cu (mma.sync) and exec_tensor_wgmma.cu (wgmma, built for sm_90a
// only). docs/probes.md#tensor-cores says how they measure what they claim; tests/gpu/exec_tensor_test.cu
// checks every form's result first.
#include "probes/exec_tensor.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/metric_names.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"
#include "probes/exec_probes.hpp"
#include "probes/exec_tensor_device.cuh"

namespace gpuprobe {

using tensor_device::mma_kernels;
using tensor_device::TensorKernels;
using tensor_device::wgmma_forms_left_out;
using tensor_device::wgmma_kernels;

// ------------------------------------------------------------------------------------------------
// Names, forms, peaks, operand images

const char* tensor_precision_name(TensorPrecision p) {
  switch (p) {
    case TensorPrecision::kF16: return "f16";
    case TensorPrecision::kBF16: return "bf16";
    case TensorPrecision::kTF32: return "tf32";
    case TensorPrecision::kE4M3: return "e4m3";
    case TensorPrecision::kE5M2: return "e5m2";
    case TensorPrecision::kS8: return "s8";
    case TensorPrecision::kF64: return "f64";
  }
  return "?";
}
const char* tensor_accum_name(TensorAccum a) {
  switch (a) {
    case TensorAccum::kF32: return "f32";
    case TensorAccum::kF16: return "f16";
    case TensorAccum::kS32: return "s32";
    case TensorAccum::kF64: return "f64";
  }
  return "?";
}
const char* tensor_instr_name(TensorInstr i) { return i == TensorInstr::kMma ? "mma" : "wgmma"; }

int tensor_element_bytes(TensorPrecision p) {
  switch (p) {
    case TensorPrecision::kF16:
    case TensorPrecision::kBF16: return 2;
    case TensorPrecision::kTF32: return 4;
    case TensorPrecision::kE4M3:
    case TensorPrecision::kE5M2:
    case TensorPrecision::kS8: return 1;
    case TensorPrecision::kF64: return 8;
  }
  return 0;
}
int tensor_accum_bytes(TensorAccum a) {
  return a == TensorAccum::kF16 ? 2 : a == TensorAccum::kF64 ? 8 : 4;
}

std::string TensorForm::describe() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s.m%dn%dk%d %s->%s, A in %s", instr == TensorInstr::kMma ? "mma.sync" : "wgmma", m,
                n, k, tensor_precision_name(precision), tensor_accum_name(accum), a_registers ? "registers" : "smem");
  return buf;
}

const std::vector<TensorForm>& tensor_forms() {
  static const std::vector<TensorForm> forms = [] {
    std::vector<TensorForm> f;
    for (const TensorKernels& k : mma_kernels()) f.push_back(k.form);
    for (const TensorKernels& k : wgmma_kernels()) f.push_back(k.form);
    return f;
  }();
  return forms;
}

std::string tensor_form_unavailable(const TensorForm& form, int cc, const BuiltCode& code) {
  if (form.instr == TensorInstr::kWgmma) return arch_unavailable(kWgmma, cc, code);
  const bool fp8 = form.precision == TensorPrecision::kE4M3 || form.precision == TensorPrecision::kE5M2;
  if (fp8) return arch_unavailable(kMmaSyncFp8, cc, code);
  if (form.precision == TensorPrecision::kF64 && form.m == 16) return arch_unavailable(kMmaSyncF64M16, cc, code);
  return arch_unavailable(kMmaSync, cc, code);
}

double tensor_peak_flops_per_clock_per_sm(TensorPrecision p, int cc_major, int cc_minor) {
  // Dense datasheet rates over SMs and boost clock: H100 SXM (132 SMs; 1830 MHz for the low-precision
  // types, 1980 MHz for FP64) and A100 (108 SMs, 1410 MHz). shared/notes/tensor-cores.md.
  const int cc = cc_major * 10 + cc_minor;
  const int scale = cc == 90 ? 2 : cc == 80 ? 1 : 0;  // Hopper doubles the A100's per-SM rates
  if (scale == 0) return 0;
  switch (p) {
    case TensorPrecision::kF16:
    case TensorPrecision::kBF16: return 2048.0 * scale;
    case TensorPrecision::kTF32: return 1024.0 * scale;
    case TensorPrecision::kE4M3:
    case TensorPrecision::kE5M2: return cc == 90 ? 8192.0 : 0;  // the A100 has no fp8
    case TensorPrecision::kS8: return 4096.0 * scale;
    case TensorPrecision::kF64: return 128.0 * scale;
  }
  return 0;
}

namespace {
float tf32_round(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = (bits + 0x1000u) & 0xFFFFE000u;  // 10 mantissa bits, round to nearest
  std::memcpy(&v, &bits, 4);
  return v;
}
}  // namespace

std::vector<std::uint8_t> random_tensor_image(TensorPrecision p, std::size_t elements, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> s8(-127, 127);
  const int es = tensor_element_bytes(p);
  std::vector<std::uint8_t> image(elements * es);
  for (std::size_t i = 0; i < elements; ++i) {
    std::uint8_t* e = image.data() + i * es;
    const double v = unit(rng);
    switch (p) {
      case TensorPrecision::kF16: { const __half h = __double2half(v); std::memcpy(e, &h, 2); break; }
      case TensorPrecision::kBF16: { const __nv_bfloat16 h = __double2bfloat16(v); std::memcpy(e, &h, 2); break; }
      case TensorPrecision::kTF32: { const float f = tf32_round(static_cast<float>(v)); std::memcpy(e, &f, 4); break; }
      case TensorPrecision::kE4M3: { const __nv_fp8_e4m3 q(static_cast<float>(v)); std::memcpy(e, &q, 1); break; }
      case TensorPrecision::kE5M2: { const __nv_fp8_e5m2 q(static_cast<float>(v)); std::memcpy(e, &q, 1); break; }
      case TensorPrecision::kS8: { const auto q = static_cast<std::int8_t>(s8(rng)); std::memcpy(e, &q, 1); break; }
      case TensorPrecision::kF64: std::memcpy(e, &v, 8); break;
    }
  }
  return image;
}

std::vector<std::uint8_t> negated_tensor_image(TensorPrecision p, std::vector<std::uint8_t> image) {
  const int es = tensor_element_bytes(p);
  for (std::size_t i = 0; i < image.size(); i += es) {
    if (p == TensorPrecision::kS8) {
      const auto v = static_cast<std::int8_t>(image[i]);
      image[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(-v));  // values are in [-127, 127]
    } else {
      image[i + es - 1] ^= 0x80;  // the sign bit of a little-endian float of any width
    }
  }
  return image;
}

double decode_tensor_element(TensorPrecision p, const std::uint8_t* e) {
  switch (p) {
    case TensorPrecision::kF16: { __half h; std::memcpy(&h, e, 2); return __half2float(h); }
    case TensorPrecision::kBF16: { __nv_bfloat16 h; std::memcpy(&h, e, 2); return __bfloat162float(h); }
    case TensorPrecision::kTF32: { float f; std::memcpy(&f, e, 4); return f; }
    case TensorPrecision::kE4M3: { __nv_fp8_e4m3 q; std::memcpy(&q, e, 1); return static_cast<float>(q); }
    case TensorPrecision::kE5M2: { __nv_fp8_e5m2 q; std::memcpy(&q, e, 1); return static_cast<float>(q); }
    case TensorPrecision::kS8: return static_cast<std::int8_t>(e[0]);
    case TensorPrecision::kF64: { double d; std::memcpy(&d, e, 8); return d; }
  }
  return NAN;
}

double decode_accum_element(TensorAccum a, const std::uint8_t* e) {
  switch (a) {
    case TensorAccum::kF32: { float f; std::memcpy(&f, e, 4); return f; }
    case TensorAccum::kF16: { __half h; std::memcpy(&h, e, 2); return __half2float(h); }
    case TensorAccum::kS32: { std::int32_t i; std::memcpy(&i, e, 4); return i; }
    case TensorAccum::kF64: { double d; std::memcpy(&d, e, 8); return d; }
  }
  return NAN;
}

void encode_accum_element(TensorAccum a, double v, std::uint8_t* e) {
  switch (a) {
    case TensorAccum::kF32: { const float f = static_cast<float>(v); std::memcpy(e, &f, 4); break; }
    case TensorAccum::kF16: { const __half h = __double2half(v); std::memcpy(e, &h, 2); break; }
    case TensorAccum::kS32: { const auto i = static_cast<std::int32_t>(std::lround(v)); std::memcpy(e, &i, 4); break; }
    case TensorAccum::kF64: std::memcpy(e, &v, 8); break;
  }
}

// ------------------------------------------------------------------------------------------------
// Launchers: through the form's row of its instruction's table.

namespace {
const TensorKernels& kernels_of(const TensorForm& f) {
  for (const TensorKernels& k : f.instr == TensorInstr::kMma ? mma_kernels() : wgmma_kernels())
    if (k.form.precision == f.precision && k.form.accum == f.accum && k.form.m == f.m && k.form.n == f.n &&
        k.form.k == f.k && k.form.a_registers == f.a_registers)
      return k;
  throw Error("no kernel for " + f.describe());
}
// The test's single instruction and the latency chain run on one warp (mma.sync) or warpgroup (wgmma).
unsigned issuing_threads(const TensorForm& f) { return f.instr == TensorInstr::kMma ? 32 : kTensorThreadsPerBlock; }
const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }
}  // namespace

void enqueue_tensor_once(const TensorForm& form, const void* a, const void* b, const void* c, void* d,
                         cudaStream_t stream) {
  kernels_of(form).once<<<1, issuing_threads(form), 0, stream>>>(bytes(a), bytes(b), bytes(c),
                                                                 static_cast<std::uint8_t*>(d));
  GP_CUDA_CHECK_LAUNCH();
}

void enqueue_tensor_throughput(const TensorForm& form, int blocks, unsigned iterations, const void* a,
                               const void* b, const void* neg_b, unsigned long long* stamps,
                               std::uint32_t* sink, cudaStream_t stream) {
  kernels_of(form).throughput<<<blocks, kTensorThreadsPerBlock, 0, stream>>>(bytes(a), bytes(b), bytes(neg_b),
                                                                             iterations, stamps, sink);
  GP_CUDA_CHECK_LAUNCH();
}

void enqueue_tensor_latency(const TensorForm& form, unsigned chain, const void* a, const void* b,
                            unsigned long long* out, std::uint32_t* sink, cudaStream_t stream) {
  kernels_of(form).latency<<<1, issuing_threads(form), 0, stream>>>(bytes(a), bytes(b), chain, out, sink);
  GP_CUDA_CHECK_LAUNCH();
}

// ------------------------------------------------------------------------------------------------
// Probes

namespace {

constexpr double kPeakFraction = 0.95;       // "reaches peak": within 5 % of the best configuration
// One throughput sample at the per-clock peak and 1.8 GHz: long enough that the grid's start and end
// (about 5 us) stay under 0.5 %, short enough that the family's ~130 entries take a few seconds.
constexpr double kSampleSeconds = 1.5e-3;
constexpr double kSizingClockHz = 1.8e9;
constexpr unsigned kMmaLatencyChain = 1024;
constexpr unsigned kWgmmaLatencyChain = 256;

const std::vector<std::pair<std::string, std::string>>& ceiling_by_precision() {
  static const std::vector<std::pair<std::string, std::string>> map = {
      {"f16", "FP16 tensor"}, {"bf16", "BF16 tensor"}, {"tf32", "TF32 tensor"}, {"e4m3", "FP8 tensor"},
      {"e5m2", "FP8 tensor"}, {"s8", "INT8 tensor"},   {"f64", "FP64 tensor"}};
  return map;
}

std::vector<Axis> form_axes() {
  return {text_axis("instr", AxisRole::kGroup),      text_axis("precision", AxisRole::kGroup),
          text_axis("acc", AxisRole::kGroup),        text_axis("a", AxisRole::kGroup),
          numeric_axis("m", "rows", AxisRole::kFixed), numeric_axis("n", "columns", AxisRole::kX),
          numeric_axis("k", "depth", AxisRole::kFixed)};
}

const ProbeDescriptor& kTensor = declare_family(
    ProbeDescriptor{"exec.tensor", Figure::kFlopRate,
                    "blocks of 128 threads on every SM, blocks_per_sm of them (the best of a sweep, 1-4 for wgmma, "
                    "1-8 for mma.sync); each warpgroup (wgmma: one accumulator tile, back-to-back instructions, "
                    "one commit and wait at the end) or warp (mma.sync: 4 independent accumulators) issues "
                    "instructions with B and -B alternately on the same A; FLOP = 2 m n k per instruction (INT8: "
                    "integer ops); seconds = globaltimer span of the grid; per clock from block 0's clock64",
                    "", 10, 2}
        .titled("Tensor-core throughput")
        .premise_by_entry("compute: the tensor pipe's warp-level instruction counter (mma.sync: HMMA, IMMA or "
                          "DMMA by type; wgmma: GMMA, one per warp of the warpgroup) equals the instructions the "
                          "entry issued")
        .with_axes([] {
          std::vector<Axis> axes = form_axes();
          axes.push_back(text_axis("data", AxisRole::kGroup));
          return axes;
        }())
        .with_fields({numeric_field("blocks_per_sm", "blocks"), numeric_field("warps_per_sm", "warps"),
                      numeric_field("min_warps_per_sm", "warps"), numeric_field("sms_used", "SMs"),
                      numeric_field("instructions", "warp(group) instructions"),
                      numeric_field("flops_per_clk_per_sm", "FLOP/clk/SM"),
                      numeric_field("theoretical_flops_per_clk_per_sm", "FLOP/clk/SM"),
                      numeric_field("fraction_of_theoretical", "fraction"),
                      numeric_field("theoretical_gflops_at_kernel_clock", "GFLOP/s"),
                      numeric_field("power_w", "W")})
        .computing_by_precision(ceiling_by_precision()));

const ProbeDescriptor& kTensorLatency = declare_family(
    ProbeDescriptor{"exec.tensor_latency", Figure::kCyclesPerOp,
                    "one warp (mma.sync: 1024 dependent instructions on one accumulator) or one warpgroup (wgmma: "
                    "256 x {fence, mma, commit, wait}); random operands; clock64 of thread 0 around the chain / "
                    "instructions",
                    "", 10, 2}
        .titled("Tensor-core latency")
        .with_axes(form_axes())
        .with_fields({numeric_field("chain_length", "instructions")}));

std::string tensor_premise_metric(const TensorForm& f) {
  if (f.instr == TensorInstr::kWgmma) return metrics::kTensorGmmaInst;
  if (f.precision == TensorPrecision::kS8) return metrics::kTensorImmaInst;
  if (f.precision == TensorPrecision::kF64) return metrics::kTensorDmmaInst;
  return metrics::kTensorHmmaInst;
}

// Warp-level instructions the counter sees per instruction the entry counts (a wgmma runs on 4 warps).
double warp_instructions_per_instruction(const TensorForm& f) { return f.instr == TensorInstr::kWgmma ? 4 : 1; }

struct Operands {
  DeviceBuffer<std::uint8_t> a, b, neg_b;
};

Operands upload_operands(const TensorForm& f, bool zero, std::uint32_t seed) {
  const std::size_t a_elems = std::size_t(f.m) * f.k, b_elems = std::size_t(f.n) * f.k;
  const int es = tensor_element_bytes(f.precision);
  std::vector<std::uint8_t> a = zero ? std::vector<std::uint8_t>(a_elems * es, 0)
                                     : random_tensor_image(f.precision, a_elems, seed);
  std::vector<std::uint8_t> b = zero ? std::vector<std::uint8_t>(b_elems * es, 0)
                                     : random_tensor_image(f.precision, b_elems, seed + 1);
  std::vector<std::uint8_t> nb = zero ? b : negated_tensor_image(f.precision, b);
  Operands o{DeviceBuffer<std::uint8_t>(a.size()), DeviceBuffer<std::uint8_t>(b.size()),
             DeviceBuffer<std::uint8_t>(nb.size())};
  GP_CUDA_CHECK(cudaMemcpy(o.a.data(), a.data(), a.size(), cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemcpy(o.b.data(), b.data(), b.size(), cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemcpy(o.neg_b.data(), nb.data(), nb.size(), cudaMemcpyHostToDevice));
  return o;
}

// Instructions one block issues per loop iteration: a warpgroup 2 (B and -B); four mma.sync warps
// 2 x kMmaChains each.
double instructions_per_iteration(const TensorForm& f) {
  return f.instr == TensorInstr::kWgmma ? 2 : 2.0 * kMmaChains * kMmaWarpsPerBlock;
}

struct ThroughputRun {
  double seconds = 0, clock_mhz = 0, instructions = 0;
  // FLOP per clock of the median SM: its blocks' FLOPs over its own clock64 span (first block start to
  // last block end), so a clock that moved during the run, or an SM that got an extra block, does not
  // bias it (a grid-wide rate over one block's clock read 1.008x the FP64 DMMA peak on an H200).
  double flops_per_clk_per_sm = 0;
  int sms_used = 0;
};

class TensorThroughput {
 public:
  TensorThroughput(const TensorForm& form, bool zero)
      : form_(form), operands_(upload_operands(form, zero, 20261129u)), stamps_(kTensorStampWords), sink_(1) {
    const DeviceInfo& dev = context().device;
    const double peak = tensor_peak_flops_per_clock_per_sm(form.precision, dev.cc_major, dev.cc_minor);
    // About kSampleSeconds per sample at the per-clock peak (1024 FLOP/clk/SM where it is unknown).
    per_sm_instructions_ = kSampleSeconds * kSizingClockHz * (peak > 0 ? peak : 1024) / form.flops();
    if (context().options.quick) per_sm_instructions_ /= 4;
  }
  unsigned iterations(int blocks_per_sm) const {
    return static_cast<unsigned>(
        std::max(1.0, std::round(per_sm_instructions_ / (blocks_per_sm * instructions_per_iteration(form_)))));
  }
  void enqueue(int blocks_per_sm, cudaStream_t stream) {
    const int blocks = context().device.sm_count * blocks_per_sm;
    enqueue_tensor_throughput(form_, blocks, iterations(blocks_per_sm), operands_.a.data(), operands_.b.data(),
                              operands_.neg_b.data(), stamps_.data(), sink_.data(), stream);
  }
  ThroughputRun run(int blocks_per_sm) {
    std::vector<unsigned long long> host(kTensorStampWords, 0);
    host[0] = ~0ull;
    std::fill(host.begin() + kTensorStampHeader, host.begin() + kTensorStampHeader + kTensorStampSms, ~0ull);
    GP_CUDA_CHECK(cudaMemcpy(stamps_.data(), host.data(), stamps_.bytes(), cudaMemcpyHostToDevice));
    enqueue(blocks_per_sm, nullptr);
    GP_CUDA_CHECK(cudaMemcpy(host.data(), stamps_.data(), stamps_.bytes(), cudaMemcpyDeviceToHost));
    ThroughputRun r;
    const double block_flops = double(iterations(blocks_per_sm)) * instructions_per_iteration(form_) * form_.flops();
    std::vector<double> per_sm;
    for (int sm = 0; sm < kTensorStampSms; ++sm) {
      const unsigned long long start = host[kTensorStampHeader + sm], end = host[kTensorStampHeader + kTensorStampSms + sm],
                               blocks = host[kTensorStampHeader + 2 * kTensorStampSms + sm];
      if (blocks > 0 && end > start) per_sm.push_back(double(blocks) * block_flops / double(end - start));
    }
    if (!per_sm.empty()) {
      std::nth_element(per_sm.begin(), per_sm.begin() + per_sm.size() / 2, per_sm.end());
      r.flops_per_clk_per_sm = per_sm[per_sm.size() / 2];
    }
    r.seconds = static_cast<double>(host[1] - host[0]) * 1e-9;
    r.clock_mhz = host[3] > 0 ? static_cast<double>(host[2]) / static_cast<double>(host[3]) * 1e3 : 0;
    r.instructions = double(iterations(blocks_per_sm)) * instructions_per_iteration(form_) *
                     context().device.sm_count * blocks_per_sm;
    for (int i = 0; i < 4; ++i) r.sms_used += static_cast<int>(std::bitset<64>(host[4 + i]).count());
    return r;
  }
  double flop_rate(int blocks_per_sm) {
    const ThroughputRun r = run(blocks_per_sm);
    return r.seconds > 0 ? r.instructions * form_.flops() / r.seconds : 0;
  }

 private:
  TensorForm form_;
  Operands operands_;
  DeviceBuffer<unsigned long long> stamps_;
  DeviceBuffer<std::uint32_t> sink_;
  double per_sm_instructions_ = 0;
};

std::vector<int> blocks_per_sm_sweep(const TensorForm& f) {
  return f.instr == TensorInstr::kWgmma ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{1, 2, 4, 8};
}

void tensor_throughput_entry(benchmark::State& state, const TensorForm& form, bool zero) {
  const Context& ctx = context();
  TensorThroughput probe(form, zero);
  // The sweep: each configuration once, after one warm-up run (module load, clocks up); the best is the
  // entry's, the smallest within kPeakFraction of it says how much parallelism the tensor pipe needs.
  std::vector<std::pair<int, double>> sweep;
  probe.flop_rate(blocks_per_sm_sweep(form).front());
  for (int b : blocks_per_sm_sweep(form)) sweep.emplace_back(b, probe.flop_rate(b));
  const auto best = *std::max_element(sweep.begin(), sweep.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
  int min_blocks = best.first;
  for (const auto& [b, rate] : sweep)
    if (rate >= kPeakFraction * best.second) min_blocks = std::min(min_blocks, b);

  const int blocks = best.first;
  const double instructions = double(probe.iterations(blocks)) * instructions_per_iteration(form) *
                              ctx.device.sm_count * blocks;
  Measurement m(state, kTensor, Work{0, instructions * form.flops(), instructions * warp_instructions_per_instruction(form)});
  m.premise(Premise::compute(tensor_premise_metric(form)));
  int sms_used = ctx.device.sm_count;
  std::vector<double> power_w, per_clock;
  m.run(
      [&] {
        const ThroughputRun r = probe.run(blocks);
        sms_used = std::min(sms_used, r.sms_used);
        if (r.flops_per_clk_per_sm > 0) per_clock.push_back(r.flops_per_clk_per_sm);
        if (ctx.nvml)
          if (const auto mw = ctx.nvml->power_mw()) power_w.push_back(*mw * 1e-3);
        Sample s;
        s.seconds = r.seconds;
        s.clock_mhz = r.clock_mhz;
        return s;
      },
      [&] {
        probe.enqueue(blocks, nullptr);
        GP_CUDA_CHECK(cudaDeviceSynchronize());
      });
  const int warps_per_block = kTensorThreadsPerBlock / 32;
  m.param("blocks_per_sm", blocks);
  m.param("warps_per_sm", blocks * warps_per_block);
  m.param("min_warps_per_sm", min_blocks * warps_per_block);
  m.param("sms_used", sms_used);
  m.param("instructions", instructions);
  const double clock_mhz = state.counters["sm_clock_kernel_mhz"];
  if (!per_clock.empty()) {
    std::sort(per_clock.begin(), per_clock.end());
    const double median_per_clock = per_clock[per_clock.size() / 2];
    m.param("flops_per_clk_per_sm", median_per_clock);
    const double peak = tensor_peak_flops_per_clock_per_sm(form.precision, ctx.device.cc_major, ctx.device.cc_minor);
    if (peak > 0) {
      m.param("theoretical_flops_per_clk_per_sm", peak);
      m.param("fraction_of_theoretical", median_per_clock / peak);
      m.param("theoretical_gflops_at_kernel_clock", peak * ctx.device.sm_count * clock_mhz * 1e-3);
    }
  }
  if (!power_w.empty()) {
    std::sort(power_w.begin(), power_w.end());
    m.param("power_w", power_w[power_w.size() / 2]);
  }
}

void tensor_latency_entry(benchmark::State& state, const TensorForm& form) {
  const unsigned chain = form.instr == TensorInstr::kWgmma ? kWgmmaLatencyChain : kMmaLatencyChain;
  const Operands operands = upload_operands(form, false, 7u);
  DeviceBuffer<unsigned long long> out(2);
  DeviceBuffer<std::uint32_t> sink(1);
  Measurement m(state, kTensorLatency, Work{0, 0, double(chain)});
  m.param("chain_length", chain);
  m.run(
      [&] {
        enqueue_tensor_latency(form, chain, operands.a.data(), operands.b.data(), out.data(), sink.data(), nullptr);
        unsigned long long host[2];
        GP_CUDA_CHECK(cudaMemcpy(host, out.data(), sizeof host, cudaMemcpyDeviceToHost));
        Sample s;
        s.cycles = static_cast<double>(host[0]);
        s.seconds = static_cast<double>(host[1]) * 1e-9;
        s.clock_mhz = host[1] > 0 ? s.cycles / static_cast<double>(host[1]) * 1e3 : 0;
        return s;
      },
      [&] {
        enqueue_tensor_latency(form, chain, operands.a.data(), operands.b.data(), out.data(), sink.data(), nullptr);
        GP_CUDA_CHECK(cudaDeviceSynchronize());
      });
}

std::string entry_of(const ProbeDescriptor& record, const TensorForm& f, const char* data) {
  const std::string instr = tensor_instr_name(f.instr), precision = tensor_precision_name(f.precision),
                    acc = tensor_accum_name(f.accum), a = f.a_registers ? "reg" : "smem",
                    m = std::to_string(f.m), n = std::to_string(f.n), k = std::to_string(f.k);
  if (data)
    return entry_name(record, {{"instr", instr}, {"precision", precision}, {"acc", acc}, {"a", a}, {"m", m},
                               {"n", n}, {"k", k}, {"data", data}});
  return entry_name(record, {{"instr", instr}, {"precision", precision}, {"acc", acc}, {"a", a}, {"m", m},
                             {"n", n}, {"k", k}});
}

}  // namespace

void register_tensor_probes() {
  Context& ctx = context();
  const bool quick = ctx.options.quick;
  std::set<std::string> left_out;
  if (const std::string why = wgmma_forms_left_out(); !why.empty())
    ctx.skip_notes.push_back("exec.tensor: " + why);
  for (const TensorForm& form : tensor_forms()) {
    const std::string why = tensor_form_unavailable(form, ctx.device.cc(), ctx.device.code);
    if (!why.empty()) {
      if (left_out.insert(why).second)
        ctx.skip_notes.push_back(std::string("exec.tensor: ") + tensor_instr_name(form.instr) + " forms left out on " +
                                 ctx.device.name + ": " + why);
      continue;
    }
    // Every form on random data; the headline forms (every mma.sync, wgmma at N = 256) on zeros too.
    const bool headline = form.instr == TensorInstr::kMma || form.n == 256;
    if (quick && form.instr == TensorInstr::kWgmma && form.n != 64 && form.n != 256) continue;
    register_entry(entry_of(kTensor, form, "random"), kTensor,
                   [form](benchmark::State& st) { tensor_throughput_entry(st, form, false); });
    if (headline && !(quick && form.a_registers))
      register_entry(entry_of(kTensor, form, "zero"), kTensor,
                     [form](benchmark::State& st) { tensor_throughput_entry(st, form, true); });
    register_entry(entry_of(kTensorLatency, form, nullptr), kTensorLatency,
                   [form](benchmark::State& st) { tensor_latency_entry(st, form); });
  }
}

}  // namespace gpuprobe
