// Checks the SGEMM variants kept for study (variants.hpp) and the product's kTuned against cuBLAS,
// then times them beside cuBLAS at the sizes given. Run by hand on a GPU:
//
//   build/lab/sgemm_variants/sgemm_variants [--trans=nn|nt|tn|tt] [--warmups=W] [--samples=S]
//                                           [--only=SUBSTRING] [SIZE ...]
//   SIZE: N (m = n = k = N) or MxNxK. No SIZE: the correctness checks only.
//   e.g. sgemm_variants 4096 8192 16384     (about a minute on an H100; most of it at 16384)
//
// Correctness first, every implementation in all four transpositions: alpha = 1, beta = 0, inputs
// uniform in [-1, 1) (never zeros), NaN in the padding rows of A, B and C, and C poisoned with NaN
// before each call, so that an element left unwritten or a product that reads padding fails. The
// reference is cuBLAS DGEMM (pedantic math) on the inputs upcast to double, and on their absolute
// values for the per-element bound |C - ref| <= (k + 2) eps (|op(A)| |op(B)|)_ij of
// tests/gpu/sgemm_test.cu; C's padding rows must still hold NaN. Shapes: 1024^3 (aligned: the 16-byte
// and register-staged copy paths), 1000 x 777 x 1029 with odd leading dimensions (the 4-byte paths,
// edge tiles both ways) and 4200 x 260 x 47 (33 M-tiles: groups of 16, 16 and 1 under the grouped
// rasterization; a k remainder).
//
// Timing: per SIZE and implementation, W untimed calls, then S calls each between two CUDA events on
// the default stream, synchronized after each; the median (lab/experiments/event_median.hpp); TFLOP/s
// on 2mnk. cuBLAS SGEMM with CUBLAS_PEDANTIC_MATH (plain FP32, the like-for-like reference) runs in the
// same process on the same buffers. The implementations run one after another: at sizes that hit the
// power limit (16384 on the H100) the order moves clocks by a few percent, so compare within one run
// and repeat runs to see the spread. SM clocks are not recorded here (gpuprobe's kernels.sgemm entries
// record them for the product's implementations).
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
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "event_median.hpp"  // lab/experiments
#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/sgemm.hpp"
#include "harness/fill.hpp"
#include "variants.hpp"

namespace {

using gpuprobe::CublasHandle;
using gpuprobe::DeviceBuffer;
using gpuprobe::kernels::Status;
using gpuprobe::kernels::Trans;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Impl {
  std::string name;
  gpuprobe::kernels::detail::SgemmLauncher launch;
  std::string what;
  bool check_passed = true;
  std::string first_failure;
};

struct Options {
  Trans ta = Trans::kNoTrans, tb = Trans::kNoTrans;
  int warmups = 2, samples = 10;
  std::string only;
  struct Size {
    int m, n, k;
  };
  std::vector<Size> sizes;
};

constexpr const char* kUsage =
    "usage: sgemm_variants [--trans=nn|nt|tn|tt] [--warmups=W] [--samples=S] [--only=SUBSTRING] [SIZE ...]\n"
    "  SIZE: N (m = n = k = N) or MxNxK; no SIZE: the correctness checks only\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "sgemm_variants: usage error: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

int parse_positive(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v <= 0 || v > 1000000) usage_error(what + ": not a count in 1..1000000: " + text);
  return static_cast<int>(v);
}

char trans_char(Trans t) { return t == Trans::kNoTrans ? 'n' : 't'; }

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::size_t len = std::char_traits<char>::length(flag);
      return a.compare(0, len, flag) == 0 ? a.c_str() + len : nullptr;
    };
    if (const char* v = value("--trans=")) {
      const std::string t = v;
      if (t.size() != 2 || (t[0] != 'n' && t[0] != 't') || (t[1] != 'n' && t[1] != 't'))
        usage_error("--trans: nn, nt, tn or tt, not " + t);
      o.ta = t[0] == 'n' ? Trans::kNoTrans : Trans::kTrans;
      o.tb = t[1] == 'n' ? Trans::kNoTrans : Trans::kTrans;
    } else if (const char* v = value("--warmups=")) {
      o.warmups = parse_positive(v, "--warmups");
    } else if (const char* v = value("--samples=")) {
      o.samples = parse_positive(v, "--samples");
    } else if (const char* v = value("--only=")) {
      o.only = v;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown flag " + a);
    } else {
      std::vector<int> dims;
      std::stringstream ss(a);
      for (std::string part; std::getline(ss, part, 'x');) dims.push_back(parse_positive(part, "SIZE"));
      if (dims.size() == 1) dims = {dims[0], dims[0], dims[0]};
      if (dims.size() != 3) usage_error("SIZE: N or MxNxK, not " + a);
      o.sizes.push_back({dims[0], dims[1], dims[2]});
    }
  }
  return o;
}

