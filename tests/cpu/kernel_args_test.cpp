// SYMV and GEMV argument validation and workspace sizes: every invalid argument is reported as an
// error Status before any CUDA call (the pointers below are never dereferenced), so these tests run,
// and must pass, on a machine without a GPU. Also the descriptors' arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "gpuprobe/kernels/gemv.hpp"
#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv.hpp"

namespace gpuprobe {
namespace {

using kernels::GemvImpl;
using kernels::Status;
using kernels::SymvImpl;
using kernels::Trans;
using kernels::Uplo;

template <class T>
const T* fake(std::uintptr_t address) {
  return reinterpret_cast<const T*>(address);
}
void* const kFakeWorkspace = reinterpret_cast<void*>(0x4000);
constexpr std::size_t kHuge = std::size_t(1) << 40;  // "enough workspace" without allocating any
// Every implementation of the library's tables (kAuto included).
std::vector<GemvImpl> gemv_impls() {
  std::vector<GemvImpl> impls;
  for (const kernels::GemvImplRecord& r : kernels::kGemvImpls) impls.push_back(r.impl);
  return impls;
}
std::vector<SymvImpl> symv_impls() {
  std::vector<SymvImpl> impls;
  for (const kernels::SymvImplRecord& r : kernels::kSymvImpls) impls.push_back(r.impl);
  return impls;
}

template <class T>
Status symv_call(Uplo uplo, int n, int lda, int incx, int incy, const T* A, const T* x, T* y, void* ws,
                 std::size_t ws_bytes, SymvImpl impl = SymvImpl::kAuto, T alpha = T(1), T beta = T(0)) {
  return kernels::symv<T>(uplo, n, alpha, A, lda, x, incx, beta, y, incy, ws, ws_bytes, nullptr, impl);
}

template <class T>
class KernelArgs : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(KernelArgs, Types);

TYPED_TEST(KernelArgs, SymvRejectsInvalidValuesBeforeAnyLaunch) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  T* y = const_cast<T*>(fake<T>(0x3000));
  for (SymvImpl impl : symv_impls())
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
      EXPECT_EQ(symv_call<T>(uplo, -1, 1, 1, 1, A, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      EXPECT_EQ(symv_call<T>(uplo, 10, 9, 1, 1, A, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      EXPECT_EQ(symv_call<T>(uplo, 0, 0, 1, 1, A, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      EXPECT_EQ(symv_call<T>(uplo, 10, 10, 0, 1, A, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      EXPECT_EQ(symv_call<T>(uplo, 10, 10, 1, 0, A, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      // Invalid values take precedence over null pointers.
      EXPECT_EQ(symv_call<T>(uplo, 10, 9, 1, 1, nullptr, x, y, kFakeWorkspace, kHuge, impl), Status::kInvalidValue);
      EXPECT_EQ(symv_call<T>(uplo, 10, 10, 1, 1, nullptr, x, y, kFakeWorkspace, kHuge, impl), Status::kNullPointer);
      EXPECT_EQ(symv_call<T>(uplo, 10, 10, 1, 1, A, nullptr, y, kFakeWorkspace, kHuge, impl), Status::kNullPointer);
      EXPECT_EQ(symv_call<T>(uplo, 10, 10, 1, 1, A, x, nullptr, kFakeWorkspace, kHuge, impl), Status::kNullPointer);
    }
  // An out-of-range enum value.
  EXPECT_EQ(symv_call<T>(static_cast<Uplo>(7), 10, 10, 1, 1, A, x, y, kFakeWorkspace, kHuge), Status::kInvalidValue);
  EXPECT_EQ(symv_call<T>(Uplo::kLower, 10, 10, 1, 1, A, x, y, kFakeWorkspace, kHuge, SymvImpl::kEnd),
            Status::kInvalidValue);
  EXPECT_EQ(symv_call<T>(Uplo::kLower, 10, 10, 1, 1, A, x, y, kFakeWorkspace, kHuge, static_cast<SymvImpl>(-1)),
            Status::kInvalidValue);
}

TYPED_TEST(KernelArgs, SymvChecksTheWorkspace) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  T* y = const_cast<T*>(fake<T>(0x3000));
  for (int n : {1, 64, 1000, 4097}) {
    for (SymvImpl impl : {SymvImpl::kAuto, SymvImpl::kOblivious, SymvImpl::kAwareV5, SymvImpl::kAwareV6}) {
      const std::size_t need = kernels::symv_workspace_bytes<T>(n, impl);
      ASSERT_GT(need, 0u) << n;
      EXPECT_EQ(kernels::symv_check_args<T>(Uplo::kLower, n, A, n, x, 1, y, 1, kFakeWorkspace, need, impl),
                Status::kSuccess);
      EXPECT_EQ(symv_call<T>(Uplo::kLower, n, n, 1, 1, A, x, y, kFakeWorkspace, need - 1, impl),
                Status::kWorkspaceTooSmall);
      EXPECT_EQ(symv_call<T>(Uplo::kUpper, n, n, 1, 1, A, x, y, nullptr, need, impl), Status::kNullPointer);
    }
    // The atomic variant needs none.
    EXPECT_EQ(kernels::symv_workspace_bytes<T>(n, SymvImpl::kAwareAtomic), 0u);
    EXPECT_EQ(kernels::symv_check_args<T>(Uplo::kUpper, n, A, n, x, 1, y, 1, nullptr, 0, SymvImpl::kAwareAtomic),
              Status::kSuccess);
  }
}

TYPED_TEST(KernelArgs, SymvQuickReturnsLaunchNothing) {
  using T = TypeParam;
  // n == 0: nothing is read, null pointers are fine; alpha == 0 and beta == 1: y stays as it is.
  EXPECT_EQ(symv_call<T>(Uplo::kLower, 0, 1, 1, 1, nullptr, nullptr, nullptr, nullptr, 0), Status::kSuccess);
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  T* y = const_cast<T*>(fake<T>(0x3000));
  EXPECT_EQ(symv_call<T>(Uplo::kUpper, 10, 10, -1, 2, A, x, y, kFakeWorkspace, kHuge, SymvImpl::kAuto, T(0), T(1)),
            Status::kSuccess);
}

TYPED_TEST(KernelArgs, GemvRejectsInvalidValuesBeforeAnyLaunch) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  T* y = const_cast<T*>(fake<T>(0x3000));
  for (GemvImpl impl : gemv_impls()) {
    auto call = [&](Trans t, int m, int n, int lda, int incx, int incy, const T* a, const T* xx, T* yy) {
      return kernels::gemv<T>(t, m, n, T(1), a, lda, xx, incx, T(0), yy, incy, kFakeWorkspace, kHuge, nullptr, impl);
    };
    for (Trans t : {Trans::kNoTrans, Trans::kTrans}) {
      EXPECT_EQ(call(t, -1, 5, 1, 1, 1, A, x, y), Status::kInvalidValue);
      EXPECT_EQ(call(t, 5, -1, 5, 1, 1, A, x, y), Status::kInvalidValue);
      EXPECT_EQ(call(t, 10, 5, 9, 1, 1, A, x, y), Status::kInvalidValue);   // lda < m, for either trans
      EXPECT_EQ(call(t, 0, 5, 0, 1, 1, A, x, y), Status::kInvalidValue);    // lda >= 1
      EXPECT_EQ(call(t, 10, 5, 10, 0, 1, A, x, y), Status::kInvalidValue);
      EXPECT_EQ(call(t, 10, 5, 10, 1, 0, A, x, y), Status::kInvalidValue);
      EXPECT_EQ(call(t, 10, 5, 10, 1, 1, nullptr, x, y), Status::kNullPointer);
      EXPECT_EQ(call(t, 10, 5, 10, 1, 1, A, nullptr, y), Status::kNullPointer);
      EXPECT_EQ(call(t, 10, 5, 10, 1, 1, A, x, nullptr), Status::kNullPointer);
      // Empty problems: quick return, nothing read, null pointers fine.
      EXPECT_EQ(call(t, 0, 5, 1, 1, 1, nullptr, nullptr, nullptr), Status::kSuccess);
      EXPECT_EQ(call(t, 5, 0, 5, 1, 1, nullptr, nullptr, nullptr), Status::kSuccess);
    }
    EXPECT_EQ(call(static_cast<Trans>(5), 10, 5, 10, 1, 1, A, x, y), Status::kInvalidValue);
  }
  // An out-of-range implementation (one past the last, or negative).
  for (GemvImpl bad : {GemvImpl::kEnd, static_cast<GemvImpl>(-1)})
    EXPECT_EQ(kernels::gemv<T>(Trans::kNoTrans, 10, 5, T(1), A, 10, x, 1, T(0), y, 1, kFakeWorkspace, kHuge, nullptr,
                               bad),
              Status::kInvalidValue);
}

TYPED_TEST(KernelArgs, GemvChecksTheWorkspace) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  T* y = const_cast<T*>(fake<T>(0x3000));
  for (GemvImpl impl : gemv_impls()) {
    bool some_split = false;
    for (Trans t : {Trans::kNoTrans, Trans::kTrans})
      for (int size : {1000, 4096, 16384}) {
        const std::size_t need = kernels::gemv_workspace_bytes<T>(t, size, size, impl);
        if (need == 0) continue;
        some_split = true;
        EXPECT_EQ(kernels::gemv<T>(t, size, size, T(1), A, size, x, 1, T(0), y, 1, kFakeWorkspace, need - 1, nullptr,
                                   impl),
                  Status::kWorkspaceTooSmall);
        EXPECT_EQ(kernels::gemv<T>(t, size, size, T(1), A, size, x, 1, T(0), y, 1, nullptr, need, nullptr, impl),
                  Status::kNullPointer);
        EXPECT_EQ(kernels::gemv_check_args<T>(t, size, size, A, size, x, 1, y, 1, kFakeWorkspace, need, impl),
                  Status::kSuccess);
      }
    // Row blocks never split: N runs whole rows, T column blocks (GemvRowBlocks checks both).
    const bool never_splits = impl == GemvImpl::kRowBlocks || impl == GemvImpl::kRowBlocksSector;
    EXPECT_EQ(some_split, !never_splits)
        << "square sizes up to 16384 are expected to split (too few row/column units): "
        << kernels::gemv_impl_name(impl);
  }
}

TYPED_TEST(KernelArgs, GemvSinglePassWorkspace) {
  using T = TypeParam;
  for (GemvImpl impl : {GemvImpl::kSinglePass}) {
    // Split: a 16 KiB counter area, then at least one partial per output and segment (here >= 2).
    const std::size_t square = kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, 16384, 16384, impl);
    EXPECT_GE(square, 16384u + 2 * 16384 * sizeof(T));
    // The deep shapes (about one wave of 32-output units over whole rows / columns; N below 192 units
    // in 512-thread blocks): no split, none.
    for (int size : {3072, 4096, 4097, 6112, 6144, 8192, 8448})
      for (Trans t : {Trans::kNoTrans, Trans::kTrans})
        EXPECT_EQ(kernels::gemv_workspace_bytes<T>(t, size, size, impl), 0u) << size;
    // Just outside them (95 or 265 units, or a short reduced dimension): split again.
    for (Trans t : {Trans::kNoTrans, Trans::kTrans})
      for (auto [m, n] : {std::pair<int, int>{3040, 3040}, {8480, 8480}})
        EXPECT_GT(kernels::gemv_workspace_bytes<T>(t, m, n, impl), 0u) << m << " x " << n;
    EXPECT_GT(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, 4096, 2047, impl), 0u);
    EXPECT_GT(kernels::gemv_workspace_bytes<T>(Trans::kTrans, 2047, 4096, impl), 0u);
    // Wide N (one unit, many segments: two levels) and tall T: split; tall N: enough units, none.
    EXPECT_GT(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, 64, 1 << 20, impl), 16384u);
    EXPECT_GT(kernels::gemv_workspace_bytes<T>(Trans::kTrans, 1 << 20, 64, impl), 16384u);
    EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, 1 << 20, 64, impl), 0u);
    EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kTrans, 64, 1 << 20, impl), 0u);
    // Every shape the benchmarks use passes the checks (grid and counter-area limits).
    const T* A = fake<T>(0x1000);
    const T* x = fake<T>(0x2000);
    const T* y = fake<T>(0x3000);
    const int shapes[][2] = {{512, 512},   {4096, 4096},   {4097, 4097},   {32768, 32768}, {1 << 20, 64},
                             {1 << 18, 512}, {64, 1 << 20}, {512, 1 << 18}, {100000, 1000}, {1000, 100000}};
    for (const auto& s : shapes)
      for (Trans t : {Trans::kNoTrans, Trans::kTrans})
        EXPECT_EQ(kernels::gemv_check_args<T>(t, s[0], s[1], A, s[0], x, 1, y, 1, kFakeWorkspace, kHuge, impl),
                  Status::kSuccess)
            << s[0] << " x " << s[1];
  }
  // The default (kAuto) needs what the implementation it picks needs; at the column-block rule's
  // edges too (v7.2: 512 rows are 2 KB float columns (v2 / v3, a workspace) but 4 KB double ones
  // (column blocks, none)).
  for (Trans t : {Trans::kNoTrans, Trans::kTrans})
    for (auto [m, n] : {std::pair<int, int>{64, 1 << 20}, {2048, 2048}, {4096, 4096}, {512, 512}, {512, 1 << 18},
                        {256, 512}, {257, 512}, {513, 512}, {300, 700}, {1 << 20, 511}})
      EXPECT_EQ(kernels::gemv_workspace_bytes<T>(t, m, n),
                kernels::gemv_workspace_bytes<T>(t, m, n, kernels::gemv_auto_impl<T>(t, m, n)))
          << m << " x " << n;
  // T 512 x 512: double on column blocks, no workspace (v2, which kAuto ran there before v7.2, splits:
  // 24576 bytes in the benchmarks); float still on v2 (no split).
  const std::size_t v2_t512 = kernels::gemv_workspace_bytes<T>(Trans::kTrans, 512, 512, GemvImpl::kSplitReduce);
  EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kTrans, 512, 512), sizeof(T) == 8 ? std::size_t(0) : v2_t512);
  if (sizeof(T) == 8) EXPECT_GT(v2_t512, 0u);
  // v2's partials come after v3's 16 KiB counter area (kAuto switches between them by shape, and one
  // workspace may serve both in turn).
  // 2048 N: 16 segments of 128 columns x 2048 partials (the workspace_bytes the benchmarks record).
  EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, 2048, 2048, GemvImpl::kSplitReduce),
            16384 + 16 * 2048 * sizeof(T));
}

