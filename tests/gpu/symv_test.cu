// SYMV correctness against a higher-precision reference, for every implementation of the library's
// table (kernels::kSymvImpls), both storage triangles, float and double (blas2_test_util.hpp states
// the bound; the study variants are checked by lab/blas2_variants):
//  - the unstored triangle and the padding rows of A (lda > n) hold NaN: reading them fails;
//  - y is NaN-poisoned when beta == 0 (BLAS: y is not read), random otherwise; gap elements of a
//    strided y hold a sentinel that must survive; the workspace starts as NaN, or holds what a
//    sequence of calls of other sizes and impls left in it (it may hold anything);
//  - increments 1, >1 and negative; leading dimensions that allow 16-byte loads and ones that do not;
//  - alpha == 0 with A and x all NaN (neither may be read);
//  - n in {1, 2, 31, 63, 64, 65, 127, 200, 256, 257, 300, 511} (suite SymvSmall, CPU long double reference) and
//    {1000, 2500, 4097} (SymvLarge; CPU long double reference and, for float inputs, cuBLAS DSYMV).
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "blas2_test_util.hpp"
#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/kernels/symv.hpp"

namespace gpuprobe {
namespace {

using namespace blas2_test;
using kernels::Status;
using kernels::SymvImpl;
using kernels::Uplo;

// Every record of the library's table, kAuto included.
const std::vector<SymvImpl>& impls() {
  static const std::vector<SymvImpl> all = [] {
    std::vector<SymvImpl> v;
    for (const kernels::SymvImplRecord& r : kernels::kSymvImpls) v.push_back(r.impl);
    return v;
  }();
  return all;
}
const Uplo kUplos[] = {Uplo::kLower, Uplo::kUpper};

struct SymvCase {
  int n;
  int lda;  // 0: n
  double alpha, beta;
  int incx = 1, incy = 1;
  bool aligned = true;  // A's pointer 16-byte aligned (with lda % 4 == 0: the vector-load path)
};

int round_up(int v, int m) { return (v + m - 1) / m * m; }

std::string describe(const SymvCase& c, Uplo uplo, SymvImpl impl, const char* type) {
  std::ostringstream s;
  s << type << " " << kernels::symv_impl_name(impl) << (uplo == Uplo::kLower ? " lower" : " upper") << " n=" << c.n
    << " lda=" << (c.lda ? c.lda : c.n) << " alpha=" << c.alpha << " beta=" << c.beta << " incx=" << c.incx
    << " incy=" << c.incy << (c.aligned ? "" : " unaligned");
  return s.str();
}

template <class T>
struct Problem {
  int n, lda;
  std::vector<T> A;  // lda x n, stored triangle random, the rest NaN
  HostVector<T> x, y0;
  Problem(const SymvCase& c, Uplo uplo, std::mt19937_64& rng)
      : n(c.n), lda(c.lda ? c.lda : std::max(1, c.n)), A(std::size_t(lda) * c.n, kNaN<T>),
        x(c.n, c.incx, kNaN<T>), y0(c.n, c.incy, T(7.25)) {
    const bool read = c.alpha != 0;
    if (read) {
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (uplo == Uplo::kLower ? i >= j : i <= j) A[std::size_t(j) * lda + i] = uniform<T>(rng);
      x.randomize(rng);
    }
    if (c.beta != 0) y0.randomize(rng);
    else for (int i = 0; i < n; ++i) y0[i] = kNaN<T>;
  }
  double a(int i, int j, Uplo uplo) const {  // the symmetric matrix from its stored triangle
    const bool stored = uplo == Uplo::kLower ? i >= j : i <= j;
    return stored ? A[std::size_t(j) * lda + i] : A[std::size_t(i) * lda + j];
  }
};

template <class T>
Reference cpu_reference(const SymvCase& c, Uplo uplo, const Problem<T>& p) {
  Reference r{std::vector<double>(c.n), std::vector<double>(c.n)};
  for (int i = 0; i < c.n; ++i) {
    long double sum = 0, abs_sum = 0;
    if (c.alpha != 0)
      for (int j = 0; j < c.n; ++j) {
        const long double t = static_cast<long double>(p.a(i, j, uplo)) * p.x[j];
        sum += t;
        abs_sum += std::fabs(t);
      }
    const double y0 = c.beta != 0 ? double(p.y0[i]) : 0.0;
    r.value[i] = static_cast<double>(c.alpha * sum + c.beta * static_cast<long double>(y0));
    r.scale[i] = static_cast<double>(std::fabs(c.alpha) * abs_sum + std::fabs(c.beta * y0));
  }
  return r;
}

// cuBLAS DSYMV on the upcast inputs (unstored triangle as 0), twice: the value, and on absolute
// values for the bound's scale.
template <class T>
Reference cublas_reference(const SymvCase& c, Uplo uplo, const Problem<T>& p) {
  const CublasHandle handle;
  Reference r;
  for (bool absolute : {false, true}) {
    std::vector<double> a(p.A.size(), 0.0), x(c.n), y(c.n);
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.n; ++i)
        if (uplo == Uplo::kLower ? i >= j : i <= j) {
          const double v = p.A[std::size_t(j) * p.lda + i];
          a[std::size_t(j) * p.lda + i] = absolute ? std::fabs(v) : v;
        }
    for (int i = 0; i < c.n; ++i) {
      x[i] = absolute ? std::fabs(double(p.x[i])) : double(p.x[i]);
      const double y0 = c.beta != 0 ? double(p.y0[i]) : 0.0;
      y[i] = absolute ? std::fabs(y0) : y0;
    }
    DeviceBuffer<double> da(a.size()), dx(x.size()), dy(y.size());
    GP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dy.data(), y.data(), dy.bytes(), cudaMemcpyHostToDevice));
    const double alpha = absolute ? std::fabs(c.alpha) : c.alpha, beta = absolute ? std::fabs(c.beta) : c.beta;
    GP_CUBLAS_CHECK(cublasDsymv(handle.get(),
                                uplo == Uplo::kLower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, c.n,
                                &alpha, da.data(), p.lda, dx.data(), 1, &beta, dy.data(), 1));
    GP_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    (absolute ? r.scale : r.value) = std::move(y);
  }
  return r;
}

