// GP_CUPTI_CHECK: the one error-check macro for CUPTI calls (see check.hpp for the others), and the
// texts for CUPTI's refusals (no permission, another profiler attached, vGPU, MIG, WSL...).
#pragma once

#include <cupti_result.h>

#include <string>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

class CuptiError : public Error {
 public:
  CuptiError(CUptiResult code, const std::string& what) : Error(what), code_(code) {}
  CUptiResult code() const { return code_; }

 private:
  CUptiResult code_;
};

// "CUPTI_ERROR_INVALID_METRIC_NAME" for a code (cuptiGetResultString; needs no GPU or driver).
inline std::string cupti_result_name(CUptiResult code) {
  const char* name = nullptr;
  if (cuptiGetResultString(code, &name) != CUPTI_SUCCESS || !name) return "CUPTI error " + std::to_string(code);
  return name;
}

inline std::string cupti_error_text(CUptiResult code, const char* expr, const char* file, int line) {
  return "CUPTI error " + std::to_string(static_cast<int>(code)) + " " + cupti_result_name(code) + " in " +
         expr + " at " + file + ":" + std::to_string(line);
}

// When `code` means "the device or the system refuses profiling" (as opposed to a bug in how we call
// CUPTI), one line saying why and what to do; empty otherwise. Defined in cupti_refusal.cpp.
std::string cupti_refusal_text(CUptiResult code);

}  // namespace gpuprobe

#define GP_CUPTI_CHECK(expr)                                                                      \
  do {                                                                                            \
    const CUptiResult gp_cupti_status_ = (expr);                                                  \
    if (gp_cupti_status_ != CUPTI_SUCCESS)                                                        \
      throw ::gpuprobe::CuptiError(gp_cupti_status_, ::gpuprobe::cupti_error_text(                \
                                                          gp_cupti_status_, #expr, __FILE__, __LINE__)); \
  } while (0)
