// The GPU under test: its properties, read once, and recorded in every result file's context.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "harness/arch.hpp"

namespace gpuprobe {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_max_mhz = 0;    // peak SM clock the driver reports
  int mem_clock_max_mhz = 0;   // peak memory clock
  int bus_width_bits = 0;
  double theoretical_dram_gbps = 0;  // 2 (double data rate) x memory clock x bus width
  std::size_t l2_bytes = 0;
  std::size_t smem_per_sm_bytes = 0;
  std::size_t smem_per_block_optin_bytes = 0;
  std::size_t total_mem_bytes = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  bool ecc = false;
  bool cooperative_launch = false;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;
  int numa_node = -1;       // from sysfs; -1 when unknown
  BuiltCode code;           // the code this binary runs on it (arch.hpp)
  int cc() const { return cc_major * 10 + cc_minor; }
};

// Number of CUDA devices. Throws NoDeviceError naming the cause when there is none or no driver.
int device_count();

// Makes `index` the current device, creates its context and reads its properties.
// Throws UsageError when `index` does not exist (NoDeviceError from device_count when none does).
DeviceInfo open_device(int index);

// The fields written into the result file's context, in a stable order (schema: docs/results-schema.md).
std::vector<std::pair<std::string, std::string>> context_fields(const DeviceInfo& info);

}  // namespace gpuprobe