// A poisoned workspace (blas2_test_util.hpp); SYMV's needs no preparation.
struct SymvWorkspace : Workspace {
  explicit SymvWorkspace(std::size_t need)
      : Workspace(need, [](void*, std::size_t, cudaStream_t) { return Status::kSuccess; }) {}
};

// Runs one call on fresh device copies and a fresh NaN-filled workspace, or
// on the caller's `shared` workspace as the previous calls left it; returns y's buffer afterwards.
template <class T>
std::vector<T> run_symv(const SymvCase& c, Uplo uplo, SymvImpl impl, const Problem<T>& p,
                        SymvWorkspace* shared = nullptr) {
  DeviceCopy<T> dA(p.A, c.aligned), dx(p.x.data), dy(p.y0.data);
  const std::size_t ws_bytes = kernels::symv_workspace_bytes<T>(c.n, impl);
  std::unique_ptr<SymvWorkspace> own;
  SymvWorkspace* ws = shared;
  if (!ws) {
    own = std::make_unique<SymvWorkspace>(ws_bytes);
    ws = own.get();
  }
  EXPECT_GE(ws->bytes, ws_bytes);
  const Status st = kernels::symv<T>(uplo, c.n, T(c.alpha), dA.ptr, p.lda, dx.ptr, c.incx, T(c.beta), dy.ptr, c.incy,
                                     ws->buffer.data(), ws->bytes, nullptr, impl);
  EXPECT_EQ(st, Status::kSuccess) << kernels::status_text(st);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  return dy.download(p.y0.data.size());
}

template <class T>
void check(const SymvCase& c, bool cublas_ref = false) {
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  for (Uplo uplo : kUplos) {
    std::mt19937_64 rng(fresh_seed());
    const Problem<T> p(c, uplo, rng);
    const Reference ref = cublas_ref ? cublas_reference(c, uplo, p) : cpu_reference(c, uplo, p);
    for (SymvImpl impl : impls()) {
      SCOPED_TRACE(describe(c, uplo, impl, type) + (cublas_ref ? " (cuBLAS DSYMV reference)" : ""));
      expect_close(p.y0, run_symv(c, uplo, impl, p), ref, c.n);
    }
  }
}

