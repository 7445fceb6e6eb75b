// cuBLASLt GEMMs as reference points on the tensor roofs: cublasLtMatmul calls, D = A^T B at
// m = n = k, for every type of kernels::kGemmLtPrecisions (bf16, f16, tf32, e4m3, s8, f64), with the
// algorithm cuBLASLt's heuristic picks (kernels/include/gpuprobe/kernels/gemm_lt.hpp says which layout
// and types, and why). Family kernels.gemm_lt; GFLOP/s on 2mnk (integer multiply-adds count alike),
// GB/s on minimal bytes beside it; each entry is held to the tensor ceiling of its type.
//
// Operands random in [-1, 1) in their type (s8: integers in [-127, 127]). Compute-bound at every size here
// (2n^3 flops over at most 3 x 8 n^2 bytes is over 1300 FLOP/byte at n = 4096), so the L2 is not flushed
// between samples.
//
// Under the power cap the rate depends on what the GPU did in the last second. On an H200 (docs/perf/
// tensor.md, "cuBLASLt GEMMs"), a BF16 8192 GEMM run back to back from idle drops from 1,980 MHz to a
// level that holds until ~0.8 s (about 1,545 MHz, 675-703 TFLOP/s); once NVML's board power, an
// average over about a second, nears the limit (~0.85 s), the clock dips by up to 25 % for ~0.1 s and
// then oscillates (631-695 TFLOP/s). The entries measure the first level:
// - each entry starts cool: it waits, GPU idle, until NVML's board power is below kCoolPowerShare of the
//   limit (at most kCoolMaxSeconds; `cooldown_seconds` says how long), so that what the entries before
//   it ran does not decide its regime;
// - each sample is a batch of back-to-back calls of at least kSampleSeconds, so that the host's pause
//   between samples (event wait, NVML reads) is a small share of the GPU's time;
// - the warm-up runs until the batch times stop drifting (ProbeDescriptor::warmup_until_steady).
// With one call per sample and no such start, the same BF16 entry read 700.7 to 799.5 TFLOP/s in four
// processes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/hash.hpp"
#include "gpuprobe/kernels/gemm_lt.hpp"
#include "harness/event_timer.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

using kernels::GemmLtPrecision;
using kernels::GemmLtPrecisionRecord;

// The compute ceiling each type's work belongs to (family.hpp, compute_ceilings()). DGEMM runs on
// Hopper's FP64 tensor cores (DMMA), hence "FP64 tensor", not the CUDA cores' "FP64".
const char* tensor_ceiling(GemmLtPrecision p) {
  switch (p) {
    case GemmLtPrecision::kBF16: return "BF16 tensor";
    case GemmLtPrecision::kF16: return "FP16 tensor";
    case GemmLtPrecision::kTF32: return "TF32 tensor";
    case GemmLtPrecision::kE4M3: return "FP8 tensor";
    case GemmLtPrecision::kS8: return "INT8 tensor";
    case GemmLtPrecision::kF64: return "FP64 tensor";
  }
  return "";
}

// One sample's batch lasts at least this long, so that the host's pause between samples (event wait,
// NVML reads: tens to hundreds of microseconds) is a small share of the GPU's time, as in a long run.
constexpr double kSampleSeconds = 0.01;
// The warm-up until steady: at least kSteadyMinSeconds (the two windows of kSteadyWindow samples the rule
// compares), at most kSteadyMaxSeconds per entry (the entry then says warmup_steady=capped).
constexpr int kSteadyWindow = 6;
constexpr double kSteadyMinSeconds = 2 * kSteadyWindow * kSampleSeconds;
constexpr double kSteadyMaxSeconds = 1.0;
// The cool start: an entry of ~0.25 s near the limit's power, begun at 70 % of it, ends with NVML's
// one-second average near 80 %, below where the clock dips (the average at ~620 of 700 W on the H200).
constexpr double kCoolPowerShare = 0.7;
constexpr double kCoolMaxSeconds = 1.0;

// Waits, the GPU idle, until NVML's board power is below kCoolPowerShare of the enforced limit or
// kCoolMaxSeconds have passed; the seconds waited (0 without NVML).
double cool_down() {
  const Nvml* nvml = context().nvml ? &*context().nvml : nullptr;
  const auto limit = nvml ? nvml->power_limit_mw() : std::nullopt;
  if (!limit) return 0;
  const HostTime start = host_now();
  for (;;) {
    const auto mw = nvml->power_mw();
    const double waited = host_seconds_since(start);
    if (!mw || *mw < kCoolPowerShare * *limit || waited >= kCoolMaxSeconds) return waited;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<std::pair<std::string, std::string>> ceilings_by_precision() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const GemmLtPrecisionRecord& r : kernels::kGemmLtPrecisions) out.emplace_back(r.name, tensor_ceiling(r.precision));
  return out;
}

