// GP_CUBLAS_CHECK: the one error-check macro for cuBLAS calls (see check.hpp for the others).
#pragma once

#include <cublas_v2.h>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

class CublasError : public Error {
 public:
  CublasError(cublasStatus_t status, const std::string& what) : Error(what), status_(status) {}
  cublasStatus_t status() const { return status_; }

 private:
  cublasStatus_t status_;
};

inline std::string cublas_error_text(cublasStatus_t status, const char* expr, const char* file, int line) {
  return std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
         ") in " + expr + " at " + file + ":" + std::to_string(line);
}

}  // namespace gpuprobe

#define GP_CUBLAS_CHECK(expr)                                                                    \
  do {                                                                                           \
    const cublasStatus_t gp_cublas_status_ = (expr);                                             \
    if (gp_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                              \
      throw ::gpuprobe::CublasError(gp_cublas_status_, ::gpuprobe::cublas_error_text(            \
                                                           gp_cublas_status_, #expr, __FILE__, __LINE__)); \
  } while (0)

namespace gpuprobe {

// One cuBLAS handle, destroyed with its scope (an exception between create and destroy leaks nothing).
class CublasHandle {
 public:
  CublasHandle() { GP_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace gpuprobe
