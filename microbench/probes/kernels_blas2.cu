// SYMV and GEMV benchmarks: our kernels against cuBLAS, same run, same inputs, float and double.
// Families kernels.symv and kernels.gemv; value_* is GB/s on minimal bytes (kernel_descriptors.hpp:
// the stored triangle for SYMV, whatever the implementation reads), GFLOP/s beside it.
//
// Implementations: every record of the library's tables (kernels::kSymvImpls, kernels::kGemvImpls) as
// impl:<record.entry> -- ours (the default, kAuto; the entry's impl_resolved tag says which record ran),
// then the records kAuto chooses between and SYMV's baselines, each at the transpositions it has a kernel
// of its own for (GEMV column blocks T only, row blocks N only) -- then cuBLAS: cublas (cublasXsymv /
// cublasXgemv; SYMV with atomics off, cuBLAS's default) and, for SYMV, cublas_atomics
// (cublasSetAtomicsMode ALLOWED). One call per sample: alpha = 1, beta = 0 (y not read), x and A random
// in [-1, 1). Families paired.symv and paired.gemv: two impls timed in the same samples (one call of each,
// alternating which goes first), value_* = A's speedup over B; for the short calls and near-1.0 ratios that
// separate entries cannot settle (docs/probes.md, "Paired entries").
//
// L2: when the minimal bytes exceed the L2 the figure is meant for DRAM, and the L2 is flushed before
// every sample (l2=flushed); otherwise the data stays in the L2 between samples and the figure is
// an L2-resident one (l2=resident). The same rule for every impl at a shape.
#include <cublas_v2.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/gemv.hpp"
#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/settle.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

using kernels::GemvImpl;
using kernels::SymvImpl;
using kernels::Trans;
using kernels::Uplo;

// The benchmark name of a record of ours (impl:<entry>).
constexpr const char* entry_of(SymvImpl impl) { return kernels::symv_impl_record(impl)->entry; }
constexpr const char* entry_of(GemvImpl impl) { return kernels::gemv_impl_record(impl)->entry; }

// Sampling. A problem whose minimal bytes fit in the L2 (l2=resident, no flush) is a 5-30 us call
// on the H100, launch-bound: with 2 warm-up calls and 10 samples its figure moved by up to 20 %
// between runs of the same code, and the first entry on a problem's operands (`entry_on_operands`
// 0, always `ours`) drew the outliers: S N 512 x 512 GEMV read 0.79x, 0.99x and 1.18x of cuBLAS in
// three runs of 2026-11-25 (samples 11.8-121.8 GB/s, CV 0.49, in the last; docs/perf/gemv.md).
// So: warm up for at least 2 ms of calls (a few hundred of them; a DRAM-sized call, >= 25 us,
// still gets its 2), and take 50 samples of resident problems (about 1 ms); DRAM-sized ones keep 10.
constexpr double kBlas2MinWarmupSeconds = 2e-3;
constexpr int kResidentSamples = 50;
// Whether a problem's minimal bytes fit in the L2: it is then timed L2-resident, else flushed.
bool l2_resident(double min_bytes) { return min_bytes <= static_cast<double>(context().device.l2_bytes); }
int blas2_samples(double min_bytes) { return l2_resident(min_bytes) ? kResidentSamples : 0; }  // 0: the descriptor's

// The records' axes and fields. A call describes itself (SymvCall/GemvCall::describe) with its fields
// under a prefix: none in the single entries, a_ and b_ in the paired ones.
std::vector<Field> call_fields(const std::string& prefix) {
  return {text_field(prefix + "impl_resolved"), text_field(prefix + "atomics"),
          numeric_field(prefix + "workspace_bytes", "bytes"), numeric_field(prefix + "cublas_version", "version")};
}
std::vector<Field> blas2_fields(std::vector<Field> calls) {
  calls.push_back(text_field("l2"));
  calls.push_back(numeric_field("entry_on_operands", "entries"));
  return calls;
}
std::vector<Field> paired_fields() {
  std::vector<Field> f = call_fields("a_"), b = call_fields("b_");
  f.insert(f.end(), b.begin(), b.end());
  f.push_back(text_field("a_impl"));
  f.push_back(text_field("b_impl"));
  return blas2_fields(f);
}
Axis precision_axis() { return text_axis("precision", AxisRole::kGroup); }
// The compute ceiling of each precision's work (the entries' precision: precision_name<T>()).
std::vector<std::pair<std::string, std::string>> blas2_compute() { return {{"s", "FP32"}, {"d", "FP64"}}; }