const ProbeDescriptor& kGemmLt = declare_family(
    ProbeDescriptor{"kernels.gemm_lt", Figure::kFlopRate,
                    "D = A^T B (column-major, A transposed: the TN layout cuBLASLt's FP8 and INT8 kernels take "
                    "on sm_90; alpha = 1, beta = 0) through cublasLtMatmul with the first algorithm of "
                    "cublasLtMatmulAlgoGetHeuristic (64 MiB workspace offered); each sample times calls_per_sample "
                    "back-to-back calls (at least 10 ms) with CUDA events, from a cool start (board power below "
                    "70 % of the limit) and after a warm-up until the sample times settle; m = n = k; flops = 2mnk "
                    "per call (integer multiply-adds alike); bytes = minimal per call (A and B read once, D written "
                    "once, each in its type)",
                    // No launch gate: the host queues a batch's calls faster than the GPU runs them (one call
                    // is >= 0.1 ms), so only the first call's submission falls in the interval, and a gate's
                    // spin would idle the tensor cores at the start of every sample.
                    "", 10, 2, 0, false}
        .titled("cuBLASLt GEMMs on the tensor cores")
        .warming_until_steady(SettleRule{kSteadyMinSeconds, kSteadyMaxSeconds, kSteadyWindow, 0.01})
        // data: "random" only (zeros raise the clock under the power cap, which exec.tensor shows for every
        // form); an axis still, so that names match results that also had data:zero.
        .with_axes({text_axis("precision", AxisRole::kGroup), text_axis("data", AxisRole::kGroup),
                    numeric_axis("n", "elements (m = n = k)", AxisRole::kX),
                    // Constant: these entries are the vendor's library, which the analysis treats as a
                    // reference (roofline.is_reference), not as one of our kernels.
                    text_axis("impl", AxisRole::kGroup).outside_name()})
        .with_fields({text_field("l2"), text_field("types"), text_field("algorithm"),
                      numeric_field("workspace_bytes", "bytes"), numeric_field("algorithm_workspace_bytes", "bytes"),
                      numeric_field("heuristic_candidates", "algorithms"),
                      numeric_field("cublaslt_version", "version"), numeric_field("power_w", "W"),
                      numeric_field("calls_per_sample", "calls"), numeric_field("cooldown_seconds", "s")})
        .computing_by_precision(ceilings_by_precision()));

template <class T>
__device__ T from_unit(double u);  // u uniform in [0, 1) -> a random element of the type
template <>
__device__ __nv_bfloat16 from_unit(double u) { return __double2bfloat16(2.0 * u - 1.0); }
template <>
__device__ __half from_unit(double u) { return __double2half(2.0 * u - 1.0); }
template <>
__device__ float from_unit(double u) { return static_cast<float>(2.0 * u - 1.0); }
template <>
__device__ __nv_fp8_e4m3 from_unit(double u) { return __nv_fp8_e4m3(static_cast<float>(2.0 * u - 1.0)); }
template <>
__device__ std::int8_t from_unit(double u) { return static_cast<std::int8_t>(static_cast<int>(u * 255.0) - 127); }
template <>
__device__ double from_unit(double u) { return 2.0 * u - 1.0; }

template <class T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = from_unit<T>(unit_interval(mix64(seed ^ mix64(i))));
}

template <class T>
void launch_fill(void* data, std::size_t count, std::uint64_t seed) {
  fill_random_kernel<T><<<4 * context().device.sm_count, 256>>>(static_cast<T*>(data), count, seed);
  GP_CUDA_CHECK_LAUNCH();
}

// `count` random elements of the record's input type at `data`.
void fill_random(GemmLtPrecision p, void* data, std::size_t count, std::uint64_t seed) {
  switch (p) {
    case GemmLtPrecision::kBF16: return launch_fill<__nv_bfloat16>(data, count, seed);
    case GemmLtPrecision::kF16: return launch_fill<__half>(data, count, seed);
    case GemmLtPrecision::kTF32: return launch_fill<float>(data, count, seed);
    case GemmLtPrecision::kE4M3: return launch_fill<__nv_fp8_e4m3>(data, count, seed);
    case GemmLtPrecision::kS8: return launch_fill<std::int8_t>(data, count, seed);
    case GemmLtPrecision::kF64: return launch_fill<double>(data, count, seed);
  }
}

double footprint(const GemmLtPrecisionRecord& r, int n) {
  return double(n) * n * double(2 * r.input_bytes + r.output_bytes) + double(kernels::kGemmLtWorkspaceBytes);
}

// The plan, or null after skipping the entry with the reason (one line on stderr too) where cuBLASLt
// has no algorithm for it on this GPU: one type the library lacks does not end the run.
std::unique_ptr<kernels::GemmLt> plan_or_skip(benchmark::State& state, const GemmLtPrecisionRecord& r, int n) {
  try {
    return std::make_unique<kernels::GemmLt>(r.precision, n, n, n);
  } catch (const kernels::GemmLtUnsupported& e) {
    std::fprintf(stderr, "gpuprobe: kernels.gemm_lt: skipped %s n=%d: %s\n", r.name, n, e.what());
    state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    return nullptr;
  }
}

