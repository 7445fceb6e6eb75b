#include "device.hpp"

#include <cuda_runtime.h>

#include <fstream>
#include <sstream>

#include "gpuprobe/check.hpp"

namespace gpuprobe {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

int read_numa_node(const std::string& pci_bus_id) {
  // sysfs spells the domain with 4 hex digits and lower case.
  std::string id = pci_bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (id.size() > 12) id = id.substr(id.size() - 12);
  std::ifstream in("/sys/bus/pci/devices/" + id + "/numa_node");
  int node = -1;
  if (in >> node) return node;
  return -1;
}

std::string format_double(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

int device_count() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear, so later calls do not see a stale error
    throw NoDeviceError(std::string("no usable GPU: no NVIDIA driver or CUDA-capable device found (cudaGetDeviceCount: ") +
                        cudaGetErrorName(status) + ", " + cudaGetErrorString(status) + ")");
  }
  if (count == 0) throw NoDeviceError("no usable GPU: no CUDA-capable device is detected");
  return count;
}

DeviceInfo open_device(int index) {
  const int count = device_count();
  if (index < 0 || index >= count)
    throw UsageError("--device=" + std::to_string(index) + " does not exist: this machine has " +
                        std::to_string(count) + " CUDA device(s), numbered 0.." + std::to_string(count - 1));
  GP_CUDA_CHECK(cudaSetDevice(index));
  GP_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first timed region

  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  char bus[32] = {};
  GP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, index));
  info.pci_bus_id = bus;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.sm_clock_max_mhz = attribute(cudaDevAttrClockRate, index) / 1000;
  info.mem_clock_max_mhz = attribute(cudaDevAttrMemoryClockRate, index) / 1000;
  info.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  info.theoretical_dram_gbps =
      2.0 * attribute(cudaDevAttrMemoryClockRate, index) * 1e3 * (info.bus_width_bits / 8.0) / 1e9;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.smem_per_sm_bytes = prop.sharedMemPerMultiprocessor;
  info.smem_per_block_optin_bytes = prop.sharedMemPerBlockOptin;
  info.total_mem_bytes = prop.totalGlobalMem;
  info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  info.regs_per_sm = prop.regsPerMultiprocessor;
  info.ecc = prop.ECCEnabled != 0;
  info.cooperative_launch = attribute(cudaDevAttrCooperativeLaunch, index) != 0;
  GP_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  GP_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  info.numa_node = read_numa_node(info.pci_bus_id);
  info.code = built_code_for_current_device();  // throws, saying what to build, when the binary has none
  return info;
}

std::vector<std::pair<std::string, std::string>> context_fields(const DeviceInfo& d) {
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  return {
      {"gpu_index", std::to_string(d.index)},
      {"gpu_name", d.name},
      {"gpu_pci_bus_id", d.pci_bus_id},
      {"gpu_compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
      {"gpu_sm_count", std::to_string(d.sm_count)},
      {"gpu_sm_clock_max_mhz", std::to_string(d.sm_clock_max_mhz)},
      {"gpu_mem_clock_max_mhz", std::to_string(d.mem_clock_max_mhz)},
      {"gpu_bus_width_bits", std::to_string(d.bus_width_bits)},
      {"gpu_theoretical_dram_gbps", format_double(d.theoretical_dram_gbps)},
      {"gpu_l2_bytes", std::to_string(d.l2_bytes)},
      {"gpu_smem_per_sm_bytes", std::to_string(d.smem_per_sm_bytes)},
      {"gpu_smem_per_block_optin_bytes", std::to_string(d.smem_per_block_optin_bytes)},
      {"gpu_total_mem_bytes", std::to_string(d.total_mem_bytes)},
      {"gpu_max_threads_per_sm", std::to_string(d.max_threads_per_sm)},
      {"gpu_max_blocks_per_sm", std::to_string(d.max_blocks_per_sm)},
      {"gpu_regs_per_sm", std::to_string(d.regs_per_sm)},
      {"gpu_ecc", d.ecc ? "on" : "off"},
      {"gpu_numa_node", std::to_string(d.numa_node)},
      {"cuda_driver_version", version(d.driver_version)},
      {"cuda_runtime_version", version(d.runtime_version)},
      {"gpuprobe_cuda_architectures", built_cuda_architectures()},
      {"gpuprobe_code_arch", "sm_" + std::to_string(d.code.code_arch) + (d.code.sm90a ? ", sm_90a (wgmma)" : "")},
  };
}

}  // namespace gpuprobe
