// The refusals CUPTI gives when the system, not our code, forbids profiling: each becomes one line
// that says why and what would allow it. The caller then falls back to timing only.
#include <cupti_version.h>

#include "gpuprobe/check_cupti.hpp"

namespace gpuprobe {

std::string cupti_refusal_text(CUptiResult code) {
  const std::string tag = " (CUPTI " + std::to_string(static_cast<int>(code)) + " " + cupti_result_name(code) + ")";
  switch (code) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "performance counters are restricted to administrators" + tag +
             "; run as root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 "
             "(e.g. 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, then reboot)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "another profiler owns the GPU's counters" + tag +
             "; gpuprobe is probably running under ncu, nsys or another CUPTI tool: run it without --counters "
             "there, or without the outer profiler";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "this is a virtual GPU (vGPU) without profiling rights" + tag +
             "; the hypervisor administrator must enable profiling for this vGPU";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "the GPU is in confidential-computing mode, which forbids counters" + tag;
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "CMP (crypto-mining) GPUs do not support counters" + tag;
#if CUPTI_API_VERSION >= 26  // CUPTI 12.8 named these three refusals; older ones answer NOT_SUPPORTED
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "the GPU is partitioned (MIG) and CUPTI cannot profile a MIG instance" + tag +
             "; run on a GPU without MIG";
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return "SLI configurations do not support counters" + tag;
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "CUPTI cannot profile under WSL on this driver" + tag + "; run on native Linux";
#endif
    case CUPTI_ERROR_NOT_SUPPORTED:
      return "this GPU does not support the CUPTI range profiler" + tag;
#if CUPTI_API_VERSION >= 130001  // CUDA 13.0's CUPTI; CUDA 12's answers an unknown chip otherwise
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return "this CUPTI does not know the GPU's chip" + tag + "; a newer CUDA toolkit is needed";
#endif
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "no usable GPU or driver for CUPTI" + tag;
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "the GPU's counters are busy (another process is profiling)" + tag;
    default:
      return "";
  }
}

}  // namespace gpuprobe