// kAuto's kTrans choice: column blocks for columns of more than 2048 bytes (m sizeof(T) > 2048: more
// than 512 float / 256 double rows), at least 512 of them; else `otherwise`.
template <class T>
GemvImpl expected_t(int m, int n, GemvImpl otherwise) {
  return static_cast<long long>(m) * sizeof(T) > 2048 && n >= 512 ? GemvImpl::kColumnBlocks : otherwise;
}

TYPED_TEST(KernelArgs, GemvAutoPicksRowBlocksColumnBlocksOrSinglePassByShape) {
  using T = TypeParam;
  // Thin: at most 512 rows or columns and at least 64 x as many of the other; large: m n >= 2^26;
  // deep: y in 96 ... 264 units of 32 and >= 2048 reduced. T: column blocks first (expected_t).
  const std::pair<int, int> v3_both[] = {{64, 1 << 20},  {1 << 20, 64},   {1 << 18, 512},  {512, 1 << 18},
                                         {1, 64},        {8, 100000},     {8192, 8192},    {32768, 32768},
                                         {100000, 1000}, {1000, 100000},  {65536, 1024},   {8191, 8191},
                                         {7000, 7000},   {6113, 8448},    {256, 1 << 18}};
  const std::pair<int, int> v2_both[] = {{2048, 2048}, {3040, 3040}, {513, 1 << 16}};
  // Small N (v9): A of at most 8 MiB with at most 1024 columns, not thin, runs row blocks of 8 rows
  // (float: 32-byte pieces, double: 64); wider A of at most 4 MiB runs v3 (v7.3, v8.1); T as the
  // rules above (v2 unless column blocks). 1024 x 1024 is 4 MiB in float, 8 MiB in double.
  const bool dbl = sizeof(T) == 8;
  const GemvImpl row_blocks = dbl ? GemvImpl::kRowBlocks : GemvImpl::kRowBlocksSector;
  const std::pair<int, int> small[] = {{512, 512}, {1, 63},    {256, 512},  {257, 512},
                                       {300, 700}, {724, 724}, {1000, 1000}, {1024, 1024}};
  for (auto [m, n] : v3_both) {
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), GemvImpl::kSinglePass) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n), expected_t<T>(m, n, GemvImpl::kSinglePass))
        << m << " x " << n;
  }
  for (auto [m, n] : small) {
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), row_blocks) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n), expected_t<T>(m, n, GemvImpl::kSplitReduce))
        << m << " x " << n;
  }
  // The row-block bounds: 8 MiB (one more row is not: v2), 1024 columns (one more is not: v3 at 4 MiB
  // or less, else v2), thin shapes (v3 even when small: 1 x 64, 8 x 1000, 16384 x 16).
  const int rows_at_bound = static_cast<int>((8 << 20) / (1024 * sizeof(T)));  // 2048 float, 1024 double
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, rows_at_bound, 1024), row_blocks);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, rows_at_bound + 1, 1024), GemvImpl::kSplitReduce);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 512, 1025), dbl ? GemvImpl::kSplitReduce : GemvImpl::kSinglePass);
  for (auto [m, n] : {std::pair<int, int>{1, 64}, {8, 1000}, {16384, 16}})
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), GemvImpl::kSinglePass) << m << " x " << n;
  // v3's bound for the wider small N: 4 MiB of A is small, one more column is not (256 rows: 4096 /
  // 2048 columns).
  const int cols_at_bound = static_cast<int>((4 << 20) / (256 * sizeof(T)));
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 256, cols_at_bound), GemvImpl::kSinglePass);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 256, cols_at_bound + 1), GemvImpl::kSplitReduce);
  for (auto [m, n] : v2_both) {
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), GemvImpl::kSplitReduce) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n), expected_t<T>(m, n, GemvImpl::kSplitReduce))
        << m << " x " << n;
  }
  // T at the edges of the column-block rule (v7.2: bytes of a column, > 2048): float 512 rows (2 KB)
  // not, 513 yes; double 256 rows (2 KB) not, 257 yes, 512 (4 KB: D T 512 x 512 and 512 x 262144 of
  // the benchmarks) yes; fewer than 512 columns never.
  const GemvImpl cb_or_v2 = dbl ? GemvImpl::kColumnBlocks : GemvImpl::kSplitReduce;
  const GemvImpl cb_or_v3 = dbl ? GemvImpl::kColumnBlocks : GemvImpl::kSinglePass;
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 512, 512), cb_or_v2);        // 4 KB / 2 KB columns
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 512, 1 << 18), cb_or_v3);    // 4 KB / 2 KB columns
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 513, 512), GemvImpl::kColumnBlocks);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 256, 512), GemvImpl::kSplitReduce);  // 2 KB double columns
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 257, 512), cb_or_v2);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 256, 1 << 18), GemvImpl::kSinglePass);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 257, 1 << 18), cb_or_v3);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 300, 700), cb_or_v2);  // 2400-byte double columns
  for (int m : {int(2048 / sizeof(T)) + 1, 513, 4096, 1 << 20}) {  // n = 511: too few columns
    EXPECT_NE(kernels::gemv_auto_impl<T>(Trans::kTrans, m, 511), GemvImpl::kColumnBlocks) << m;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, 512), GemvImpl::kColumnBlocks) << m;
  }
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 1 << 20, 511), GemvImpl::kSinglePass);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 1 << 20, 64), GemvImpl::kSinglePass);
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, 64, 1 << 20), GemvImpl::kSinglePass);  // 256 / 512 B columns
  // Deep for both: 96 ... 264 units of 32 of y over >= 2048 reduced (N below 192 units in 512-thread
  // blocks); outside that range in one direction only, the other stays on v2.
  for (auto [m, n] : {std::pair<int, int>{4096, 4096}, {4097, 4097}, {6112, 6112}}) {
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n), GemvImpl::kColumnBlocks) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), GemvImpl::kSinglePass) << m << " x " << n;
  }
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 8449, 4096), GemvImpl::kSplitReduce);  // deep T only
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 3041, 2048), GemvImpl::kSinglePass);  // deep N only
  EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, 3040, 2048), GemvImpl::kSplitReduce);
  // Every T shape of the benchmarks with more than 512 rows and >= 512 columns keeps column blocks.
  for (auto [m, n] : {std::pair<int, int>{1000, 1000}, {1024, 1024}, {2048, 2048}, {4096, 4096}, {4097, 4097},
                      {8192, 8192}, {16384, 16384}, {32768, 32768}, {1000, 100000}, {100000, 1000}, {1 << 18, 512}})
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n), GemvImpl::kColumnBlocks) << m << " x " << n;
  // An explicit choice is kept.
  for (GemvImpl impl : {GemvImpl::kSplitReduce, GemvImpl::kSinglePass})
    for (Trans t : {Trans::kNoTrans, Trans::kTrans}) {
      EXPECT_EQ(kernels::gemv_auto_impl<T>(t, 64, 1 << 20, impl), impl);
      EXPECT_EQ(kernels::gemv_auto_impl<T>(t, 512, 512, impl), impl);
    }
  EXPECT_STREQ(kernels::gemv_impl_name(GemvImpl::kAuto), "auto");
}