// A stored matrix (column-major, ld >= rows) on the host: uniform values in [-1, 1), padding rows NaN.
struct HostMatrix {
  int rows, cols, ld;
  std::vector<float> data;
  HostMatrix(int r, int c, int pad, std::mt19937_64& rng)
      : rows(r), cols(c), ld(std::max(1, r + pad)), data(std::size_t(ld) * c, kNaN) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int j = 0; j < c; ++j)
      for (int i = 0; i < r; ++i) data[std::size_t(j) * ld + i] = u(rng);
  }
  // As doubles (or their absolute values), padding as 0, for the DGEMM reference.
  std::vector<double> upcast(bool absolute) const {
    std::vector<double> out(data.size(), 0.0);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) {
        const double v = data[std::size_t(j) * ld + i];
        out[std::size_t(j) * ld + i] = absolute ? std::fabs(v) : v;
      }
    return out;
  }
};

cublasOperation_t to_cublas(Trans t) { return t == Trans::kNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T; }

struct CheckCase {
  int m, n, k;
  int lda_pad, ldb_pad, ldc_pad;
};

// One shape and transposition: inputs on the device, the DGEMM reference (value and bound scale).
struct CheckProblem {
  CheckCase c;
  Trans ta, tb;
  HostMatrix A, B;
  int ldc;
  DeviceBuffer<float> dA, dB, dC;
  std::vector<double> value, scale;  // m x n, leading dimension m

  CheckProblem(const CheckCase& cc, Trans ta_, Trans tb_, std::mt19937_64& rng, cublasHandle_t handle)
      : c(cc),
        ta(ta_),
        tb(tb_),
        A(ta_ == Trans::kNoTrans ? cc.m : cc.k, ta_ == Trans::kNoTrans ? cc.k : cc.m, cc.lda_pad, rng),
        B(tb_ == Trans::kNoTrans ? cc.k : cc.n, tb_ == Trans::kNoTrans ? cc.n : cc.k, cc.ldb_pad, rng),
        ldc(cc.m + cc.ldc_pad),
        dA(A.data.size()),
        dB(B.data.size()),
        dC(std::size_t(ldc) * cc.n) {
    GP_CUDA_CHECK(cudaMemcpy(dA.data(), A.data.data(), dA.bytes(), cudaMemcpyHostToDevice));
    GP_CUDA_CHECK(cudaMemcpy(dB.data(), B.data.data(), dB.bytes(), cudaMemcpyHostToDevice));
    for (bool absolute : {false, true}) {
      const std::vector<double> a = A.upcast(absolute), b = B.upcast(absolute);
      DeviceBuffer<double> da(a.size()), db(b.size()), dc(std::size_t(c.m) * c.n);
      GP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
      GP_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
      const double one = 1.0, zero = 0.0;
      GP_CUBLAS_CHECK(cublasDgemm(handle, to_cublas(ta), to_cublas(tb), c.m, c.n, c.k, &one, da.data(), A.ld,
                                  db.data(), B.ld, &zero, dc.data(), c.m));
      std::vector<double>& out = absolute ? scale : value;
      out.resize(dc.size());
      GP_CUDA_CHECK(cudaMemcpy(out.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToHost));
    }
  }

  std::string describe() const {
    std::ostringstream s;
    s << trans_char(ta) << trans_char(tb) << " " << c.m << "x" << c.n << "x" << c.k << " (lda " << A.ld << ", ldb "
      << B.ld << ", ldc " << ldc << ")";
    return s.str();
  }

