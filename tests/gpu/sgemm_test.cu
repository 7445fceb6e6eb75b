// SGEMM correctness against a higher-precision reference, for every implementation and all four
// transpositions: double on the CPU for small shapes (suite SgemmSmall, also run under
// compute-sanitizer), cuBLAS DGEMM on the upcast inputs for large ones (SgemmLarge). Full names are
// Sgemm/SgemmSmall.<test>/<impl>, so --gtest_filter='Sgemm*' selects them all.
//
// Every check draws fresh random inputs in [-1, 1) (never zeros) and
//  - fills the padding rows of A, B and C (ld > rows) with NaN: a kernel that reads A's or B's padding
//    into a product, or writes into C's padding, fails;
//  - poisons C with NaN before the call when beta == 0 (BLAS: C is not read) and puts random values
//    in C otherwise, so an element left unwritten fails either way;
//  - bounds each element by |C - ref| <= (k + 2) eps (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|),
//    the classical dot-product error bound with eps = 2u (a factor 2 of margin), and the whole matrix
//    by ||C - ref||_F <= 2 sqrt(k + 1) eps ||ref||_F (random rounding errors add up like sqrt(k)).
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/sgemm.hpp"
#include "harness/arch.hpp"

namespace gpuprobe {
namespace {

using kernels::SgemmImpl;
using kernels::Status;
using kernels::Trans;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr Trans kN = Trans::kNoTrans;
constexpr Trans kT = Trans::kTrans;

// Every implementation of the library, from its one table (kernels::kSgemmImpls).
std::vector<SgemmImpl> all_impls() {
  std::vector<SgemmImpl> impls;
  for (const kernels::SgemmImplRecord& record : kernels::kSgemmImpls) impls.push_back(record.impl);
  return impls;
}
const Trans kTransPairs[4][2] = {{kN, kN}, {kN, kT}, {kT, kN}, {kT, kT}};

struct GemmCase {
  int m, n, k;
  int lda_pad = 0, ldb_pad = 0, ldc_pad = 0;  // extra rows beyond the stored matrix's rows
  float alpha = 1.f, beta = 0.f;
  int a_offset = 0, b_offset = 0, c_offset = 0;  // elements: 1 makes the pointer not 16-byte aligned
  bool nan_in_a_and_b = false;                  // alpha == 0 cases: A and B must not be read
};

std::string describe(const GemmCase& c, Trans ta, Trans tb, SgemmImpl impl) {
  std::ostringstream s;
  s << kernels::sgemm_impl_name(impl) << " " << (ta == kN ? 'n' : 't') << (tb == kN ? 'n' : 't') << " m=" << c.m
    << " n=" << c.n << " k=" << c.k << " pads=" << c.lda_pad << "," << c.ldb_pad << "," << c.ldc_pad
    << " alpha=" << c.alpha << " beta=" << c.beta << " offsets=" << c.a_offset << "," << c.b_offset << ","
    << c.c_offset;
  return s.str();
}

// A stored matrix (column-major, ld >= rows) on the host, padding rows set to NaN.
struct HostMatrix {
  int rows = 0, cols = 0, ld = 1;
  std::vector<float> data;
  HostMatrix(int r, int c, int pad, std::mt19937_64& rng, bool all_nan = false)
      : rows(r), cols(c), ld(std::max(1, r + pad)), data(std::size_t(ld) * c, kNaN) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    if (all_nan) return;
    for (int j = 0; j < c; ++j)
      for (int i = 0; i < r; ++i) data[std::size_t(j) * ld + i] = u(rng);
  }
  float at(int i, int j) const { return data[std::size_t(j) * ld + i]; }
};

// Device copy at an element offset from a 256-byte aligned allocation.
struct DeviceMatrix {
  DeviceBuffer<float> buffer;
  float* ptr;
  DeviceMatrix(const std::vector<float>& host, int offset) : buffer(host.size() + offset + 1) {
    ptr = buffer.data() + offset;
    GP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));  // NaN bit patterns around it
    if (!host.empty()) GP_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
};

// Reference C and the per-element bound's scale |alpha| |op(A)| |op(B)| + |beta| |C0|, in double.
struct Reference {
  std::vector<double> value, scale;  // m x n, leading dimension m
};

double op_at(const HostMatrix& x, Trans t, int i, int j) { return t == kN ? x.at(i, j) : x.at(j, i); }

