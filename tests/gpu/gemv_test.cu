// GEMV correctness against a higher-precision reference, both transpositions, float and double
// (blas2_test_util.hpp states the bound):
//  - padding rows of A (lda > m) hold NaN; y is NaN-poisoned when beta == 0, random otherwise; gap
//    elements of a strided y hold a sentinel that must survive; the workspace starts as NaN;
//  - increments 1, >1 and negative; 16-byte-load and scalar paths; alpha == 0 with A and x all NaN;
//    m == 0 / n == 0 leave y untouched;
//  - small shapes (GemvSmall, CPU long double reference), square, tall and wide shapes up to 4097
//    (GemvLarge; CPU long double reference and, for float inputs, cuBLAS DGEMV);
//  - every case on every implementation of the library's table (kernels::kGemvImpls: kAuto, v2's split
//    + reduction kernel, v3's single pass, kColumnBlocks' one block per column for T, the row blocks
//    of 64 / 32 bytes of rows for N, their edges in RowBlocksEdges); for v3 the
//    shapes include its narrow (m <= 64), tall (m >= 2^19, few columns) and two-level (> 32
//    segments) paths; its workspace counters are reset by each call (one workspace across calls of
//    several shapes); repeats are bit-identical;
//  - x starts 16-byte aligned in the second case of each shape (kColumnBlocks' 16-byte loads of x),
//    one element past that otherwise; kColumnBlocks' step edges (m around multiples of its 8 KB
//    step, m below one step); kAuto on column blocks for short double columns (300 x 700 T: 2400
//    bytes, v7.2's rule counts bytes of a column).
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "blas2_test_util.hpp"
#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/kernels/gemv.hpp"

namespace gpuprobe {
namespace {

using namespace blas2_test;
using kernels::GemvImpl;
using kernels::Status;
using kernels::Trans;

const Trans kTranses[] = {Trans::kNoTrans, Trans::kTrans};
// Every record of the library's table, kAuto included.
const std::vector<GemvImpl>& impls() {
  static const std::vector<GemvImpl> all = [] {
    std::vector<GemvImpl> v;
    for (const kernels::GemvImplRecord& r : kernels::kGemvImpls) v.push_back(r.impl);
    return v;
  }();
  return all;
}

struct GemvCase {
  int m, n;
  int lda;  // 0: m
  double alpha, beta;
  int incx = 1, incy = 1;
  bool aligned = true;     // A 16-byte aligned
  bool x_aligned = false;  // x 16-byte aligned (else one element past an aligned address)
};

int round_up(int v, int q) { return (v + q - 1) / q * q; }

std::string describe(const GemvCase& c, Trans t, const char* type) {
  std::ostringstream s;
  s << type << (t == Trans::kNoTrans ? " N" : " T") << " m=" << c.m << " n=" << c.n << " lda=" << (c.lda ? c.lda : c.m)
    << " alpha=" << c.alpha << " beta=" << c.beta << " incx=" << c.incx << " incy=" << c.incy
    << (c.aligned ? "" : " unaligned") << (c.x_aligned ? " x aligned" : "");
  return s.str();
}

template <class T>
struct Problem {
  int m, n, lda;
  std::vector<T> A;  // lda x n, padding rows NaN
  HostVector<T> x, y0;
  Problem(const GemvCase& c, Trans t, std::mt19937_64& rng)
      : m(c.m), n(c.n), lda(c.lda ? c.lda : std::max(1, c.m)), A(std::size_t(lda) * std::max(1, c.n), kNaN<T>),
        x(t == Trans::kNoTrans ? c.n : c.m, c.incx, kNaN<T>), y0(t == Trans::kNoTrans ? c.m : c.n, c.incy, T(7.25)) {
    if (c.alpha != 0) {
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) A[std::size_t(j) * lda + i] = uniform<T>(rng);
      x.randomize(rng);
    }
    if (c.beta != 0) y0.randomize(rng);
    else for (int i = 0; i < y0.len; ++i) y0[i] = kNaN<T>;
  }
  double op(int i, int k, Trans t) const {  // op(A)(i, k)
    return t == Trans::kNoTrans ? A[std::size_t(k) * lda + i] : A[std::size_t(i) * lda + k];
  }
};

template <class T>
Reference cpu_reference(const GemvCase& c, Trans t, const Problem<T>& p) {
  const int len = p.y0.len, inner = p.x.len;
  Reference r{std::vector<double>(len), std::vector<double>(len)};
  for (int i = 0; i < len; ++i) {
    long double sum = 0, abs_sum = 0;
    if (c.alpha != 0)
      for (int k = 0; k < inner; ++k) {
        const long double v = static_cast<long double>(p.op(i, k, t)) * p.x[k];
        sum += v;
        abs_sum += std::fabs(v);
      }
    const double y0 = c.beta != 0 ? double(p.y0[i]) : 0.0;
    r.value[i] = static_cast<double>(c.alpha * sum + c.beta * static_cast<long double>(y0));
    r.scale[i] = static_cast<double>(std::fabs(c.alpha) * abs_sum + std::fabs(c.beta * y0));
  }
  return r;
}

template <class T>
Reference cublas_reference(const GemvCase& c, Trans t, const Problem<T>& p) {
  const CublasHandle handle;
  Reference r;
  for (bool absolute : {false, true}) {
    std::vector<double> a(p.A.size(), 0.0), x(p.x.len), y(p.y0.len);
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) {
        const double v = p.A[std::size_t(j) * p.lda + i];
        a[std::size_t(j) * p.lda + i] = absolute ? std::fabs(v) : v;
      }
    for (int i = 0; i < p.x.len; ++i) x[i] = absolute ? std::fabs(double(p.x[i])) : double(p.x[i]);
    for (int i = 0; i < p.y0.len; ++i) {
      const double y0 = c.beta != 0 ? double(p.y0[i]) : 0.0;
      y[i] = absolute ? std::fabs(y0) : y0;
    }
    DeviceBuffer<double> da(a.size()), dx(x.size()), dy(y.size());
    GP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dy.data(), y.data(), dy.bytes(), cudaMemcpyHostToDevice));
    const double alpha = absolute ? std::fabs(c.alpha) : c.alpha, beta = absolute ? std::fabs(c.beta) : c.beta;
    GP_CUBLAS_CHECK(cublasDgemv(handle.get(), t == Trans::kNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T,
                                c.m, c.n, &alpha, da.data(),
                                p.lda, dx.data(), 1, &beta, dy.data(), 1));
    GP_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    (absolute ? r.scale : r.value) = std::move(y);
  }
  return r;
}

