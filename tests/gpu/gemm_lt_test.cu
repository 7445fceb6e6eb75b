// cuBLASLt GEMMs (kernels::GemmLt, what kernels.gemm_lt times) against a CPU reference in double, for
// every type of kernels::kGemmLtPrecisions the device runs, on small irregular shapes in the benchmark's
// layout (TN: A stored k x m, B k x n, D m x n, column-major).
//
// Every check draws random operands (never zeros) and encodes them in the input type; the reference
// sums the decoded (exact) inputs in double, so what is compared is the GEMM's own arithmetic: its
// accumulation and the rounding of D, plus for TF32 the tensor cores' reading of FP32 operands with a
// 10-bit mantissa. D is poisoned before the call (NaN in the float types; 0x80808080 in s32, which no
// s8 sum of these shapes reaches), so an element left unwritten fails. Per element
//   |D - ref| <= u_out |ref| + u_acc (sum_l |a_il| |b_lj|),
// with u_out the output type's rounding (half an ulp) and u_acc the accumulation's error per unit of
// the absolute products (per type below, with its reason); and over the matrix
//   ||D - ref||_F <= norm_tol ||ref||_F (bf16 and fp8 1e-2, f16 1e-3, tf32 4e-3, f64 1e-14; s8 exact).
// Shapes: 96 x 80 x 64 and 257 x 129 x 96 (no dimension a multiple of the kernels' tiles) for the
// 16-, 32- and 64-bit types; FP8 and INT8 use 96 x 80 x 64 and 272 x 144 x 96, multiples of 16 (their
// kernels need 16-byte aligned leading dimensions: k and m elements of 1 byte), still not multiples of
// the 64- or 128-wide tiles.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/gemm_lt.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

using kernels::GemmLtPrecision;
using kernels::GemmLtPrecisionRecord;

// One input element: `value` rounded into the input type at `dst`; the exact value it holds back.
double encode_input(GemmLtPrecision p, double value, unsigned char* dst) {
  switch (p) {
    case GemmLtPrecision::kBF16: {
      const __nv_bfloat16 x = __double2bfloat16(value);
      std::memcpy(dst, &x, sizeof x);
      return double(__bfloat162float(x));
    }
    case GemmLtPrecision::kF16: {
      const __half x = __double2half(value);
      std::memcpy(dst, &x, sizeof x);
      return double(__half2float(x));
    }
    case GemmLtPrecision::kTF32: {  // stored as FP32: the tensor cores' reading of it is part of the check
      const float x = float(value);
      std::memcpy(dst, &x, sizeof x);
      return double(x);
    }
    case GemmLtPrecision::kE4M3: {
      const __nv_fp8_e4m3 x = __nv_fp8_e4m3(static_cast<float>(value));
      std::memcpy(dst, &x, sizeof x);
      return double(float(x));
    }
    case GemmLtPrecision::kS8: {
      const std::int8_t x = static_cast<std::int8_t>(value);
      std::memcpy(dst, &x, sizeof x);
      return double(x);
    }
    case GemmLtPrecision::kF64:
      std::memcpy(dst, &value, sizeof value);
      return value;
  }
  return 0;
}

double decode_output(GemmLtPrecision p, const unsigned char* src) {
  switch (p) {
    case GemmLtPrecision::kBF16:
    case GemmLtPrecision::kE4M3: {  // FP8's D is BF16 (gemm_lt.hpp)
      __nv_bfloat16 x;
      std::memcpy(&x, src, sizeof x);
      return double(__bfloat162float(x));
    }
    case GemmLtPrecision::kF16: {
      __half x;
      std::memcpy(&x, src, sizeof x);
      return double(__half2float(x));
    }
    case GemmLtPrecision::kTF32: {
      float x;
      std::memcpy(&x, src, sizeof x);
      return double(x);
    }
    case GemmLtPrecision::kS8: {
      std::int32_t x;
      std::memcpy(&x, src, sizeof x);
      return double(x);
    }
    case GemmLtPrecision::kF64: {
      double x;
      std::memcpy(&x, src, sizeof x);
      return x;
    }
  }
  return 0;
}

struct Tolerance {
  double out;   // u_out: relative rounding of one D element
  double acc;   // u_acc: accumulation (and operand reading) error per unit of sum |a| |b|
  double norm;  // relative Frobenius error of the whole D
};

Tolerance tolerance(GemmLtPrecision p, int k) {
  const double k2 = k + 2;
  switch (p) {
    // FP32 accumulation: (k + 2) 2^-23 (twice the unit roundoff: the tensor cores' adds may truncate).
    // D rounded to nearest: half an ulp, 2^-8 (bf16), 2^-11 (f16).
    case GemmLtPrecision::kBF16: return {std::ldexp(1.0, -8), k2 * std::ldexp(1.0, -23), 1e-2};
    case GemmLtPrecision::kF16: return {std::ldexp(1.0, -11), k2 * std::ldexp(1.0, -23), 1e-3};
    // TF32: each FP32 operand is read with a 10-bit mantissa, by rounding or, at worst, truncation
    // (2^-10 relative per operand, 2 x 2^-10 per product), then FP32 accumulation. Relative norm
    // error about 1e-3 expected; 4e-3 leaves room for truncation's bias.
    case GemmLtPrecision::kTF32:
      return {std::ldexp(1.0, -24), 2 * std::ldexp(1.0, -10) + k2 * std::ldexp(1.0, -23), 4e-3};
    // FP8: products of e4m3 values are exact, but Hopper's FP8 tensor cores add with fewer mantissa
    // bits than FP32 (about 14 kept, DeepSeek-V3 report sec. 3.3.2) until cuBLASLt promotes the partial
    // sums to FP32: (k + 2) 2^-13. D is BF16.
    case GemmLtPrecision::kE4M3: return {std::ldexp(1.0, -8), k2 * std::ldexp(1.0, -13), 1e-2};
    case GemmLtPrecision::kS8: return {0, 0, 0};  // integer sums of these shapes are exact in s32
    case GemmLtPrecision::kF64: return {std::ldexp(1.0, -53), k2 * std::ldexp(1.0, -52), 1e-14};
  }
  return {0, 0, 0};
}