Reference cpu_reference(const GemmCase& c, Trans ta, Trans tb, const HostMatrix& A, const HostMatrix& B,
                        const HostMatrix& C0) {
  Reference r{std::vector<double>(std::size_t(c.m) * c.n), std::vector<double>(std::size_t(c.m) * c.n)};
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.m; ++i) {
      double sum = 0, abs_sum = 0;
      if (c.alpha != 0.f)
        for (int l = 0; l < c.k; ++l) {
          const double p = op_at(A, ta, i, l) * op_at(B, tb, l, j);
          sum += p;
          abs_sum += std::fabs(p);
        }
      const double c0 = c.beta != 0.f ? C0.at(i, j) : 0.0;
      r.value[std::size_t(j) * c.m + i] = double(c.alpha) * sum + double(c.beta) * c0;
      r.scale[std::size_t(j) * c.m + i] = std::fabs(double(c.alpha)) * abs_sum + std::fabs(double(c.beta) * c0);
    }
  return r;
}

// cuBLAS DGEMM on upcast inputs (padding as 0 in the double copies), twice: the value, and on the
// absolute values for the bound. Pedantic math: no emulation, no reduced precision.
Reference gpu_reference(const GemmCase& c, Trans ta, Trans tb, const HostMatrix& A, const HostMatrix& B,
                        const HostMatrix& C0) {
  auto upcast = [](const HostMatrix& x, bool absolute) {
    std::vector<double> out(x.data.size(), 0.0);
    for (int j = 0; j < x.cols; ++j)
      for (int i = 0; i < x.rows; ++i) {
        const double v = x.at(i, j);
        out[std::size_t(j) * x.ld + i] = absolute ? std::fabs(v) : v;
      }
    return out;
  };
  const CublasHandle handle;
  GP_CUBLAS_CHECK(cublasSetMathMode(handle.get(), CUBLAS_PEDANTIC_MATH));
  Reference r;
  for (bool absolute : {false, true}) {
    const std::vector<double> a = upcast(A, absolute), b = upcast(B, absolute);
    std::vector<double> c0(std::size_t(c.m) * c.n, 0.0);
    if (c.beta != 0.f)
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) c0[std::size_t(j) * c.m + i] = absolute ? std::fabs(C0.at(i, j)) : C0.at(i, j);
    DeviceBuffer<double> da(a.size()), db(b.size()), dc(c0.size());
    GP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dc.data(), c0.data(), dc.bytes(), cudaMemcpyHostToDevice));
    const double alpha = absolute ? std::fabs(double(c.alpha)) : c.alpha;
    const double beta = absolute ? std::fabs(double(c.beta)) : c.beta;
    GP_CUBLAS_CHECK(cublasDgemm(handle.get(), ta == kN ? CUBLAS_OP_N : CUBLAS_OP_T,
                                tb == kN ? CUBLAS_OP_N : CUBLAS_OP_T, c.m,
                                c.n, c.k, &alpha, da.data(), A.ld, db.data(), B.ld, &beta, dc.data(), c.m));
    GP_CUDA_CHECK(cudaMemcpy(c0.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToHost));
    (absolute ? r.scale : r.value) = std::move(c0);
  }
  return r;
}

