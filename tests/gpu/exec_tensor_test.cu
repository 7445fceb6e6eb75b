// GPU test of exec.tensor's instructions: every mma.sync and wgmma form the device runs computes
// D = A B^T + C, checked against a double-precision reference on random operands (two seeds), with D
// poisoned first so that an element no lane wrote fails. The throughput and latency kernels issue the
// same wrappers on operands staged by the same code, so a form that fails here is never timed right.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "probes/exec_tensor.hpp"

namespace gpuprobe {
namespace {

constexpr std::uint8_t kPoisonByte = 0x7F;  // f32 3.4e38, f16 NaN, s32 2139062143, f64 1.4e306: no result

// How far the tensor core's sum may be from the exact one, as a relative error over the whole tile.
// Products of the encoded inputs are exact in double, so this is the accumulator's rounding alone:
// integers are exact; f16 accumulators keep 11 bits; Hopper's fp8 path adds in fewer bits than f32.
double tolerance(const TensorForm& f) {
  if (f.accum == TensorAccum::kS32) return 0;
  if (f.accum == TensorAccum::kF64) return 1e-13;
  if (f.accum == TensorAccum::kF16) return 2e-3;
  if (f.precision == TensorPrecision::kE4M3 || f.precision == TensorPrecision::kE5M2) return 5e-4;
  return 1e-5;
}

void check_form(const TensorForm& f, std::uint32_t seed) {
  SCOPED_TRACE(f.describe() + " seed " + std::to_string(seed));
  const int es = tensor_element_bytes(f.precision), cs = tensor_accum_bytes(f.accum);
  const std::vector<std::uint8_t> a = random_tensor_image(f.precision, std::size_t(f.m) * f.k, seed);
  const std::vector<std::uint8_t> b = random_tensor_image(f.precision, std::size_t(f.n) * f.k, seed + 1);
  // C: random values of the accumulator type (s32 from s8-range integers, floats in [-1, 1]).
  const std::size_t mn = std::size_t(f.m) * f.n;
  std::vector<std::uint8_t> c(mn * cs);
  {
    const TensorPrecision source = f.accum == TensorAccum::kS32 ? TensorPrecision::kS8 : TensorPrecision::kF16;
    const std::vector<std::uint8_t> values = random_tensor_image(source, mn, seed + 2);
    for (std::size_t i = 0; i < mn; ++i)
      encode_accum_element(f.accum, decode_tensor_element(source, values.data() + i * tensor_element_bytes(source)),
                           c.data() + i * cs);
  }
  DeviceBuffer<std::uint8_t> da(a.size()), db(b.size()), dc(c.size()), dd(c.size());
  GP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), a.size(), cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), b.size(), cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemcpy(dc.data(), c.data(), c.size(), cudaMemcpyHostToDevice));
  GP_CUDA_CHECK(cudaMemset(dd.data(), kPoisonByte, dd.bytes()));
  enqueue_tensor_once(f, da.data(), db.data(), dc.data(), dd.data(), nullptr);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> d(c.size());
  GP_CUDA_CHECK(cudaMemcpy(d.data(), dd.data(), d.size(), cudaMemcpyDeviceToHost));

  std::vector<std::uint8_t> poison(cs, kPoisonByte);
  double err2 = 0, ref2 = 0;
  int unwritten = 0, reported = 0;
  for (int i = 0; i < f.m; ++i) {
    for (int j = 0; j < f.n; ++j) {
      const std::size_t idx = std::size_t(i) * f.n + j;
      double ref = decode_accum_element(f.accum, c.data() + idx * cs);
      for (int k = 0; k < f.k; ++k)
        ref += decode_tensor_element(f.precision, a.data() + (std::size_t(i) * f.k + k) * es) *
               decode_tensor_element(f.precision, b.data() + (std::size_t(j) * f.k + k) * es);
      const std::uint8_t* got_bytes = d.data() + idx * cs;
      if (std::memcmp(got_bytes, poison.data(), cs) == 0) {
        ++unwritten;
        continue;
      }
      const double got = decode_accum_element(f.accum, got_bytes);
      if (!std::isfinite(got) && reported++ < 5) ADD_FAILURE() << "D[" << i << "][" << j << "] = " << got;
      if (f.accum == TensorAccum::kS32 && got != ref && reported++ < 5)
        ADD_FAILURE() << "D[" << i << "][" << j << "] = " << got << ", expected " << ref;
      err2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
    }
  }
  EXPECT_EQ(unwritten, 0) << "elements of D no lane wrote";
  const double relative = std::sqrt(err2 / ref2);
  EXPECT_LE(relative, tolerance(f)) << "relative error over the tile";
}

TEST(ExecTensor, EveryFormComputesAPlusBTimesC) {
  cudaDeviceProp prop{};
  int device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int checked = 0;
  for (const TensorForm& f : tensor_forms()) {
    if (!tensor_form_unavailable(f, prop.major * 10 + prop.minor, built_code_for_current_device()).empty()) continue;
    check_form(f, 11);
    check_form(f, 29);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no tensor form runs on compute capability " << prop.major << "." << prop.minor;
  std::printf("[ exec.tensor ] %d forms checked on compute capability %d.%d\n", checked, prop.major, prop.minor);
}

}  // namespace
}  // namespace gpuprobe
