// GP_NCCL_CHECK: the one error-check macro for NCCL calls (see check.hpp for the others), and the
// environment every NCCL user in gpuprobe sets before NCCL initialises. Include only where NCCL was
// found (GPUPROBE_HAVE_NCCL; link NCCL::NCCL).
//
// No timeout lives here: gpuprobe only makes blocking communicators of one process
// (ncclCommInitAll), and issues the calls of all ranks from one thread inside one
// ncclGroupStart/ncclGroupEnd, so every call returns its error at once and no rank can wait for a
// peer whose call was never made. What the GPU does afterwards is waited for by whoever waits (a
// bounded wait where a hang is possible: NcclClique::synchronize in microbench/probes).
#pragma once

#include <nccl.h>

#include <cstdlib>
#include <string>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

class NcclError : public Error {
 public:
  NcclError(ncclResult_t result, const std::string& what) : Error(what), result_(result) {}
  ncclResult_t result() const { return result_; }

 private:
  ncclResult_t result_;
};

inline std::string nccl_error_text(ncclResult_t result, const char* expr, const char* file, int line) {
  // ncclGetLastError names the cause (e.g. which CUDA call failed inside NCCL); it may also be an
  // older error, hence "last".
  const char* last = ncclGetLastError(nullptr);
  return std::string("NCCL error ") + ncclGetErrorString(result) + " in " + expr + " at " + file + ":" +
         std::to_string(line) + (last && *last ? std::string(" (NCCL's last error: ") + last + ")" : std::string());
}

// NVLink multicast (NVLS) must stay off on the machines gpuprobe is run on: NCCL reads
// NCCL_NVLS_ENABLE once, when it initialises, so this must run before the first communicator is made.
// Forced, not defaulted: a value inherited from the environment must not turn it back on.
inline void nccl_force_environment() {
  if (setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/1) != 0)
    throw Error("could not set NCCL_NVLS_ENABLE=0 before initialising NCCL");
}

}  // namespace gpuprobe

#define GP_NCCL_CHECK(expr)                                                                          \
  do {                                                                                               \
    const ncclResult_t gp_nccl_status_ = (expr);                                                     \
    if (gp_nccl_status_ != ncclSuccess)                                                              \
      throw ::gpuprobe::NcclError(gp_nccl_status_,                                                   \
                                  ::gpuprobe::nccl_error_text(gp_nccl_status_, #expr, __FILE__, __LINE__)); \
  } while (0)
