// Arithmetic pipeline probes (V&D SC08 §3.4-3.7):
//   exec.latency          dependent chains, one warp, cycles per operation (clock64)
//   exec.throughput       independent operations, ILP 1..8 x warps per SM 1..64 -> ops/clock/SM
//   exec.throughput_peak  the best configuration of the sweep, re-measured, with the smallest
//                         ILP x warps that reaches 95 % of it and the theoretical peak at the clock
// docs/probes.md#execution-pipelines says how they measure what they claim.
#include "probes/exec_pipeline.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <bitset>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_names.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/measure.hpp"
#include "probes/exec_ops.cuh"
#include "probes/exec_probes.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {

// ------------------------------------------------------------------------------------------------
// Latency kernels. One warp; thread 0 reads the clocks. extern "C" names so that
// scripts/dev/check_sass.sh finds each chain's loop by name in `cuobjdump -sass`.

namespace {

// out[0..31]: each thread's final value (raw bits); out[32]: clock64 cycles; out[33]: globaltimer ns.
template <PipeOp Op>
__device__ __forceinline__ void latency_chain(const std::uint64_t* start, std::uint64_t a_bits, std::uint64_t b_bits,
                                              unsigned groups, std::uint64_t* out) {
  using T = pipe_reg_t<Op>;
  __shared__ T shared_a[32];
  const T a = from_bits<T>(a_bits), b = from_bits<T>(b_bits);
  T x = from_bits<T>(start[threadIdx.x]);
  shared_a[threadIdx.x] = a;
  __syncwarp();
  const auto shared_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(&shared_a[threadIdx.x]));
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  for (unsigned g = 0; g < groups; ++g) {  // 32-bit counter: loop control stays on the uniform datapath
#pragma unroll
    for (int u = 0; u < kLatencyUnroll; ++u) pipe_step<Op>(x, a, b, shared_address);
  }
  // The clock read does not wait for the last operation: an error of at most one latency in
  // groups * kLatencyUnroll operations.
  const long long c1 = clock64();
  const std::uint64_t t1 = exec_global_timer_ns();
  out[threadIdx.x] = to_bits(x);
  if (threadIdx.x == 0) {
    out[32] = static_cast<std::uint64_t>(c1 - c0);
    out[33] = t1 - t0;
  }
}

}  // namespace
}  // namespace gpuprobe

#define GP_LATENCY_KERNEL(name, op)                                                                   \
  extern "C" __global__ void __launch_bounds__(32) gp_latency_##name(                                 \
      const std::uint64_t* start, std::uint64_t a, std::uint64_t b, unsigned groups, std::uint64_t* out) { \
    gpuprobe::latency_chain<op>(start, a, b, groups, out);                                            \
  }
GP_LATENCY_KERNEL(fadd, gpuprobe::PipeOp::kFAdd)
GP_LATENCY_KERNEL(fmul, gpuprobe::PipeOp::kFMul)
GP_LATENCY_KERNEL(ffma, gpuprobe::PipeOp::kFFma)
GP_LATENCY_KERNEL(dadd, gpuprobe::PipeOp::kDAdd)
GP_LATENCY_KERNEL(dfma, gpuprobe::PipeOp::kDFma)
GP_LATENCY_KERNEL(hfma2, gpuprobe::PipeOp::kHFma2)
GP_LATENCY_KERNEL(bfma2, gpuprobe::PipeOp::kBFma2)
GP_LATENCY_KERNEL(iadd3, gpuprobe::PipeOp::kIAdd)
GP_LATENCY_KERNEL(imad, gpuprobe::PipeOp::kIMad)
GP_LATENCY_KERNEL(rsqrt, gpuprobe::PipeOp::kRsqrt)
GP_LATENCY_KERNEL(log2, gpuprobe::PipeOp::kLog2)
GP_LATENCY_KERNEL(sin, gpuprobe::PipeOp::kSin)
GP_LATENCY_KERNEL(exp2, gpuprobe::PipeOp::kExp2)
GP_LATENCY_KERNEL(ffma_shared, gpuprobe::PipeOp::kFFmaShared)
#undef GP_LATENCY_KERNEL

