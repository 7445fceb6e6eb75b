#include "identity.hpp"

#include <unistd.h>

#include <cstdio>

namespace gpuprobe {
namespace {

// The NVML entry points used here, declared so that no nvml.h is needed at build time.
using nvmlReturn = int;  // NVML_SUCCESS == 0
constexpr nvmlReturn kNvmlSuccess = 0;
constexpr nvmlReturn kNvmlInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
using StringQuery = nvmlReturn (*)(void*, char*, unsigned);
using SystemStringQuery = nvmlReturn (*)(char*, unsigned);
using UnsignedQuery = nvmlReturn (*)(void*, unsigned*);
using ClockQuery = nvmlReturn (*)(void*, int, unsigned*);
using EccQuery = nvmlReturn (*)(void*, int, int, unsigned long long*);
using RetiredPagesQuery = nvmlReturn (*)(void*, int, unsigned*, unsigned long long*);
using RemappedRowsQuery = nvmlReturn (*)(void*, unsigned*, unsigned*, unsigned*, unsigned*);
struct ProcessInfo {  // nvmlProcessInfo_t (v2 layout), as nvmlDeviceGetComputeRunningProcesses_v3 fills it
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
using ProcessQuery = nvmlReturn (*)(void*, unsigned*, ProcessInfo*);
struct Utilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};
using UtilizationQuery = nvmlReturn (*)(void*, Utilization*);

constexpr int kClockSm = 1, kClockMem = 2;               // NVML_CLOCK_SM, NVML_CLOCK_MEM
constexpr int kEccCorrected = 0, kEccUncorrected = 1;    // nvmlMemoryErrorType_t
constexpr int kEccVolatile = 0, kEccAggregate = 1;       // nvmlEccCounterType_t
constexpr int kRetiredSingleBit = 0, kRetiredDoubleBit = 1;  // nvmlPageRetirementCause_t
constexpr unsigned kStringBuffer = 96;  // the largest of NVML's buffer sizes used here (UUID v2)

const std::string kUnavailable = "unavailable";

template <class F>
F fn(const Nvml& nvml, const char* name) {
  return reinterpret_cast<F>(nvml.function(name));
}

std::string device_string(const Nvml& nvml, const char* name) {
  auto f = fn<StringQuery>(nvml, name);
  char buf[kStringBuffer] = {};
  if (!f || f(nvml.handle(), buf, sizeof buf) != kNvmlSuccess || !buf[0]) return kUnavailable;
  return buf;
}

std::string device_unsigned(const Nvml& nvml, const char* name, double scale = 1) {
  auto f = fn<UnsignedQuery>(nvml, name);
  unsigned v = 0;
  if (!f || f(nvml.handle(), &v) != kNvmlSuccess) return kUnavailable;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v * scale);
  return buf;
}

std::string clock(const Nvml& nvml, const char* name, int type) {
  auto f = fn<ClockQuery>(nvml, name);
  unsigned v = 0;
  if (!f || f(nvml.handle(), type, &v) != kNvmlSuccess) return kUnavailable;
  return std::to_string(v);
}

std::string ecc(const Nvml& nvml, int error_type, int counter_type) {
  auto f = fn<EccQuery>(nvml, "nvmlDeviceGetTotalEccErrors");
  unsigned long long v = 0;
  if (!f || f(nvml.handle(), error_type, counter_type, &v) != kNvmlSuccess) return kUnavailable;
  return std::to_string(v);
}

std::string retired_pages(const Nvml& nvml, int cause) {
  auto f = fn<RetiredPagesQuery>(nvml, "nvmlDeviceGetRetiredPages");
  unsigned count = 0;  // 0 and no buffer: NVML returns the count only
  if (!f) return kUnavailable;
  const nvmlReturn r = f(nvml.handle(), cause, &count, nullptr);
  if (r != kNvmlSuccess && r != kNvmlInsufficientSize) return kUnavailable;  // e.g. not supported (row remapping)
  return std::to_string(count);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> identity_context(const Nvml& nvml) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"gpu_uuid", device_string(nvml, "nvmlDeviceGetUUID")},
      {"gpu_serial", device_string(nvml, "nvmlDeviceGetSerial")},
      {"gpu_vbios", device_string(nvml, "nvmlDeviceGetVbiosVersion")},
  };
  std::string driver = kUnavailable;
  if (auto f = fn<SystemStringQuery>(nvml, "nvmlSystemGetDriverVersion")) {
    char buf[kStringBuffer] = {};
    if (f(buf, sizeof buf) == kNvmlSuccess && buf[0]) driver = buf;
  }
  out.emplace_back("gpu_driver_version", driver);
  out.emplace_back("gpu_power_limit_w", device_unsigned(nvml, "nvmlDeviceGetEnforcedPowerLimit", 1e-3));
  out.emplace_back("gpu_power_limit_default_w", device_unsigned(nvml, "nvmlDeviceGetPowerManagementDefaultLimit", 1e-3));
  out.emplace_back("gpu_sm_clock_application_mhz", clock(nvml, "nvmlDeviceGetApplicationsClock", kClockSm));
  out.emplace_back("gpu_mem_clock_application_mhz", clock(nvml, "nvmlDeviceGetApplicationsClock", kClockMem));
  out.emplace_back("gpu_sm_clock_nvml_max_mhz", clock(nvml, "nvmlDeviceGetMaxClockInfo", kClockSm));
  out.emplace_back("gpu_mem_clock_nvml_max_mhz", clock(nvml, "nvmlDeviceGetMaxClockInfo", kClockMem));
  out.emplace_back("gpu_ecc_corrected_volatile", ecc(nvml, kEccCorrected, kEccVolatile));
  out.emplace_back("gpu_ecc_uncorrected_volatile", ecc(nvml, kEccUncorrected, kEccVolatile));
  out.emplace_back("gpu_ecc_corrected_aggregate", ecc(nvml, kEccCorrected, kEccAggregate));
  out.emplace_back("gpu_ecc_uncorrected_aggregate", ecc(nvml, kEccUncorrected, kEccAggregate));
  out.emplace_back("gpu_retired_pages_single_bit", retired_pages(nvml, kRetiredSingleBit));
  out.emplace_back("gpu_retired_pages_double_bit", retired_pages(nvml, kRetiredDoubleBit));
  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  auto rows = fn<RemappedRowsQuery>(nvml, "nvmlDeviceGetRemappedRows");
  const bool have_rows = rows && rows(nvml.handle(), &corrected, &uncorrected, &pending, &failure) == kNvmlSuccess;
  out.emplace_back("gpu_remapped_rows_correctable", have_rows ? std::to_string(corrected) : kUnavailable);
  out.emplace_back("gpu_remapped_rows_uncorrectable", have_rows ? std::to_string(uncorrected) : kUnavailable);
  out.emplace_back("gpu_remapped_rows_pending", have_rows ? (pending ? "yes" : "no") : kUnavailable);
  out.emplace_back("gpu_remapped_rows_failure", have_rows ? (failure ? "yes" : "no") : kUnavailable);
  if (!nvml.available()) out.emplace_back("gpu_nvml_unavailable_reason", nvml.unavailable_reason());
  return out;
}

