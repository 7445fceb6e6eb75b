// The multi-GPU kernels' host side, on the CPU: the block-column cyclic layout's index maps against
// brute force (which GPU owns each column, global <-> local, local column counts, the index sums of
// the descriptors), the descriptors (the GPUs' stored elements add up to the triangle), the workspace
// queries, and the argument checks (every invalid argument is reported before any CUDA call; the
// pointers below are never dereferenced).
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv_mgpu.hpp"

namespace gpuprobe {
namespace {

using kernels::BlockCyclicLayout;
using kernels::BlockCyclicMatrix;
using kernels::Status;
using kernels::Trans;
using kernels::Uplo;

BlockCyclicLayout square(int n, int block, int gpus) { return {n, n, block, gpus}; }

const std::vector<std::tuple<int, int, int>> kLayouts = {  // cols, block, gpus
    {1, 1, 1},    {1, 64, 3},   {7, 2, 2},     {63, 16, 2},   {65, 64, 2}, {200, 48, 3},
    {1000, 100, 2}, {1000, 1, 4}, {4097, 256, 2}, {4097, 64, 8}, {300, 7, 5}, {129, 128, 1}};

TEST(MgpuLayout, IndexMapsMatchBruteForce) {
  for (const auto& [cols, block, gpus] : kLayouts) {
    SCOPED_TRACE(testing::Message() << "cols=" << cols << " b=" << block << " G=" << gpus);
    const BlockCyclicLayout L = square(cols, block, gpus);
    std::vector<int> next_local(gpus, 0);
    std::vector<long long> index_sum(gpus, 0);
    for (int j = 0; j < cols; ++j) {
      const int owner = (j / block) % gpus;
      ASSERT_EQ(L.owner(j), owner) << "j=" << j;
      // The owner's columns in increasing global order are its local columns 0, 1, 2, ...
      ASSERT_EQ(L.local_col(j), next_local[owner]) << "j=" << j;
      ASSERT_EQ(L.global_col(owner, next_local[owner]), j) << "j=" << j;
      for (int q = 0; q < gpus; ++q) {
        ASSERT_EQ(L.local_cols_before(q, j), next_local[q]) << "q=" << q << " j=" << j;
        ASSERT_EQ(L.global_index_sum_before(q, j), index_sum[q]) << "q=" << q << " j=" << j;
      }
      ++next_local[owner];
      index_sum[owner] += j;
    }
    int total = 0;
    for (int q = 0; q < gpus; ++q) {
      EXPECT_EQ(L.local_cols(q), next_local[q]);
      EXPECT_EQ(L.global_index_sum_before(q, cols), index_sum[q]);
      total += L.local_cols(q);
    }
    EXPECT_EQ(total, cols);
  }
}

TEST(MgpuLayout, LargeLayoutsStayExact) {
  // Near the int range: 64-bit index sums and no overflow in the maps.
  const BlockCyclicLayout L = square(2000000000, 1000, 3);
  const int j = 1999999999;
  const int q = L.owner(j);
  EXPECT_EQ(L.global_col(q, L.local_col(j)), j);
  EXPECT_EQ(L.local_cols(0) + L.local_cols(1) + L.local_cols(2), 2000000000);
  long long sum = 0;
  for (int g = 0; g < 3; ++g) sum += L.global_index_sum_before(g, L.cols);
  EXPECT_EQ(sum, 2000000000LL * 1999999999LL / 2);
}

TEST(MgpuDescriptors, StoredElementsAddUpToTheTriangle) {
  for (const auto& [cols, block, gpus] : kLayouts) {
    const BlockCyclicLayout L = square(cols, block, gpus);
    for (Uplo uplo : {Uplo::kLower, Uplo::kUpper})
      for (int offset : {0, 1, block - 1, block, cols / 3, cols - 1}) {
        if (offset < 0 || offset >= cols) continue;
        for (int n : {cols - offset, (cols - offset) / 2, 1}) {
          if (n < 1) continue;
          SCOPED_TRACE(testing::Message() << "cols=" << cols << " b=" << block << " G=" << gpus << " o=" << offset
                                          << " n=" << n << (uplo == Uplo::kLower ? " lower" : " upper"));
          long long total = 0;
          for (int q = 0; q < gpus; ++q) {
            long long brute = 0;
            for (int c = offset; c < offset + n; ++c)
              if (L.owner(c) == q) brute += uplo == Uplo::kLower ? offset + n - c : c - offset + 1;
            EXPECT_EQ(kernels::symv_mgpu_local_stored(L, q, uplo, n, offset), brute) << "q=" << q;
            total += brute;
          }
          EXPECT_EQ(total, static_cast<long long>(n) * (n + 1) / 2);
          // Minimal bytes: stored elements + x + y (twice with beta != 0), per GPU.
          const double b0 = kernels::symv_mgpu_local_min_bytes(L, 0, uplo, n, offset, 8, false);
          EXPECT_DOUBLE_EQ(b0, (kernels::symv_mgpu_local_stored(L, 0, uplo, n, offset) + 2.0 * n) * 8);
        }
      }
  }
  EXPECT_EQ(kernels::symv_mgpu_reduction_bytes(1, 1000, 8), 0.0);
  EXPECT_EQ(kernels::symv_mgpu_reduction_bytes(2, 1000, 8), 8000.0);
}

TEST(MgpuDescriptors, GemvLocalBytesCoverTheMatrix) {
  const BlockCyclicLayout L{300, 1000, 64, 3};
  double a_total = 0;
  for (int q = 0; q < 3; ++q)
    a_total += kernels::gemv_mgpu_local_min_bytes(L, q, Trans::kNoTrans, 200, 900, 50, 4, false) / 4.0 - 200;
  // Each GPU: 200 nl of A + nl of x + 200 of y; summed over the GPUs the A and x parts are 200 x 900 + 900.
  EXPECT_DOUBLE_EQ(a_total, 200.0 * 900 + 900);
  EXPECT_STREQ(kernels::gemv_mgpu_reduction_op(Trans::kTrans), "allgather");
  EXPECT_EQ(kernels::gemv_mgpu_reduction_bytes(Trans::kTrans, 2, 200, 900, 4), 3600.0);
  EXPECT_EQ(kernels::gemv_mgpu_reduction_bytes(Trans::kNoTrans, 2, 200, 900, 4), 800.0);
}

TEST(MgpuWorkspace, SymvWorkspaceIsSmallAgainstTheLocalArray) {
  for (int n : {4096, 16384, 65536})
    for (int gpus : {1, 2, 4}) {
      const BlockCyclicLayout L = square(n, 64, gpus);
      const double local = static_cast<double>(n) * L.local_cols(0);
      for (const double bytes : {double(kernels::symv_mgpu_workspace_bytes<float>(L)) / 4,
                                 double(kernels::symv_mgpu_workspace_bytes<double>(L)) / 8}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " G=" << gpus);
        EXPECT_GT(bytes, n);
        // Slots about 1/(64 sub) of the local array, row parts bounded, plus the vectors.
        EXPECT_LT(bytes, 0.01 * local + 2.0 * n + 9216.0 * 256 + 4096) << "elements " << bytes;
      }
    }
  EXPECT_EQ(kernels::symv_mgpu_workspace_bytes<float>(square(0, 64, 2)), 0u);
}

template <class T>
const T* fake(std::uintptr_t address) {
  return reinterpret_cast<const T*>(address);
}

template <class T>
class MgpuArgs : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MgpuArgs, Types);

