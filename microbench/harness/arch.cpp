#include "harness/arch.hpp"

namespace gpuprobe {

namespace {
std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }
}  // namespace

std::string arch_unavailable(const ArchRequirement& req, int cc, const BuiltCode& code) {
  if (req.sm90a_only) {
    if (cc != 90)
      return std::string(req.instructions) + " exists only on compute capability 9.0 (Hopper, sm_90a code); this "
             "GPU is " + cc_text(cc) + " (Blackwell's tensor instructions, tcgen05, are not probed)";
    if (!code.sm90a)
      return std::string(req.instructions) + " needs sm_90a code, and this gpuprobe was built without 90 in "
             "CMAKE_CUDA_ARCHITECTURES";
    return "";
  }
  if (cc < req.min_cc)
    return std::string(req.instructions) + " needs compute capability " + cc_text(req.min_cc) + " or newer; this GPU "
           "is " + cc_text(cc);
  if (code.code_arch < req.min_cc)
    return std::string(req.instructions) + " needs sm_" + std::to_string(req.min_cc) + " code or newer, and this "
           "gpuprobe runs sm_" + std::to_string(code.code_arch) + " code on this GPU (rebuild with " +
           std::to_string(cc) + " in CMAKE_CUDA_ARCHITECTURES)";
  return "";
}

std::string smem_budget_unavailable(std::size_t smem_bytes, std::size_t optin_bytes) {
  if (smem_bytes <= optin_bytes) return "";
  return "its blocks take " + std::to_string(smem_bytes) + " bytes of shared memory, and this GPU allows " +
         std::to_string(optin_bytes) + " per block";
}

const char* built_cuda_architectures() { return GPUPROBE_CUDA_ARCHITECTURES; }

}  // namespace gpuprobe
