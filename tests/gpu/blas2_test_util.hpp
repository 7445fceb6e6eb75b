// Shared by symv_test.cu and gemv_test.cu: random host data, device copies, a BLAS vector with its
// gaps, and the error check against a higher-precision reference.
//
// The check: every element of y within
//     |y_i - ref_i| <= 2 sqrt(len + 2) eps (|alpha| (|A| |x|)_i + |beta y0_i|)
// (the sqrt(len) growth of random rounding errors, eps = FLT_EPSILON or DBL_EPSILON, a factor 2 of
// margin; the reference is computed in long double on the CPU, or by cuBLAS in double for float
// inputs), NaN failing; and every gap element of a strided y (incy != 1) left exactly as it was.
#pragma once

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::blas2_test {

template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();

template <class T>
constexpr double epsilon() {
  return std::is_same_v<T, float> ? FLT_EPSILON : DBL_EPSILON;
}

inline std::uint64_t fresh_seed() {
  static std::uint64_t counter = 0xb1a5;
  return ++counter * 0x9E3779B97F4A7C15ull;
}

template <class T>
T uniform(std::mt19937_64& rng) {
  return static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
}

// A BLAS vector of `len` elements with increment `inc` (negative allowed) in a buffer of
// 1 + (len - 1) |inc| elements; gap elements hold `gap` (so that a write into a gap shows).
template <class T>
struct HostVector {
  int len, inc;
  std::vector<T> data;
  HostVector(int n, int increment, T gap) : len(n), inc(increment), data(storage(n, increment), gap) {}
  static std::size_t storage(int n, int inc) {
    return n > 0 ? 1 + static_cast<std::size_t>(n - 1) * static_cast<std::size_t>(std::abs(inc)) : 1;
  }
  std::size_t index(int i) const {  // reference BLAS: element 0 at the far end when inc < 0
    return inc > 0 ? static_cast<std::size_t>(i) * inc : static_cast<std::size_t>(len - 1 - i) * (-inc);
  }
  T& operator[](int i) { return data[index(i)]; }
  T operator[](int i) const { return data[index(i)]; }
  void randomize(std::mt19937_64& rng) {
    for (int i = 0; i < len; ++i) (*this)[i] = uniform<T>(rng);
  }
};

// Device copy of host data (one element of NaN-pattern guard on each side).
// A device workspace of `need` bytes (at least 16): NaN-poisoned (0xFF bytes), then prepared by
// `init` (gemv_workspace_init / symv_workspace_init: the counters zeroed, the partials still NaN, so
// that a partial read before it is written poisons y).
struct Workspace {
  std::size_t bytes;
  DeviceBuffer<unsigned char> buffer;
  template <class Init>
  Workspace(std::size_t need, Init init) : bytes(need), buffer(need > 16 ? need : 16) {
    GP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
    EXPECT_EQ(init(buffer.data(), bytes, nullptr), kernels::Status::kSuccess);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
};

template <class T>
struct DeviceCopy {
  DeviceBuffer<T> buffer;
  T* ptr;
  explicit DeviceCopy(const std::vector<T>& host) : buffer(host.size() + 2) {
    ptr = buffer.data() + 1;
    GP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
    GP_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  // 16-byte aligned start (the vector-load paths).
  DeviceCopy(const std::vector<T>& host, bool aligned) : buffer(host.size() + 32 / sizeof(T)) {
    ptr = aligned ? buffer.data() : buffer.data() + 1;
    GP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
    GP_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download(std::size_t count) const {
    std::vector<T> out(count);
    GP_CUDA_CHECK(cudaMemcpy(out.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
};

// Reference y and the bound's scale |alpha| (|A| |x|)_i + |beta y0_i|.
struct Reference {
  std::vector<double> value, scale;
};

// Checks y (as downloaded, gaps included) against the reference; `len_sum` is the length of the
// sums (the error growth), `y_before` the buffer before the call (gaps must be unchanged).
template <class T>
void expect_close(const HostVector<T>& y_before, const std::vector<T>& y_after, const Reference& ref, int len_sum) {
  const double tol = 2.0 * std::sqrt(len_sum + 2.0) * epsilon<T>();
  long bad = 0, gaps_written = 0;
  double worst = 0;
  std::string first_bad;
  HostVector<T> got = y_before;
  got.data = y_after;
  for (int i = 0; i < got.len; ++i) {
    const double v = got[i], want = ref.value[i], bound = tol * ref.scale[i];
    const double err = std::fabs(v - want);
    if (!(err <= bound)) {
      if (bad++ == 0) {
        std::ostringstream s;
        s << "y[" << i << "] = " << v << ", reference " << want << ", bound " << bound;
        first_bad = s.str();
      }
    } else if (bound > 0) {
      worst = std::max(worst, err / bound);
    }
  }
  // Gap elements: positions of the buffer that are no element of y.
  std::vector<char> is_element(y_after.size(), 0);
  for (int i = 0; i < got.len; ++i) is_element[got.index(i)] = 1;
  for (std::size_t k = 0; k < y_after.size(); ++k)
    if (!is_element[k] && !(y_after[k] == y_before.data[k] || (std::isnan(y_after[k]) && std::isnan(y_before.data[k]))))
      ++gaps_written;
  EXPECT_EQ(bad, 0) << bad << " of " << got.len << " elements outside the bound; first: " << first_bad
                    << " (worst passing error / bound: " << worst << ")";
  EXPECT_EQ(gaps_written, 0) << "elements written between the elements of a strided y";
}

}  // namespace gpuprobe::blas2_test