namespace gpuprobe {

using LatencyKernel = void (*)(const std::uint64_t*, std::uint64_t, std::uint64_t, unsigned, std::uint64_t*);

namespace {

struct OpRow {
  PipeOpInfo info;
  LatencyKernel latency;
};

const std::vector<OpRow>& op_rows() {
  static const std::vector<OpRow> rows = {
      {{PipeOp::kFAdd, "fadd", "gp_latency_fadd", 1, "FP32", true, metrics::kSassFadd}, gp_latency_fadd},
      {{PipeOp::kFMul, "fmul", "gp_latency_fmul", 1, "FP32", false}, gp_latency_fmul},
      {{PipeOp::kFFma, "ffma", "gp_latency_ffma", 2, "FP32", true, metrics::kSassFfma}, gp_latency_ffma},
      {{PipeOp::kDAdd, "dadd", "gp_latency_dadd", 1, "FP64", true, metrics::kSassDadd}, gp_latency_dadd},
      {{PipeOp::kDFma, "dfma", "gp_latency_dfma", 2, "FP64", true, metrics::kSassDfma}, gp_latency_dfma},
      {{PipeOp::kHFma2, "hfma2", "gp_latency_hfma2", 4, "FP16 half2", true, metrics::kSassHfma}, gp_latency_hfma2},
      {{PipeOp::kBFma2, "bfma2", "gp_latency_bfma2", 4, "BF16 bf16x2", true}, gp_latency_bfma2},
      {{PipeOp::kIAdd, "iadd3", "gp_latency_iadd3", 0, nullptr, true}, gp_latency_iadd3},
      {{PipeOp::kIMad, "imad", "gp_latency_imad", 0, nullptr, true}, gp_latency_imad},
      {{PipeOp::kRsqrt, "rsqrt", "gp_latency_rsqrt", 0, nullptr, true}, gp_latency_rsqrt},
      {{PipeOp::kLog2, "log2", "gp_latency_log2", 0, nullptr, false}, gp_latency_log2},
      {{PipeOp::kSin, "sin", "gp_latency_sin", 0, nullptr, false}, gp_latency_sin},
      {{PipeOp::kExp2, "exp2", "gp_latency_exp2", 0, nullptr, false}, gp_latency_exp2},
      // An FFMA fed from shared memory: its rate is not the FP32 peak, so its own ceiling name.
      {{PipeOp::kFFmaShared, "ffma_shared", "gp_latency_ffma_shared", 2, "FP32 (shared operand)", false},
       gp_latency_ffma_shared},
  };
  return rows;
}

const OpRow& op_row(PipeOp op) {
  for (const OpRow& r : op_rows())
    if (r.info.op == op) return r;
  throw Error("unknown pipeline operation");
}

// ------------------------------------------------------------------------------------------------
// Throughput kernel: every thread runs `ilp` independent chains of the same operation.

// Groups of `ilp` operations per loop iteration: 32 keeps the loop's 3 control instructions below
// 1 % of the issue slots from ILP 4 on (with 8 they cost FP32 FMA 2 % of its peak).
constexpr int kThroughputUnroll = 32;

// stamps[0]: earliest block start (globaltimer ns, atomicMin); stamps[1]: latest block end
// (atomicMax); stamps[2], stamps[3]: block 0's clock64 cycles and ns over its run;
// stamps[4..7]: bit mask of the SMs that ran a block.
template <PipeOp Op, int Ilp>
__global__ void __launch_bounds__(1024, 2)
    throughput_kernel(const std::uint64_t* start, std::uint64_t a_bits, std::uint64_t b_bits, unsigned iterations,
                      std::uint64_t* sink, unsigned long long* stamps) {
  using T = pipe_reg_t<Op>;
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  const T a = from_bits<T>(a_bits), b = from_bits<T>(b_bits);
  T x[Ilp];
#pragma unroll
  for (int j = 0; j < Ilp; ++j) x[j] = from_bits<T>(start[(threadIdx.x + j) % 32]);
  for (unsigned i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < kThroughputUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < Ilp; ++j) pipe_step<Op>(x[j], a, b, 0u);
    }
  }
  std::uint64_t folded = 0;
#pragma unroll
  for (int j = 0; j < Ilp; ++j) folded ^= to_bits(x[j]);
  sink[blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x] = folded;  // keeps every chain live
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long c1 = clock64();
    const std::uint64_t t1 = exec_global_timer_ns();
    atomicMin(&stamps[0], static_cast<unsigned long long>(t0));
    atomicMax(&stamps[1], static_cast<unsigned long long>(t1));
    if (blockIdx.x == 0) {
      stamps[2] = static_cast<unsigned long long>(c1 - c0);
      stamps[3] = t1 - t0;
    }
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid < 256) atomicOr(&stamps[4 + smid / 64], 1ull << (smid % 64));
  }
}

