// SGEMM argument validation: every invalid argument is reported as an error Status before any CUDA
// call, so these tests run (and must pass) on a machine without a GPU.
#include <gtest/gtest.h>

#include "gpuprobe/kernels/sgemm.hpp"

namespace gpuprobe {
namespace {

using kernels::SgemmImpl;
using kernels::Status;
using kernels::Trans;

constexpr Trans kN = Trans::kNoTrans;
constexpr Trans kT = Trans::kTrans;

// Never dereferenced: invalid calls must return before touching memory or the GPU.
const float* const kFakeA = reinterpret_cast<const float*>(0x1000);
const float* const kFakeB = reinterpret_cast<const float*>(0x2000);
float* const kFakeC = reinterpret_cast<float*>(0x3000);

Status call(Trans ta, Trans tb, int m, int n, int k, int lda, int ldb, int ldc, const float* A = kFakeA,
            const float* B = kFakeB, float* C = kFakeC, SgemmImpl impl = SgemmImpl::kTuned) {
  return kernels::sgemm(ta, tb, m, n, k, 1.f, A, lda, B, ldb, 0.f, C, ldc, nullptr, impl);
}

TEST(SgemmArgs, NegativeDimensionsAreInvalid) {
  EXPECT_EQ(call(kN, kN, -1, 4, 4, 4, 4, 4), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, 4, -1, 4, 4, 4, 4), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, 4, 4, -1, 4, 4, 4), Status::kInvalidValue);
}

TEST(SgemmArgs, LeadingDimensionsFollowTheStoredShape) {
  // A is m x k (lda >= m) untransposed, k x m (lda >= k) transposed; likewise B; ldc >= m.
  const int m = 10, n = 20, k = 30;
  EXPECT_EQ(call(kN, kN, m, n, k, m - 1, k, m), Status::kInvalidValue);
  EXPECT_EQ(call(kT, kN, m, n, k, k - 1, k, m), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, m, n, k, m, k - 1, m), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kT, m, n, k, m, n - 1, m), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, m, n, k, m, k, m - 1), Status::kInvalidValue);
  // The right sizes for the other transposition are not enough: lda = m < k when A is transposed.
  EXPECT_EQ(call(kT, kT, m, n, k, m, n, m), Status::kInvalidValue);
  // Leading dimensions are at least 1 even for empty matrices.
  EXPECT_EQ(call(kN, kN, 0, 0, 0, 0, 1, 1), Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, 0, 0, 0, 1, 1, 0), Status::kInvalidValue);
  EXPECT_EQ(kernels::sgemm_check_args(kT, kT, m, n, k, kFakeA, k, kFakeB, n, kFakeC, m), Status::kSuccess);
  EXPECT_EQ(kernels::sgemm_check_args(kN, kN, m, n, k, kFakeA, m, kFakeB, k, kFakeC, m), Status::kSuccess);
}

TEST(SgemmArgs, NullPointersAreReported) {
  EXPECT_EQ(call(kN, kN, 4, 4, 4, 4, 4, 4, nullptr), Status::kNullPointer);
  EXPECT_EQ(call(kN, kN, 4, 4, 4, 4, 4, 4, kFakeA, nullptr), Status::kNullPointer);
  EXPECT_EQ(call(kN, kN, 4, 4, 4, 4, 4, 4, kFakeA, kFakeB, nullptr), Status::kNullPointer);
}

TEST(SgemmArgs, EmptyProblemsReturnWithoutLaunching) {
  // No GPU is needed for these: nothing is launched (and null pointers are fine when C is empty).
  EXPECT_EQ(call(kN, kN, 0, 4, 4, 1, 4, 1, nullptr, nullptr, nullptr), Status::kSuccess);
  EXPECT_EQ(call(kN, kN, 4, 0, 4, 4, 4, 4, nullptr, nullptr, nullptr), Status::kSuccess);
  // alpha == 0 (or k == 0) with beta == 1 leaves C as it is: BLAS quick return.
  EXPECT_EQ(kernels::sgemm(kN, kN, 4, 4, 4, 0.f, kFakeA, 4, kFakeB, 4, 1.f, kFakeC, 4, nullptr), Status::kSuccess);
  EXPECT_EQ(kernels::sgemm(kN, kN, 4, 4, 0, 1.f, kFakeA, 4, kFakeB, 1, 1.f, kFakeC, 4, nullptr), Status::kSuccess);
}

TEST(SgemmArgs, UnknownImplementationIsInvalid) {
  EXPECT_EQ(call(kN, kN, 4, 4, 4, 4, 4, 4, kFakeA, kFakeB, kFakeC, static_cast<SgemmImpl>(99)),
            Status::kInvalidValue);
  EXPECT_EQ(call(kN, kN, 4, 4, 4, 4, 4, 4, kFakeA, kFakeB, kFakeC, SgemmImpl::kEnd), Status::kInvalidValue);
  // Reported before anything else, even where the call would otherwise return at once.
  EXPECT_EQ(call(kN, kN, 0, 4, 4, 1, 4, 1, nullptr, nullptr, nullptr, SgemmImpl::kEnd), Status::kInvalidValue);
}

}  // namespace
}  // namespace gpuprobe