const ProbeDescriptor& kSymvDescriptor = declare_family(
    ProbeDescriptor{"kernels.symv", Figure::kBandwidth,
                    "one y = alpha A x + beta y (A symmetric, one triangle stored, column-major, lda = n, alpha = 1, "
                    "beta = 0) per sample, timed with CUDA events; bytes = minimal (stored triangle n(n+1)/2 + x + "
                    "y); flops = 2n^2",
                    "", 10, 2, kBlas2MinWarmupSeconds}
        .titled("SYMV: ours vs cuBLAS")
        .with_axes({text_axis("impl", AxisRole::kGroup), precision_axis(), text_axis("uplo", AxisRole::kGroup),
                    numeric_axis("n", "rows", AxisRole::kX)})
        .with_fields(blas2_fields(call_fields("")))
        .computing_by_precision(blas2_compute()));

const ProbeDescriptor& kGemvDescriptor = declare_family(
    ProbeDescriptor{"kernels.gemv", Figure::kBandwidth,
                    "one y = alpha op(A) x + beta y (column-major, lda = m, alpha = 1, beta = 0) per sample, timed "
                    "with CUDA events; bytes = minimal (A + x + y); flops = 2mn",
                    "", 10, 2, kBlas2MinWarmupSeconds}
        .titled("GEMV: ours vs cuBLAS")
        .with_axes({text_axis("impl", AxisRole::kGroup), precision_axis(), text_axis("trans", AxisRole::kGroup),
                    numeric_axis("m", "rows", AxisRole::kFixed), numeric_axis("n", "columns", AxisRole::kX)})
        .with_fields(blas2_fields(call_fields("")))
        .computing_by_precision(blas2_compute()));

// Paired entries (Measurement::time_events_paired): A and B timed in the same samples, alternating
// which goes first; the value is A's speedup over B. For the comparisons that separate entries cannot
// settle: calls of ~10 us (L2-resident problems), and ratios within a few per cent of 1.
const ProbeDescriptor& kSymvPairedDescriptor = declare_family(
    ProbeDescriptor{"paired.symv", Figure::kValue,
                    "A's speedup over B (B's time / A's time) per sample; a sample = one call of each on the same "
                    "operands and stream, timed with CUDA events, A first in even samples and B first in odd ones; "
                    "A = one SYMV (as kernels.symv: lda = n, alpha = 1, beta = 0), B = another SYMV impl or our "
                    "GEMV on the full n x n buffer; gbps = A's on SYMV's minimal bytes",
                    "x", 30, 2, kBlas2MinWarmupSeconds}
        .titled("SYMV pairs timed in the same samples")
        .with_axes({text_axis("a", AxisRole::kGroup), text_axis("b", AxisRole::kGroup), precision_axis(),
                    text_axis("uplo", AxisRole::kGroup), numeric_axis("n", "rows", AxisRole::kX)})
        .with_fields(paired_fields())
        .computing_by_precision(blas2_compute()));
const ProbeDescriptor& kGemvPairedDescriptor = declare_family(
    ProbeDescriptor{"paired.gemv", Figure::kValue,
                    "A's speedup over B (B's time / A's time) per sample; a sample = one call of each on the same "
                    "operands and stream, timed with CUDA events, A first in even samples and B first in odd ones; "
                    "one GEMV each (as kernels.gemv: lda = m, alpha = 1, beta = 0); gbps = A's on minimal bytes",
                    "x", 30, 2, kBlas2MinWarmupSeconds}
        .titled("GEMV pairs timed in the same samples")
        .with_axes({text_axis("a", AxisRole::kGroup), text_axis("b", AxisRole::kGroup), precision_axis(),
                    text_axis("trans", AxisRole::kGroup), numeric_axis("m", "rows", AxisRole::kFixed),
                    numeric_axis("n", "columns", AxisRole::kX)})
        .with_fields(paired_fields())
        .computing_by_precision(blas2_compute()));

