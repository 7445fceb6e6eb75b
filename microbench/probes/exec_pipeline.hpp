// Arithmetic pipeline probes (V&D SC08 §3.4-3.7): dependent-chain latency in cycles and
// independent-operation throughput per SM. The kernels' host interface, shared by the probes
// (exec_pipeline.cu) and the GPU tests (tests/gpu/exec_pipeline_test.cu).
// docs/probes.md#execution-pipelines says how they measure what they claim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe {

// One operation: the PTX instruction a chain repeats. The SASS instruction it must compile to is
// listed beside it (scripts/dev/check_sass.sh re-checks it on the GPU machine).
enum class PipeOp {
  kFAdd,        // add.rn.f32             -> FADD
  kFMul,        // mul.rn.f32             -> FMUL
  kFFma,        // fma.rn.f32             -> FFMA
  kDAdd,        // add.rn.f64             -> DADD
  kDFma,        // fma.rn.f64             -> DFMA
  kHFma2,       // fma.rn.f16x2           -> HFMA2
  kBFma2,       // fma.rn.bf16x2          -> HFMA2.BF16
  kIAdd,        // add.u32 x+a, then +b   -> IADD3 (one 3-input add)
  kIMad,        // mad.lo.u32             -> IMAD
  kRsqrt,       // rsqrt.approx.ftz.f32   -> MUFU.RSQ
  kLog2,        // lg2.approx.ftz.f32     -> MUFU.LG2 (chain runs on NaN after a few steps)
  kSin,         // sin.approx.ftz.f32     -> FMUL (scale by 1/2pi) + MUFU.SIN
  kExp2,        // ex2.approx.ftz.f32     -> MUFU.EX2 (chain runs on +inf after a few steps)
  kFFmaShared,  // ld.volatile.shared.f32 + fma.rn.f32 -> LDS + FFMA (sm_90 FFMA has no shared operand)
};

struct PipeOpInfo {
  PipeOp op;
  const char* name;         // entry key, e.g. "ffma"
  const char* kernel_name;  // extern "C" latency kernel, e.g. "gp_latency_ffma" (check_sass.sh)
  double flops_per_op;      // floating-point operations per thread-instruction (fma = 2, x2 = 2 lanes)
  // The compute ceiling its peak belongs to ("FP32", "FP64", "FP16 half2", "BF16 bf16x2"); nullptr for no
  // floating-point work. The family records carry it and flops_per_op to the analysis.
  const char* precision;
  bool in_throughput;       // swept by exec.throughput
  // The thread-level SASS counter that counts this op's instructions: the premise of its peak
  // (exec.throughput_peak). nullptr: no counter proves it, so its peak is never a ceiling.
  const char* sass_metric = nullptr;
};
const std::vector<PipeOpInfo>& pipe_ops();
const PipeOpInfo& pipe_op_info(PipeOp op);
// Throws UsageError for an unknown name.
PipeOp pipe_op_from_name(const std::string& name);

// Latency chains: one warp, every thread runs the same dependent chain on its own value.
constexpr int kLatencyUnroll = 64;  // dependent operations per unrolled group in the timed loop

struct ChainRun {
  std::uint64_t cycles = 0;  // clock64 over the timed loop (thread 0)
  std::uint64_t ns = 0;      // %globaltimer over the same region
  std::vector<std::uint64_t> final_bits;  // each thread's value after the chain (raw bits, 32 threads)
};

// The chain's per-thread starting value and constant operands, as raw bits of the op's type
// (f32 / f64 / f16x2 / bf16x2 / u32). Chosen so values stay finite and away from denormals.
struct ChainOperands {
  std::uint64_t start_bits[32];
  std::uint64_t a_bits;
  std::uint64_t b_bits;
};
ChainOperands chain_operands(PipeOp op);

// Runs `groups` x kLatencyUnroll dependent operations (plus the same number untimed before, to
// warm the instruction cache) and returns the timing and final values.
ChainRun run_latency_chain(PipeOp op, std::uint64_t groups, const ChainOperands& operands);

// Throughput: independent operations.
constexpr int kMaxIlp = 8;
constexpr int kMaxWarpsPerSm = 64;

// How warps per SM map onto a launch: one block per SM up to 32 warps, two beyond.
struct ThroughputShape {
  int blocks_per_sm = 1;
  int threads_per_block = 32;
};
// Throws UsageError unless 1 <= warps_per_sm <= 64 and warps_per_sm is even above 32.
ThroughputShape throughput_shape(int warps_per_sm);
// Throws UsageError unless 1 <= ilp <= kMaxIlp.
void validate_ilp(int ilp);

struct ThroughputRun {
  double seconds = 0;     // %globaltimer: first block's start to last block's end
  double clock_mhz = 0;   // clock64 / %globaltimer in block 0 over its whole run
  double thread_ops = 0;  // thread-instructions executed (all threads, all chains)
  int resident_blocks_per_sm = 0;  // occupancy API: blocks of this shape one SM holds
  int sms_used = 0;                // distinct SMs (%smid) that ran a block
};
// Every thread of sm_count * blocks_per_sm blocks runs `ops_per_thread` operations as `ilp`
// independent chains. Throws Error if the shape cannot be fully resident.
ThroughputRun run_throughput(PipeOp op, int ilp, int warps_per_sm, std::uint64_t ops_per_thread, int sm_count);

// Theoretical thread-instructions per clock per SM from the CUDA programming guide's throughput
// table, for the ceilings the roofline needs (FP32 FMA, FP64 FMA); 0 when not known.
double theoretical_ops_per_clock_per_sm(PipeOp op, int cc_major, int cc_minor);

}  // namespace gpuprobe