// A poisoned workspace prepared for v3 (blas2_test_util.hpp).
struct GemvWorkspace : Workspace {
  explicit GemvWorkspace(std::size_t need) : Workspace(need, kernels::gemv_workspace_init) {}
};

template <class T>
std::vector<T> run_gemv(const GemvCase& c, Trans t, const Problem<T>& p, GemvImpl impl, Workspace* shared = nullptr) {
  DeviceCopy<T> dA(p.A, c.aligned), dx(p.x.data, c.x_aligned), dy(p.y0.data);
  const std::size_t ws_bytes = kernels::gemv_workspace_bytes<T>(t, c.m, c.n, impl);
  std::unique_ptr<GemvWorkspace> own;
  Workspace* ws = shared;
  if (!ws) {
    own = std::make_unique<GemvWorkspace>(ws_bytes);
    ws = own.get();
  }
  EXPECT_GE(ws->bytes, ws_bytes);
  const Status st = kernels::gemv<T>(t, c.m, c.n, T(c.alpha), dA.ptr, p.lda, dx.ptr, c.incx, T(c.beta), dy.ptr,
                                     c.incy, ws->buffer.data(), ws->bytes, nullptr, impl);
  EXPECT_EQ(st, Status::kSuccess) << kernels::status_text(st);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  return dy.download(p.y0.data.size());
}

// Every implementation against one reference per transposition.
template <class T>
void check(const GemvCase& c, bool cublas_ref = false) {
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  for (Trans t : kTranses) {
    std::mt19937_64 rng(fresh_seed());
    const Problem<T> p(c, t, rng);
    const Reference ref = cublas_ref ? cublas_reference(c, t, p) : cpu_reference(c, t, p);
    for (GemvImpl impl : impls()) {
      SCOPED_TRACE(describe(c, t, type) + " impl=" + kernels::gemv_impl_name(impl) +
                   (cublas_ref ? " (cuBLAS DGEMV reference)" : ""));
      expect_close(p.y0, run_gemv(c, t, p, impl), ref, p.x.len);
    }
  }
}