// Runs one case and returns C as the kernel left it (ldc x n, padding included).
std::vector<float> run_sgemm(const GemmCase& c, Trans ta, Trans tb, SgemmImpl impl, const HostMatrix& A,
                             const HostMatrix& B, const HostMatrix& C0) {
  DeviceMatrix dA(A.data, c.a_offset), dB(B.data, c.b_offset);
  // beta == 0: C is poisoned (all NaN) and must not be read; else C0 with NaN padding.
  const std::vector<float> c_init = c.beta == 0.f ? std::vector<float>(C0.data.size(), kNaN) : C0.data;
  DeviceMatrix dC(c_init, c.c_offset);
  const Status st =
      kernels::sgemm(ta, tb, c.m, c.n, c.k, c.alpha, dA.ptr, A.ld, dB.ptr, B.ld, c.beta, dC.ptr, C0.ld, nullptr, impl);
  EXPECT_EQ(st, Status::kSuccess) << kernels::status_text(st);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(C0.data.size());
  GP_CUDA_CHECK(cudaMemcpy(out.data(), dC.ptr, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

void check_case(const GemmCase& c, Trans ta, Trans tb, SgemmImpl impl, std::uint64_t seed, bool gpu_ref) {
  SCOPED_TRACE(describe(c, ta, tb, impl));
  std::mt19937_64 rng(seed);
  const HostMatrix A(ta == kN ? c.m : c.k, ta == kN ? c.k : c.m, c.lda_pad, rng, c.nan_in_a_and_b);
  const HostMatrix B(tb == kN ? c.k : c.n, tb == kN ? c.n : c.k, c.ldb_pad, rng, c.nan_in_a_and_b);
  const HostMatrix C0(c.m, c.n, c.ldc_pad, rng);
  const std::vector<float> out = run_sgemm(c, ta, tb, impl, A, B, C0);
  const Reference ref = gpu_ref ? gpu_reference(c, ta, tb, A, B, C0) : cpu_reference(c, ta, tb, A, B, C0);

  const double tol = (c.k + 2) * double(FLT_EPSILON);
  long bad = 0, padding_written = 0;
  double err2 = 0, scale2 = 0, worst = 0;
  std::string first_bad;
  for (int j = 0; j < c.n; ++j) {
    for (int i = 0; i < C0.ld; ++i) {
      const float got = out[std::size_t(j) * C0.ld + i];
      if (i >= c.m) {  // padding row: must still hold its NaN
        padding_written += !std::isnan(got);
        continue;
      }
      const double want = ref.value[std::size_t(j) * c.m + i];
      const double bound = tol * ref.scale[std::size_t(j) * c.m + i];
      const double err = std::fabs(double(got) - want);
      if (!(err <= bound)) {  // NaN fails too
        if (bad++ == 0) {
          std::ostringstream s;
          s << "C(" << i << "," << j << ") = " << got << ", reference " << want << ", bound " << bound;
          first_bad = s.str();
        }
      }
      if (bound > 0) worst = std::max(worst, err / bound);
      err2 += err * err;
      scale2 += ref.scale[std::size_t(j) * c.m + i] * ref.scale[std::size_t(j) * c.m + i];
    }
  }
  EXPECT_EQ(bad, 0) << bad << " elements outside the bound; first: " << first_bad;
  EXPECT_EQ(padding_written, 0) << "elements written into C's padding rows";
  // Normwise, against the same scale (|alpha| |op(A)| |op(B)| + |beta| |C| per element) rather than |C|:
  // relative to C itself a result with cancellation (C = A B + beta C near 0; 1 x 1 x 1 with beta = 0.5
  // on the H100 of 2026-11-23: 4.3e-7 against a bound of 3.4e-7, element error 0.07 of its bound)
  // can exceed any bound without a wrong kernel.
  const double rel_fro = scale2 > 0 ? std::sqrt(err2 / scale2) : std::sqrt(err2);
  EXPECT_LE(rel_fro, 2.0 * std::sqrt(c.k + 1.0) * FLT_EPSILON) << "worst error / bound = " << worst;
}

std::uint64_t fresh_seed() {
  static std::uint64_t counter = 0x5eed;
  return ++counter * 0x9E3779B97F4A7C15ull;
}

// Shapes for the CPU reference: 1, 7, 31, 33, 127, 129; m != n != k; lda > m; aligned leading
// dimensions (16-byte copies) with partial 4-element chunks; unaligned pointers (4-byte copies);
// several k-tiles (pipeline wrap-around); k = 0; alpha = 0 with NaN in A and B.
std::vector<GemmCase> small_cases() {
  std::vector<GemmCase> cases;
  for (float beta : {0.f, 0.5f}) {
    cases.push_back({1, 1, 1, 0, 0, 0, 1.f, beta});
    cases.push_back({7, 7, 7, 0, 0, 0, -1.5f, beta});
    cases.push_back({31, 33, 7, 3, 1, 2, 1.f, beta});
    cases.push_back({33, 31, 129, 0, 5, 0, 0.75f, beta});
    cases.push_back({127, 129, 31, 1, 0, 3, 1.f, beta});
    cases.push_back({129, 127, 33, 7, 2, 1, 2.f, beta});
    cases.push_back({128, 256, 80, 0, 0, 0, 1.f, beta});   // whole tiles, 16-byte paths
    cases.push_back({258, 130, 50, 2, 2, 2, 1.f, beta});   // ld = 260 / 132 / 52: aligned, partial chunks
    cases.push_back({140, 260, 64, 4, 4, 4, 1.f, beta, 1, 1, 1});  // unaligned pointers: 4-byte paths
    cases.push_back({65, 300, 17, 0, 0, 0, 1.f, beta});
  }
  cases.push_back({40, 50, 0, 0, 0, 0, 1.f, 0.5f});   // k = 0: C = beta C
  cases.push_back({40, 50, 0, 0, 0, 0, 1.f, 0.f});    // k = 0, beta = 0: C = 0, C not read
  GemmCase no_read{70, 90, 30, 0, 0, 0, 0.f, -2.f};   // alpha = 0: A and B (all NaN) not read
  no_read.nan_in_a_and_b = true;
  cases.push_back(no_read);
  return cases;
}

// Why this GPU cannot launch `impl` ("" when it can): the tuned kernel's shared memory exceeds sm_86/89/120's
// 99 KB per block (docs/architectures.md), where gpuprobe leaves it out too.
std::string impl_unavailable_here(SgemmImpl impl) {
  int device = 0, optin = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return smem_budget_unavailable(kernels::sgemm_dynamic_smem_bytes(impl), static_cast<std::size_t>(optin));
}

class SgemmSmall : public ::testing::TestWithParam<SgemmImpl> {};

TEST_P(SgemmSmall, MatchesCpuDoubleReferenceAllTranspositions) {
  if (const std::string why = impl_unavailable_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
  for (const GemmCase& c : small_cases())
    for (const auto& t : kTransPairs) check_case(c, t[0], t[1], GetParam(), fresh_seed(), false);
}

std::string impl_param_name(const ::testing::TestParamInfo<SgemmImpl>& info) {
  std::string s = kernels::sgemm_impl_name(info.param);
  for (char& ch : s)
    if (ch == '_') ch = 'X';  // gtest parameter names: alphanumerics only
  return s;
}

INSTANTIATE_TEST_SUITE_P(Sgemm, SgemmSmall, ::testing::ValuesIn(all_impls()), impl_param_name);

class SgemmLarge : public ::testing::TestWithParam<SgemmImpl> {};

TEST_P(SgemmLarge, MatchesCublasDgemmReference) {
  if (const std::string why = impl_unavailable_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
  const std::vector<GemmCase> cases = {
      {1000, 1000, 1000, 0, 0, 0, 1.f, 0.f},
      {1000, 777, 1029, 3, 0, 5, -0.5f, 1.25f},
      {1024, 1024, 1024, 4, 4, 4, 1.f, 0.f},   // aligned: the 16-byte copy paths at size
      {2049, 515, 333, 1, 2, 3, 1.f, 0.5f},
      // More than one group of 16 M-tile rows for kTuned's grouped rasterization:
      // 40 M tiles = groups of 16, 16 and 8; 33 M tiles = 16, 16 and a one-row group, edge tiles both ways.
      {5000, 300, 64, 0, 0, 0, 1.f, 0.f},
      {4200, 260, 47, 1, 3, 2, 1.f, 0.5f},
      // kAuto's shapes (sgemm_choose on 132 SMs): split-k 4 (512^3), 8 with a k remainder and an empty last
      // split (33 k-tiles in 8 splits of 5: 5 x 6 + 3 + 0), 2; kTuned at 4097 (edge tiles on every side,
      // odd leading dimensions: the 4-byte copy paths).
      {512, 512, 512, 0, 0, 0, 1.f, 0.f},
      {200, 150, 1029, 1, 0, 3, 1.f, 0.5f},
      {600, 700, 300, 0, 1, 0, -1.f, 0.f},
      {4097, 4097, 4097, 0, 0, 0, 1.f, 0.f},
  };
  for (const GemmCase& c : cases)
    for (const auto& t : kTransPairs) check_case(c, t[0], t[1], GetParam(), fresh_seed(), true);
}

INSTANTIATE_TEST_SUITE_P(Sgemm, SgemmLarge, ::testing::ValuesIn(all_impls()), impl_param_name);

// The same inputs twice give bit-identical C: no race, no dependence on scheduling.
// Split-k too (256 x 256 x 4096: 16 tiles of 64 x 64, split 8 ways where the GPU runs split-k): its
// partial tiles are summed in rank order, not by atomics.
TEST(SgemmLargeDeterminism, RepeatedCallsAreBitIdentical) {
  for (const GemmCase& c : {GemmCase{1500, 1300, 1100}, GemmCase{256, 256, 4096}}) {
    for (SgemmImpl impl : all_impls()) {
      SCOPED_TRACE(kernels::sgemm_choice_name(kernels::sgemm_choice(impl, c.m, c.n, c.k)));
      if (!impl_unavailable_here(impl).empty()) continue;
      std::mt19937_64 rng(fresh_seed());
      const HostMatrix A(c.m, c.k, 0, rng), B(c.k, c.n, 0, rng), C0(c.m, c.n, 0, rng);
      const std::vector<float> first = run_sgemm(c, kN, kN, impl, A, B, C0);
      const std::vector<float> second = run_sgemm(c, kN, kN, impl, A, B, C0);
      ASSERT_EQ(first.size(), second.size());
      EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace gpuprobe