// What an entry times: one of our implementations (a record of the library's table, entry impl
// record.entry) or cuBLAS; the one place where an impl name turns into what runs.
enum class Runner { kOurs, kCublas, kCublasAtomics };
struct SymvBenchInfo {
  const char* name;  // the entry's impl
  Runner runner;
  const kernels::SymvImplRecord* ours;  // for Runner::kOurs
};
struct GemvBenchInfo {
  const char* name;  // the entry's impl
  Runner runner;
  const kernels::GemvImplRecord* ours;  // for Runner::kOurs
};

// Every record of the library's table in table order (kAuto, "ours", first), then cuBLAS.
const std::vector<SymvBenchInfo>& symv_bench_impls() {
  static const std::vector<SymvBenchInfo> impls = [] {
    std::vector<SymvBenchInfo> v;
    for (const kernels::SymvImplRecord& r : kernels::kSymvImpls) v.push_back({r.entry, Runner::kOurs, &r});
    v.push_back({"cublas", Runner::kCublas, nullptr});
    v.push_back({"cublas_atomics", Runner::kCublasAtomics, nullptr});
    return v;
  }();
  return impls;
}
const std::vector<GemvBenchInfo>& gemv_bench_impls() {
  static const std::vector<GemvBenchInfo> impls = [] {
    std::vector<GemvBenchInfo> v;
    for (const kernels::GemvImplRecord& r : kernels::kGemvImpls) v.push_back({r.entry, Runner::kOurs, &r});
    v.push_back({"cublas", Runner::kCublas, nullptr});
    return v;
  }();
  return impls;
}

// Whether an entry of `impl` is registered for `trans`: cuBLAS and kAuto always; a record of ours where
// it has a kernel of its own (column blocks: T; row blocks: N), not where it runs another's.
bool registered_for(const GemvBenchInfo& impl, Trans trans) {
  return impl.ours == nullptr || impl.ours->runs(trans) == impl.ours->impl;
}

template <class T>
constexpr const char* precision_name() {
  return sizeof(T) == 4 ? "s" : "d";
}

