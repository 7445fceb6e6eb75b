// Which instruction families register on which GPU (harness/arch.hpp): the device's compute capability
// and the code the binary runs there. docs/architectures.md tabulates the same rules.
#include <gtest/gtest.h>

#include <string>

#include "gpuprobe/kernels/sgemm.hpp"
#include "harness/arch.hpp"
#include "probes/exec_tensor.hpp"

namespace {

using gpuprobe::arch_unavailable;
using gpuprobe::BuiltCode;
using gpuprobe::smem_budget_unavailable;
using gpuprobe::TensorAccum;
using gpuprobe::TensorForm;
using gpuprobe::TensorInstr;
using gpuprobe::TensorPrecision;

// A build for `archs` (the default build: 90, which also holds sm_90a) as a device of `cc` runs it.
BuiltCode native(int cc, bool sm90a) { return BuiltCode{cc, sm90a}; }

const TensorForm kF16{TensorInstr::kMma, TensorPrecision::kF16, TensorAccum::kF32, 16, 8, 16, true};
const TensorForm kE4M3{TensorInstr::kMma, TensorPrecision::kE4M3, TensorAccum::kF32, 16, 8, 32, true};
const TensorForm kF64M8{TensorInstr::kMma, TensorPrecision::kF64, TensorAccum::kF64, 8, 8, 4, true};
const TensorForm kF64M16{TensorInstr::kMma, TensorPrecision::kF64, TensorAccum::kF64, 16, 8, 4, true};
const TensorForm kWgmmaBF16{TensorInstr::kWgmma, TensorPrecision::kBF16, TensorAccum::kF32, 64, 256, 16, false};

bool runs(const TensorForm& f, int cc, const BuiltCode& code) {
  return gpuprobe::tensor_form_unavailable(f, cc, code).empty();
}

TEST(ArchSupport, EachArchitectureBuiltForItself) {
  // Rows of docs/architectures.md: a build for the GPU's own architecture (90 includes sm_90a).
  for (int cc : {80, 86, 89, 90, 100, 120}) {
    const BuiltCode code = native(cc, cc == 90);
    EXPECT_TRUE(runs(kF16, cc, code)) << cc;
    EXPECT_TRUE(runs(kF64M8, cc, code)) << cc;
    EXPECT_EQ(runs(kE4M3, cc, code), cc >= 89) << cc;
    EXPECT_EQ(runs(kF64M16, cc, code), cc >= 90) << cc;
    EXPECT_EQ(runs(kWgmmaBF16, cc, code), cc == 90) << cc;
  }
}

TEST(ArchSupport, WgmmaNeedsAHopperAndSm90aCode) {
  EXPECT_TRUE(runs(kWgmmaBF16, 90, native(90, true)));
  // An sm_80 build on an H100: no sm_90a library in the binary.
  const std::string no_code = gpuprobe::tensor_form_unavailable(kWgmmaBF16, 90, BuiltCode{80, false});
  EXPECT_NE(no_code.find("built without 90"), std::string::npos) << no_code;
  // Blackwell has sm_90a's successor instructions (tcgen05), not wgmma: said, and out of scope.
  const std::string blackwell = gpuprobe::tensor_form_unavailable(kWgmmaBF16, 100, native(100, true));
  EXPECT_NE(blackwell.find("tcgen05"), std::string::npos) << blackwell;
  EXPECT_FALSE(runs(kWgmmaBF16, 89, native(89, false)));
}

TEST(ArchSupport, CodeCompiledForAnOlderArchitectureLacksNewerInstructions) {
  // A build for sm_80 on an L40S (8.9) runs its sm_80 code, where fp8 mma.sync was compiled out: measuring
  // it would time an empty loop. Left out, saying which build would have it.
  const std::string why = gpuprobe::tensor_form_unavailable(kE4M3, 89, BuiltCode{80, false});
  EXPECT_NE(why.find("sm_89 code"), std::string::npos) << why;
  EXPECT_NE(why.find("runs sm_80 code"), std::string::npos) << why;
  EXPECT_NE(why.find("89 in CMAKE_CUDA_ARCHITECTURES"), std::string::npos) << why;
  // The same binary on an H100 (PTX JIT from compute_80): f64 m16 forms and fp8 left out, f16 runs.
  EXPECT_FALSE(runs(kF64M16, 90, BuiltCode{80, false}));
  EXPECT_FALSE(runs(kE4M3, 90, BuiltCode{80, false}));
  EXPECT_TRUE(runs(kF16, 90, BuiltCode{80, false}));
  // The device's own limit comes first: an A100 lacks fp8 whatever the binary holds.
  const std::string a100 = gpuprobe::tensor_form_unavailable(kE4M3, 80, BuiltCode{80, false});
  EXPECT_NE(a100.find("needs compute capability 8.9 or newer; this GPU is 8.0"), std::string::npos) << a100;
}

TEST(ArchSupport, EveryNoteIsOneLine) {
  for (int cc : {75, 80, 86, 89, 90, 100, 120})
    for (int code : {80, 86, 89, 90})
      for (const TensorForm& f : {kF16, kE4M3, kF64M16, kWgmmaBF16})
        EXPECT_EQ(gpuprobe::tensor_form_unavailable(f, cc, BuiltCode{code, code == 90}).find('\n'),
                  std::string::npos);
}

TEST(ArchSupport, SharedMemoryBudgetOfTheTunedSgemm) {
  // The tuned SGEMM's block takes 104,448 B (3 stages of 32 x (128 + 128 + 16) floats). Opt-in limits per
  // block: sm_80 163 KB, sm_86/89/120 99 KB, sm_90/100 227 KB (CUDA C++ Programming Guide, "Technical
  // Specifications per Compute Capability").
  const std::size_t kTuned = gpuprobe::kernels::sgemm_dynamic_smem_bytes(gpuprobe::kernels::SgemmImpl::kTuned);
  EXPECT_EQ(kTuned, 104448u);
  EXPECT_EQ(gpuprobe::kernels::sgemm_dynamic_smem_bytes(gpuprobe::kernels::SgemmImpl::kVolkovDemmel), 0u);
  EXPECT_EQ(smem_budget_unavailable(kTuned, 163 * 1024), "");
  EXPECT_EQ(smem_budget_unavailable(kTuned, 227 * 1024), "");
  const std::string ada = smem_budget_unavailable(kTuned, 99 * 1024);
  EXPECT_NE(ada.find("104448 bytes"), std::string::npos) << ada;
  EXPECT_NE(ada.find("allows 101376"), std::string::npos) << ada;
  EXPECT_EQ(smem_budget_unavailable(0, 48 * 1024), "");
}

}  // namespace
