// The code this binary runs on the current device (arch.hpp), from one of the generic libraries' kernels:
// every CUDA library of gpuprobe but wgmma's is built for the same CMAKE_CUDA_ARCHITECTURES.
#include <cuda_runtime.h>

#include "gpuprobe/check.hpp"
#include "harness/arch.hpp"

namespace gpuprobe {

namespace {
__global__ void arch_marker_kernel() {}
}  // namespace

BuiltCode built_code_for_current_device() {
  BuiltCode code;
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, arch_marker_kernel);
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction) {
    cudaGetLastError();
    int device = 0, major = 0, minor = 0;
    GP_CUDA_CHECK(cudaGetDevice(&device));
    GP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    GP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    throw Error("this gpuprobe holds no code for compute capability " + std::to_string(major) + "." +
                std::to_string(minor) + " (built for " + built_cuda_architectures() +
                "): rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(major * 10 + minor));
  }
  GP_CUDA_CHECK(status);
  code.code_arch = attributes.ptxVersion;
#if defined(GPUPROBE_HAVE_SM90A)
  code.sm90a = true;
#endif
  return code;
}

}  // namespace gpuprobe