cublasStatus_t cublas_symv(cublasHandle_t h, cublasFillMode_t uplo, int n, const float* alpha, const float* A, int lda,
                           const float* x, const float* beta, float* y) {
  return cublasSsymv(h, uplo, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t cublas_symv(cublasHandle_t h, cublasFillMode_t uplo, int n, const double* alpha, const double* A,
                           int lda, const double* x, const double* beta, double* y) {
  return cublasDsymv(h, uplo, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t cublas_gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const float* alpha, const float* A,
                           int lda, const float* x, const float* beta, float* y) {
  return cublasSgemv(h, op, m, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t cublas_gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const double* alpha,
                           const double* A, int lda, const double* x, const double* beta, double* y) {
  return cublasDgemv(h, op, m, n, alpha, A, lda, x, 1, beta, y, 1);
}

void fill(float* p, std::size_t count, std::uint64_t seed) { fill_uniform(p, count, seed, -1.f, 1.f); }
void fill(double* p, std::size_t count, std::uint64_t seed) { fill_uniform(p, count, seed, -1.0, 1.0); }

// The operands of one problem, shared by every impl measured on it: entries of one shape run back
// to back and reuse the buffers, so ours and cuBLAS read the same physical pages. On the H100 the
// same kernel on two fresh allocations of one size differed by up to 15 % (GEMV D N 64 x 1048576,
// v3: 217 vs 185 us; SYMV D lower 32768, v1: 1592 vs 1704 us; --benchmark_repetitions=3, 2026-11-23),
// more than most differences between impls. y is written by every call (beta = 0: never read).
// Later runs showed what part of that was: a fresh allocation reads slower for its first uses
// (harness/settle.hpp), so A is read until its rate is stable before the first entry times it.
template <class T>
struct Operands {
  DeviceBuffer<T> A, x, y;
  std::uint64_t seed = 0;  // A, x, y filled with seeds seed, seed + 1, seed + 2
  SettleResult settle;     // A read until its read rate was stable (harness/settle.hpp)
  int entries = 0;         // entries timed on these operands so far
};

template <class T>
Operands<T>& operands(std::size_t a_count, std::size_t x_len, std::size_t y_len, std::uint64_t seed) {
  // Never destroyed: freeing device memory from a static destructor can run after the CUDA runtime
  // has unloaded; the process's exit releases it.
  static Operands<T>& cached = *new Operands<T>();
  if (cached.A.size() != a_count || cached.x.size() != x_len || cached.y.size() != y_len || cached.seed != seed) {
    cached = Operands<T>();  // free the previous problem's buffers before allocating the next
    cached.A = DeviceBuffer<T>(a_count);
    cached.x = DeviceBuffer<T>(x_len);
    cached.y = DeviceBuffer<T>(y_len);
    cached.seed = seed;
    fill(cached.A.data(), a_count, seed);
    fill(cached.x.data(), x_len, seed + 1);
    fill(cached.y.data(), y_len, seed + 2);
    cached.settle = settle_reads(cached.A.data(), cached.A.bytes());
  }
  return cached;
}

// What every entry says about its operands: how A's settling went and how many entries of the
// problem ran before this one (its position: order effects show up against it).
template <class T>
void record_operands(Measurement& m, Operands<T>& ops) {
  record_settle(m, "a", ops.settle);
  m.param("entry_on_operands", ops.entries++);
}

void tag_l2(Measurement& m, double min_bytes) {
  const bool flush = !l2_resident(min_bytes);
  m.flush_l2_before_each_sample(flush);
  m.tag("l2", flush ? "flushed" : "resident");
}

void add_cublas_tags(Measurement& m, const CublasHandle& handle, const std::string& prefix) {
  int version = 0;
  GP_CUBLAS_CHECK(cublasGetVersion(handle.get(), &version));
  m.param(prefix + "cublas_version", version);
}

void check_status(kernels::Status st, const char* what) {
  if (st != kernels::Status::kSuccess) throw Error(std::string(what) + " returned " + kernels::status_text(st));
}

// One implementation's call on a problem's operands, with what it needs (a cuBLAS handle in the
// mode the impl names, our workspace) and what it says about itself: the one place where an impl
// name turns into what runs, for the single entries and the paired ones alike.
template <class T>
class SymvCall {
 public:
  SymvCall(const SymvBenchInfo& impl, Uplo uplo, int n, const T* A, const T* x, T* y)
      : impl_(impl), uplo_(uplo), n_(n), A_(A), x_(x), y_(y) {
    if (impl.runner != Runner::kOurs) {
      handle_ = std::make_unique<CublasHandle>();
      GP_CUBLAS_CHECK(cublasSetAtomicsMode(handle_->get(), impl.runner == Runner::kCublasAtomics
                                                               ? CUBLAS_ATOMICS_ALLOWED
                                                               : CUBLAS_ATOMICS_NOT_ALLOWED));
    } else {
      ws_bytes_ = kernels::symv_workspace_bytes<T>(n, impl.ours->impl);
      ws_ = DeviceBuffer<unsigned char>(ws_bytes_);
    }
  }
  // The entry's tags and fields, names prefixed (paired entries: "a_", "b_").
  void describe(Measurement& m, const std::string& prefix = "") const {
    m.tag(prefix + "impl", impl_.name);
    if (handle_) {
      m.tag(prefix + "atomics", impl_.runner == Runner::kCublasAtomics ? "allowed" : "not_allowed");
      add_cublas_tags(m, *handle_, prefix);
      return;
    }
    m.param(prefix + "workspace_bytes", static_cast<double>(ws_bytes_));
    m.tag(prefix + "impl_resolved",
          kernels::symv_impl_name(kernels::symv_auto_impl<T>(uplo_, n_, impl_.ours->impl)));
    m.tag(prefix + "atomics", impl_.ours->atomics ? "yes" : "no");
  }
  void operator()(cudaStream_t s) const {
    const T alpha = 1, beta = 0;
    if (handle_) {
      const cublasFillMode_t fill_mode = uplo_ == Uplo::kLower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
      GP_CUBLAS_CHECK(cublasSetStream(handle_->get(), s));
      GP_CUBLAS_CHECK(cublas_symv(handle_->get(), fill_mode, n_, &alpha, A_, n_, x_, &beta, y_));
      return;
    }
    check_status(
        kernels::symv<T>(uplo_, n_, alpha, A_, n_, x_, 1, beta, y_, 1, ws_.data(), ws_bytes_, s, impl_.ours->impl),
        "symv");
  }

 private:
  const SymvBenchInfo& impl_;
  Uplo uplo_;
  int n_;
  const T* A_;
  const T* x_;
  T* y_;
  std::unique_ptr<CublasHandle> handle_;  // cuBLAS impls
  DeviceBuffer<unsigned char> ws_;        // ours
  std::size_t ws_bytes_ = 0;
};

template <class T>
class GemvCall {
 public:
  GemvCall(const GemvBenchInfo& impl, Trans trans, int rows, int cols, const T* A, const T* x, T* y)
      : impl_(impl), trans_(trans), rows_(rows), cols_(cols), A_(A), x_(x), y_(y) {
    if (impl.runner != Runner::kOurs) {
      handle_ = std::make_unique<CublasHandle>();
    } else {
      ws_bytes_ = kernels::gemv_workspace_bytes<T>(trans, rows, cols, impl.ours->impl);
      ws_ = DeviceBuffer<unsigned char>(ws_bytes_);
      // Once per buffer (v3's arrival counters start at zero; each call leaves them so); not timed.
      check_status(kernels::gemv_workspace_init(ws_.data(), ws_bytes_, nullptr), "gemv_workspace_init");
    }
  }
  void describe(Measurement& m, const std::string& prefix = "") const {
    m.tag(prefix + "impl", impl_.name);
    if (handle_) {
      add_cublas_tags(m, *handle_, prefix);
      return;
    }
    m.param(prefix + "workspace_bytes", static_cast<double>(ws_bytes_));
    m.tag(prefix + "impl_resolved",
          kernels::gemv_impl_name(kernels::gemv_auto_impl<T>(trans_, rows_, cols_, impl_.ours->impl)));
  }
  void operator()(cudaStream_t s) const {
    const T alpha = 1, beta = 0;
    if (handle_) {
      GP_CUBLAS_CHECK(cublasSetStream(handle_->get(), s));
      GP_CUBLAS_CHECK(cublas_gemv(handle_->get(), trans_ == Trans::kNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T, rows_, cols_,
                                  &alpha, A_, rows_, x_, &beta, y_));
      return;
    }
    check_status(kernels::gemv<T>(trans_, rows_, cols_, alpha, A_, rows_, x_, 1, beta, y_, 1, ws_.data(), ws_bytes_,
                                  s, impl_.ours->impl),
                 "gemv");
  }

 private:
  const GemvBenchInfo& impl_;
  Trans trans_;
  int rows_, cols_;
  const T* A_;
  const T* x_;
  T* y_;
  std::unique_ptr<CublasHandle> handle_;
  DeviceBuffer<unsigned char> ws_;
  std::size_t ws_bytes_ = 0;
};

// A problem's operands and its entry's Measurement with the problem's fields: shared by the single
// and the paired entries of each kernel (members in this order: the operands exist first).
template <class T>
struct SymvProblem {
  SymvProblem(benchmark::State& state, const ProbeDescriptor& descriptor, Uplo uplo, int n)
      : ops(operands<T>(std::size_t(n) * n, n, n, 11)),
        m(state, descriptor, Work{kernels::symv_min_bytes(n, sizeof(T), false), kernels::symv_flops(n), 0}) {
    m.param("n", n);
    m.tag("precision", precision_name<T>());
    m.tag("uplo", uplo == Uplo::kLower ? "lower" : "upper");
    tag_l2(m, kernels::symv_min_bytes(n, sizeof(T), false));  // beta = 0: y not read
    record_operands(m, ops);
  }
  Operands<T>& ops;
  Measurement m;
};

template <class T>
struct GemvProblem {
  GemvProblem(benchmark::State& state, const ProbeDescriptor& descriptor, Trans trans, int rows, int cols)
      : ops(operands<T>(std::size_t(rows) * cols, trans == Trans::kNoTrans ? cols : rows,
                        trans == Trans::kNoTrans ? rows : cols, 21)),
        m(state, descriptor,
          Work{kernels::gemv_min_bytes(trans, rows, cols, sizeof(T), false), kernels::gemv_flops(rows, cols), 0}) {
    m.param("m", rows);
    m.param("n", cols);
    m.tag("precision", precision_name<T>());
    m.tag("trans", trans == Trans::kNoTrans ? "n" : "t");
    tag_l2(m, kernels::gemv_min_bytes(trans, rows, cols, sizeof(T), false));  // beta = 0
    record_operands(m, ops);
  }
  Operands<T>& ops;
  Measurement m;
};

template <class T>
void symv_entry(benchmark::State& state, const SymvBenchInfo& impl, Uplo uplo, int n) {
  SymvProblem<T> p(state, kSymvDescriptor, uplo, n);
  const SymvCall<T> call(impl, uplo, n, p.ops.A.data(), p.ops.x.data(), p.ops.y.data());
  call.describe(p.m);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  p.m.time_events(std::cref(call));
}

template <class T>
void gemv_entry(benchmark::State& state, const GemvBenchInfo& impl, Trans trans, int rows, int cols) {
  GemvProblem<T> p(state, kGemvDescriptor, trans, rows, cols);
  const GemvCall<T> call(impl, trans, rows, cols, p.ops.A.data(), p.ops.x.data(), p.ops.y.data());
  call.describe(p.m);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  p.m.time_events(std::cref(call));
}

const SymvBenchInfo& symv_info(const std::string& name) {
  for (const SymvBenchInfo& i : symv_bench_impls())
    if (name == i.name) return i;
  throw Error("no SYMV impl named " + name);
}
const GemvBenchInfo& gemv_info(const std::string& name) {
  for (const GemvBenchInfo& i : gemv_bench_impls())
    if (name == i.name) return i;
  throw Error("no GEMV impl named " + name);
}

// B of a SYMV pair: another SYMV impl, or our GEMV (kAuto) with `trans` on the same n x n buffer
// (the issue's "our SYMV beats our GEMV": the same y from half the bytes).
struct SymvPartner {
  const char* name;  // the entry's b
  const char* symv;  // a SYMV impl, or nullptr
  Trans gemv_trans;  // else our GEMV with this trans
  bool at_dram_n;    // also paired at kPairedDramN (A in DRAM), not only where the problem fits the L2
};
constexpr SymvPartner kSymvPartners[] = {{"cublas", "cublas", Trans::kNoTrans, false},
                                         {"cublas_atomics", "cublas_atomics", Trans::kNoTrans, true},
                                         {"gemv_ours_n", nullptr, Trans::kNoTrans, false},
                                         {"gemv_ours_t", nullptr, Trans::kTrans, false}};
// The DRAM size paired against cuBLAS with atomics: the issue's ">= 1.0x cuBLAS with atomics" at
// n = 32768, where the two were within 0.5 % in separate entries (2026-11-25: DSYMV upper 1.001-1.004x
// in four reference runs, 0.997x in one partial run).
constexpr int kPairedDramN = 32768;

template <class T>
void symv_paired_entry(benchmark::State& state, const SymvBenchInfo& impl_a, const SymvPartner& b, Uplo uplo, int n) {
  SymvProblem<T> p(state, kSymvPairedDescriptor, uplo, n);
  const T *A = p.ops.A.data(), *x = p.ops.x.data();
  T* y = p.ops.y.data();
  const SymvCall<T> a(impl_a, uplo, n, A, x, y);
  a.describe(p.m, "a_");
  std::optional<SymvCall<T>> symv_b;
  std::optional<GemvCall<T>> gemv_b;
  std::function<void(cudaStream_t)> call_b;
  if (b.symv) {
    symv_b.emplace(symv_info(b.symv), uplo, n, A, x, y);
    symv_b->describe(p.m, "b_");
    call_b = std::cref(*symv_b);
  } else {
    gemv_b.emplace(gemv_info(entry_of(GemvImpl::kAuto)), b.gemv_trans, n, n, A, x, y);
    gemv_b->describe(p.m, "b_");
    call_b = std::cref(*gemv_b);
  }
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  p.m.time_events_paired(std::cref(a), call_b);
}

template <class T>
void gemv_paired_entry(benchmark::State& state, const GemvBenchInfo& impl_a, const GemvBenchInfo& impl_b, Trans trans,
                       int rows, int cols) {
  GemvProblem<T> p(state, kGemvPairedDescriptor, trans, rows, cols);
  const GemvCall<T> a(impl_a, trans, rows, cols, p.ops.A.data(), p.ops.x.data(), p.ops.y.data());
  const GemvCall<T> b(impl_b, trans, rows, cols, p.ops.A.data(), p.ops.x.data(), p.ops.y.data());
  a.describe(p.m, "a_");
  b.describe(p.m, "b_");
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  p.m.time_events_paired(std::cref(a), std::cref(b));
}

// Paired SYMV entries where the calls are short (the problem fits the L2): ours against cuBLAS (default
// and with atomics), and against our GEMV where GEMV's n x n matrix fits the L2 too (else the two would
// not be timed alike); at kPairedDramN, ours against cuBLAS with atomics only.
template <class T>
void register_symv_paired(const std::vector<int>& sizes) {
  for (int n : sizes) {
    const double symv_bytes = kernels::symv_min_bytes(n, sizeof(T), false);
    const bool resident = l2_resident(symv_bytes);
    if ((!resident && n != kPairedDramN) || !kernel_footprint_fits(double(n) * n * sizeof(T))) continue;
    const bool gemv_resident = l2_resident(kernels::gemv_min_bytes(Trans::kNoTrans, n, n, sizeof(T), false));
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper})
      for (const SymvPartner& b : kSymvPartners) {
        if ((!resident && !b.at_dram_n) || (!b.symv && !gemv_resident)) continue;
        const std::string name = entry_name(kSymvPairedDescriptor,
                                            {{"a", entry_of(SymvImpl::kAuto)},
                                             {"b", b.name},
                                             {"precision", precision_name<T>()},
                                             {"uplo", uplo == Uplo::kLower ? "lower" : "upper"},
                                             {"n", std::to_string(n)}});
        register_entry(
            name, kSymvPairedDescriptor,
            [&b, uplo, n](benchmark::State& st) {
              symv_paired_entry<T>(st, symv_info(entry_of(SymvImpl::kAuto)), b, uplo, n);
            },
            blas2_samples(symv_bytes));
      }
  }
}

// Paired GEMV entries: ours against cuBLAS where a call is short (L2-resident) or the two were
// within a few per cent in separate entries (the 4096 / 4097 squares, ~25-50 us); single pass (one
// kernel) against split + reduce (two kernels) for N at the resident shapes, where kAuto's small-N
// rules choose between them; and both row-block records against cuBLAS for N at the same shapes as ours.
template <class T>
void register_gemv_paired(const std::vector<std::pair<int, int>>& shapes) {
  struct Pair {
    const char* a;
    const char* b;
    bool n_only;             // kNoTrans only
    bool resident_only = true;  // with n_only: at the L2-resident shapes only
  };
  constexpr Pair kPairs[] = {{entry_of(GemvImpl::kAuto), "cublas", false},
                             {entry_of(GemvImpl::kSinglePass), entry_of(GemvImpl::kSplitReduce), true},
                             {entry_of(GemvImpl::kRowBlocks), "cublas", true, false},
                             {entry_of(GemvImpl::kRowBlocksSector), "cublas", true, false}};
  for (const auto& [rows, cols] : shapes) {
    if (!kernel_footprint_fits(double(rows) * cols * sizeof(T))) continue;
    const double bytes = kernels::gemv_min_bytes(Trans::kNoTrans, rows, cols, sizeof(T), false);
    const bool near_one_square = rows == cols && (rows == 4096 || rows == 4097);
    if (!l2_resident(bytes) && !near_one_square) continue;
    for (Trans trans : {Trans::kNoTrans, Trans::kTrans})
      for (const Pair& p : kPairs) {
        if (p.n_only && (trans != Trans::kNoTrans || (p.resident_only && !l2_resident(bytes)))) continue;
        const std::string name = entry_name(kGemvPairedDescriptor,
                                            {{"a", p.a},
                                             {"b", p.b},
                                             {"precision", precision_name<T>()},
                                             {"trans", trans == Trans::kNoTrans ? "n" : "t"},
                                             {"m", std::to_string(rows)},
                                             {"n", std::to_string(cols)}});
        register_entry(
            name, kGemvPairedDescriptor,
            [a = p.a, b = p.b, trans, rows = rows, cols = cols](benchmark::State& st) {
              gemv_paired_entry<T>(st, gemv_info(a), gemv_info(b), trans, rows, cols);
            },
            l2_resident(bytes) ? kResidentSamples : 0);
      }
  }
}

template <class T>
void register_symv(const std::vector<int>& sizes) {
  for (int n : sizes) {
    if (!kernel_footprint_fits(double(n) * n * sizeof(T))) continue;
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper})
      for (const SymvBenchInfo& info : symv_bench_impls()) {
        const std::string name = entry_name(kSymvDescriptor, {{"impl", info.name},
                                                                     {"precision", precision_name<T>()},
                                                                     {"uplo", uplo == Uplo::kLower ? "lower" : "upper"},
                                                                     {"n", std::to_string(n)}});
        register_entry(
            name, kSymvDescriptor, [info, uplo, n](benchmark::State& st) { symv_entry<T>(st, info, uplo, n); },
            blas2_samples(kernels::symv_min_bytes(n, sizeof(T), false)));
      }
  }
}