using ThroughputKernel = void (*)(const std::uint64_t*, std::uint64_t, std::uint64_t, unsigned, std::uint64_t*,
                                  unsigned long long*);

template <PipeOp Op, int... Ilp>
ThroughputKernel pick_ilp(int ilp, std::integer_sequence<int, Ilp...>) {
  ThroughputKernel k = nullptr;
  ((ilp == Ilp + 1 ? (k = throughput_kernel<Op, Ilp + 1>, 0) : 0), ...);
  return k;
}

template <PipeOp Op>
ThroughputKernel throughput_kernel_for(int ilp) {
  return pick_ilp<Op>(ilp, std::make_integer_sequence<int, kMaxIlp>{});
}

ThroughputKernel throughput_kernel_of(PipeOp op, int ilp) {
  switch (op) {
    case PipeOp::kFAdd: return throughput_kernel_for<PipeOp::kFAdd>(ilp);
    case PipeOp::kFFma: return throughput_kernel_for<PipeOp::kFFma>(ilp);
    case PipeOp::kDAdd: return throughput_kernel_for<PipeOp::kDAdd>(ilp);
    case PipeOp::kDFma: return throughput_kernel_for<PipeOp::kDFma>(ilp);
    case PipeOp::kHFma2: return throughput_kernel_for<PipeOp::kHFma2>(ilp);
    case PipeOp::kBFma2: return throughput_kernel_for<PipeOp::kBFma2>(ilp);
    case PipeOp::kIAdd: return throughput_kernel_for<PipeOp::kIAdd>(ilp);
    case PipeOp::kIMad: return throughput_kernel_for<PipeOp::kIMad>(ilp);
    case PipeOp::kRsqrt: return throughput_kernel_for<PipeOp::kRsqrt>(ilp);
    default: break;
  }
  throw UsageError(std::string("operation ") + pipe_op_info(op).name + " has no throughput kernel");
}

// ------------------------------------------------------------------------------------------------
// Host-side operand bits

std::uint64_t f32_bits(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
std::uint64_t f64_bits(double v) {
  std::uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}
std::uint64_t h2_bits(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  std::uint32_t u;
  std::memcpy(&u, &h, 4);
  return u;
}
std::uint64_t bf2_bits(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  std::uint32_t u;
  std::memcpy(&u, &h, 4);
  return u;
}

}  // namespace

const std::vector<PipeOpInfo>& pipe_ops() {
  static const std::vector<PipeOpInfo> infos = [] {
    std::vector<PipeOpInfo> v;
    for (const OpRow& r : op_rows()) v.push_back(r.info);
    return v;
  }();
  return infos;
}

const PipeOpInfo& pipe_op_info(PipeOp op) { return op_row(op).info; }

PipeOp pipe_op_from_name(const std::string& name) {
  for (const OpRow& r : op_rows())
    if (name == r.info.name) return r.info.op;
  throw UsageError("unknown pipeline operation '" + name + "'");
}

