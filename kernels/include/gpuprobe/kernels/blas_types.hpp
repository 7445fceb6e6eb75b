// Types shared by the BLAS-like kernel API (column-major, as BLAS).
#pragma once

namespace gpuprobe::kernels {

enum class Uplo { kLower, kUpper };
enum class Trans { kNoTrans, kTrans };

// Returned by every entry point. Invalid arguments are reported before any launch.
enum class Status {
  kSuccess = 0,
  kInvalidValue,      // n < 0, lda < max(1, n), incx == 0, ...
  kNullPointer,       // a required pointer is null
  kWorkspaceTooSmall, // caller's workspace is smaller than the queried size
  kLaunchFailed,      // the CUDA launch itself failed (cudaGetLastError)
  kNotSupported,      // not in this build or not on these devices (multi-GPU: NCCL, peer access)
  kDeviceError,       // a CUDA or NCCL call other than a launch failed (multi-GPU context set-up)
};

inline const char* status_text(Status s) {
  switch (s) {
    case Status::kSuccess: return "success";
    case Status::kInvalidValue: return "invalid value";
    case Status::kNullPointer: return "null pointer";
    case Status::kWorkspaceTooSmall: return "workspace too small";
    case Status::kLaunchFailed: return "launch failed";
    case Status::kNotSupported: return "not supported";
    case Status::kDeviceError: return "device error";
  }
  return "unknown status";
}

namespace detail {
// Whether two NUL-terminated strings are equal, in a constant expression (the implementation tables'
// consistency checks: names unique).
constexpr bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
}  // namespace detail

}  // namespace gpuprobe::kernels