template <class T>
void register_gemv(const std::vector<std::pair<int, int>>& shapes) {
  for (const auto& [rows, cols] : shapes) {
    if (!kernel_footprint_fits(double(rows) * cols * sizeof(T))) continue;
    for (Trans trans : {Trans::kNoTrans, Trans::kTrans})
      for (const GemvBenchInfo& info : gemv_bench_impls()) {
        if (!registered_for(info, trans)) continue;
        const std::string name = entry_name(kGemvDescriptor, {{"impl", info.name},
                                                                     {"precision", precision_name<T>()},
                                                                     {"trans", trans == Trans::kNoTrans ? "n" : "t"},
                                                                     {"m", std::to_string(rows)},
                                                                     {"n", std::to_string(cols)}});
        register_entry(
            name, kGemvDescriptor,
            [info, trans, rows = rows, cols = cols](benchmark::State& st) { gemv_entry<T>(st, info, trans, rows, cols); },
            blas2_samples(kernels::gemv_min_bytes(trans, rows, cols, sizeof(T), false)));
      }
  }
}

}  // namespace

void register_blas2_benchmarks() {
  const bool quick = context().options.quick;
  // Powers of two 512 ... 32768 and the irregular 1000 and 4097 (scalar loads: lda = 4097).
  const std::vector<int> sizes = quick ? std::vector<int>{1000, 2048}
                                       : std::vector<int>{512, 1000, 1024, 2048, 4096, 4097, 8192, 16384, 32768};
  std::vector<std::pair<int, int>> shapes;
  for (int n : sizes) shapes.push_back({n, n});
  if (!quick) {  // tall and wide
    for (auto s : {std::pair<int, int>{1 << 20, 64}, {1 << 18, 512}, {64, 1 << 20}, {512, 1 << 18}, {100000, 1000},
                   {1000, 100000}})
      shapes.push_back(s);
  }
  register_symv<float>(sizes);
  register_symv<double>(sizes);
  register_gemv<float>(shapes);
  register_gemv<double>(shapes);
  register_symv_paired<float>(sizes);
  register_symv_paired<double>(sizes);
  register_gemv_paired<float>(shapes);
  register_gemv_paired<double>(shapes);
}

}  // namespace gpuprobe