std::vector<SymvCase> cases_for(int n, bool all_variants) {
  std::vector<SymvCase> cases;
  cases.push_back({n, 0, 1.0, 0.0});                                  // lda = n, beta = 0 (y poisoned)
  cases.push_back({n, round_up(n, 4) + 4, -1.5, 0.5});                // lda > n, 16-byte loads
  cases.push_back({n, n + 3, 0.75, -1.0, 2, 3, false});               // strided, unaligned A
  if (all_variants) cases.push_back({n, n + 1, 1.0, 1.0, -1, -2});    // negative increments
  return cases;
}

template <class T>
class SymvSmall : public ::testing::Test {};
template <class T>
class SymvLarge : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SymvSmall, Types);
TYPED_TEST_SUITE(SymvLarge, Types);

TYPED_TEST(SymvSmall, MatchesCpuReference) {
  for (int n : {1, 2, 31, 63, 64, 65, 127, 200})
    for (const SymvCase& c : cases_for(n, true)) check<TypeParam>(c);
}

// v6 units span 4 (float) / 2 (double) block rows, v5's 4: whole and partial last groups, a band split
// across segments (n = 300: 5 block rows, segments of 2), interior and edge block columns.
TYPED_TEST(SymvSmall, MatchesCpuReferenceAcrossV3Groups) {
  for (int n : {256, 257, 300, 511})
    for (const SymvCase& c : cases_for(n, n == 300)) check<TypeParam>(c);
}

TYPED_TEST(SymvSmall, AlphaZeroReadsNeitherAnorX) {
  check<TypeParam>({65, 70, 0.0, 2.0});   // y = 2 y; A and x all NaN
  check<TypeParam>({65, 70, 0.0, 0.0});   // y = 0; y poisoned too
  check<TypeParam>({65, 70, 0.0, -1.0, 1, -3});
}

TYPED_TEST(SymvLarge, MatchesCpuReference) {
  for (int n : {1000, 2500, 4097})
    for (const SymvCase& c : cases_for(n, n == 1000)) check<TypeParam>(c);
}

TEST(SymvLargeCublas, FloatMatchesCublasDsymv) {
  check<float>({4097, 4097, 1.0, 0.0}, true);
  check<float>({2048, 2052, -0.5, 2.0, 1, 1}, true);
}

// Same inputs twice: bit-identical y for the deterministic implementations (every record without
// atomic partials).
TEST(SymvLargeDeterminism, RepeatedCallsAreBitIdentical) {
  const SymvCase c{3000, 3000, 1.0, 0.0};
  for (Uplo uplo : kUplos) {
    std::mt19937_64 rng(fresh_seed());
    const Problem<float> p(c, uplo, rng);
    for (SymvImpl impl : impls()) {
      if (kernels::symv_impl_record(impl)->atomics) continue;
      SCOPED_TRACE(describe(c, uplo, impl, "float"));
      // The second call finds the first one's partials in the workspace.
      SymvWorkspace ws(kernels::symv_workspace_bytes<float>(c.n, impl));
      const std::vector<float> a = run_symv(c, uplo, impl, p, &ws), b = run_symv(c, uplo, impl, p, &ws);
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
    }
  }
}

TEST(SymvLargeWorkspace, OneBufferServesEveryImplAndSizeInTurn) {
  // One workspace for a sequence of calls of different sizes, triangles and impls, twice over: each
  // call finds the others' partials in it, and must neither read them nor depend on them.
  const int sizes[] = {1000, 65, 4097, 300, 2048};
  // Row partials only (oblivious), row and column-dot partials in groups of 2 and 4 block rows (v6, v5
  // in double), and kAuto.
  const SymvImpl used[] = {SymvImpl::kAuto, SymvImpl::kOblivious, SymvImpl::kAwareV5, SymvImpl::kAwareV6};
  std::size_t need = 0;
  for (int n : sizes)
    for (SymvImpl impl : used) need = std::max(need, kernels::symv_workspace_bytes<double>(n, impl));
  SymvWorkspace ws(need);
  for (int round = 0; round < 2; ++round)
    for (int n : sizes)
      for (SymvImpl impl : used)
        for (Uplo uplo : kUplos) {
          const SymvCase c{n, n, 1.0, 0.5};
          SCOPED_TRACE(describe(c, uplo, impl, "double") + " round " + std::to_string(round));
          std::mt19937_64 rng(fresh_seed());
          const Problem<double> p(c, uplo, rng);
          expect_close(p.y0, run_symv(c, uplo, impl, p, &ws), cpu_reference(c, uplo, p), c.n);
        }
}

}  // namespace
}  // namespace gpuprobe