TYPED_TEST(KernelArgs, GemvColumnBlocks) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  const T* y = fake<T>(0x3000);
  const std::pair<int, int> shapes[] = {{1, 1},         {4096, 4096},  {4097, 4097}, {8192, 8192}, {16384, 16384},
                                        {32768, 32768}, {1 << 20, 64}, {64, 1 << 20}, {100000, 1000},
                                        {1000, 100000}, {2048, 3041}, {512, 512},   {256, 512},   {257, 512},
                                        {300, 700},     {512, 1 << 18}, {513, 511}};
  for (auto [m, n] : shapes) {
    // kAuto picks it for T only (expected_t), never for N.
    EXPECT_NE(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n), GemvImpl::kColumnBlocks) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n) == GemvImpl::kColumnBlocks,
              static_cast<long long>(m) * sizeof(T) > 2048 && n >= 512)
        << m << " x " << n;
    // kTrans: its own kernel, one block per column, no workspace; any n fits the grid's x dimension.
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n, GemvImpl::kColumnBlocks), GemvImpl::kColumnBlocks);
    EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kTrans, m, n, GemvImpl::kColumnBlocks), 0u) << m << " x " << n;
    EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kTrans, m, n, A, m, x, 1, y, 1, nullptr, 0, GemvImpl::kColumnBlocks),
              Status::kSuccess)
        << m << " x " << n;
    // kNoTrans: kSinglePass, with its workspace.
    EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n, GemvImpl::kColumnBlocks), GemvImpl::kSinglePass);
    EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, m, n, GemvImpl::kColumnBlocks),
              kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, m, n, GemvImpl::kSinglePass))
        << m << " x " << n;
  }
  EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kTrans, 10, 1 << 30, A, 10, x, 1, y, 1, nullptr, 0,
                                        GemvImpl::kColumnBlocks),
            Status::kSuccess);
}

