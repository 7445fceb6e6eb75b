// Which instruction families a device can run from this binary: the device's compute capability AND the
// code the binary holds for it. A binary built for sm_80 runs on an sm_89 GPU from its sm_80 code, where
// fp8 mma.sync was compiled out; one built without 90 holds no wgmma at all. The rules are pure functions
// (tests/cpu/arch_test.cpp); docs/architectures.md tabulates them per GPU.
#pragma once

#include <cstddef>
#include <string>

namespace gpuprobe {

// What this binary runs on the current device.
struct BuiltCode {
  // __CUDA_ARCH__ / 10 of the code the device runs from the binary's generic libraries (its own SASS, or
  // the PTX it JIT-compiles): 80 for a build for sm_80 on any 8.x or newer GPU. 0: no code for the device.
  int code_arch = 0;
  // Whether the binary holds sm_90a code (wgmma's library is built only when the build includes 90).
  bool sm90a = false;
};

// An instruction family's needs: the oldest compute capability with the instructions (major * 10 + minor),
// whether only the architecture-specific sm_90a target has them (then the device must be exactly 9.0), and
// the instructions in words for the note.
struct ArchRequirement {
  int min_cc;
  bool sm90a_only;
  const char* instructions;
};

// The families' requirements, one place (exec.tensor, kernels.sgemm's tuned kernel...).
inline constexpr ArchRequirement kMmaSync{80, false, "mma.sync on f16/bf16/tf32/s8/f64 (m8n8k4)"};
inline constexpr ArchRequirement kMmaSyncFp8{89, false, "mma.sync on fp8 (e4m3, e5m2)"};
inline constexpr ArchRequirement kMmaSyncF64M16{90, false, "mma.sync.m16n8k{4,8,16} on f64"};
inline constexpr ArchRequirement kWgmma{90, true, "wgmma"};
inline constexpr ArchRequirement kCpAsyncMbarrier{80, false, "cp.async and mbarrier"};

// Why a device of compute capability `cc` (major * 10 + minor) cannot run `req` from `code`, "" when it
// can: the device lacks the instructions, or the binary's code for it was compiled without them.
std::string arch_unavailable(const ArchRequirement& req, int cc, const BuiltCode& code);

// Why a kernel whose block takes `smem_bytes` of dynamic shared memory cannot launch on a device that
// allows `optin_bytes` per block (cudaDevAttrMaxSharedMemoryPerBlockOptin: 163 KB on sm_80, 99 KB on
// sm_86/89/120, 227 KB on sm_90/100), "" when it can.
std::string smem_budget_unavailable(std::size_t smem_bytes, std::size_t optin_bytes);

// The binary's code for the current device (cudaFuncGetAttributes on one of its kernels: the PTX version
// it was compiled from). Throws Error saying which architectures to build for when it holds none.
BuiltCode built_code_for_current_device();

// CMAKE_CUDA_ARCHITECTURES as built ("80;86;89;90"), for the result context.
const char* built_cuda_architectures();

}  // namespace gpuprobe