void gemm_lt_entry(benchmark::State& state, const GemmLtPrecisionRecord& r, int n) {
  const std::unique_ptr<kernels::GemmLt> owned = plan_or_skip(state, r, n);
  if (!owned) return;
  const kernels::GemmLt& plan = *owned;
  const std::size_t elements = std::size_t(n) * n;
  DeviceBuffer<unsigned char> a(elements * r.input_bytes), b(elements * r.input_bytes), d(elements * r.output_bytes);
  fill_random(r.precision, a.data(), elements, 101);
  fill_random(r.precision, b.data(), elements, 202);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  // One call before anything is timed: cuBLASLt may refuse at run time the algorithm its heuristic gave
  // (GemmLt::run says which); the entry is then skipped with the reason, the run goes on.
  try {
    plan.run(a.data(), b.data(), d.data(), nullptr);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const kernels::GemmLtUnsupported& e) {
    std::fprintf(stderr, "gpuprobe: kernels.gemm_lt: skipped %s n=%d: %s\n", r.name, n, e.what());
    state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    return;
  }

  // Calls per sample from one more call's time (the one above carried the first call's costs).
  int calls = 1;
  {
    EventTimer once;
    const double t = once.seconds([&](cudaStream_t stream) { plan.run(a.data(), b.data(), d.data(), stream); });
    calls = static_cast<int>(std::clamp(std::ceil(kSampleSeconds / std::max(t, 1e-7)), 1.0, 10000.0));
  }
  Measurement meas(state, kGemmLt,
                   Work{calls * kernels::gemm_lt_min_bytes(r.precision, n, n, n),
                        calls * kernels::gemm_lt_flops(n, n, n), 0});
  meas.tag("impl", "cublaslt");
  meas.tag("l2", "not flushed (compute-bound)");
  meas.tag("types", r.types);
  meas.tag("algorithm", plan.algorithm());
  meas.param("workspace_bytes", double(plan.workspace_bytes()));
  meas.param("algorithm_workspace_bytes", double(plan.algorithm_workspace_bytes()));
  meas.param("heuristic_candidates", plan.heuristic_candidates());
  meas.param("cublaslt_version", double(kernels::gemm_lt_version()));
  meas.param("calls_per_sample", calls);
  meas.param("cooldown_seconds", cool_down());
  // Board power after each sample (NVML), beside the SM clock the harness records: under the power
  // cap, operand values move the clock and so the rate (docs/probes.md, "cuBLASLt GEMMs"). The
  // annotation runs after warm-up samples too: the median is over the timed samples, the last ones.
  std::vector<double> power_w;
  meas.time_events(
      [&](cudaStream_t stream) {
        for (int i = 0; i < calls; ++i) plan.run(a.data(), b.data(), d.data(), stream);
      },
      [&](Sample&) {
        if (context().nvml)
          if (const auto mw = context().nvml->power_mw()) power_w.push_back(*mw * 1e-3);
      });
  const std::size_t timed = std::min(power_w.size(), static_cast<std::size_t>(state.iterations()));
  if (timed > 0) {
    std::vector<double> last(power_w.end() - static_cast<std::ptrdiff_t>(timed), power_w.end());
    std::nth_element(last.begin(), last.begin() + last.size() / 2, last.end());
    meas.param("power_w", last[last.size() / 2]);
  }
}

}  // namespace

void register_gemm_lt_benchmarks() {
  Context& ctx = context();
  const int cc = ctx.device.cc_major * 10 + ctx.device.cc_minor;
  const std::vector<int> sizes = ctx.options.quick ? std::vector<int>{4096} : std::vector<int>{4096, 8192, 16384};
  std::string left_out;
  for (const GemmLtPrecisionRecord& r : kernels::kGemmLtPrecisions) {
    if (cc < r.min_compute_capability) {
      left_out += std::string(left_out.empty() ? "" : ", ") + r.name + " (needs sm_" +
                  std::to_string(r.min_compute_capability) + ")";
      continue;
    }
    for (int n : sizes) {
      // FP64 stops at 8192: one 16384^3 DGEMM takes ~150 ms on an H100 (~1.2 s for the entry's calls,
      // a sizeable share of the main job's budget for the new families), and DGEMM's rate is flat well
      // before 8192 (1.1 TFLOP per call there, 680 FLOP/byte: deep in the compute-bound region).
      if (r.precision == GemmLtPrecision::kF64 && n > 8192) continue;
      if (!kernel_footprint_fits(footprint(r, n))) continue;
      const std::string name = entry_name(kGemmLt, {{"precision", r.name}, {"data", "random"}, {"n", std::to_string(n)}});
      register_entry(name, kGemmLt, [&r, n](benchmark::State& st) { gemm_lt_entry(st, r, n); });
    }
  }
  if (!left_out.empty())
    ctx.skip_notes.push_back("kernels.gemm_lt: " + left_out + " left out on " + ctx.device.name +
                             " (compute capability " + std::to_string(cc / 10) + "." + std::to_string(cc % 10) +
                             "): its tensor cores lack the type");
}

}  // namespace gpuprobe
