// exec.tensor and exec.tensor_latency: the tensor cores' instructions (mma.sync, wgmma), their operand
// layouts and launchers, shared by the probe (exec_tensor.cu; kernels in exec_tensor_mma.cu and
// exec_tensor_wgmma.cu) and its GPU test.
// docs/probes.md#tensor-cores says how they measure what they claim.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/arch.hpp"

namespace gpuprobe {

enum class TensorPrecision { kF16, kBF16, kTF32, kE4M3, kE5M2, kS8, kF64 };
enum class TensorAccum { kF32, kF16, kS32, kF64 };
enum class TensorInstr { kMma, kWgmma };

const char* tensor_precision_name(TensorPrecision p);  // "f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "f64"
const char* tensor_accum_name(TensorAccum a);          // "f32", "f16", "s32", "f64"
const char* tensor_instr_name(TensorInstr i);          // "mma", "wgmma"
int tensor_element_bytes(TensorPrecision p);           // 2, 2, 4, 1, 1, 1, 8
int tensor_accum_bytes(TensorAccum a);                 // 4, 2, 4, 8

// One instruction form: mma.sync.m{m}n{n}k{k} issued by one warp, or wgmma.m64n{n}k{k} issued by a
// warpgroup of four warps, A from registers or (wgmma only) shared memory.
struct TensorForm {
  TensorInstr instr;
  TensorPrecision precision;
  TensorAccum accum;
  int m, n, k;
  bool a_registers;
  double flops() const { return 2.0 * m * n * k; }  // per instruction (per warp, or per warpgroup)
  std::string describe() const;                     // e.g. "wgmma.m64n256k16 bf16->f32, A in smem"
};

// Every form the binary holds kernels for (mma.sync always; wgmma when the build generated its wrappers,
// which takes Python), in a fixed order: mma first, then wgmma by precision, accumulator, N, A source.
const std::vector<TensorForm>& tensor_forms();
// Whether a device of compute capability `cc` (major * 10 + minor) runs this form from the binary's `code`,
// and if not why ("" when it does): mma.sync needs sm_80 (fp8 sm_89, f64 m16 sm_90) on the device and in
// the code it runs, wgmma sm_90a code on a compute capability 9.0 device (harness/arch.hpp).
std::string tensor_form_unavailable(const TensorForm& form, int cc, const BuiltCode& code);

// The per-clock per-SM dense peak of a form's type on a device (FLOP or integer op / clock / SM), from
// the vendor's datasheet figures over SMs and boost clock (docs/probes.md#tensor-cores); 0 when not
// known for that compute capability.
double tensor_peak_flops_per_clock_per_sm(TensorPrecision p, int cc_major, int cc_minor);

// Host images of operands. Random elements are uniform in [-1, 1] rounded to the type (s8: integers in
// [-127, 127]); every encoded value decodes exactly, so a double reference of the products is exact.
std::vector<std::uint8_t> random_tensor_image(TensorPrecision p, std::size_t elements, std::uint32_t seed);
// The same image with every element negated (the throughput kernels alternate B and -B).
std::vector<std::uint8_t> negated_tensor_image(TensorPrecision p, std::vector<std::uint8_t> image);
double decode_tensor_element(TensorPrecision p, const std::uint8_t* element);
double decode_accum_element(TensorAccum a, const std::uint8_t* element);
void encode_accum_element(TensorAccum a, double value, std::uint8_t* element);

// Operand images, all raw little-endian elements of the form's types:
//   A: m x k row-major; B: n x k row-major (B's columns, each k long: the "col" layout);
//   C and D: m x n row-major in the accumulator type.
// The test kernel computes D = A B^T + C with one instruction (one warp or warpgroup).
void enqueue_tensor_once(const TensorForm& form, const void* a, const void* b, const void* c, void* d,
                         cudaStream_t stream);

// Throughput: `blocks` blocks (of one warpgroup, or four warps for mma.sync) on the grid, each issuing
// `iterations` x 2 instructions per warp(group) into its accumulators (B, then -B, so that sums stay
// bounded on random data); mma.sync keeps kMmaChains independent accumulators per warp.
// stamps[0]: earliest block start, stamps[1]: latest block end (globaltimer ns); stamps[2], [3]: block
// 0's clock64 cycles and globaltimer ns; stamps[4..7]: bit mask of the SMs that ran a block; then per SM
// (kTensorStampSms each): the earliest block start and the latest block end in that SM's clock64, and
// the blocks it ran. kTensorStampWords in all; the caller sets the starts to ~0 and the rest to 0.
constexpr int kTensorStampHeader = 8;
constexpr int kTensorStampSms = 256;
constexpr int kTensorStampWords = kTensorStampHeader + 3 * kTensorStampSms;
constexpr int kMmaChains = 4;
constexpr int kMmaWarpsPerBlock = 4;
void enqueue_tensor_throughput(const TensorForm& form, int blocks, unsigned iterations, const void* a,
                               const void* b, const void* neg_b, unsigned long long* stamps,
                               std::uint32_t* sink, cudaStream_t stream);
// Latency: one warp (mma.sync) or one warpgroup (wgmma) runs `chain` dependent instructions (wgmma:
// fence, mma, commit, wait for each); out[0] = clock64 cycles of the chain, out[1] its globaltimer ns.
void enqueue_tensor_latency(const TensorForm& form, unsigned chain, const void* a, const void* b,
                            unsigned long long* out, std::uint32_t* sink, cudaStream_t stream);
// Warps per block of the throughput kernel: 4 (one warpgroup, or four mma.sync warps).
constexpr int kTensorThreadsPerBlock = 128;

}  // namespace gpuprobe