// Two GPUs' fake arrays: A, x, y and workspaces at distinct fake addresses.
template <class T>
struct FakeOperands {
  const T* local[2] = {fake<T>(0x10000), fake<T>(0x20000)};
  const T* x[2] = {fake<T>(0x30000), fake<T>(0x40000)};
  T* y[2] = {const_cast<T*>(fake<T>(0x50000)), const_cast<T*>(fake<T>(0x60000))};
  void* ws[2] = {reinterpret_cast<void*>(0x70000), reinterpret_cast<void*>(0x80000)};
};

TYPED_TEST(MgpuArgs, SymvRejectsInvalidArgumentsInOrder) {
  using T = TypeParam;
  FakeOperands<T> f;
  const BlockCyclicLayout L = square(100, 16, 2);
  const BlockCyclicMatrix<T> A{L, f.local, 100};
  const std::size_t ws = kernels::symv_mgpu_workspace_bytes<T>(L);
  auto check = [&](Uplo uplo, int n, int offset, const BlockCyclicMatrix<T>& a, int incx, int incy,
                   std::size_t bytes) {
    return kernels::symv_mgpu_check_args<T>(uplo, n, offset, a, f.x, incx, f.y, incy, f.ws, bytes);
  };
  for (Uplo uplo : {Uplo::kLower, Uplo::kUpper}) {
    EXPECT_EQ(check(uplo, 100, 0, A, 1, 1, ws), Status::kSuccess);
    EXPECT_EQ(check(uplo, 37, 63, A, -2, 3, ws), Status::kSuccess);  // a trailing submatrix, strided vectors
    EXPECT_EQ(check(uplo, 10, 20, A, 1, 1, ws), Status::kSuccess);   // a principal submatrix inside
    EXPECT_EQ(check(uplo, -1, 0, A, 1, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(uplo, 10, -1, A, 1, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(uplo, 60, 41, A, 1, 1, ws), Status::kInvalidValue);  // past A's order
    EXPECT_EQ(check(uplo, 10, 0, A, 0, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(uplo, 10, 0, A, 1, 0, ws), Status::kInvalidValue);
    BlockCyclicMatrix<T> bad = A;
    bad.ldl = 99;
    EXPECT_EQ(check(uplo, 10, 0, bad, 1, 1, ws), Status::kInvalidValue);
    bad = A;
    bad.layout.block = 0;
    EXPECT_EQ(check(uplo, 10, 0, bad, 1, 1, ws), Status::kInvalidValue);
    bad = A;
    bad.layout.gpus = kernels::kMgpuMaxGpus + 1;
    EXPECT_EQ(check(uplo, 10, 0, bad, 1, 1, ws), Status::kInvalidValue);
    bad = A;
    bad.layout.rows = 99;  // not square
    EXPECT_EQ(check(uplo, 10, 0, bad, 1, 1, ws), Status::kInvalidValue);
    // n == 0 returns before pointers and workspace are looked at.
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, 0, 100, A, nullptr, 1, nullptr, 1, nullptr, 0), Status::kSuccess);
    // Null pointers, after invalid values.
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, 10, 0, A, nullptr, 1, f.y, 1, f.ws, ws), Status::kNullPointer);
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, 10, 0, A, f.x, 1, f.y, 1, nullptr, ws), Status::kNullPointer);
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, -1, 0, A, nullptr, 1, f.y, 1, f.ws, ws), Status::kInvalidValue);
    T* y_one_null[2] = {f.y[0], nullptr};
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, 10, 0, A, f.x, 1, y_one_null, 1, f.ws, ws),
              Status::kNullPointer);
    const T* local_one_null[2] = {f.local[0], nullptr};
    EXPECT_EQ(check(uplo, 10, 0, BlockCyclicMatrix<T>{L, local_one_null, 100}, 1, 1, ws), Status::kNullPointer);
    // A GPU without local columns may pass no array: 2 GPUs, 10 columns in blocks of 16.
    const BlockCyclicMatrix<T> small{square(10, 16, 2), local_one_null, 10};
    EXPECT_EQ(kernels::symv_mgpu_check_args<T>(uplo, 10, 0, small, f.x, 1, f.y, 1, f.ws,
                                                kernels::symv_mgpu_workspace_bytes<T>(small.layout)),
              Status::kSuccess);
    EXPECT_EQ(check(uplo, 10, 0, A, 1, 1, ws - 1), Status::kWorkspaceTooSmall);
    EXPECT_EQ(check(uplo, 1, 99, A, 1, 1, 0), Status::kWorkspaceTooSmall);  // one workspace size for all calls
  }
  EXPECT_EQ(check(static_cast<Uplo>(7), 10, 0, A, 1, 1, ws), Status::kInvalidValue);
}

