// Checks the SYMV variants kept for study (variants.hpp) and every implementation of the product's
// table (kernels::kSymvImpls) against a long double reference, then times them beside cuBLAS at the
// sizes given. Run by hand on a GPU:
//
//   build/lab/blas2_variants/blas2_variants [--precision=s|d|sd] [--warmups=W] [--samples=S]
//                                           [--only=SUBSTRING] [N ...]
//   N: the order of a lower-triangle SYMV to time; no N: the correctness checks only.
//   e.g. blas2_variants 4096 16384 32768
//
// Correctness first, every implementation, float and double, both triangles: A's stored triangle and
// x uniform in [-1, 1) (never zeros); the unstored triangle, the padding rows (lda > n) and the gaps
// of a strided x hold NaN; y holds NaN when beta == 0 (BLAS: y is not read), random values otherwise,
// and its gaps (incy != 1) a sentinel that must survive; the workspace is filled with NaN before
// each call. n in {1, 2, 31, 63, 64, 65, 127, 200, 256, 257, 300, 511, 1000, 2500, 4097}: a
// partial tile, whole and partial last groups of block rows, a band split across segments (300);
// per n: lda = n with alpha = 1, beta = 0; lda a multiple of 16 bytes above n with a 16-byte aligned
// A (the vector loads), alpha = -1.5, beta = 0.5; lda = n + 3 with A one element past an aligned
// address (the scalar loads), incx = 2, incy = 3; lda = n + 1, incx = -1, incy = -2 (reference BLAS's
// negative increments). Also alpha = 0 with A and x all NaN (neither may be read). The reference
// is computed in long double on the CPU; every element of y must be within
//     |y_i - ref_i| <= 2 sqrt(n + 2) eps (|alpha| (|A| |x|)_i + |beta y0_i|)
// (tests/gpu/blas2_test_util.hpp's bound), and the gaps of a strided y must hold what they held. A
// host self-test first shows that this comparison fails an element off, a NaN, a written gap and an
// untouched y. Deterministic implementations are called twice on the same inputs and workspace
// (n = 3000, float): y must be bit-identical.
//
// Timing: per N and precision, lower triangle, lda = n, alpha = 1, beta = 0: W untimed calls, then S
// calls each between two CUDA events on the default stream, synchronized after each; the median
// (lab/experiments/event_median.hpp); GB/s on SYMV's minimal bytes (the stored triangle + x + y,
// kernels/kernel_descriptors.hpp). The L2 is not flushed: where the triangle exceeds the L2 (the
// line says so) a call reads it from DRAM anyway, below that the figure is L2-resident.
// cuBLAS SYMV (atomics not allowed, its default) runs in the same process on the same buffers.
// The implementations run one after another: compare within one run, and repeat runs to see the
// spread. gpuprobe's kernels.symv entries are the product's reference figures.
//
// Exit: 0 when every check passed, 1 when a check or a CUDA / cuBLAS call failed, 2 on a usage error
// or without a usable GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "event_median.hpp"  // lab/experiments
#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv.hpp"
#include "harness/fill.hpp"
#include "symv_internal.cuh"  // kernels/src
#include "variants.hpp"

namespace {

namespace gk = gpuprobe::kernels;
using gk::Status;
using gk::SymvImpl;
using gk::Uplo;
using gpuprobe::CublasHandle;
using gpuprobe::DeviceBuffer;

// One implementation under test: a product record (run through kernels::symv with its SymvImpl) or a
// lab variant (run through kernels::detail::symv_with_launch with its launchers: the same argument
// path).
struct Impl {
  std::string name;
  std::string what;
  SymvImpl product = SymvImpl::kEnd;                      // a product record's, else kEnd
  const gk::detail::SymvLaunchers* launchers = nullptr;   // a lab variant's
  bool deterministic = true;
  bool check_passed = true;
  std::string first_failure;
  double worst_ratio = 0;  // the largest |error| / bound seen