ChainOperands chain_operands(PipeOp op) {
  ChainOperands c{};
  for (int t = 0; t < 32; ++t) {
    const float ft = static_cast<float>(t);
    switch (op) {
      case PipeOp::kFAdd: c.start_bits[t] = f32_bits(0.5f + ft); break;          // x + N stays exact
      case PipeOp::kFMul: c.start_bits[t] = f32_bits(1.0f + ft / 64); break;
      case PipeOp::kFFma:
      case PipeOp::kFFmaShared: c.start_bits[t] = f32_bits(1.0f + ft); break;
      case PipeOp::kDAdd: c.start_bits[t] = f64_bits(0.5 + t); break;
      case PipeOp::kDFma: c.start_bits[t] = f64_bits(1.0 + t); break;
      case PipeOp::kHFma2: c.start_bits[t] = h2_bits(ft / 8, 4 - ft / 16); break;
      case PipeOp::kBFma2: c.start_bits[t] = bf2_bits(ft / 8, 4 - ft / 16); break;
      case PipeOp::kIAdd: c.start_bits[t] = 7919u * static_cast<std::uint32_t>(t) + 1; break;
      case PipeOp::kIMad: c.start_bits[t] = static_cast<std::uint32_t>(t) + 1; break;
      case PipeOp::kRsqrt: c.start_bits[t] = f32_bits(2.0f + ft); break;        // converges to 1
      case PipeOp::kLog2: c.start_bits[t] = f32_bits(65536.0f + ft); break;
      case PipeOp::kSin: c.start_bits[t] = f32_bits(1.0f + ft / 32); break;      // decays slowly to 0
      case PipeOp::kExp2: c.start_bits[t] = f32_bits(-4.0f - ft / 8); break;
    }
  }
  switch (op) {
    case PipeOp::kFAdd: c.a_bits = f32_bits(1.0f); break;
    case PipeOp::kFMul: c.a_bits = f32_bits(1.0001f); break;
    case PipeOp::kFFma:
    case PipeOp::kFFmaShared: c.a_bits = f32_bits(0.9999f); c.b_bits = f32_bits(0.001f); break;  // -> 10
    case PipeOp::kDAdd: c.a_bits = f64_bits(1.0); break;
    case PipeOp::kDFma: c.a_bits = f64_bits(0.9999); c.b_bits = f64_bits(0.001); break;
    case PipeOp::kHFma2: c.a_bits = h2_bits(0.9375f, 0.96875f); c.b_bits = h2_bits(0.0625f, 0.0625f); break;
    case PipeOp::kBFma2: c.a_bits = bf2_bits(0.9375f, 0.96875f); c.b_bits = bf2_bits(0.0625f, 0.0625f); break;
    case PipeOp::kIAdd: c.a_bits = 0x9E3779B9u; c.b_bits = 12345u; break;
    case PipeOp::kIMad: c.a_bits = 1664525u; c.b_bits = 1013904223u; break;  // the Numerical Recipes LCG
    default: break;
  }
  return c;
}

