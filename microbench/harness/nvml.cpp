#include "nvml.hpp"

#include <dlfcn.h>

namespace gpuprobe {
namespace {

// The few NVML entry points used, declared here so no nvml.h is needed at build time.
using nvmlReturn = int;  // NVML_SUCCESS == 0
using NvmlInit = nvmlReturn (*)();
using NvmlShutdown = nvmlReturn (*)();
using NvmlHandleByBusId = nvmlReturn (*)(const char*, void**);
using NvmlClockInfo = nvmlReturn (*)(void*, int, unsigned*);
using NvmlUnsignedQuery = nvmlReturn (*)(void*, unsigned*);

constexpr int kNvmlClockSm = 1;   // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;  // NVML_CLOCK_MEM

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = symbol<NvmlInit>(library_, "nvmlInit_v2");
  auto by_bus = symbol<NvmlHandleByBusId>(library_, "nvmlDeviceGetHandleByPciBusId_v2");
  if (!init || !by_bus || init() != 0) {
    reason_ = "nvmlInit failed";
    return;
  }
  void* dev = nullptr;
  if (by_bus(pci_bus_id.c_str(), &dev) != 0) {
    reason_ = "NVML does not know PCI bus id " + pci_bus_id;
    return;
  }
  device_ = dev;
}

Nvml::~Nvml() {
  if (library_) {
    if (device_) {
      if (auto shutdown = symbol<NvmlShutdown>(library_, "nvmlShutdown")) shutdown();
    }
    dlclose(library_);
  }
}

std::optional<unsigned> Nvml::query_clock(int clock_type) const {
  if (!device_) return std::nullopt;
  auto fn = symbol<NvmlClockInfo>(library_, "nvmlDeviceGetClockInfo");
  unsigned mhz = 0;
  if (!fn || fn(device_, clock_type, &mhz) != 0) return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::query_unsigned(void* fn_ptr) const {
  if (!device_ || !fn_ptr) return std::nullopt;
  unsigned value = 0;
  if (reinterpret_cast<NvmlUnsignedQuery>(fn_ptr)(device_, &value) != 0) return std::nullopt;
  return value;
}

void* Nvml::function(const char* name) const { return device_ ? dlsym(library_, name) : nullptr; }

std::optional<unsigned> Nvml::sm_clock_mhz() const { return query_clock(kNvmlClockSm); }
std::optional<unsigned> Nvml::mem_clock_mhz() const { return query_clock(kNvmlClockMem); }
std::optional<unsigned> Nvml::power_mw() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetPowerUsage")) : std::nullopt;
}

std::optional<unsigned> Nvml::power_limit_mw() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetEnforcedPowerLimit")) : std::nullopt;
}

std::optional<unsigned> Nvml::pcie_link_generation() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetCurrPcieLinkGeneration")) : std::nullopt;
}
std::optional<unsigned> Nvml::pcie_link_width() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetCurrPcieLinkWidth")) : std::nullopt;
}
std::optional<unsigned> Nvml::pcie_max_link_generation() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetMaxPcieLinkGeneration")) : std::nullopt;
}
std::optional<unsigned> Nvml::pcie_max_link_width() const {
  return library_ ? query_unsigned(dlsym(library_, "nvmlDeviceGetMaxPcieLinkWidth")) : std::nullopt;
}

}  // namespace gpuprobe
