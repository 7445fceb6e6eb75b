// The project's error types and its one error-check macro per API.
//
// Every CUDA runtime call goes through GP_CUDA_CHECK, every cuBLAS call through GP_CUBLAS_CHECK
// (check_cublas.hpp), every driver call through GP_CU_CHECK (driver_api.hpp), every NCCL call through
// GP_NCCL_CHECK (check_nccl.hpp); CUPTI has GP_CUPTI_CHECK in profilers/. A failed call throws: the harness
// turns the exception into one line on stderr and a non-zero exit, so no probe prints or exits.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gpuprobe {

// Base of every error gpuprobe reports to the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user asked for something that cannot be done (bad flag, out-of-range parameter, a --device
// this machine does not have). Exit code 2; reported as "usage error: ...".
class UsageError : public Error {
 public:
  using Error::Error;
};

// No usable GPU (none present, no driver). Exit code 2; its message starts "no usable GPU".
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed. Exit code 1.
class CudaError : public Error {
 public:
  CudaError(cudaError_t code, const std::string& what) : Error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

inline std::string cuda_error_text(cudaError_t code, const char* expr, const char* file, int line) {
  return std::string("CUDA error ") + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) +
         ") in " + expr + " at " + file + ":" + std::to_string(line);
}

}  // namespace gpuprobe

#define GP_CUDA_CHECK(expr)                                                                  \
  do {                                                                                       \
    const cudaError_t gp_cuda_status_ = (expr);                                              \
    if (gp_cuda_status_ != cudaSuccess)                                                      \
      throw ::gpuprobe::CudaError(                                                           \
          gp_cuda_status_, ::gpuprobe::cuda_error_text(gp_cuda_status_, #expr, __FILE__, __LINE__)); \
  } while (0)

// After a kernel launch: catches launch-configuration errors at once (asynchronous faults surface
// at the next synchronizing call, which is checked too).
#define GP_CUDA_CHECK_LAUNCH() GP_CUDA_CHECK(cudaGetLastError())