IdleCheck idle_check(const Nvml& nvml) {
  IdleCheck check;
  std::string others = kUnavailable, utilization = kUnavailable, why_unknown;
  std::vector<unsigned> other_pids;
  bool processes_known = false;
  if (auto f = fn<ProcessQuery>(nvml, "nvmlDeviceGetComputeRunningProcesses_v3")) {
    ProcessInfo infos[64] = {};
    unsigned count = 64;
    if (f(nvml.handle(), &count, infos) == kNvmlSuccess) {
      processes_known = true;
      const unsigned self = static_cast<unsigned>(getpid());
      for (unsigned i = 0; i < count && i < 64; ++i)
        if (infos[i].pid != self) other_pids.push_back(infos[i].pid);
      others = std::to_string(other_pids.size());
    }
  }
  unsigned busy_percent = 0;
  bool utilization_known = false;
  if (auto f = fn<UtilizationQuery>(nvml, "nvmlDeviceGetUtilizationRates")) {
    Utilization u{};
    if (f(nvml.handle(), &u) == kNvmlSuccess) {
      utilization_known = true;
      busy_percent = u.gpu;
      utilization = std::to_string(u.gpu);
    }
  }
  std::string why;
  if (!other_pids.empty()) {
    why = std::to_string(other_pids.size()) + " other compute process" + (other_pids.size() > 1 ? "es" : "") + " (pid";
    for (std::size_t i = 0; i < other_pids.size() && i < 8; ++i) why += (i ? ", " : " ") + std::to_string(other_pids[i]);
    why += ")";
  }
  if (utilization_known && busy_percent > kBusyUtilizationPercent)
    why += (why.empty() ? "" : ", ") + std::string("utilization ") + utilization + " %";
  if (!why.empty())
    check.verdict = "no: " + why;
  else if (processes_known || utilization_known)
    check.verdict = "yes";
  else
    check.verdict = "unavailable (" + (nvml.available() ? std::string("NVML gave neither processes nor utilization")
                                                          : nvml.unavailable_reason()) + ")";
  check.context = {{"gpu_idle_at_start", check.verdict},
                   {"gpu_other_compute_processes_at_start", others},
                   {"gpu_utilization_at_start_pct", utilization}};
  return check;
}

}  // namespace gpuprobe