  // Poisons C, runs `impl` and compares; "" when every element is within its bound, else why not.
  std::string check(const Impl& impl, double* worst_ratio) {
    GP_CUDA_CHECK(cudaMemset(dC.data(), 0xFF, dC.bytes()));  // all-ones bit patterns: NaN
    const Status st = gpuprobe::kernels::detail::sgemm_with_launcher(impl.launch, ta, tb, c.m, c.n, c.k, 1.f, dA.data(),
                                                                      A.ld, dB.data(), B.ld, 0.f, dC.data(), ldc,
                                                                      nullptr);
    if (st != Status::kSuccess) return describe() + ": returned " + gpuprobe::kernels::status_text(st);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> out(dC.size());
    GP_CUDA_CHECK(cudaMemcpy(out.data(), dC.data(), dC.bytes(), cudaMemcpyDeviceToHost));
    const double tol = (c.k + 2) * double(FLT_EPSILON);
    long bad = 0, padding_written = 0;
    std::string first;
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < ldc; ++i) {
        const float got = out[std::size_t(j) * ldc + i];
        if (i >= c.m) {
          padding_written += !std::isnan(got);
          continue;
        }
        const double want = value[std::size_t(j) * c.m + i];
        const double bound = tol * scale[std::size_t(j) * c.m + i];
        const double err = std::fabs(double(got) - want);
        if (bound > 0) *worst_ratio = std::max(*worst_ratio, err / bound);
        if (!(err <= bound) && bad++ == 0) {  // NaN fails too
          std::ostringstream s;
          s << "C(" << i << "," << j << ") = " << got << ", reference " << want << ", bound " << bound;
          first = s.str();
        }
      }
    if (bad == 0 && padding_written == 0) return "";
    std::ostringstream s;
    s << describe() << ": " << bad << " elements outside the bound";
    if (bad > 0) s << " (first " << first << ")";
    if (padding_written > 0) s << ", " << padding_written << " written into C's padding rows";
    return s.str();
  }
};

void run_checks(std::vector<Impl>& impls) {
  const CheckCase cases[] = {
      {1024, 1024, 1024, 0, 0, 0},
      {1000, 777, 1029, 3, 0, 5},
      {4200, 260, 47, 1, 3, 2},
  };
  const Trans kN = Trans::kNoTrans, kT = Trans::kTrans;
  const Trans pairs[4][2] = {{kN, kN}, {kN, kT}, {kT, kN}, {kT, kT}};
  CublasHandle handle;
  GP_CUBLAS_CHECK(cublasSetMathMode(handle.get(), CUBLAS_PEDANTIC_MATH));
  std::mt19937_64 rng(0x5eed5eedull);
  std::vector<double> worst(impls.size(), 0.0);
  int problems = 0;
  for (const CheckCase& c : cases)
    for (const auto& t : pairs) {
      CheckProblem p(c, t[0], t[1], rng, handle.get());
      ++problems;
      for (std::size_t i = 0; i < impls.size(); ++i) {
        const std::string failure = p.check(impls[i], &worst[i]);
        if (!failure.empty() && impls[i].check_passed) {
          impls[i].check_passed = false;
          impls[i].first_failure = failure;
        }
      }
    }
  std::printf("correctness (%d shape x transposition problems against cuBLAS DGEMM, C poisoned with NaN):\n",
              problems);
  for (std::size_t i = 0; i < impls.size(); ++i) {
    if (impls[i].check_passed)
      std::printf("  %-34s ok   worst |error| / bound %.3f\n", impls[i].name.c_str(), worst[i]);
    else
      std::printf("  %-34s FAIL %s\n", impls[i].name.c_str(), impls[i].first_failure.c_str());
  }
}