ChainRun run_latency_chain(PipeOp op, std::uint64_t groups, const ChainOperands& operands) {
  if (groups < 1 || groups > 0xffffffffu) throw UsageError("latency chain: groups must be in [1, 2^32)");
  DeviceBuffer<std::uint64_t> start(32), out(34);
  GP_CUDA_CHECK(cudaMemcpy(start.data(), operands.start_bits, 32 * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  op_row(op).latency<<<1, 32>>>(start.data(), operands.a_bits, operands.b_bits, static_cast<unsigned>(groups),
                                out.data());
  GP_CUDA_CHECK_LAUNCH();
  std::uint64_t host[34];
  GP_CUDA_CHECK(cudaMemcpy(host, out.data(), sizeof host, cudaMemcpyDeviceToHost));
  ChainRun run;
  run.cycles = host[32];
  run.ns = host[33];
  run.final_bits.assign(host, host + 32);
  return run;
}

ThroughputShape throughput_shape(int warps_per_sm) {
  if (warps_per_sm < 1 || warps_per_sm > kMaxWarpsPerSm)
    throw UsageError("throughput: warps per SM must be in 1.." + std::to_string(kMaxWarpsPerSm));
  if (warps_per_sm <= 32) return ThroughputShape{1, 32 * warps_per_sm};
  if (warps_per_sm % 2 != 0) throw UsageError("throughput: warps per SM above 32 must be even (two blocks per SM)");
  return ThroughputShape{2, 16 * warps_per_sm};
}

void validate_ilp(int ilp) {
  if (ilp < 1 || ilp > kMaxIlp) throw UsageError("throughput: ILP must be in 1.." + std::to_string(kMaxIlp));
}

ThroughputRun run_throughput(PipeOp op, int ilp, int warps_per_sm, std::uint64_t ops_per_thread, int sm_count) {
  validate_ilp(ilp);
  const ThroughputShape shape = throughput_shape(warps_per_sm);
  const ThroughputKernel kernel = throughput_kernel_of(op, ilp);
  const std::uint64_t per_iteration = std::uint64_t(kThroughputUnroll) * ilp;
  const std::uint64_t iterations = std::max<std::uint64_t>(1, ops_per_thread / per_iteration);
  if (iterations > 0xffffffffu) throw UsageError("throughput: too many operations per thread");

  ThroughputRun run;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&run.resident_blocks_per_sm, kernel,
                                                              shape.threads_per_block, 0));
  if (run.resident_blocks_per_sm < shape.blocks_per_sm)
    throw Error("throughput: " + std::to_string(shape.blocks_per_sm) + " blocks of " +
                std::to_string(shape.threads_per_block) + " threads do not fit on one SM");

  const ChainOperands operands = chain_operands(op);
  const int blocks = sm_count * shape.blocks_per_sm;
  // Buffers live for the process: the probe calls this once per sample.
  static DeviceBuffer<std::uint64_t> start(32), sink(std::size_t(kMaxWarpsPerSm) * 32 * 1024);
  static DeviceBuffer<unsigned long long> stamps(8);
  if (std::size_t(blocks) * shape.threads_per_block > sink.size()) throw Error("throughput: sink buffer too small");
  unsigned long long init[8] = {~0ull, 0, 0, 0, 0, 0, 0, 0};
  GP_CUDA_CHECK(cudaMemcpy(start.data(), operands.start_bits, sizeof operands.start_bits, cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemcpy(stamps.data(), init, sizeof init, cudaMemcpyHostToDevice));
  kernel<<<blocks, shape.threads_per_block>>>(start.data(), operands.a_bits, operands.b_bits,
                                              static_cast<unsigned>(iterations), sink.data(), stamps.data());
  GP_CUDA_CHECK_LAUNCH();
  unsigned long long host[8];
  GP_CUDA_CHECK(cudaMemcpy(host, stamps.data(), sizeof host, cudaMemcpyDeviceToHost));
  run.seconds = static_cast<double>(host[1] - host[0]) * 1e-9;
  run.clock_mhz = host[3] > 0 ? static_cast<double>(host[2]) / static_cast<double>(host[3]) * 1e3 : 0;
  run.thread_ops = static_cast<double>(iterations * per_iteration) * blocks * shape.threads_per_block;
  for (int i = 0; i < 4; ++i) run.sms_used += static_cast<int>(std::bitset<64>(host[4 + i]).count());
  return run;
}

double theoretical_ops_per_clock_per_sm(PipeOp op, int cc_major, int cc_minor) {
  // CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table (results per clock per SM).
  const int cc = cc_major * 10 + cc_minor;
  const bool fp32 = op == PipeOp::kFFma || op == PipeOp::kFAdd || op == PipeOp::kFMul;
  const bool fp64 = op == PipeOp::kDFma || op == PipeOp::kDAdd;
  if (fp32) {
    if (cc == 70 || cc == 72 || cc == 75 || cc == 80) return 64;
    if (cc == 86 || cc == 87 || cc == 89 || cc == 90 || cc >= 100) return 128;
  }
  if (fp64) {
    if (cc == 70 || cc == 80) return 32;
    if (cc == 90 || cc == 100) return 64;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------
// Probes

namespace {

constexpr std::uint64_t kLatencyGroups = 1024;  // 65536 dependent operations per sample
constexpr double kPeakFraction = 0.95;          // "reaches peak": within 5 % of the best point

// The ops of the pipeline table (op_rows) as the records carry them: one source for flops per op.
std::vector<ComputeOp> record_ops() {
  std::vector<ComputeOp> ops;
  for (const OpRow& r : op_rows())
    ops.push_back({r.info.name, r.info.precision ? r.info.precision : "", r.info.flops_per_op,
                   r.info.sass_metric ? r.info.sass_metric : ""});
  return ops;
}

const ProbeDescriptor& kLatency = declare_family(
    ProbeDescriptor{"exec.latency", Figure::kCyclesPerOp,
                    "one warp, each thread a dependent chain of 65536 operations (64 per unrolled group); "
                    "clock64 of thread 0 around the timed loop / operations",
                    "", 10, 2}
        .titled("Pipeline latency")
        .with_axes({text_axis("op", AxisRole::kGroup)})
        .with_fields({numeric_field("chain_length", "operations")})
        .with_ops(record_ops()));

const ProbeDescriptor& kThroughput = declare_family(
    ProbeDescriptor{"exec.throughput", Figure::kValue,
                    "ILP independent chains per thread, warps_per_sm warps on every SM; thread-instructions / "
                    "(globaltimer span of the grid x SM clock measured in block 0 by clock64/globaltimer) / SMs",
                    "ops/clk/SM", 5, 1}
        .titled("Instruction throughput")
        .with_axes({text_axis("op", AxisRole::kGroup), numeric_axis("ilp", "chains per thread", AxisRole::kX),
                    numeric_axis("warps_per_sm", "warps", AxisRole::kGroup)})
        .with_fields({numeric_field("parallelism", "chains per SM"), numeric_field("sms_used", "SMs")})
        .with_ops(record_ops()));

const ProbeDescriptor& kThroughputPeak = declare_family(
    ProbeDescriptor{"exec.throughput_peak", Figure::kValue,
                    "the sweep's best ILP x warps re-measured as exec.throughput; min_parallelism = smallest ILP x "
                    "warps_per_sm within 5 % of that best",
                    "ops/clk/SM", 10, 2}
        .titled("Instruction throughput, best configuration")
        .premise_by_entry("compute for the ops with a SASS counter (ops[].premise_metric): the counted operations "
                          "ran as that instruction")
        .with_axes({text_axis("op", AxisRole::kGroup)})
        .with_fields({numeric_field("ilp", "chains per thread"), numeric_field("warps_per_sm", "warps"),
                      numeric_field("sweep_points", "entries"), numeric_field("sms_used", "SMs"),
                      numeric_field("min_parallelism", "chains per SM"),
                      numeric_field("min_parallelism_ilp", "chains per thread"),
                      numeric_field("min_parallelism_warps_per_sm", "warps"),
                      numeric_field("min_parallelism_value", "ops/clk/SM"),
                      numeric_field("theoretical_ops_per_clk_per_sm", "ops/clk/SM"),
                      numeric_field("fraction_of_theoretical", "fraction"),
                      numeric_field("theoretical_gflops_at_kernel_clock", "GFLOP/s")})
        .with_ops(record_ops()));

std::uint64_t throughput_ops_per_thread(PipeOp op, bool quick) {
  // About 1 ms per sample at full occupancy; the SFU issues 16 results/clk/SM, 8x fewer than FP32.
  const std::uint64_t base = op == PipeOp::kRsqrt ? (std::uint64_t(1) << 13) : (std::uint64_t(1) << 16);
  return quick ? base / 4 : base;
}

struct SweepPoint {
  int ilp;
  int warps;
  double value;
};
std::map<PipeOp, std::vector<SweepPoint>>& sweep_table() {
  static std::map<PipeOp, std::vector<SweepPoint>> table;
  return table;
}

// *sms_used: the fewest SMs any sample's blocks ran on (the block scheduler spreads one block per
// SM in practice; the figure divides by all SMs, so fewer would show as a lower rate).
Sample throughput_sample(PipeOp op, int ilp, int warps, bool quick, int* sms_used) {
  const Context& ctx = context();
  const ThroughputRun r = run_throughput(op, ilp, warps, throughput_ops_per_thread(op, quick), ctx.device.sm_count);
  *sms_used = *sms_used == 0 ? r.sms_used : std::min(*sms_used, r.sms_used);
  Sample s;
  s.seconds = r.seconds;
  s.clock_mhz = r.clock_mhz;
  s.value = r.thread_ops / (r.seconds * r.clock_mhz * 1e6) / ctx.device.sm_count;
  return s;
}

Work throughput_work(PipeOp op, int ilp, int warps, bool quick) {
  const ThroughputShape shape = throughput_shape(warps);
  const std::uint64_t per_iteration = std::uint64_t(kThroughputUnroll) * ilp;
  const std::uint64_t iterations = std::max<std::uint64_t>(1, throughput_ops_per_thread(op, quick) / per_iteration);
  const double ops = static_cast<double>(iterations * per_iteration) * context().device.sm_count *
                     shape.blocks_per_sm * shape.threads_per_block;
  return Work{0, ops * pipe_op_info(op).flops_per_op, ops};
}

void latency_entry(benchmark::State& state, PipeOp op) {
  const ChainOperands operands = chain_operands(op);
  Measurement m(state, kLatency, Work{0, 0, double(kLatencyGroups * kLatencyUnroll)});
  m.param("chain_length", double(kLatencyGroups * kLatencyUnroll));
  m.run(
      [&] {
        const ChainRun r = run_latency_chain(op, kLatencyGroups, operands);
        Sample s;
        s.seconds = static_cast<double>(r.ns) * 1e-9;
        s.cycles = static_cast<double>(r.cycles);
        s.clock_mhz = static_cast<double>(r.cycles) / static_cast<double>(r.ns) * 1e3;
        return s;
      },
      [&] { run_latency_chain(op, kLatencyGroups, operands); });
}

void throughput_entry(benchmark::State& state, PipeOp op, int ilp, int warps) {
  const bool quick = context().options.quick;
  Measurement m(state, kThroughput, throughput_work(op, ilp, warps, quick));
  m.param("parallelism", ilp * warps);  // op, ilp and warps_per_sm come from the entry's name
  int sms_used = 0;
  m.run([&] { return throughput_sample(op, ilp, warps, quick, &sms_used); },
        [&] { run_throughput(op, ilp, warps, throughput_ops_per_thread(op, quick), context().device.sm_count); });
  m.param("sms_used", sms_used);
  sweep_table()[op].push_back(SweepPoint{ilp, warps, state.counters["value_median"]});
}

void throughput_peak_entry(benchmark::State& state, PipeOp op) {
  const Context& ctx = context();
  const bool quick = ctx.options.quick;
  const std::vector<SweepPoint>& points = sweep_table()[op];
  // Without sweep points (filtered out), a configuration that saturates every pipe measured so far.
  SweepPoint best{kMaxIlp, 32, 0};
  for (const SweepPoint& p : points)
    if (p.value > best.value) best = p;
  const SweepPoint* smallest = nullptr;
  for (const SweepPoint& p : points) {
    if (p.value < kPeakFraction * best.value) continue;
    if (!smallest || p.ilp * p.warps < smallest->ilp * smallest->warps ||
        (p.ilp * p.warps == smallest->ilp * smallest->warps && p.warps < smallest->warps))
      smallest = &p;
  }
  Measurement m(state, kThroughputPeak, throughput_work(op, best.ilp, best.warps, quick));
  if (const char* metric = pipe_op_info(op).sass_metric) m.premise(Premise::compute(metric));
  m.param("ilp", best.ilp);
  m.param("warps_per_sm", best.warps);
  m.param("sweep_points", static_cast<double>(points.size()));
  int sms_used = 0;
  m.run([&] { return throughput_sample(op, best.ilp, best.warps, quick, &sms_used); },
        [&] { run_throughput(op, best.ilp, best.warps, throughput_ops_per_thread(op, quick), ctx.device.sm_count); });
  m.param("sms_used", sms_used);
  if (smallest) {
    m.extra("min_parallelism", smallest->ilp * smallest->warps);
    m.extra("min_parallelism_ilp", smallest->ilp);
    m.extra("min_parallelism_warps_per_sm", smallest->warps);
    m.extra("min_parallelism_value", smallest->value);
  }
  const double theoretical = theoretical_ops_per_clock_per_sm(op, ctx.device.cc_major, ctx.device.cc_minor);
  if (theoretical > 0) {
    const double clock_mhz = state.counters["sm_clock_kernel_mhz"];
    m.extra("theoretical_ops_per_clk_per_sm", theoretical);
    m.extra("fraction_of_theoretical", state.counters["value_median"] / theoretical);
    m.extra("theoretical_gflops_at_kernel_clock",
            theoretical * pipe_op_info(op).flops_per_op * ctx.device.sm_count * clock_mhz * 1e-3);
  }
}

}  // namespace

void register_pipeline_probes() {
  const bool quick = context().options.quick;
  for (const PipeOpInfo& op : pipe_ops()) {
    const PipeOp id = op.op;
    register_entry(entry_name(kLatency, {{"op", op.name}}), kLatency,
                   [id](benchmark::State& st) { latency_entry(st, id); });
  }
  const std::vector<int> ilps = quick ? std::vector<int>{1, 4, 8} : std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int> warps = quick ? std::vector<int>{1, 8, 32, 64}
                                       : std::vector<int>{1, 2, 4, 8, 12, 16, 24, 32, 48, 64};
  for (const PipeOpInfo& op : pipe_ops()) {
    if (!op.in_throughput) continue;
    if (quick && op.op != PipeOp::kFFma && op.op != PipeOp::kDFma) continue;
    const PipeOp id = op.op;
    for (int w : warps)
      for (int i : ilps)
        register_entry(entry_name(kThroughput, {{"op", op.name}, {"ilp", std::to_string(i)},
                                                        {"warps_per_sm", std::to_string(w)}}),
                       kThroughput, [id, i, w](benchmark::State& st) { throughput_entry(st, id, i, w); });
    register_entry(entry_name(kThroughputPeak, {{"op", op.name}}), kThroughputPeak,
                   [id](benchmark::State& st) { throughput_peak_entry(st, id); });
  }
}

void register_execution_probes() {
  register_pipeline_probes();
  register_launch_probes();
  register_barrier_probes();
  register_tensor_probes();
}

}  // namespace gpuprobe
