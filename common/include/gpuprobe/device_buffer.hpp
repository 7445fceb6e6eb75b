// RAII owner of a cudaMalloc'd array on one device, and a scope that makes a device current.
// Plain device allocations only (never managed memory: asking for more managed memory than the card
// has can hang the GPU).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

// Makes `device` current for its lifetime and restores the previous device after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    GP_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) {
      GP_CUDA_CHECK(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ~DeviceScope() {
    if (changed_) cudaSetDevice(previous_);  // a destructor must not throw; the next checked call reports
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // On the current device.
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    GP_CUDA_CHECK(cudaGetDevice(&device_));
    if (count_ > 0) GP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  // On `device` (the current device is left as it was).
  DeviceBuffer(int device, std::size_t count) : device_(device), count_(count) {
    DeviceScope on(device);
    if (count_ > 0) GP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)), device_(other.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
      device_ = other.device_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  int device() const { return device_; }

 private:
  // Freed on its own device (never throws: a destructor's failure shows at the next checked call).
  void release() noexcept {
    if (!data_) return;
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && current != device_ && cudaSetDevice(device_) == cudaSuccess) {
      cudaFree(data_);
      cudaSetDevice(current);
    } else {
      cudaFree(data_);
    }
    data_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;
};

}  // namespace gpuprobe