std::vector<GemvCase> cases_for(int m, int n, bool all_variants) {
  std::vector<GemvCase> cases;
  cases.push_back({m, n, 0, 1.0, 0.0});
  cases.push_back({m, n, round_up(m, 4) + 4, -1.5, 0.5, 1, 1, true, true});
  if (all_variants) {
    cases.push_back({m, n, m + 3, 0.75, -1.0, 2, 3, false});
    cases.push_back({m, n, m + 1, 1.0, 1.0, -1, -2});
  }
  return cases;
}

template <class T>
class GemvSmall : public ::testing::Test {};
template <class T>
class GemvLarge : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemvSmall, Types);
TYPED_TEST_SUITE(GemvLarge, Types);

TYPED_TEST(GemvSmall, MatchesCpuReference) {
  // {300, 700}: T columns of 2400 bytes in double, where kAuto runs column blocks since v7.2 (more
  // than 2048 bytes a column, >= 512 columns; a column shorter than one 8 KB step), 1200 in float (v2).
  const int shapes[][2] = {{1, 1},   {2, 3},   {31, 64}, {63, 65},   {64, 127},
                           {127, 31}, {65, 2}, {3, 300}, {200, 200}, {300, 700}};
  for (const auto& s : shapes)
    for (const GemvCase& c : cases_for(s[0], s[1], true)) check<TypeParam>(c);
}

TYPED_TEST(GemvSmall, ColumnBlocksStepEdges) {
  // kColumnBlocks' block step is 8 KB of a column (1024 doubles, 2048 floats) below 8192 rows: whole steps only
  // (1024, 2048, 4096; 1024 float: half a step), a row past them (1025, 2049), a row short (1023,
  // 2047), 2 rows past (2050: one double vector, half a float vector); lda as cases_for makes it.
  // From 8192 rows the step is 16 KB (2048 doubles, 4096 floats): 8192 whole steps, 8193 a row past,
  // 12287 a row short of the last double step, 12290 a partial float vector.
  const int shapes[][2] = {{1024, 5}, {1025, 3},  {1023, 4},  {2048, 3},  {2047, 2},  {2049, 6},
                           {2050, 3}, {4096, 2},  {8192, 3},  {8193, 2},  {12287, 3}, {12290, 2}};
  for (const auto& s : shapes)
    for (const GemvCase& c : cases_for(s[0], s[1], true)) check<TypeParam>(c);
}

TYPED_TEST(GemvSmall, RowBlocksEdges) {
  // kRowBlocks: 64 bytes of rows a block (16 float / 8 double), kRowBlocksSector 32 (8 / 4); a block
  // step is 512 (256) columns x 8. m: one row, a block less / more one row, two blocks and a row;
  // n: a step less one column, a whole step, a step and one, two steps for either variant.
  const int shapes[][2] = {{1, 513},  {7, 512},   {9, 511},   {15, 1024}, {17, 1025},
                           {33, 257}, {31, 2049}, {8, 2048},  {16, 3},    {4, 1}};
  for (const auto& s : shapes)
    for (const GemvCase& c : cases_for(s[0], s[1], true)) check<TypeParam>(c);
}

TYPED_TEST(GemvSmall, AlphaZeroReadsNeitherAnorX) {
  check<TypeParam>({65, 70, 68, 0.0, 2.0});
  check<TypeParam>({65, 70, 68, 0.0, 0.0});
  check<TypeParam>({70, 65, 72, 0.0, -1.0, 1, -3});
}

TYPED_TEST(GemvSmall, EmptyProblemLeavesYUntouched) {
  // Reference BLAS: m == 0 or n == 0 returns at once, y is not scaled by beta.
  for (GemvImpl impl : impls())
    for (Trans t : kTranses) {
      const std::vector<TypeParam> host(8, TypeParam(3));
      DeviceCopy<TypeParam> dy(host), dA(host), dx(host);
      const int m = t == Trans::kNoTrans ? 8 : 0, n = t == Trans::kNoTrans ? 0 : 8;
      EXPECT_EQ(kernels::gemv<TypeParam>(t, m, n, TypeParam(1), dA.ptr, 8, dx.ptr, 1, TypeParam(0), dy.ptr, 1, nullptr,
                                         0, nullptr, impl),
                Status::kSuccess);
      GP_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(dy.download(8), host) << kernels::gemv_impl_name(impl);
    }
}

