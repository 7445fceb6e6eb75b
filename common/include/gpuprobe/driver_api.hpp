// The CUDA driver API without linking libcuda (the CI machine has none, and gpuprobe must start there
// and say "no GPU"): entry points come from the runtime's query. The one lookup and the one result
// check for every driver call in gpuprobe (profiler context, direct kernel launches).
#pragma once

#include <cuda.h>  // CUresult, CUfunction, CUcontext...: types only
#include <cuda_runtime.h>

#include <string>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

// A driver call failed. Exit code 1, as for the runtime.
class DriverError : public Error {
 public:
  DriverError(CUresult code, const std::string& what) : Error(what), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// The driver function `name` (e.g. "cuLaunchKernel") as a pointer of type Fn, from the CUDA 12.0
// ABI on; throws Error when the installed driver does not provide it.
template <class Fn>
Fn driver_entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050  // CUDA 13 keeps only the versioned query
  GP_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
#else  // CUDA 12.4: the unversioned query gives the ABI of the runtime's own version, 12.x
  GP_CUDA_CHECK(cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found));
#endif
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw Error(std::string("the CUDA driver has no ") + name + " entry point (query result " +
                std::to_string(static_cast<int>(found)) + ")");
  return reinterpret_cast<Fn>(fn);
}

// The driver's handle of a __global__ function (the runtime's cudaFunction_t is the same handle).
inline CUfunction driver_function(const void* kernel) {
  cudaFunction_t f = nullptr;
  GP_CUDA_CHECK(cudaGetFuncBySymbol(&f, kernel));
  return reinterpret_cast<CUfunction>(f);
}

}  // namespace gpuprobe

#define GP_CU_CHECK(expr)                                                                          \
  do {                                                                                             \
    const CUresult gp_cu_status_ = (expr);                                                         \
    if (gp_cu_status_ != CUDA_SUCCESS)                                                             \
      throw ::gpuprobe::DriverError(gp_cu_status_, std::string("CUDA driver error ") +              \
                                                       std::to_string(static_cast<int>(gp_cu_status_)) + \
                                                       " in " #expr " at " __FILE__ ":" +            \
                                                       std::to_string(__LINE__));                  \
  } while (0)
