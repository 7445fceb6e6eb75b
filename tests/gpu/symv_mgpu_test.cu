// Multi-GPU SYMV and GEMV (symv_mgpu.hpp) against a CPU long double reference (blas2_test_util.hpp
// states the bound), float and double, on every device list this machine allows:
//   *Mgpu suites: {0}, {0, 0} and {0, 0, 0} (two and three "GPUs" on one device: the layout, the P2P
//   reduction and the cross-stream events run for real on one GPU);
//   *MgpuTwoGpus: {0, 1} with peer reads (skipped with one GPU);
//   *MgpuNccl: NCCL on {0}; *MgpuNcclTwoGpus: on {0, 1} (skipped without NCCL or a second GPU).
// Every element of A that the call may not read is NaN: the unstored triangle, everything outside the
// submatrix (rows and columns), the padding rows (ldl > rows); y is NaN where beta == 0 (not read),
// the gap elements of a strided y hold a sentinel, the workspaces start as NaN. Sizes 1 ... 4097,
// block sizes dividing n or not, below, at and above the 64-column tile; offsets 0, 1, b - 1, b and
// irregular; trailing and inner submatrices; leading dimensions with and without 16-byte loads;
// strided and negative increments; alpha == 0 with A and x NaN. Each GPU's y is checked, and the G
// copies must be bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blas2_test_util.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/symv_mgpu.hpp"