struct Shape {
  int m, n, k;
};

std::vector<Shape> shapes_for(GemmLtPrecision p) {
  if (p == GemmLtPrecision::kE4M3 || p == GemmLtPrecision::kS8) return {{96, 80, 64}, {272, 144, 96}};
  return {{96, 80, 64}, {257, 129, 96}};
}

class GemmLtTest : public ::testing::TestWithParam<GemmLtPrecisionRecord> {};

TEST_P(GemmLtTest, MatchesDoubleReference) {
  const GemmLtPrecisionRecord& r = GetParam();
  const DeviceInfo& device = context().device;
  if (device.cc_major * 10 + device.cc_minor < r.min_compute_capability)
    GTEST_SKIP() << r.name << " needs sm_" << r.min_compute_capability << "; this GPU is sm_" << device.cc_major
                 << device.cc_minor;
  std::mt19937_64 rng(0x6e6d6c74u + static_cast<unsigned>(r.precision));
  for (const Shape& s : shapes_for(r.precision)) {
    std::ostringstream what;
    what << r.name << " (" << r.types << ") TN m=" << s.m << " n=" << s.n << " k=" << s.k;
    SCOPED_TRACE(what.str());
    // Host operands: A k x m (lda = k), B k x n (ldb = k); their exact values for the reference.
    auto draw = [&](int rows, int cols, std::vector<unsigned char>& bytes, std::vector<double>& exact) {
      bytes.assign(std::size_t(rows) * cols * r.input_bytes, 0);
      exact.assign(std::size_t(rows) * cols, 0.0);
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      std::uniform_int_distribution<int> s8(-127, 127);
      for (std::size_t i = 0; i < exact.size(); ++i) {
        double v = r.precision == GemmLtPrecision::kS8 ? double(s8(rng)) : unit(rng);
        if (v == 0.0) v = r.precision == GemmLtPrecision::kS8 ? 1.0 : 0.5;  // no zeros: they hide dropped products
        exact[i] = encode_input(r.precision, v, &bytes[i * r.input_bytes]);
      }
    };
    std::vector<unsigned char> a_bytes, b_bytes;
    std::vector<double> a, b;
    draw(s.k, s.m, a_bytes, a);
    draw(s.k, s.n, b_bytes, b);

    DeviceBuffer<unsigned char> da(a_bytes.size()), db(b_bytes.size()),
        dd(std::size_t(s.m) * s.n * r.output_bytes);
    GP_CUDA_CHECK(cudaMemcpy(da.data(), a_bytes.data(), a_bytes.size(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(db.data(), b_bytes.data(), b_bytes.size(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemset(dd.data(), r.precision == GemmLtPrecision::kS8 ? 0x80 : 0xFF, dd.bytes()));

    const kernels::GemmLt plan(r.precision, s.m, s.n, s.k);
    EXPECT_GE(plan.heuristic_candidates(), 1);
    EXPECT_FALSE(plan.algorithm().empty());
    try {
      plan.run(da.data(), db.data(), dd.data(), nullptr);
    } catch (const kernels::GemmLtUnsupported& e) {
      // What cuBLASLt refuses to run is no result to check: kernels.gemm_lt skips that entry with the same
      // reason. On Hopper every type runs (cuBLASLt 13.1 on an H200, all six): a refusal there is our
      // defect (as FP8 scales 4 bytes apart were, gemm_lt.cpp), so it fails.
      if (device.cc_major == 9) FAIL() << e.what();
      GTEST_SKIP() << e.what();
    }
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> d_bytes(dd.bytes());
    GP_CUDA_CHECK(cudaMemcpy(d_bytes.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));

    const Tolerance tol = tolerance(r.precision, s.k);
    double err2 = 0, ref2 = 0;
    int bad = 0;
    for (int j = 0; j < s.n; ++j)
      for (int i = 0; i < s.m; ++i) {
        double ref = 0, scale = 0;
        for (int l = 0; l < s.k; ++l) {
          const double p = a[std::size_t(i) * s.k + l] * b[std::size_t(j) * s.k + l];
          ref += p;
          scale += std::fabs(p);
        }
        const double got = decode_output(r.precision, &d_bytes[(std::size_t(j) * s.m + i) * r.output_bytes]);
        const double bound = tol.out * std::fabs(ref) + tol.acc * scale;
        if (!(std::fabs(got - ref) <= bound)) {  // NaN (an unwritten element) fails here too
          if (++bad <= 5)
            ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got << ", reference " << ref << ", |error| "
                          << std::fabs(got - ref) << " > bound " << bound;
        }
        err2 += (got - ref) * (got - ref);
        ref2 += ref * ref;
      }
    EXPECT_EQ(bad, 0) << bad << " of " << s.m * s.n << " elements outside their bound";
    const double relative = std::sqrt(err2 / ref2);
    EXPECT_LE(relative, tol.norm) << "relative Frobenius error " << relative;
    if (r.precision == GemmLtPrecision::kS8) EXPECT_EQ(err2, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(GemmLt, GemmLtTest, ::testing::ValuesIn(kernels::kGemmLtPrecisions),
                         [](const ::testing::TestParamInfo<GemmLtPrecisionRecord>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace gpuprobe
