// What the GEMV implementations share (gemv_kernels.cuh assembles them): the thresholds of kAuto's
// choice, the 256-thread block of kSplitReduce and kSinglePass, the workspace's counter area, the
// validated arguments (detail::GemvArgs) and the launches' error.
#pragma once
#include <algorithm>
#include <cstddef>

#include "gpuprobe/kernels/gemv.hpp"
#include "symv_gemv_common.cuh"

namespace gpuprobe::kernels {
namespace {

// The thresholds below are where the measured choices crossed over at the benchmark shapes (the
// figures: docs/perf/gemv.md, "Design decisions").
// Small N: A of at most this many bytes (L2-resident, calls of ~5-8 us) runs on whole-row blocks
// without a split when it runs kSinglePass (kSinglePass's plan). 1024 x 1024 doubles, 1448 x 1448
// floats.
constexpr long long kSmallNoTransBytes = 8LL << 20;
// ... and kAuto runs kSinglePass for N up to this many bytes of A: 1024 x 1024 floats, 724 x 724
// doubles. Between this and kSmallNoTransBytes kSplitReduce (two kernels) was the faster in GPU time.
constexpr long long kAutoSmallNoTransBytes = 4LL << 20;
static_assert(kAutoSmallNoTransBytes <= kSmallNoTransBytes, "what kAuto sends to v3 as small runs v3's unsplit plan");
// kAuto runs row blocks for N when A is at most kAutoRowBlocksBytes, has at most
// kAutoRowBlocksMaxColumns columns and is not thin: blocks of 8 rows, i.e. kRowBlocksSector in float
// (32-byte pieces) and kRowBlocks in double (64-byte pieces), so that a block reads at most 64 KB
// (two 32 KB steps). With more columns a block (fewer blocks, longer) lost to kSplitReduce, and with
// A in DRAM to kSinglePass.
constexpr long long kAutoRowBlocksBytes = 8LL << 20;
constexpr int kAutoRowBlocksMaxColumns = 1024;

using blas2::Strided;
using blas2::Vec16;

constexpr int kThreads = 256;
constexpr int kRowLanes = 32;
constexpr int kColGroups = kThreads / kRowLanes;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread and step
static_assert(kRowLanes == 32, "a warp is one column group: lanes read one column's contiguous piece");

template <class T>
constexpr int rows_per_unit() { return kRowLanes * Vec16<T>::kCount; }  // kNoTrans: 128 (float), 64 (double)
constexpr int kColsPerUnit = kColGroups * kUnroll;                        // kTrans: 32 columns

namespace v3 {
// The workspace's counter area (kSinglePass's arrival counters), at its start and fixed so that calls
// of any shape on one buffer use the same counters (all zero after each completed call). A split plan
// has at most kTargetBlocks / 2 units (hence <= 4096 one-level counters) and, with two levels, fewer
// than 256 units x (sqrt(8192 / units) + 1) < 1800 counters. kSplitReduce's partials come after it.
constexpr int kMaxCounters = 4096;
constexpr std::size_t kCounterBytes = kMaxCounters * sizeof(unsigned);
}  // namespace v3

// Evict-first loads of A when it cannot stay in the L2 anyway (it is read once per call); plain
// loads when the L2 size is unknown.
template <class T>
bool a_exceeds_l2(int m, int n) {
  const long long l2 = blas2::device_l2_bytes();
  return l2 > 0 && static_cast<double>(m) * n * sizeof(T) > static_cast<double>(l2);
}

}  // namespace

namespace detail {

template <class T>
struct GemvArgs {
  Trans trans;
  int m, n;
  T alpha;
  const T* A;
  int lda;
  const T* x;
  int incx;
  T beta;
  T* y;
  int incy;
  void* workspace;

  // A read with 16-byte loads: lda a multiple of 16 bytes and A 16-byte aligned (blas2::load_rows).
  bool vector_a() const { return lda % Vec16<T>::kCount == 0 && blas2::aligned16(A); }
  Strided<const T> xs() const { return blas2::make_strided(x, trans == Trans::kNoTrans ? n : m, incx); }
  Strided<T> ys() const { return blas2::make_strided(y, trans == Trans::kNoTrans ? m : n, incy); }
};

namespace {

// The launches' error: the first launch that was refused, else whatever cudaGetLastError reports.
cudaError_t launches_error(cudaError_t first = cudaSuccess) {
  const cudaError_t last = cudaGetLastError();
  return first != cudaSuccess ? first : last;
}

}  // namespace

}  // namespace detail

}  // namespace gpuprobe::kernels