void run_timing(const std::vector<Impl>& impls, const Options& o, const Options::Size& s) {
  const int lda = o.ta == Trans::kNoTrans ? s.m : s.k;
  const int ldb = o.tb == Trans::kNoTrans ? s.k : s.n;
  const int ldc = s.m;
  const std::size_t a_count = std::size_t(lda) * (o.ta == Trans::kNoTrans ? s.k : s.m);
  const std::size_t b_count = std::size_t(ldb) * (o.tb == Trans::kNoTrans ? s.n : s.k);
  const std::size_t c_count = std::size_t(ldc) * s.n;
  DeviceBuffer<float> A(a_count), B(b_count), C(c_count);
  gpuprobe::fill_uniform(A.data(), a_count, 101, -1.f, 1.f);
  gpuprobe::fill_uniform(B.data(), b_count, 202, -1.f, 1.f);
  gpuprobe::fill_uniform(C.data(), c_count, 303, -1.f, 1.f);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  const float alpha = 1.f, beta = 0.f;
  const double flops = 2.0 * s.m * double(s.n) * s.k;

  CublasHandle handle;
  GP_CUBLAS_CHECK(cublasSetMathMode(handle.get(), CUBLAS_PEDANTIC_MATH));
  GP_CUBLAS_CHECK(cublasSetStream(handle.get(), nullptr));
  const float cublas_ms = gpuprobe_experiments::median_event_ms(
      [&] {
        GP_CUBLAS_CHECK(cublasSgemm(handle.get(), to_cublas(o.ta), to_cublas(o.tb), s.m, s.n, s.k, &alpha, A.data(),
                                    lda, B.data(), ldb, &beta, C.data(), ldc));
      },
      o.warmups, o.samples);

  std::vector<float> ms(impls.size());
  for (std::size_t i = 0; i < impls.size(); ++i) {
    ms[i] = gpuprobe_experiments::median_event_ms(
        [&] {
          const Status st = gpuprobe::kernels::detail::sgemm_with_launcher(
              impls[i].launch, o.ta, o.tb, s.m, s.n, s.k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc,
              nullptr);
          if (st != Status::kSuccess)
            throw gpuprobe::Error(impls[i].name + " returned " + gpuprobe::kernels::status_text(st));
        },
        o.warmups, o.samples);
  }

  std::printf("\n%c%c m=%d n=%d k=%d: median of %d samples after %d warm-up calls, CUDA events\n", trans_char(o.ta),
              trans_char(o.tb), s.m, s.n, s.k, o.samples, o.warmups);
  std::printf("  %-34s %10s %8s %9s %12s  %s\n", "impl", "ms", "TFLOP/s", "/ cuBLAS", "/ ours_tuned", "check");
  std::printf("  %-34s %10.3f %8.2f %9s %12s  %s\n", "cublas_pedantic", cublas_ms, flops / (cublas_ms * 1e9), "1.000",
              "", "reference");
  const float tuned_ms = ms[0];  // impls[0] is the product's kTuned
  for (std::size_t i = 0; i < impls.size(); ++i)
    std::printf("  %-34s %10.3f %8.2f %9.3f %12.3f  %s\n", impls[i].name.c_str(), ms[i], flops / (ms[i] * 1e9),
                cublas_ms / ms[i], tuned_ms / ms[i], impls[i].check_passed ? "ok" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "sgemm_variants: no usable GPU: %s\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 2;
  }
  try {
    GP_CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device 0: %s, %d SMs, sm_%d%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);

    // The product's default first (the reference of the "/ ours_tuned" column), then the variants.
    std::vector<Impl> impls;
    const gpuprobe::kernels::SgemmImplRecord* tuned =
        gpuprobe::kernels::sgemm_impl_record(gpuprobe::kernels::SgemmImpl::kTuned);
    impls.push_back({std::string("ours_") + tuned->name, tuned->launch, "the product's 128x128 kernel (kTuned)"});
    // The product's dispatcher and its other tiling, for the rule of sgemm_choose().
    for (const gpuprobe::kernels::SgemmImplRecord& r : gpuprobe::kernels::kSgemmImpls)
      if (r.impl == gpuprobe::kernels::SgemmImpl::kAuto || r.impl == gpuprobe::kernels::SgemmImpl::kSmall)
        impls.push_back({std::string("ours_") + r.name, r.launch, r.description});
    for (const gpuprobe::sgemm_lab::Variant& v : gpuprobe::sgemm_lab::kVariants)
      if (options.only.empty() || std::string(v.name).find(options.only) != std::string::npos)
        impls.push_back({v.name, v.launch, v.what});
    std::printf("implementations (what each changes against ours_tuned):\n");
    for (const Impl& impl : impls) std::printf("  %-34s %s\n", impl.name.c_str(), impl.what.c_str());

    run_checks(impls);
    for (const Options::Size& s : options.sizes) run_timing(impls, options, s);
    const bool all_passed = std::all_of(impls.begin(), impls.end(), [](const Impl& i) { return i.check_passed; });
    if (!all_passed) std::printf("\nsgemm_variants: FAILED: a correctness check failed (above)\n");
    return all_passed ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "sgemm_variants: %s\n", ex.what());
    return 1;
  }
}