TYPED_TEST(MgpuArgs, GemvRejectsInvalidArgumentsInOrder) {
  using T = TypeParam;
  FakeOperands<T> f;
  const BlockCyclicLayout L{120, 100, 16, 2};  // 120 rows, 100 columns
  const BlockCyclicMatrix<T> A{L, f.local, 124};
  for (Trans trans : {Trans::kNoTrans, Trans::kTrans}) {
    auto check = [&](int m, int n, int ro, int co, int incx, int incy, std::size_t bytes) {
      return kernels::gemv_mgpu_check_args<T>(trans, m, n, ro, co, A, f.x, incx, f.y, incy, f.ws, bytes);
    };
    const std::size_t ws = kernels::gemv_mgpu_workspace_bytes<T>(trans, 100, 70, 30, L);
    EXPECT_GT(ws, 0u);
    EXPECT_EQ(check(100, 70, 20, 30, 1, 1, ws), Status::kSuccess);
    EXPECT_EQ(check(100, 70, 20, 30, -1, 2, ws), Status::kSuccess);
    EXPECT_EQ(check(100, 70, 21, 30, 1, 1, ws), Status::kInvalidValue);  // rows past A's
    EXPECT_EQ(check(100, 70, 20, 31, 1, 1, ws), Status::kInvalidValue);  // columns past A's
    EXPECT_EQ(check(-1, 70, 0, 0, 1, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(10, -1, 0, 0, 1, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(10, 10, -1, 0, 1, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(10, 10, 0, 0, 0, 1, ws), Status::kInvalidValue);
    EXPECT_EQ(check(0, 10, 0, 0, 1, 1, 0), Status::kSuccess);  // empty: quick return
    EXPECT_EQ(check(10, 0, 0, 0, 1, 1, 0), Status::kSuccess);
    EXPECT_EQ(check(100, 70, 20, 30, 1, 1, ws - 1), Status::kWorkspaceTooSmall);
    EXPECT_EQ(kernels::gemv_mgpu_check_args<T>(trans, 100, 70, 20, 30, A, f.x, 1, nullptr, 1, f.ws, ws),
              Status::kNullPointer);
    BlockCyclicMatrix<T> bad = A;
    bad.ldl = 119;
    EXPECT_EQ(kernels::gemv_mgpu_check_args<T>(trans, 10, 10, 0, 0, bad, f.x, 1, f.y, 1, f.ws, ws),
              Status::kInvalidValue);
  }
  EXPECT_EQ(kernels::gemv_mgpu_check_args<T>(static_cast<Trans>(5), 10, 10, 0, 0, A, f.x, 1, f.y, 1, f.ws, 1 << 20),
            Status::kInvalidValue);
}

TEST(MgpuReduction, NamesAndDefault) {
  EXPECT_STREQ(kernels::mgpu_reduction_name(kernels::MgpuReduction::kP2P), "p2p");
  EXPECT_STREQ(kernels::mgpu_reduction_name(kernels::MgpuReduction::kNccl), "nccl");
  EXPECT_EQ(kernels::kDefaultMgpuReduction, kernels::MgpuReduction::kP2P);
}

}  // namespace
}  // namespace gpuprobe
