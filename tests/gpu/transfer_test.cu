// The SM-driven copy of transfer.host copies exactly the bytes asked for, from mapped host memory
// to the device and back, at irregular sizes (tails below one 16-byte word), and nothing beyond.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/hash.hpp"
#include "probes/transfer_copy.hpp"

namespace gpuprobe {
namespace {

TEST(TransferSmCopy, CopiesExactlyTheBytesThroughMappedHostMemory) {
  constexpr std::size_t kMax = (std::size_t(1) << 20) + 37;
  constexpr unsigned char kPoison = 0xee;
  unsigned char* host_src = nullptr;
  unsigned char* host_dst = nullptr;
  GP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_src), kMax + 64, cudaHostAllocMapped));
  GP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_dst), kMax + 64, cudaHostAllocMapped));
  for (std::size_t i = 0; i < kMax + 64; ++i) host_src[i] = static_cast<unsigned char>(mix64(i) & 0xff);
  void* mapped_src = nullptr;
  void* mapped_dst = nullptr;
  GP_CUDA_CHECK(cudaHostGetDevicePointer(&mapped_src, host_src, 0));
  GP_CUDA_CHECK(cudaHostGetDevicePointer(&mapped_dst, host_dst, 0));
  DeviceBuffer<unsigned char> device(kMax + 64);

  for (std::size_t bytes : {std::size_t(1), std::size_t(15), std::size_t(16), std::size_t(17), std::size_t(4097),
                            std::size_t(65536 + 3), kMax}) {
    SCOPED_TRACE("bytes " + std::to_string(bytes));
    GP_CUDA_CHECK(cudaMemset(device.data(), kPoison, kMax + 64));
    std::memset(host_dst, kPoison, kMax + 64);
    transfer_sm_copy(mapped_src, device.data(), bytes, nullptr);      // host -> device, zero-copy read
    transfer_sm_copy(device.data(), mapped_dst, bytes + 64, nullptr);  // device -> host, with the poison after
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(std::memcmp(host_dst, host_src, bytes), 0);
    std::size_t beyond = 0;
    for (std::size_t i = bytes; i < bytes + 64; ++i) beyond += host_dst[i] != kPoison;
    EXPECT_EQ(beyond, 0u) << "bytes written past the end of the copy";
  }
  cudaFreeHost(host_src);
  cudaFreeHost(host_dst);
}

}  // namespace
}  // namespace gpuprobe
