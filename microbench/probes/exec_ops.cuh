// Device side of the pipeline probes: one inline-PTX step per PipeOp. Each step is a single PTX
// instruction on the chain's register (kIAdd is x + a + b, one IADD3;
// kFFmaShared adds its ld.shared), so a run of steps is a chain of exactly that instruction.
// `asm volatile` keeps nvcc from moving or merging the steps; scripts/dev/check_sass.sh checks that
// ptxas did not either.
#pragma once

#include <cstdint>
#include <type_traits>

#include "probes/exec_pipeline.hpp"

namespace gpuprobe {

// Register type a chain of `Op` carries: f32, f64, or a 32-bit word (u32, f16x2, bf16x2).
template <PipeOp Op>
using pipe_reg_t = std::conditional_t<
    Op == PipeOp::kDAdd || Op == PipeOp::kDFma, double,
    std::conditional_t<Op == PipeOp::kHFma2 || Op == PipeOp::kBFma2 || Op == PipeOp::kIAdd || Op == PipeOp::kIMad,
                       std::uint32_t, float>>;

template <class T>
__device__ __forceinline__ T from_bits(std::uint64_t bits) {
  if constexpr (std::is_same_v<T, double>) return __longlong_as_double(static_cast<long long>(bits));
  else if constexpr (std::is_same_v<T, float>) return __uint_as_float(static_cast<std::uint32_t>(bits));
  else return static_cast<std::uint32_t>(bits);
}

template <class T>
__device__ __forceinline__ std::uint64_t to_bits(T v) {
  if constexpr (std::is_same_v<T, double>) return static_cast<std::uint64_t>(__double_as_longlong(v));
  else if constexpr (std::is_same_v<T, float>) return __float_as_uint(v);
  else return v;
}

// One dependent step x <- op(x, a, b). `shared_a` is the shared-memory address of a copy of `a`
// (used by kFFmaShared only).
template <PipeOp Op, class T = pipe_reg_t<Op>>
__device__ __forceinline__ void pipe_step(T& x, T a, T b, std::uint32_t shared_a) {
  if constexpr (Op == PipeOp::kFAdd) asm volatile("add.rn.f32 %0, %0, %1;" : "+f"(x) : "f"(a));
  else if constexpr (Op == PipeOp::kFMul) asm volatile("mul.rn.f32 %0, %0, %1;" : "+f"(x) : "f"(a));
  else if constexpr (Op == PipeOp::kFFma) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  else if constexpr (Op == PipeOp::kDAdd) asm volatile("add.rn.f64 %0, %0, %1;" : "+d"(x) : "d"(a));
  else if constexpr (Op == PipeOp::kDFma) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a), "d"(b));
  else if constexpr (Op == PipeOp::kHFma2) asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
  else if constexpr (Op == PipeOp::kBFma2) asm volatile("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
  // Two PTX adds: ptxas fuses a lone chain of x + a into IMAD/LEA (x + 2a), but x + a + b is
  // exactly one IADD3, sm_90's native integer add.
  else if constexpr (Op == PipeOp::kIAdd)
    asm volatile("{ .reg .u32 t; add.u32 t, %0, %1; add.u32 %0, t, %2; }" : "+r"(x) : "r"(a), "r"(b));
  else if constexpr (Op == PipeOp::kIMad) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
  else if constexpr (Op == PipeOp::kRsqrt) asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x));
  // A pure lg2 or ex2 chain leaves the finite range within a few steps (log2 x < x; 2^x > x) and
  // then repeats on NaN / +inf. Keeping it finite needs |x| or -x, which ptxas does not fold into
  // MUFU (it adds an FADD per step), so the chain runs on special values: MUFU's latency does not
  // depend on the operand (docs/probes.md).
  else if constexpr (Op == PipeOp::kLog2) asm volatile("lg2.approx.ftz.f32 %0, %0;" : "+f"(x));
  else if constexpr (Op == PipeOp::kSin) asm volatile("sin.approx.ftz.f32 %0, %0;" : "+f"(x));
  else if constexpr (Op == PipeOp::kExp2) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x));
  else if constexpr (Op == PipeOp::kFFmaShared)
    // ld.volatile: a plain ld.shared of the same address is hoisted out of the loop by ptxas.
    asm volatile("{ .reg .f32 s; ld.volatile.shared.f32 s, [%1]; fma.rn.f32 %0, %0, s, %2; }" : "+f"(x) : "r"(shared_a), "f"(b));
  (void)a;
  (void)b;
  (void)shared_a;
}

}  // namespace gpuprobe
