// Minimal run-time binding to NVML (libnvidia-ml.so.1, shipped with the driver) for reading the
// SM and memory clocks and the PCIe link while probes run. Loaded with dlopen so the binary also
// starts on machines without a driver (CI), where every query simply reports "unavailable".
#pragma once

#include <optional>
#include <string>

namespace gpuprobe {

class Nvml {
 public:
  // Binds to the device with this PCI bus id ("0000:19:00.0"); unavailable if NVML is missing.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  std::optional<unsigned> sm_clock_mhz() const;   // current SM clock
  std::optional<unsigned> mem_clock_mhz() const;  // current memory clock
  // Board power (milliwatts) as NVML reports it: on Hopper an average over a short recent window, not an
  // instantaneous reading.
  std::optional<unsigned> power_mw() const;
  std::optional<unsigned> power_limit_mw() const;  // the enforced board power limit
  std::optional<unsigned> pcie_link_generation() const;
  std::optional<unsigned> pcie_link_width() const;
  std::optional<unsigned> pcie_max_link_generation() const;
  std::optional<unsigned> pcie_max_link_width() const;
  // For further queries (identity.cpp): an NVML entry point by name (nullptr when NVML or the
  // symbol is missing) and the device handle it takes (nullptr when unavailable).
  void* function(const char* name) const;
  void* handle() const { return device_; }
  // Why NVML is unavailable (empty when it is available).
  const std::string& unavailable_reason() const { return reason_; }

 private:
  std::optional<unsigned> query_clock(int clock_type) const;
  std::optional<unsigned> query_unsigned(void* fn) const;
  void* library_ = nullptr;
  void* device_ = nullptr;
  std::string reason_;
};

}  // namespace gpuprobe