TYPED_TEST(GemvLarge, MatchesCpuReference) {
  // {100, 40000} N: one unit, > 32 segments (v3: two levels); {524365, 9}: v3's tall N shape (>= 1024
  // of its 512 / 256-row units, the last one partial) and, for T, > 32 segments.
  // v3's deep shapes (one kernel over whole rows / columns, the last 32-output unit partial): {4097,
  // 4097} deep T and deep N in 512-thread blocks (129 units); {6200, 2100} deep N (194 units),
  // {3100, 2100} deep N in 512-thread blocks (97 units) and {2100, 3100} deep T (97 units), the last
  // three with every variant (lda > m, strided and negative increments, beta != 0).
  const int shapes[][2] = {{1000, 1000}, {4097, 4097}, {4097, 65},   {65, 4097},   {20000, 40},  {40, 20000},
                           {1000, 3},    {100, 40000}, {524365, 9}, {6200, 2100}, {3100, 2100}, {2100, 3100}};
  for (const auto& s : shapes) {
    const bool all_variants = (s[0] == 1000 && s[1] == 1000) || s[0] == 6200 || s[0] == 3100 || s[1] == 3100;
    for (const GemvCase& c : cases_for(s[0], s[1], all_variants)) check<TypeParam>(c);
  }
}

TEST(GemvLargeCublas, FloatMatchesCublasDgemv) {
  check<float>({4097, 4097, 4097, 1.0, 0.0}, true);
  check<float>({3000, 2000, 3004, -0.5, 2.0}, true);
  // v3's tall N blocks on a large matrix (from 32768 x 8192: many segments, two-level sums); 1 GiB.
  check<float>({32768, 8192, 32768, 0.75, 0.0}, true);
}

TEST(GemvLargeDeterminism, RepeatedCallsAreBitIdentical) {
  const GemvCase c{3000, 3000, 3000, 1.0, 0.0};
  for (Trans t : kTranses)
    for (GemvImpl impl : impls()) {
      std::mt19937_64 rng(fresh_seed());
      const Problem<float> p(c, t, rng);
      // v3: the second call reuses the first one's workspace (its counters reset by the first call).
      GemvWorkspace ws(kernels::gemv_workspace_bytes<float>(t, c.m, c.n, impl));
      const std::vector<float> a = run_gemv(c, t, p, impl, &ws), b = run_gemv(c, t, p, impl, &ws);
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
          << (t == Trans::kNoTrans ? "N " : "T ") << kernels::gemv_impl_name(impl);
    }
}

TEST(GemvSinglePassWorkspace, CountersResetAcrossCallsAndShapes) {
  // One workspace, prepared once, for a sequence of calls of different shapes (one- and two-level
  // splits, both transpositions), twice over: each call must leave the counters at zero. With kAuto
  // (and the v2 impl in between) the sequence switches between v2, v3 and column blocks: v2's
  // partials must not land on v3's counters.
  const int shapes[][2] = {{1000, 1000}, {40, 20000}, {4097, 65}, {100, 40000}, {65, 4097}};
  const GemvImpl used[] = {GemvImpl::kSinglePass, GemvImpl::kAuto, GemvImpl::kSplitReduce};
  std::size_t need = 0;
  for (const auto& s : shapes)
    for (Trans t : kTranses)
      for (GemvImpl impl : used) need = std::max(need, kernels::gemv_workspace_bytes<double>(t, s[0], s[1], impl));
  ASSERT_GT(need, 0u);
  GemvWorkspace ws(need);
  for (int round = 0; round < 2; ++round)
    for (const auto& s : shapes)
      for (Trans t : kTranses)
        for (GemvImpl impl : used) {
          const GemvCase c{s[0], s[1], 0, 1.0, 0.5};
          SCOPED_TRACE(describe(c, t, "double") + " " + kernels::gemv_impl_name(impl) + " round " +
                       std::to_string(round));
          std::mt19937_64 rng(fresh_seed());
          const Problem<double> p(c, t, rng);
          expect_close(p.y0, run_gemv(c, t, p, impl, &ws), cpu_reference(c, t, p), p.x.len);
        }
}

}  // namespace
}  // namespace gpuprobe