TYPED_TEST(KernelArgs, GemvRowBlocks) {
  using T = TypeParam;
  const T* A = fake<T>(0x1000);
  const T* x = fake<T>(0x2000);
  const T* y = fake<T>(0x3000);
  const std::pair<int, int> shapes[] = {{1, 1},      {512, 512},   {1000, 1000},  {1024, 1024}, {4097, 4097},
                                        {1 << 20, 64}, {64, 1 << 20}, {32768, 32768}, {3, 300}};
  for (auto [m, n] : shapes)
    for (GemvImpl impl : {GemvImpl::kRowBlocks, GemvImpl::kRowBlocksSector}) {
      // kNoTrans: its own kernel, one block per 64 (32) bytes of rows, no workspace.
      EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kNoTrans, m, n, impl), impl);
      EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kNoTrans, m, n, impl), 0u) << m << " x " << n;
      EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kNoTrans, m, n, A, m, x, 1, y, 1, nullptr, 0, impl),
                Status::kSuccess)
          << m << " x " << n;
      // kTrans: its counterpart, column blocks (no workspace either).
      EXPECT_EQ(kernels::gemv_auto_impl<T>(Trans::kTrans, m, n, impl), GemvImpl::kColumnBlocks);
      EXPECT_EQ(kernels::gemv_workspace_bytes<T>(Trans::kTrans, m, n, impl), 0u) << m << " x " << n;
    }
  // Any m fits the grid's x dimension (m / 8 blocks at most); bad arguments are still refused.
  EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kNoTrans, 1 << 30, 2, A, 1 << 30, x, 1, y, 1, nullptr, 0,
                                        GemvImpl::kRowBlocksSector),
            Status::kSuccess);
  EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kNoTrans, 10, 10, A, 9, x, 1, y, 1, nullptr, 0, GemvImpl::kRowBlocks),
            Status::kInvalidValue);
  EXPECT_EQ(kernels::gemv_check_args<T>(Trans::kNoTrans, 10, 10, nullptr, 10, x, 1, y, 1, nullptr, 0,
                                        GemvImpl::kRowBlocks),
            Status::kNullPointer);
}