  template <class T>
  std::size_t workspace_bytes(int n) const {
    return launchers ? launchers->of<T>().workspace_bytes(n) : gk::symv_workspace_bytes<T>(n, product);
  }
  template <class T>
  Status run(Uplo uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy, void* ws,
             std::size_t ws_bytes) const {
    if (launchers)
      return gk::detail::symv_with_launch<T>(launchers->of<T>(), uplo, n, alpha, A, lda, x, incx, beta, y, incy, ws,
                                             ws_bytes, nullptr);
    return gk::symv<T>(uplo, n, alpha, A, lda, x, incx, beta, y, incy, ws, ws_bytes, nullptr, product);
  }
  void fail(const std::string& why) {
    if (check_passed) first_failure = why;
    check_passed = false;
  }
};

struct Options {
  bool single = true, dbl = true;
  int warmups = 3, samples = 20;
  std::string only;
  std::vector<int> sizes;
};

constexpr const char* kUsage =
    "usage: blas2_variants [--precision=s|d|sd] [--warmups=W] [--samples=S] [--only=SUBSTRING] [N ...]\n"
    "  N: the order of a lower-triangle SYMV to time; no N: the correctness checks only\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "blas2_variants: usage error: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

int parse_positive(const std::string& text, const std::string& what, long max) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v <= 0 || v > max)
    usage_error(what + ": not a count in 1.." + std::to_string(max) + ": " + text);
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::size_t len = std::strlen(flag);
      return a.compare(0, len, flag) == 0 ? a.c_str() + len : nullptr;
    };
    if (const char* v = value("--precision=")) {
      const std::string p = v;
      if (p != "s" && p != "d" && p != "sd") usage_error("--precision: s, d or sd, not " + p);
      o.single = p.find('s') != std::string::npos;
      o.dbl = p.find('d') != std::string::npos;
    } else if (const char* v = value("--warmups=")) {
      o.warmups = parse_positive(v, "--warmups", 100000);
    } else if (const char* v = value("--samples=")) {
      o.samples = parse_positive(v, "--samples", 100000);
    } else if (const char* v = value("--only=")) {
      o.only = v;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown flag " + a);
    } else {
      o.sizes.push_back(parse_positive(a, "N", 65536));
    }
  }
  return o;
}

template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
template <class T>
constexpr const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

template <class T>
T uniform(std::mt19937_64& rng) {
  return static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
}

// A BLAS vector of `len` elements with increment `inc` (negative allowed: element 0 at the far end,
// as in reference BLAS) in a buffer of 1 + (len - 1) |inc| elements, gaps holding `gap`.
template <class T>
struct HostVector {
  int len, inc;
  std::vector<T> data;
  HostVector(int n, int increment, T gap)
      : len(n), inc(increment), data(n > 0 ? 1 + std::size_t(n - 1) * std::size_t(std::abs(increment)) : 1, gap) {}
  std::size_t index(int i) const {
    return inc > 0 ? std::size_t(i) * inc : std::size_t(len - 1 - i) * std::size_t(-inc);
  }
  T& operator[](int i) { return data[index(i)]; }
  T operator[](int i) const { return data[index(i)]; }
};