namespace gpuprobe {
namespace {

using namespace blas2_test;
using kernels::BlockCyclicLayout;
using kernels::BlockCyclicMatrix;
using kernels::MgpuContext;
using kernels::MgpuReduction;
using kernels::Status;
using kernels::Trans;
using kernels::Uplo;

int gpu_count() {
  int n = 0;
  GP_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

// A device buffer on a given device, filled with 0xFF bytes (NaN) at first.
template <class T>
class BufferOn {
 public:
  BufferOn(int device, std::size_t count) : buffer_(device, std::max<std::size_t>(count, 1)) {
    DeviceScope scope(device);
    GP_CUDA_CHECK(cudaMemset(buffer_.data(), 0xFF, buffer_.bytes()));
  }
  T* data() const { return buffer_.data(); }
  void upload(const std::vector<T>& host) {
    DeviceScope scope(buffer_.device());
    GP_CUDA_CHECK(cudaMemcpy(buffer_.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download(std::size_t count) const {
    DeviceScope scope(buffer_.device());
    std::vector<T> out(count);
    GP_CUDA_CHECK(cudaMemcpy(out.data(), buffer_.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  DeviceBuffer<T> buffer_;
};

// A device list and its context (kept for the whole run: NCCL communicators take long to create).
struct Config {
  std::vector<int> devices;
  MgpuReduction reduction;
  std::string name() const {
    std::string s = kernels::mgpu_reduction_name(reduction);
    s += " {";
    for (std::size_t i = 0; i < devices.size(); ++i) s += (i ? "," : "") + std::to_string(devices[i]);
    return s + "}";
  }
};

const MgpuContext& context_for(const Config& c) {
  static auto& cache = *new std::map<std::string, std::unique_ptr<MgpuContext>>();  // never destroyed
  auto& slot = cache[c.name()];
  if (!slot) {
    const Status st = MgpuContext::create(c.devices, c.reduction, &slot);
    if (st != Status::kSuccess) throw Error("MgpuContext::create(" + c.name() + "): " + kernels::status_text(st));
  }
  return *slot;
}

// The device lists. One device: one, two and three "GPUs" of device 0 (P2P: the peer reads are
// plain reads). Two GPUs: devices 0 and 1 with peer access (skipped otherwise). NCCL: on device 0 and
// on devices 0 and 1 (skipped in a build without NCCL). Each suite says why it skips.
std::vector<Config> one_device() {
  return {{{0}, MgpuReduction::kP2P}, {{0, 0}, MgpuReduction::kP2P}, {{0, 0, 0}, MgpuReduction::kP2P}};
}
// Why the two-GPU P2P configuration cannot run here ("" when it can).
std::string two_gpus_missing() {
  if (gpu_count() < 2) return "one GPU visible: the two-GPU layout needs two";
  int peer = 0;
  GP_CUDA_CHECK(cudaDeviceCanAccessPeer(&peer, 0, 1));
  return peer ? "" : "no peer access between devices 0 and 1";
}
std::string nccl_missing(int gpus) {
  if (!kernels::mgpu_nccl_available()) return "built without NCCL";
  if (gpu_count() < gpus) return "one GPU visible: NCCL on two GPUs needs two";
  return "";
}
#define GP_SKIP_UNLESS(why)               \
  do {                                    \
    const std::string gp_why_ = (why);    \
    if (!gp_why_.empty()) GTEST_SKIP() << gp_why_; \
  } while (0)

// The global matrix, distributed: local[q] is GPU q's ldl x local_cols(q) array.
template <class T>
struct Distributed {
  BlockCyclicLayout layout;
  int ldl;
  std::vector<std::unique_ptr<BufferOn<T>>> local;
  std::vector<const T*> ptrs;
  // global: rows x cols column-major (leading dimension rows).
  Distributed(const std::vector<T>& global, int rows, int cols, int block, int ldl_, const std::vector<int>& devices)
      : layout{rows, cols, block, static_cast<int>(devices.size())}, ldl(ldl_) {
    for (int q = 0; q < layout.gpus; ++q) {
      const int lc = layout.local_cols(q);
      std::vector<T> host(static_cast<std::size_t>(ldl) * lc, kNaN<T>);
      for (int lj = 0; lj < lc; ++lj) {
        const int j = layout.global_col(q, lj);
        std::memcpy(&host[static_cast<std::size_t>(lj) * ldl], &global[static_cast<std::size_t>(j) * rows],
                    rows * sizeof(T));
      }
      local.push_back(std::make_unique<BufferOn<T>>(devices[q], host.size()));
      local.back()->upload(host);
      ptrs.push_back(lc > 0 ? local.back()->data() : nullptr);
    }
  }
  BlockCyclicMatrix<T> matrix() const { return {layout, ptrs.data(), ldl}; }
};

// A replicated vector (x, or y before the call) on every GPU, and per GPU workspaces.
template <class T>
struct Replicated {
  std::vector<std::unique_ptr<BufferOn<T>>> buffers;
  std::vector<T*> ptrs;
  Replicated(const std::vector<T>& host, const std::vector<int>& devices) {
    for (int d : devices) {
      buffers.push_back(std::make_unique<BufferOn<T>>(d, host.size()));
      buffers.back()->upload(host);
      ptrs.push_back(buffers.back()->data());
    }
  }
  const T* const* cptrs() const { return const_cast<const T* const*>(ptrs.data()); }
};
struct Workspaces {
  std::vector<std::unique_ptr<BufferOn<unsigned char>>> buffers;
  std::vector<void*> ptrs;
  std::size_t bytes;
  Workspaces(std::size_t need, const std::vector<int>& devices) : bytes(need) {
    for (int d : devices) {
      buffers.push_back(std::make_unique<BufferOn<unsigned char>>(d, std::max<std::size_t>(need, 16)));
      ptrs.push_back(buffers.back()->data());
    }
  }
};

// A stream of devices[0] for the call; synchronizing it must cover every GPU's part (the join).
class CallerStream {
 public:
  explicit CallerStream(int device) : device_(device) {
    DeviceScope scope(device);
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~CallerStream() {
    DeviceScope scope(device_);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  void sync() const { GP_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

// Every GPU's y against the reference, and the G copies bit-identical.
template <class T>
void expect_results(const HostVector<T>& y0, const Replicated<T>& y, const Reference& ref, int len_sum) {
  std::vector<T> first;
  for (std::size_t q = 0; q < y.buffers.size(); ++q) {
    SCOPED_TRACE("y of GPU " + std::to_string(q));
    const std::vector<T> got = y.buffers[q]->download(y0.data.size());
    expect_close(y0, got, ref, len_sum);
    if (q == 0)
      first = got;
    else
      EXPECT_EQ(0, std::memcmp(first.data(), got.data(), got.size() * sizeof(T))) << "GPUs disagree bit-wise";
  }
}

// ---------------------------------------------------------------- SYMV

struct SymvCase {
  int N, block, ldl;  // the global order, block size, leading dimension (0: N)
  int offset, n;      // the submatrix A(offset:offset+n, offset:offset+n)
  double alpha, beta;
  int incx = 1, incy = 1;
};

std::string describe(const SymvCase& c, Uplo uplo, const char* type) {
  std::ostringstream s;
  s << type << (uplo == Uplo::kLower ? " lower" : " upper") << " N=" << c.N << " b=" << c.block
    << " ldl=" << (c.ldl ? c.ldl : c.N) << " offset=" << c.offset << " n=" << c.n << " alpha=" << c.alpha
    << " beta=" << c.beta << " incx=" << c.incx << " incy=" << c.incy;
  return s.str();
}

template <class T>
struct SymvProblem {
  std::vector<T> A;  // N x N: the stored triangle of the submatrix random, everything else NaN
  HostVector<T> x, y0;
  Reference ref;
  SymvProblem(const SymvCase& c, Uplo uplo, std::mt19937_64& rng)
      : A(static_cast<std::size_t>(c.N) * c.N, kNaN<T>), x(c.n, c.incx, kNaN<T>), y0(c.n, c.incy, T(7.25)) {
    const bool read = c.alpha != 0;
    auto stored = [&](int i, int j) { return uplo == Uplo::kLower ? i >= j : i <= j; };
    if (read) {
      for (int j = c.offset; j < c.offset + c.n; ++j)
        for (int i = c.offset; i < c.offset + c.n; ++i)
          if (stored(i, j)) A[static_cast<std::size_t>(j) * c.N + i] = uniform<T>(rng);
      x.randomize(rng);
    }
    if (c.beta != 0)
      y0.randomize(rng);
    else
      for (int i = 0; i < c.n; ++i) y0[i] = kNaN<T>;
    ref = Reference{std::vector<double>(c.n), std::vector<double>(c.n)};
    for (int e = 0; e < c.n; ++e) {
      long double sum = 0, abs_sum = 0;
      if (read)
        for (int f = 0; f < c.n; ++f) {
          const int i = c.offset + e, j = c.offset + f;
          const T a = stored(i, j) ? A[static_cast<std::size_t>(j) * c.N + i] : A[static_cast<std::size_t>(i) * c.N + j];
          const long double t = static_cast<long double>(a) * x[f];
          sum += t;
          abs_sum += std::fabs(t);
        }
      const double y = c.beta != 0 ? double(y0[e]) : 0.0;
      ref.value[e] = static_cast<double>(c.alpha * sum + c.beta * static_cast<long double>(y));
      ref.scale[e] = static_cast<double>(std::fabs(c.alpha) * abs_sum + std::fabs(c.beta * y));
    }
  }
};

// One call on fresh device copies for `config`; the GPUs' y checked.
template <class T>
void run_symv_case(const SymvCase& c, Uplo uplo, const SymvProblem<T>& p, const Config& config) {
  SCOPED_TRACE(config.name());
  const MgpuContext& ctx = context_for(config);
  const int ldl = c.ldl ? c.ldl : c.N;
  const Distributed<T> A(p.A, c.N, c.N, c.block, ldl, config.devices);
  const Replicated<T> x(p.x.data, config.devices);
  Replicated<T> y(p.y0.data, config.devices);
  Workspaces ws(kernels::symv_mgpu_workspace_bytes<T>(A.layout), config.devices);
  const CallerStream stream(config.devices[0]);
  const Status st = kernels::symv_mgpu<T>(uplo, c.n, c.offset, T(c.alpha), A.matrix(), x.cptrs(), c.incx, T(c.beta),
                                          y.ptrs.data(), c.incy, ws.ptrs.data(), ws.bytes, ctx, stream.get());
  ASSERT_EQ(st, Status::kSuccess) << kernels::status_text(st);
  stream.sync();
  expect_results(p.y0, y, p.ref, c.n);
}

template <class T>
void check_symv(const SymvCase& c, const std::vector<Config>& configs) {
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
    SCOPED_TRACE(describe(c, uplo, type));
    std::mt19937_64 rng(fresh_seed());
    const SymvProblem<T> p(c, uplo, rng);
    for (const Config& config : configs) run_symv_case(c, uplo, p, config);
  }
}

const SymvCase kSymvSmall[] = {
    {1, 64, 0, 0, 1, 1.0, 0.0},
    {63, 16, 64, 0, 63, 1.0, 0.0},             // 16-byte loads (float and double)
    {63, 16, 67, 1, 62, -1.5, 0.5},            // scalar loads, offset 1
    {63, 16, 63, 15, 48, 1.0, 0.0},            // offset b - 1
    {65, 64, 68, 63, 2, 1.0, 0.0},             // offset b - 1 = tile - 1
    {65, 64, 0, 64, 1, 0.75, -1.0},            // offset b, one element
    {65, 1, 66, 3, 60, 1.0, 0.0},              // b = 1: every column on the next GPU
    {200, 48, 204, 47, 153, 1.0, 0.0},         // b does not divide n, offset b - 1
    {200, 48, 203, 48, 152, 1.0, 1.0, 2, -3},  // offset b, strided x and y
    {200, 48, 204, 77, 100, 1.25, 0.0},        // an inner submatrix: rows and columns beyond it are NaN
    {300, 7, 300, 130, 170, -0.5, 0.0, -1, 2},
};
const SymvCase kSymvLarge[] = {
    {1000, 100, 1004, 0, 1000, 1.0, 0.0},
    {1000, 100, 1001, 333, 667, -1.0, 0.25},
    {4097, 256, 4100, 0, 4097, 1.0, 0.0},
    {4097, 64, 4100, 130, 3900, 1.0, 0.0},            // inner, b = the tile
    {4097, 200, 4099, 1000, 3097, 1.0, -0.5, -1, 1},  // trailing, scalar loads, negative incx
};

template <class T>
class SymvMgpu : public ::testing::Test {};
template <class T>
class SymvMgpuTwoGpus : public ::testing::Test {};
template <class T>
class SymvMgpuNccl : public ::testing::Test {};
template <class T>
class SymvMgpuNcclTwoGpus : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SymvMgpu, Types);
TYPED_TEST_SUITE(SymvMgpuTwoGpus, Types);
TYPED_TEST_SUITE(SymvMgpuNccl, Types);
TYPED_TEST_SUITE(SymvMgpuNcclTwoGpus, Types);

TYPED_TEST(SymvMgpu, SmallLayoutsOnOneDevice) {
  for (const SymvCase& c : kSymvSmall) check_symv<TypeParam>(c, one_device());
}

TYPED_TEST(SymvMgpu, LargeLayoutsOnOneDevice) {
  for (const SymvCase& c : kSymvLarge) check_symv<TypeParam>(c, one_device());
}

TYPED_TEST(SymvMgpu, AlphaZeroReadsNeitherAnorX) {
  check_symv<TypeParam>({130, 32, 132, 5, 100, 0.0, 2.0}, one_device());
  check_symv<TypeParam>({130, 32, 132, 5, 100, 0.0, 0.0}, one_device());  // y = 0, y poisoned
}

TYPED_TEST(SymvMgpuTwoGpus, MatchesCpuReferenceWithPeerReads) {
  GP_SKIP_UNLESS(two_gpus_missing());
  const std::vector<Config> two = {{{0, 1}, MgpuReduction::kP2P}};
  for (const SymvCase& c : kSymvSmall) check_symv<TypeParam>(c, two);
  for (const SymvCase& c : kSymvLarge) check_symv<TypeParam>(c, two);
}

TYPED_TEST(SymvMgpuNccl, MatchesCpuReferenceOnOneGpu) {
  GP_SKIP_UNLESS(nccl_missing(1));
  const std::vector<Config> one = {{{0}, MgpuReduction::kNccl}};
  for (const SymvCase& c : kSymvSmall) check_symv<TypeParam>(c, one);
}

TYPED_TEST(SymvMgpuNcclTwoGpus, MatchesCpuReference) {
  GP_SKIP_UNLESS(nccl_missing(2));
  const std::vector<Config> two = {{{0, 1}, MgpuReduction::kNccl}};
  for (const SymvCase& c : kSymvSmall) check_symv<TypeParam>(c, two);
  for (const SymvCase& c : kSymvLarge) check_symv<TypeParam>(c, two);
}

// Every P2P configuration this machine has (the sequence and determinism tests).
std::vector<Config> p2p_configs() {
  std::vector<Config> c = one_device();
  if (two_gpus_missing().empty()) c.push_back({{0, 1}, MgpuReduction::kP2P});
  return c;
}

// The SYTRD's sequence: trailing submatrices of one matrix at decreasing sizes with one workspace,
// never reset (each call finds the previous calls' partials in it).
TEST(SymvMgpuSequence, TrailingCallsShareOneWorkspace) {
  using T = double;
  const int N = 300, block = 32;
  for (const Config& config : p2p_configs()) {
    SCOPED_TRACE(config.name());
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
      std::mt19937_64 rng(fresh_seed());
      const SymvCase whole{N, block, 0, 0, N, 1.0, 0.0};
      const SymvProblem<T> full(whole, uplo, rng);
      const Distributed<T> A(full.A, N, N, block, N, config.devices);
      Workspaces ws(kernels::symv_mgpu_workspace_bytes<T>(A.layout), config.devices);
      const CallerStream stream(config.devices[0]);
      for (int offset = 0; offset < N; offset += 23) {
        const int n = N - offset;
        SCOPED_TRACE(describe(SymvCase{N, block, 0, offset, n, 1.0, 0.0}, uplo, "double"));
        // A fresh x; y poisoned (beta = 0); the reference on the trailing submatrix of the same A.
        HostVector<T> xh(n, 1, kNaN<T>), y0(n, 1, kNaN<T>);
        xh.randomize(rng);
        auto stored = [&](int i, int j) { return uplo == Uplo::kLower ? i >= j : i <= j; };
        Reference ref{std::vector<double>(n), std::vector<double>(n)};
        for (int e = 0; e < n; ++e) {
          long double sum = 0, abs_sum = 0;
          for (int f = 0; f < n; ++f) {
            const int i = offset + e, j = offset + f;
            const T a = stored(i, j) ? full.A[std::size_t(j) * N + i] : full.A[std::size_t(i) * N + j];
            const long double t = static_cast<long double>(a) * xh[f];
            sum += t;
            abs_sum += std::fabs(t);
          }
          ref.value[e] = static_cast<double>(sum);
          ref.scale[e] = static_cast<double>(abs_sum);
        }
        const Replicated<T> x(xh.data, config.devices);
        Replicated<T> y(y0.data, config.devices);
        const Status st = kernels::symv_mgpu<T>(uplo, n, offset, 1.0, A.matrix(), x.cptrs(), 1, 0.0, y.ptrs.data(), 1,
                                                ws.ptrs.data(), ws.bytes, context_for(config), stream.get());
        ASSERT_EQ(st, Status::kSuccess) << kernels::status_text(st);
        stream.sync();
        expect_results(y0, y, ref, n);
      }
    }
  }
}

// Same inputs twice: bit-identical y (fixed summation order), with the first call's partials left
// in the workspace.
TEST(SymvMgpuDeterminism, RepeatedCallsAreBitIdentical) {
  using T = float;
  const SymvCase c{2000, 96, 2000, 17, 1983, 1.0, 0.0};
  std::vector<Config> configs = p2p_configs();
  if (nccl_missing(2).empty()) configs.push_back({{0, 1}, MgpuReduction::kNccl});
  for (const Config& config : configs) {
    SCOPED_TRACE(config.name());
    std::mt19937_64 rng(fresh_seed());
    const SymvProblem<T> p(c, Uplo::kLower, rng);
    const Distributed<T> A(p.A, c.N, c.N, c.block, c.ldl, config.devices);
    const Replicated<T> x(p.x.data, config.devices);
    Replicated<T> y(p.y0.data, config.devices);
    Workspaces ws(kernels::symv_mgpu_workspace_bytes<T>(A.layout), config.devices);
    const CallerStream stream(config.devices[0]);
    std::vector<T> runs[2];
    for (auto& out : runs) {
      ASSERT_EQ(kernels::symv_mgpu<T>(Uplo::kLower, c.n, c.offset, 1.f, A.matrix(), x.cptrs(), 1, 0.f, y.ptrs.data(),
                                      1, ws.ptrs.data(), ws.bytes, context_for(config), stream.get()),
                Status::kSuccess);
      stream.sync();
      out = y.buffers.back()->download(c.n);
    }
    EXPECT_EQ(0, std::memcmp(runs[0].data(), runs[1].data(), c.n * sizeof(T)));
  }
}

TEST(MgpuContextCreate, RefusesWhatItCannotRun) {
  std::unique_ptr<MgpuContext> ctx;
  EXPECT_EQ(MgpuContext::create({}, MgpuReduction::kP2P, &ctx), Status::kInvalidValue);
  EXPECT_EQ(MgpuContext::create({-1}, MgpuReduction::kP2P, &ctx), Status::kInvalidValue);
  EXPECT_EQ(MgpuContext::create({gpu_count()}, MgpuReduction::kP2P, &ctx), Status::kDeviceError);
  EXPECT_EQ(ctx, nullptr);
  // NCCL needs one communicator per device.
  EXPECT_EQ(MgpuContext::create({0, 0}, MgpuReduction::kNccl, &ctx), Status::kNotSupported);
  ASSERT_EQ(MgpuContext::create({0, 0}, MgpuReduction::kP2P, &ctx), Status::kSuccess);
  EXPECT_EQ(ctx->gpus(), 2);
  // A layout for another number of GPUs than the context's.
  const BlockCyclicLayout L{64, 64, 16, 3};
  const BufferOn<float> a(0, 64 * 64), v(0, 64), w(0, kernels::symv_mgpu_workspace_bytes<float>(L));
  const float* local[3] = {a.data(), a.data(), a.data()};
  const float* xs[3] = {v.data(), v.data(), v.data()};
  float* ys[3] = {v.data(), v.data(), v.data()};
  void* wss[3] = {w.data(), w.data(), w.data()};
  EXPECT_EQ(kernels::symv_mgpu<float>(Uplo::kLower, 64, 0, 1.f, BlockCyclicMatrix<float>{L, local, 64}, xs, 1, 0.f, ys,
                                      1, wss, kernels::symv_mgpu_workspace_bytes<float>(L), *ctx, nullptr),
            Status::kInvalidValue);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------- GEMV

struct GemvCase {
  int M, N, block, ldl;      // global rows, columns, block size, leading dimension (0: M)
  int ro, co, m, n;          // the submatrix A(ro:ro+m, co:co+n)
  double alpha, beta;
  int incx = 1, incy = 1;
};

std::string describe(const GemvCase& c, Trans t, const char* type) {
  std::ostringstream s;
  s << type << (t == Trans::kNoTrans ? " N" : " T") << " A " << c.M << "x" << c.N << " b=" << c.block
    << " ldl=" << (c.ldl ? c.ldl : c.M) << " sub (" << c.ro << "," << c.co << ") " << c.m << "x" << c.n
    << " alpha=" << c.alpha << " beta=" << c.beta << " incx=" << c.incx << " incy=" << c.incy;
  return s.str();
}

template <class T>
void check_gemv(const GemvCase& c, const std::vector<Config>& configs) {
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  for (Trans t : {Trans::kNoTrans, Trans::kTrans}) {
    SCOPED_TRACE(describe(c, t, type));
    const bool nt = t == Trans::kNoTrans;
    const int x_len = nt ? c.n : c.m, y_len = nt ? c.m : c.n;
    std::mt19937_64 rng(fresh_seed());
    std::vector<T> A(static_cast<std::size_t>(c.M) * c.N, kNaN<T>);
    HostVector<T> x(x_len, c.incx, kNaN<T>), y0(y_len, c.incy, T(7.25));
    if (c.alpha != 0) {
      for (int j = c.co; j < c.co + c.n; ++j)
        for (int i = c.ro; i < c.ro + c.m; ++i) A[static_cast<std::size_t>(j) * c.M + i] = uniform<T>(rng);
      x.randomize(rng);
    }
    if (c.beta != 0)
      y0.randomize(rng);
    else
      for (int i = 0; i < y_len; ++i) y0[i] = kNaN<T>;
    Reference ref{std::vector<double>(y_len), std::vector<double>(y_len)};
    for (int e = 0; e < y_len; ++e) {
      long double sum = 0, abs_sum = 0;
      if (c.alpha != 0)
        for (int f = 0; f < x_len; ++f) {
          const int i = c.ro + (nt ? e : f), j = c.co + (nt ? f : e);
          const long double term = static_cast<long double>(A[static_cast<std::size_t>(j) * c.M + i]) * x[f];
          sum += term;
          abs_sum += std::fabs(term);
        }
      const double y = c.beta != 0 ? double(y0[e]) : 0.0;
      ref.value[e] = static_cast<double>(c.alpha * sum + c.beta * static_cast<long double>(y));
      ref.scale[e] = static_cast<double>(std::fabs(c.alpha) * abs_sum + std::fabs(c.beta * y));
    }
    for (const Config& config : configs) {
      SCOPED_TRACE(config.name());
      const Distributed<T> dA(A, c.M, c.N, c.block, c.ldl ? c.ldl : c.M, config.devices);
      const Replicated<T> dx(x.data, config.devices);
      Replicated<T> dy(y0.data, config.devices);
      Workspaces ws(kernels::gemv_mgpu_workspace_bytes<T>(t, c.m, c.n, c.co, dA.layout), config.devices);
      const CallerStream stream(config.devices[0]);
      const MgpuContext& ctx = context_for(config);
      ASSERT_EQ(kernels::gemv_mgpu_workspace_init(ws.ptrs.data(), ws.bytes, ctx, stream.get()), Status::kSuccess);
      const Status st = kernels::gemv_mgpu<T>(t, c.m, c.n, c.ro, c.co, T(c.alpha), dA.matrix(), dx.cptrs(), c.incx,
                                              T(c.beta), dy.ptrs.data(), c.incy, ws.ptrs.data(), ws.bytes, ctx,
                                              stream.get());
      ASSERT_EQ(st, Status::kSuccess) << kernels::status_text(st);
      stream.sync();
      expect_results(y0, dy, ref, x_len);
    }
  }
}

const GemvCase kGemvSmall[] = {
    {1, 1, 64, 0, 0, 0, 1, 1, 1.0, 0.0},
    {65, 63, 16, 68, 0, 0, 65, 63, 1.0, 0.0},
    {65, 63, 16, 67, 1, 15, 60, 48, -1.5, 0.5},        // offsets, scalar loads
    {300, 1000, 100, 300, 20, 333, 280, 600, 1.0, 0.0},
    {1000, 300, 48, 1001, 0, 47, 1000, 253, 1.0, 1.0, 2, -1},
    {200, 10, 16, 200, 0, 0, 200, 10, 1.0, 0.0},       // fewer columns than one block per GPU
    {130, 130, 32, 132, 2, 3, 100, 120, 0.0, 2.0},     // alpha = 0: A and x NaN
};
const GemvCase kGemvLarge[] = {
    {4097, 4097, 256, 4100, 0, 0, 4097, 4097, 1.0, 0.0},
    {2000, 4097, 64, 2000, 7, 1000, 1993, 3097, 1.0, 0.5},
};

template <class T>
class GemvMgpu : public ::testing::Test {};
template <class T>
class GemvMgpuTwoGpus : public ::testing::Test {};
template <class T>
class GemvMgpuNccl : public ::testing::Test {};
template <class T>
class GemvMgpuNcclTwoGpus : public ::testing::Test {};
TYPED_TEST_SUITE(GemvMgpu, Types);
TYPED_TEST_SUITE(GemvMgpuTwoGpus, Types);
TYPED_TEST_SUITE(GemvMgpuNccl, Types);
TYPED_TEST_SUITE(GemvMgpuNcclTwoGpus, Types);

TYPED_TEST(GemvMgpu, SmallOnOneDevice) {
  for (const GemvCase& c : kGemvSmall) check_gemv<TypeParam>(c, one_device());
}

TYPED_TEST(GemvMgpu, LargeOnOneDevice) {
  for (const GemvCase& c : kGemvLarge) check_gemv<TypeParam>(c, one_device());
}

TYPED_TEST(GemvMgpuTwoGpus, MatchesCpuReferenceWithPeerReads) {
  GP_SKIP_UNLESS(two_gpus_missing());
  const std::vector<Config> two = {{{0, 1}, MgpuReduction::kP2P}};
  for (const GemvCase& c : kGemvSmall) check_gemv<TypeParam>(c, two);
  for (const GemvCase& c : kGemvLarge) check_gemv<TypeParam>(c, two);
}

TYPED_TEST(GemvMgpuNccl, MatchesCpuReferenceOnOneGpu) {
  GP_SKIP_UNLESS(nccl_missing(1));
  const std::vector<Config> one = {{{0}, MgpuReduction::kNccl}};
  for (const GemvCase& c : kGemvSmall) check_gemv<TypeParam>(c, one);
}

TYPED_TEST(GemvMgpuNcclTwoGpus, MatchesCpuReference) {
  GP_SKIP_UNLESS(nccl_missing(2));
  const std::vector<Config> two = {{{0, 1}, MgpuReduction::kNccl}};
  for (const GemvCase& c : kGemvSmall) check_gemv<TypeParam>(c, two);
  for (const GemvCase& c : kGemvLarge) check_gemv<TypeParam>(c, two);
}

}  // namespace
}  // namespace gpuprobe