TEST(KernelAuto, SymvPicksV6OrV5WhereV6sPartialsWouldLeaveTheL2) {
  constexpr long long kH100L2 = 50LL << 20;
  for (int n : {1, 512, 1000, 2048, 4097, 8192, 8193, 16384, 24576, 32768})
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
      // float: always v6 (v5's geometry is v6's); unknown L2 (0): v6.
      EXPECT_EQ(kernels::symv_auto_impl<float>(uplo, n, SymvImpl::kAuto, kH100L2), SymvImpl::kAwareV6) << n;
      EXPECT_EQ(kernels::symv_auto_impl<double>(uplo, n, SymvImpl::kAuto, 0), SymvImpl::kAwareV6) << n;
      // double: v5 once v6's partials exceed half the L2 (32768: 37.7 MB; 24576: 22.8 MB).
      EXPECT_EQ(kernels::symv_auto_impl<double>(uplo, n, SymvImpl::kAuto, kH100L2),
                n >= 32768 ? SymvImpl::kAwareV5 : SymvImpl::kAwareV6)
          << n;
      EXPECT_EQ(kernels::symv_auto_impl<double>(uplo, n, SymvImpl::kAuto, 6LL << 20),
                n >= 8192 ? SymvImpl::kAwareV5 : SymvImpl::kAwareV6)  // a smaller L2: earlier
          << n;
    }
  for (SymvImpl impl : symv_impls())
    if (impl != SymvImpl::kAuto) EXPECT_EQ(kernels::symv_auto_impl<double>(Uplo::kLower, 32768, impl, kH100L2), impl);
  // Its workspace serves every record it may be switched to (not the baselines), in either precision
  // and on any L2: the largest of theirs.
  for (int n : {100, 4096, 16384, 32768}) {
    std::size_t largest_float = 0, largest_double = 0;
    for (const kernels::SymvImplRecord& r : kernels::kSymvImpls)
      if (r.impl != SymvImpl::kAuto && !r.baseline) {
        largest_float = std::max(largest_float, kernels::symv_workspace_bytes<float>(n, r.impl));
        largest_double = std::max(largest_double, kernels::symv_workspace_bytes<double>(n, r.impl));
      }
    EXPECT_GT(largest_float, 0u) << n;
    EXPECT_EQ(kernels::symv_workspace_bytes<float>(n), largest_float) << n;
    EXPECT_EQ(kernels::symv_workspace_bytes<double>(n), largest_double) << n;
  }
  EXPECT_STREQ(kernels::symv_impl_name(SymvImpl::kAuto), "auto");
}