// Host data on the device, `offset` elements past a 16-byte aligned address (cudaMalloc's), the
// rest of the buffer NaN.
template <class T>
struct DeviceCopy {
  DeviceBuffer<T> buffer;
  T* ptr;
  DeviceCopy(const std::vector<T>& host, int offset) : buffer(host.size() + 32 / sizeof(T)) {
    ptr = buffer.data() + offset;
    GP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
    GP_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download(std::size_t count) const {
    std::vector<T> out(count);
    GP_CUDA_CHECK(cudaMemcpy(out.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
};

struct Case {
  int n, lda;
  double alpha, beta;
  int incx, incy;
  bool aligned;  // A 16-byte aligned (else one element past)
};

std::string describe(const Case& c, Uplo uplo, const char* type) {
  std::ostringstream s;
  s << type << (uplo == Uplo::kLower ? " lower" : " upper") << " n=" << c.n << " lda=" << c.lda << " alpha=" << c.alpha
    << " beta=" << c.beta << " incx=" << c.incx << " incy=" << c.incy << (c.aligned ? "" : " A unaligned");
  return s.str();
}

// One problem: inputs (poisoned where they must not be read), the long double reference and the
// bound's scale.
template <class T>
struct Problem {
  Case c;
  Uplo uplo;
  std::vector<T> A;  // lda x n: the stored triangle random, the rest NaN
  HostVector<T> x, y0;
  std::vector<double> value, scale;

  Problem(const Case& cc, Uplo u, std::mt19937_64& rng)
      : c(cc), uplo(u), A(std::size_t(cc.lda) * cc.n, kNaN<T>), x(cc.n, cc.incx, kNaN<T>), y0(cc.n, cc.incy, T(7.25)) {
    const bool read = c.alpha != 0;  // alpha == 0: A and x stay NaN (neither may be read)
    if (read) {
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.n; ++i)
          if (stored(i, j)) A[std::size_t(j) * c.lda + i] = uniform<T>(rng);
      for (int i = 0; i < c.n; ++i) x[i] = uniform<T>(rng);
    }
    for (int i = 0; i < c.n; ++i) y0[i] = c.beta != 0 ? uniform<T>(rng) : kNaN<T>;
    value.resize(c.n);
    scale.resize(c.n);
    for (int i = 0; i < c.n; ++i) {
      long double sum = 0, abs_sum = 0;
      if (read)
        for (int j = 0; j < c.n; ++j) {
          const long double t = static_cast<long double>(a(i, j)) * x[j];
          sum += t;
          abs_sum += std::fabs(t);
        }
      const long double y = c.beta != 0 ? static_cast<long double>(y0[i]) : 0.0L;
      value[i] = static_cast<double>(c.alpha * sum + c.beta * y);
      scale[i] = static_cast<double>(std::fabs(c.alpha) * abs_sum + std::fabs(c.beta * y));
    }
  }
  bool stored(int i, int j) const { return uplo == Uplo::kLower ? i >= j : i <= j; }
  T a(int i, int j) const { return stored(i, j) ? A[std::size_t(j) * c.lda + i] : A[std::size_t(i) * c.lda + j]; }

  // Runs `impl` on fresh device copies and a NaN-filled workspace (or `shared`, as earlier calls
  // left it); returns y's buffer afterwards, or an empty vector if the call was refused.
  std::vector<T> run(const Impl& impl, DeviceBuffer<unsigned char>* shared, std::string* error) const {
    DeviceCopy<T> dA(A, c.aligned ? 0 : 1), dx(x.data, 0), dy(y0.data, 0);
    const std::size_t need = impl.workspace_bytes<T>(c.n);
    DeviceBuffer<unsigned char> own;
    DeviceBuffer<unsigned char>* ws = shared;
    if (!ws) {
      own = DeviceBuffer<unsigned char>(std::max<std::size_t>(need, 16));
      GP_CUDA_CHECK(cudaMemset(own.data(), 0xFF, own.bytes()));  // NaN in every partial
      ws = &own;
    }
    const Status st = impl.run<T>(uplo, c.n, T(c.alpha), dA.ptr, c.lda, dx.ptr, c.incx, T(c.beta), dy.ptr, c.incy,
                                  ws->data(), ws->bytes());
    if (st != Status::kSuccess) {
      *error = std::string("returned ") + gk::status_text(st);
      return {};
    }
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    return dy.download(y0.data.size());
  }

  // "" when every element of y is within its bound and the gaps of y are untouched, else why not.
  std::string compare(const std::vector<T>& got_buffer, double* worst_ratio) const {
    const double tol = 2.0 * std::sqrt(c.n + 2.0) * (std::is_same_v<T, float> ? FLT_EPSILON : DBL_EPSILON);
    HostVector<T> got = y0;
    got.data = got_buffer;
    long bad = 0, gaps_written = 0;
    std::string first;
    std::vector<char> is_element(got.data.size(), 0);
    for (int i = 0; i < c.n; ++i) {
      is_element[got.index(i)] = 1;
      const double err = std::fabs(double(got[i]) - value[i]), bound = tol * scale[i];
      if (!(err <= bound)) {  // NaN fails too
        if (bad++ == 0) {
          std::ostringstream s;
          s << "y[" << i << "] = " << got[i] << ", reference " << value[i] << ", bound " << bound;
          first = s.str();
        }
      } else if (bound > 0) {
        *worst_ratio = std::max(*worst_ratio, err / bound);
      }
    }
    for (std::size_t k = 0; k < got.data.size(); ++k)
      if (!is_element[k] && std::memcmp(&got.data[k], &y0.data[k], sizeof(T)) != 0) ++gaps_written;
    if (bad == 0 && gaps_written == 0) return "";
    std::ostringstream s;
    s << bad << " of " << c.n << " elements outside the bound";
    if (bad > 0) s << " (first " << first << ")";
    if (gaps_written > 0) s << ", " << gaps_written << " gap elements of y written";
    return s.str();
  }
};

int round_up(int v, int m) { return (v + m - 1) / m * m; }

std::vector<Case> cases_for(int n) {
  std::vector<Case> cases;
  cases.push_back({n, n, 1.0, 0.0, 1, 1, true});
  cases.push_back({n, round_up(n, 4) + 4, -1.5, 0.5, 1, 1, true});
  cases.push_back({n, n + 3, 0.75, -1.0, 2, 3, false});
  if (n <= 1000) cases.push_back({n, n + 1, 1.0, 1.0, -1, -2, true});
  return cases;
}

template <class T>
int check_precision(std::vector<Impl>& impls, std::mt19937_64& rng) {
  std::vector<Case> cases;
  for (int n : {1, 2, 31, 63, 64, 65, 127, 200, 256, 257, 300, 511, 1000, 2500, 4097})
    for (const Case& c : cases_for(n)) cases.push_back(c);
  cases.push_back({65, 70, 0.0, 2.0, 1, 1, true});   // alpha = 0: y = 2 y, A and x all NaN
  cases.push_back({65, 70, 0.0, 0.0, 1, -3, true});  // y = 0, y poisoned too
  int problems = 0;
  for (const Case& c : cases)
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
      const Problem<T> p(c, uplo, rng);
      ++problems;
      for (Impl& impl : impls) {
        std::string error;
        const std::vector<T> y = p.run(impl, nullptr, &error);
        if (error.empty()) error = p.compare(y, &impl.worst_ratio);
        if (!error.empty()) impl.fail(describe(c, uplo, type_name<T>()) + ": " + error);
      }
    }
  return problems;
}

// The deterministic implementations twice on the same inputs and workspace: bit-identical y.
void check_repeats(std::vector<Impl>& impls, std::mt19937_64& rng) {
  const Case c{3000, 3000, 1.0, 0.0, 1, 1, true};
  for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
    const Problem<float> p(c, uplo, rng);
    for (Impl& impl : impls) {
      if (!impl.deterministic) continue;
      DeviceBuffer<unsigned char> ws(std::max<std::size_t>(impl.workspace_bytes<float>(c.n), 16));
      GP_CUDA_CHECK(cudaMemset(ws.data(), 0xFF, ws.bytes()));
      std::string error;
      const std::vector<float> a = p.run(impl, &ws, &error);
      const std::vector<float> b = error.empty() ? p.run(impl, &ws, &error) : std::vector<float>{};
      if (error.empty() && (a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0))
        error = "two calls on the same inputs differ";
      if (!error.empty()) impl.fail(describe(c, uplo, "float") + " repeated: " + error);
    }
  }
}

// The comparison's own check, on the host (no GPU needed): y set to the reference (rounded to T)
// passes, and each error the checks are there to catch fails it: one element off, a NaN, a written
// gap of a strided y, y left as it was. Empty when all is as it should be, else what went wrong.
template <class T>
std::string self_test() {
  std::mt19937_64 rng(7);
  for (const Case& c : {Case{65, 70, -1.5, 0.5, 1, 3, false}, Case{300, 300, 1.0, 0.0, 1, 1, true}})
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
      const Problem<T> p(c, uplo, rng);
      const std::string where = describe(c, uplo, type_name<T>()) + ": ";
      HostVector<T> y = p.y0;
      for (int i = 0; i < c.n; ++i) y[i] = static_cast<T>(p.value[i]);
      double worst = 0;
      if (!p.compare(y.data, &worst).empty()) return where + "the reference itself fails: " + p.compare(y.data, &worst);
      HostVector<T> off = y;
      off[c.n / 2] = static_cast<T>(p.value[c.n / 2] + 1e-3 * (1.0 + p.scale[c.n / 2]));
      if (p.compare(off.data, &worst).empty()) return where + "an element off by 1e-3 passes";
      HostVector<T> nan = y;
      nan[0] = kNaN<T>;
      if (p.compare(nan.data, &worst).empty()) return where + "a NaN passes";
      if (c.incy != 1) {
        HostVector<T> gap = y;
        gap.data[1] = T(0);  // between elements 0 and 1
        if (p.compare(gap.data, &worst).empty()) return where + "a written gap passes";
      }
      if (p.compare(p.y0.data, &worst).empty()) return where + "y left as it was passes";
    }
  return "";
}

cublasStatus_t cublas_symv(cublasHandle_t h, int n, const float* alpha, const float* A, const float* x,
                           const float* beta, float* y) {
  return cublasSsymv(h, CUBLAS_FILL_MODE_LOWER, n, alpha, A, n, x, 1, beta, y, 1);
}
cublasStatus_t cublas_symv(cublasHandle_t h, int n, const double* alpha, const double* A, const double* x,
                           const double* beta, double* y) {
  return cublasDsymv(h, CUBLAS_FILL_MODE_LOWER, n, alpha, A, n, x, 1, beta, y, 1);
}

template <class T>
void run_timing(const std::vector<Impl>& impls, const Options& o, int n, long long l2_bytes) {
  const std::size_t count = std::size_t(n) * n;
  DeviceBuffer<T> A(count), x(n), y(n);
  gpuprobe::fill_uniform(A.data(), count, 101, T(-1), T(1));
  gpuprobe::fill_uniform(x.data(), n, 202, T(-1), T(1));
  gpuprobe::fill_uniform(y.data(), n, 303, T(-1), T(1));
  std::size_t ws_bytes = 16;
  for (const Impl& impl : impls) ws_bytes = std::max(ws_bytes, impl.workspace_bytes<T>(n));
  DeviceBuffer<unsigned char> ws(ws_bytes);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  const T alpha = 1, beta = 0;
  const double bytes = gk::symv_min_bytes(n, sizeof(T), false);
  const double triangle = 0.5 * double(n) * (n + 1) * sizeof(T);

  CublasHandle handle;
  GP_CUBLAS_CHECK(cublasSetStream(handle.get(), nullptr));
  GP_CUBLAS_CHECK(cublasSetAtomicsMode(handle.get(), CUBLAS_ATOMICS_NOT_ALLOWED));
  const float cublas_ms = gpuprobe_experiments::median_event_ms(
      [&] { GP_CUBLAS_CHECK(cublas_symv(handle.get(), n, &alpha, A.data(), x.data(), &beta, y.data())); }, o.warmups,
      o.samples);
  std::vector<float> ms(impls.size());
  for (std::size_t i = 0; i < impls.size(); ++i)
    ms[i] = gpuprobe_experiments::median_event_ms(
        [&] {
          const Status st =
              impls[i].run<T>(Uplo::kLower, n, alpha, A.data(), n, x.data(), 1, beta, y.data(), 1, ws.data(), ws_bytes);
          if (st != Status::kSuccess) throw gpuprobe::Error(impls[i].name + " returned " + gk::status_text(st));
        },
        o.warmups, o.samples);

  std::printf("\n%s lower n=%d: triangle %.1f MB %s the L2 (%.1f MB); median of %d samples after %d warm-up calls\n",
              type_name<T>(), n, triangle / 1e6, triangle > double(l2_bytes) ? "exceeds" : "fits in", l2_bytes / 1e6,
              o.samples, o.warmups);
  std::printf("  %-24s %10s %8s %9s %8s  %s\n", "impl", "us", "GB/s", "/ cuBLAS", "/ ours", "check");
  std::printf("  %-24s %10.2f %8.1f %9s %8s  %s\n", "cublas", cublas_ms * 1e3, bytes / (cublas_ms * 1e6), "1.000", "",
              "reference");
  const float ours_ms = ms[0];  // impls[0] is the product's default
  for (std::size_t i = 0; i < impls.size(); ++i)
    std::printf("  %-24s %10.2f %8.1f %9.3f %8.3f  %s\n", impls[i].name.c_str(), ms[i] * 1e3, bytes / (ms[i] * 1e6),
                cublas_ms / ms[i], ours_ms / ms[i], impls[i].check_passed ? "ok" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  for (const std::string& failure : {self_test<float>(), self_test<double>()})
    if (!failure.empty()) {
      std::fprintf(stderr, "blas2_variants: the comparison's self-test failed: %s\n", failure.c_str());
      return 1;
    }
  std::printf("comparison self-test (host): ok\n");
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "blas2_variants: no usable GPU: %s\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 2;
  }
  try {
    GP_CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device 0: %s, %d SMs, sm_%d%d, L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.major,
                prop.minor, prop.l2CacheSize);

    // The product's table first (its default, impl ours, the reference of the "/ ours" column), then
    // the variants.
    std::vector<Impl> impls;
    auto wanted = [&](const std::string& name) {
      return options.only.empty() || name == "ours" || name.find(options.only) != std::string::npos;
    };
    for (const gk::SymvImplRecord& r : gk::kSymvImpls)
      if (wanted(r.entry)) {
        Impl impl;
        impl.name = r.entry;
        impl.what = std::string("product: ") + r.description;
        impl.product = r.impl;
        impl.deterministic = !r.atomics;
        impls.push_back(impl);
      }
    for (const gpuprobe::blas2_lab::SymvVariant& v : gpuprobe::blas2_lab::kSymvVariants)
      if (wanted(v.name)) {
        Impl impl;
        impl.name = v.name;
        impl.what = v.what;
        impl.launchers = &v.launchers;
        impl.deterministic = v.deterministic;
        impls.push_back(impl);
      }
    std::printf("SYMV implementations (variants: what each changes against ours_aware_v6):\n");
    for (const Impl& impl : impls) std::printf("  %-24s %s\n", impl.name.c_str(), impl.what.c_str());

    std::mt19937_64 rng(0x5eed5eedull);
    int problems = 0;
    if (options.single) problems += check_precision<float>(impls, rng);
    if (options.dbl) problems += check_precision<double>(impls, rng);
    check_repeats(impls, rng);
    std::printf("correctness (%d problems against a long double reference, poisoned inputs, y and workspace; "
                "repeats bit-identical):\n",
                problems);
    for (const Impl& impl : impls) {
      if (impl.check_passed)
        std::printf("  %-24s ok   worst |error| / bound %.3f\n", impl.name.c_str(), impl.worst_ratio);
      else
        std::printf("  %-24s FAIL %s\n", impl.name.c_str(), impl.first_failure.c_str());
    }

    for (int n : options.sizes) {
      if (options.single) run_timing<float>(impls, options, n, prop.l2CacheSize);
      if (options.dbl) run_timing<double>(impls, options, n, prop.l2CacheSize);
    }
    const bool all_passed = std::all_of(impls.begin(), impls.end(), [](const Impl& i) { return i.check_passed; });
    if (!all_passed) std::printf("\nblas2_variants: FAILED: a correctness check failed (above)\n");
    return all_passed ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "blas2_variants: %s\n", ex.what());
    return 1;
  }
}