TEST(KernelWorkspace, GemvWorkspaceInitChecksItsArguments) {
  EXPECT_EQ(kernels::gemv_workspace_init(nullptr, 0, nullptr), Status::kSuccess);
  EXPECT_EQ(kernels::gemv_workspace_init(nullptr, 64, nullptr), Status::kNullPointer);
}

TEST(KernelWorkspace, SymvAtMostOnePercentOfTheMatrixFrom4096) {
  for (int n : {4096, 4097, 8192, 10000, 16384, 32768, 65536})
    for (SymvImpl impl : symv_impls()) {
      const double matrix = double(n) * n;
      EXPECT_LE(kernels::symv_workspace_bytes<float>(n, impl) / 4.0, 0.01 * matrix) << n;
      EXPECT_LE(kernels::symv_workspace_bytes<double>(n, impl) / 8.0, 0.01 * matrix) << n;
    }
}

TEST(KernelDescriptors, CountTheStoredTriangleAndTheVectors) {
  // SYMV n = 4: triangle 10, x 4, y 4 (+4 read when beta != 0); flops 2 n^2.
  EXPECT_DOUBLE_EQ(kernels::symv_min_bytes(4, 4, false), (10 + 4 + 4) * 4.0);
  EXPECT_DOUBLE_EQ(kernels::symv_min_bytes(4, 8, true), (10 + 4 + 8) * 8.0);
  EXPECT_DOUBLE_EQ(kernels::symv_flops(4), 32.0);
  // GEMV 3 x 5: A 15; N: x 5, y 3; T: x 3, y 5.
  EXPECT_DOUBLE_EQ(kernels::gemv_min_bytes(Trans::kNoTrans, 3, 5, 4, false), (15 + 5 + 3) * 4.0);
  EXPECT_DOUBLE_EQ(kernels::gemv_min_bytes(Trans::kTrans, 3, 5, 4, true), (15 + 3 + 10) * 4.0);
  EXPECT_DOUBLE_EQ(kernels::gemv_flops(3, 5), 30.0);
  // No int overflow at the benchmark's largest shapes.
  EXPECT_DOUBLE_EQ(kernels::symv_flops(65536), 2.0 * 65536.0 * 65536.0);
  EXPECT_DOUBLE_EQ(kernels::sgemm_flops(2, 3, 4), 48.0);
}

}  // namespace
}  // namespace gpuprobe
