// The GEMV kernels and their launchers (GemvXKernels::plan<T> / launch<T>), for the translation units
// that instantiate them: gemv.cu (float) and gemv_double.cu (double). Design: gemv.cu's header.
#pragma once
#include <algorithm>

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

// Units of whole rows (columns) are split when fewer than this (many small units: a short tail); segments are never shorter than
// kMinSteps steps of a thread (so the epilogue stays small against the streaming).
constexpr long long kTargetUnits = 8192;
constexpr int kMinSteps = 4;

struct Plan {
  int m = 0, n = 0;
  int units = 0;       // units along the output (row blocks for kNoTrans, column blocks for kTrans)
  int segments = 1;    // along the reduced dimension
  int seg_len = 0;     // columns (kNoTrans) or rows (kTrans) per segment
  int out_len = 0;     // y's length
  long long workspace_elems() const { return segments > 1 ? static_cast<long long>(segments) * out_len : 0; }
};

template <class T>
Plan make_plan(Trans trans, int m, int n) {
  Plan p;
  p.m = m;
  p.n = n;
  if (m <= 0 || n <= 0) return p;
  const bool no_trans = trans == Trans::kNoTrans;
  const int reduced = no_trans ? n : m;  // the dimension summed over
  p.out_len = no_trans ? m : n;
  p.units = no_trans ? (m + rows_per_unit<T>() - 1) / rows_per_unit<T>() : (n + kColsPerUnit - 1) / kColsPerUnit;
  // One step of a block covers kColsPerUnit columns (kNoTrans) or rows_per_unit rows (kTrans); a
  // segment is a whole number of steps so that 16-byte alignment carries over between segments.
  const int granule = no_trans ? kColsPerUnit : rows_per_unit<T>();
  const long long steps = (reduced + granule - 1) / granule;
  long long segments = std::max<long long>(1, kTargetUnits / p.units);
  segments = std::min(segments, std::max<long long>(1, steps / kMinSteps));
  const long long steps_per_seg = (steps + segments - 1) / segments;
  p.seg_len = static_cast<int>(steps_per_seg * granule);
  p.segments = static_cast<int>((reduced + p.seg_len - 1) / p.seg_len);
  return p;
}

template <class T>
__device__ __forceinline__ void write_out(T sum, long long i, int s, const Plan& plan, T* part, T alpha, T beta,
                                          const Strided<T>& y) {
  if (part)
    part[static_cast<long long>(s) * plan.out_len + i] = sum;
  else
    y[i] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[i];
}

template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads) gemv_n_kernel(Plan plan, const T* __restrict__ A, long long lda,
                                                          Strided<const T> x, T alpha, T beta, Strided<T> y,
                                                          T* __restrict__ part) {
  constexpr int kV = Vec16<T>::kCount, kRows = rows_per_unit<T>();
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int row0 = blockIdx.x * kRows + lane * kV;
  const int rows_valid = plan.m - row0;
  const int s = blockIdx.y;
  const int c_begin = s * plan.seg_len, c_end = min(plan.n, c_begin + plan.seg_len);
  blas2::allow_dependent_launch();

  T acc[kV] = {};
  for (int c = c_begin + g; c < c_end; c += kColsPerUnit) {
    T a[kUnroll][kV], xc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = c + u * kColGroups;
      blas2::load_rows<T, kVector>(A + static_cast<long long>(col) * lda + row0, col < c_end ? rows_valid : 0, a[u]);
      xc[u] = col < c_end ? blas2::load_x(x, col) : T(0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kV; ++k) acc[k] += a[u][k] * xc[u];
  }

  __shared__ T sums[kColGroups][kRows];
#pragma unroll
  for (int k = 0; k < kV; ++k) sums[g][lane * kV + k] = acc[k];
  __syncthreads();
  if (threadIdx.x < kRows) {
    T sum = sums[0][threadIdx.x];
#pragma unroll
    for (int q = 1; q < kColGroups; ++q) sum += sums[q][threadIdx.x];
    const int row = blockIdx.x * kRows + threadIdx.x;
    if (row < plan.m) write_out(sum, row, s, plan, part, alpha, beta, y);
  }
}

template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads) gemv_t_kernel(Plan plan, const T* __restrict__ A, long long lda,
                                                          Strided<const T> x, T alpha, T beta, Strided<T> y,
                                                          T* __restrict__ part) {
  constexpr int kV = Vec16<T>::kCount, kRows = rows_per_unit<T>();
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int col0 = blockIdx.x * kColsPerUnit + g;
  const int s = blockIdx.y;
  const int r_begin = s * plan.seg_len, r_end = min(plan.m, r_begin + plan.seg_len);
  blas2::allow_dependent_launch();

  T acc[kUnroll] = {};
  for (int row = r_begin + lane * kV; row - lane * kV < r_end; row += kRows) {
    const int rows_valid = r_end - row;
    T xv[kV];
#pragma unroll
    for (int k = 0; k < kV; ++k) xv[k] = k < rows_valid ? blas2::load_x(x, row + k) : T(0);
    T a[kUnroll][kV];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = col0 + u * kColGroups;
      blas2::load_rows<T, kVector>(A + static_cast<long long>(col) * lda + row, col < plan.n ? rows_valid : 0, a[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kV; ++k) acc[u] += a[u][k] * xv[k];
  }
  const T sum = blas2::reduce_transposed<kUnroll, kRowLanes>(acc, lane);
  constexpr int kLanesPerValue = kRowLanes / kUnroll;
  if (lane % kLanesPerValue == 0) {
    const int col = col0 + (lane / kLanesPerValue) * kColGroups;
    if (col < plan.n) write_out(sum, col, s, plan, part, alpha, beta, y);
  }
}

// y_i = alpha sum_s part[s][i] + beta y_i, segments summed in order; 32 elements x 8 segment groups
// per block, so that a long list of segments is read by 8 warps at once.
constexpr int kReduceElems = 32;
constexpr int kReduceGroups = kThreads / kReduceElems;

template <class T>
__global__ void __launch_bounds__(kThreads) gemv_reduce_kernel(Plan plan, const T* __restrict__ part, T alpha,
                                                               T beta, Strided<T> y) {
  const long long i = static_cast<long long>(blockIdx.x) * kReduceElems + threadIdx.x % kReduceElems;
  const int q = threadIdx.x / kReduceElems;
  blas2::grid_dependency_wait();  // launched early (PDL): the partials are complete only after this
  T sum = T(0);
  if (i < plan.out_len)
    for (int s = q; s < plan.segments; s += kReduceGroups) sum += part[static_cast<long long>(s) * plan.out_len + i];
  blas2::sum_groups_into_y<kReduceGroups, kReduceElems>(sum, q, i, i < plan.out_len, alpha, beta, y);
}

template <class T, bool kVector>
void launch_main(Trans trans, const Plan& plan, const T* A, int lda, Strided<const T> x, T alpha, T beta,
                 Strided<T> y, T* part, cudaStream_t stream) {
  const dim3 grid(plan.units, plan.segments);
  if (trans == Trans::kNoTrans)
    gemv_n_kernel<T, kVector><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, part);
  else
    gemv_t_kernel<T, kVector><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, part);
}

// ---------------------------------------------------------------------------------------------
// GemvImpl::kSinglePass (and the row blocks, which are block shapes of its N kernel): one kernel per call.
//
// The main loops are kSplitReduce's, with three block shapes for kNoTrans (NCfg below) and, for lda
// not a multiple of 16 bytes, coalesced scalar loads (blas2::slot_row). When the reduced dimension
// is split, each block writes its segment's partials to the workspace and then counts itself in
// (atomicAdd on a per-group counter, after a __threadfence); the last block of a group of segments
// sums the group's partials, in segment order, and either writes y (one group) or a level-2 partial,
// of which the unit's last group sums all in group order and writes y. Which block arrives last
// varies; the summation order does not (deterministic). The last block resets its counter to 0.
namespace v3 {

constexpr long long kTargetBlocks = 8192;  // as kSplitReduce's kTargetUnits: split when the units are fewer
constexpr int kMinSteps = 4;               // a segment is at least 4 steps of a thread
constexpr int kOneLevelMax = 32;           // up to this many segments, one block sums them all
// Counter area at the start of the workspace, fixed so that calls of any shape on one buffer use
// the same counters (all zero after each completed call). A split plan has at most
// kTargetBlocks / 2 units (hence <= 4096 one-level counters) and, with two levels, fewer than
// 256 units x (sqrt(8192 / units) + 1) < 1800 counters.
constexpr int kMaxCounters = 4096;
constexpr std::size_t kCounterBytes = kMaxCounters * sizeof(unsigned);
// kNoTrans "tall" shape: at least this many of its (512-float / 256-double-row) units, at most
// this many columns (then every thread has only a few steps and the blocks' fixed costs and short
// per-column runs dominate).
constexpr int kTallMinUnits = 1024;
constexpr int kTallMaxCols = 128;
// ... and the largest squares: from kTallLargeMinRows rows and kTallLargeMinCols columns, where its
// 2 KB column pieces per block (against WideCfg's 512 bytes) read faster; smaller shapes where it lost
// (8192 and 16384 float, 262144 x 512 double) are left out.
constexpr int kTallLargeMinRows = 32768;
constexpr int kTallLargeMinCols = 8192;
// Register caps (__launch_bounds__ minimum blocks per SM, 256 threads each), all without spills
// (ptxas 13.0, sm_90): the T kernels and the 16-byte-load one-row-vector N kernels <= 40 registers,
// 6 blocks (uncapped the T kernel takes 48-58 registers: 4-5 blocks; a cap of 8 spills); the scalar
// (coalesced) N kernels <= 64 registers, 4 blocks (uncapped float takes 69: 3 blocks; 5 spills).
constexpr int kMinBlocksPerSm = 6;
constexpr int kMinBlocksPerSmScalarN = 4;
// "Deep" shapes: when whole rows (kNoTrans) or whole columns (kTrans) in units of 32 give about one
// wave (kDeepMinUnits ... kDeepMaxUnits units: 1-2 per SM of the H100's 132), there is no split and
// no reduction at all: one kernel, each block over whole rows / columns, 16 loads in flight per thread
// (64 KB per block) to cover the DRAM latency with one or two blocks per SM: cuBLAS's shape at 4096
// (one kernel), where kSplitReduce's reduction kernel cost 3-4 us a call. kNoTrans below
// kDeepMinUnitsN units (one block per SM: the 4096 squares, 128 units) takes blocks of 512 threads
// (DeepOneBlockCfg): with 256 (DeepCfg) each SM has only 8 warps and 64 KB in flight, which lost to
// kSplitReduce in double.
constexpr int kDeepRows = 32;  // outputs per unit, both shapes
constexpr int kDeepMinUnits = 96;
constexpr int kDeepMinUnitsN = 192;  // kNoTrans: DeepCfg from here, one block per SM below (kDeepOneBlock)
constexpr int kDeepMaxUnits = 264;
constexpr int kDeepMinReduced = 2048;  // enough steps per block that its start-up is amortised
constexpr int kDeepMinBlocksPerSm = 2;
// gemv3_n_kernel's final sum over column groups goes in two stages above this many groups (only
// DeepOneBlockCfg in float has more: 64).
constexpr int kTwoStageMinGroups = 32;  // <= 128 registers: the 16 loads' 64 registers and the sums

// kNoTrans block shapes: kLanes row lanes x (kBlockThreads / kLanes) column groups, kRowVecs 16-byte
// row vectors per thread, kUnroll columns per thread and step; kMinBlocksPerSm for the launch bound
// (0: n_min_blocks_per_sm derives it from the shape).
template <class T, int kLanesP, int kRowVecsP, int kUnrollP, int kBlockThreadsP = kThreads, int kMinBlocksPerSmP = 0>
struct NCfg {
  static constexpr int kLanes = kLanesP, kRowVecs = kRowVecsP, kUnroll = kUnrollP;
  static constexpr int kBlockThreads = kBlockThreadsP;
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSmP;
  static constexpr int kV = Vec16<T>::kCount;
  static constexpr int kGroups = kBlockThreads / kLanes;
  static constexpr int kRows = kRowVecs * kLanes * kV;  // rows per unit
  static constexpr int kCols = kGroups * kUnroll;       // columns per step
};
template <class T>
using WideCfg = NCfg<T, 32, 1, 4>;  // kSplitReduce's shape: 128 (float) / 64 (double) rows, 32 columns a step
template <class T>
using NarrowCfg = NCfg<T, 16, 1, 4>;  // m <= 64 (float) / 32 (double): no idle lanes, 64 columns a step
template <class T>
using TallCfg = NCfg<T, 32, 4, 2>;  // 512 / 256 rows: 2 KB per column and block, 8 loads in flight
template <class T>
using DeepCfg = NCfg<T, kDeepRows / Vec16<T>::kCount, 1, 16>;  // 32 rows, 16 columns a thread and step
static_assert(DeepCfg<float>::kRows == kDeepRows && DeepCfg<double>::kRows == kDeepRows, "deep N: 32 rows a unit");
// Deep N with fewer than kDeepMinUnitsN units (the 4096 squares: 128 units, one block per SM): 512
// threads a block, so 16 warps and 128 KB of loads in flight per SM instead of 8 and 64 KB; cuBLAS's
// SGEMV N 4096 grid as Nsight Compute shows it (128 blocks of 512 threads, 128 registers).
template <class T>
using DeepOneBlockCfg = NCfg<T, kDeepRows / Vec16<T>::kCount, 1, 16, 2 * kThreads>;
// The one-block deep N squares with 16-byte loads (the 4096 squares) in 1024 threads of 8 loads
// (64 registers, no spills): the same 128 KB in flight per SM in 32 warps instead of 16, the faster
// there; not taken where it did not gain: the scalar path (lda not a multiple of 16 bytes) and
// kSinglePass's small unsplit N (kSmallOneBlock).
template <class T>
using DeepOneBlock1024Cfg = NCfg<T, kDeepRows / Vec16<T>::kCount, 1, 8, 4 * kThreads>;
static_assert(DeepOneBlock1024Cfg<float>::kRows == DeepOneBlockCfg<float>::kRows &&
                  DeepOneBlock1024Cfg<float>::kCols == DeepOneBlockCfg<float>::kCols &&
                  DeepOneBlock1024Cfg<double>::kRows == DeepOneBlockCfg<double>::kRows &&
                  DeepOneBlock1024Cfg<double>::kCols == DeepOneBlockCfg<double>::kCols,
              "one plan for both: 32 rows a unit, 1024 columns a block step");
// kTrans deep: 32 columns a unit as always, kDeepTRowVecs row vectors per column and step (4 x 4 loads).
constexpr int kDeepTRowVecs = 4;
// Row blocks (GemvImpl::kRowBlocks / kRowBlocksSector, kNoTrans): the mirror of kColumnBlocks, one
// 256-thread block per 64 (32) bytes of every column -- 16 / 8 (8 / 4) rows of float / double -- over
// all n columns: no split, no workspace, one kernel, and as many blocks as the rows allow (m = 512
// float: 32 / 64 blocks; kSinglePass's small-N shape, DeepOneBlockCfg's 32 rows of 512 threads, gives
// 16, and 32 at D N 1024, where kSplitReduce's split with a second kernel is faster). 4 (2) lanes a
// column, 64 (128) column groups, 8 columns (16-byte loads) in flight per thread and step: 32 KB of A
// per block step. 4 blocks per SM (64 registers: 128 KB in flight per SM) so that A larger than the L2
// still has enough reads in flight.
constexpr int kRowBlockMinBlocksPerSm = 4;
template <class T>
using RowBlockCfg = NCfg<T, 4, 1, 8, kThreads, kRowBlockMinBlocksPerSm>;
template <class T>
using RowBlockSectorCfg = NCfg<T, 2, 1, 8, kThreads, kRowBlockMinBlocksPerSm>;
static_assert(RowBlockCfg<float>::kRows * sizeof(float) == 64 && RowBlockCfg<double>::kRows * sizeof(double) == 64 &&
                  RowBlockSectorCfg<float>::kRows * sizeof(float) == 32 &&
                  RowBlockSectorCfg<double>::kRows * sizeof(double) == 32,
              "a row block reads 64 (sector variant: 32) contiguous bytes of each column");
static_assert(RowBlockCfg<float>::kGroups * RowBlockCfg<float>::kUnroll * RowBlockCfg<float>::kRows * sizeof(float) ==
                  32 * 1024,
              "a row block's step: 32 KB of A in flight");

// kDeepOneBlock: the deep N squares of fewer than kDeepMinUnitsN units (DeepOneBlock1024Cfg with
// 16-byte loads, else DeepOneBlockCfg); kSmallOneBlock: kSinglePass's unsplit small N
// (DeepOneBlockCfg).
enum class NShape : int { kWide, kNarrow, kTall, kDeep, kDeepOneBlock, kSmallOneBlock, kRowBlocks, kRowBlocksSector };

// The deep shape of op(A) (m x n stored): y of length out_len, a reduced dimension of `reduced`.
inline bool deep_shape(Trans trans, int m, int n) {
  const bool no_trans = trans == Trans::kNoTrans;
  const int out_len = no_trans ? m : n, reduced = no_trans ? n : m;
  const long long units = (static_cast<long long>(out_len) + kDeepRows - 1) / kDeepRows;
  return units >= kDeepMinUnits && units <= kDeepMaxUnits && reduced >= kDeepMinReduced;
}

struct Plan3 {
  int m = 0, n = 0;
  int out_len = 0;     // y's length
  int units = 0;       // along the output
  int segments = 1;    // along the reduced dimension
  int seg_len = 0;     // columns (kNoTrans) or rows (kTrans) per segment
  int groups = 1;      // level-1 groups of segments (1: one level)
  int group_size = 1;  // segments per group
  NShape shape = NShape::kWide;
  bool deep_t = false;  // kTrans: the deep shape (kDeepTRowVecs row vectors a step, no split)
  long long part1_elems() const { return segments > 1 ? static_cast<long long>(segments) * out_len : 0; }
  long long part2_elems() const { return segments > 1 && groups > 1 ? static_cast<long long>(groups) * out_len : 0; }
  long long counters() const {
    return segments > 1 ? static_cast<long long>(units) * groups + (groups > 1 ? units : 0) : 0;
  }
  std::size_t workspace_bytes(std::size_t elem) const {
    return segments > 1 ? kCounterBytes + static_cast<std::size_t>(part1_elems() + part2_elems()) * elem : 0;
  }
};

// impl kRowBlocks / kRowBlocksSector with kNoTrans: the row-block plan (its shape, one segment, no
// workspace); any other impl or kTrans: kSinglePass's plan.
template <class T>
Plan3 make_plan3(Trans trans, int m, int n, GemvImpl impl = GemvImpl::kSinglePass) {
  Plan3 p;
  p.m = m;
  p.n = n;
  if (m <= 0 || n <= 0) return p;
  const bool no_trans = trans == Trans::kNoTrans;
  const int reduced = no_trans ? n : m;
  p.out_len = no_trans ? m : n;
  if (no_trans && (impl == GemvImpl::kRowBlocks || impl == GemvImpl::kRowBlocksSector)) {
    const bool sector = impl == GemvImpl::kRowBlocksSector;
    p.shape = sector ? NShape::kRowBlocksSector : NShape::kRowBlocks;
    const int rows = sector ? RowBlockSectorCfg<T>::kRows : RowBlockCfg<T>::kRows;
    p.units = static_cast<int>((static_cast<long long>(m) + rows - 1) / rows);
    p.seg_len = n;
    return p;
  }
  int unit_len = kColsPerUnit, granule = rows_per_unit<T>();
  const bool deep = deep_shape(trans, m, n);
  // Small N (A of at most kSmallNoTransBytes, L2-resident): whole rows per 512-thread block, no split
  // and no counters -- one or two rounds of loads per block and one block-level sum, instead of
  // segments whose partials the last block sums (1-2 us a call faster).
  const bool small_unsplit =
      no_trans && static_cast<long long>(m) * n * static_cast<long long>(sizeof(T)) <= kSmallNoTransBytes;
  if (no_trans) {
    if (m <= NarrowCfg<T>::kRows)
      p.shape = NShape::kNarrow;
    else if (small_unsplit)
      p.shape = NShape::kSmallOneBlock;
    else if (m / TallCfg<T>::kRows >= kTallMinUnits && n <= kTallMaxCols)
      p.shape = NShape::kTall;
    else if (m >= kTallLargeMinRows && n >= kTallLargeMinCols)
      p.shape = NShape::kTall;
    else if (deep)
      p.shape = (m + kDeepRows - 1) / kDeepRows >= kDeepMinUnitsN ? NShape::kDeep : NShape::kDeepOneBlock;
    unit_len = p.shape == NShape::kNarrow         ? NarrowCfg<T>::kRows
               : p.shape == NShape::kTall         ? TallCfg<T>::kRows
               : p.shape == NShape::kDeep         ? DeepCfg<T>::kRows
               : p.shape == NShape::kDeepOneBlock || p.shape == NShape::kSmallOneBlock ? DeepOneBlockCfg<T>::kRows
                                                  : WideCfg<T>::kRows;
    granule = p.shape == NShape::kNarrow         ? NarrowCfg<T>::kCols
              : p.shape == NShape::kTall         ? TallCfg<T>::kCols
              : p.shape == NShape::kDeep         ? DeepCfg<T>::kCols
              : p.shape == NShape::kDeepOneBlock || p.shape == NShape::kSmallOneBlock ? DeepOneBlockCfg<T>::kCols
                                                 : WideCfg<T>::kCols;
  } else if (deep) {
    p.deep_t = true;
    granule = kDeepTRowVecs * rows_per_unit<T>();
  }
  p.units = static_cast<int>((static_cast<long long>(p.out_len) + unit_len - 1) / unit_len);
  if (p.shape == NShape::kDeep || p.shape == NShape::kDeepOneBlock || p.shape == NShape::kSmallOneBlock ||
      p.deep_t) {  // whole rows / columns: no split
    p.segments = 1;
    p.seg_len = reduced;
    p.group_size = 1;
    return p;
  }
  const long long steps = (reduced + static_cast<long long>(granule) - 1) / granule;
  long long segments = std::max<long long>(1, kTargetBlocks / p.units);
  segments = std::min(segments, std::max<long long>(1, steps / kMinSteps));
  const long long steps_per_seg = (steps + segments - 1) / segments;
  p.seg_len = static_cast<int>(steps_per_seg * granule);
  p.segments = static_cast<int>((reduced + static_cast<long long>(p.seg_len) - 1) / p.seg_len);
  if (p.segments <= kOneLevelMax) {
    p.group_size = p.segments;
  } else {
    int size = 1;
    while (size * size < p.segments) ++size;  // ~sqrt: both levels sum about as many partials
    p.group_size = size;
    p.groups = (p.segments + size - 1) / size;
  }
  return p;
}

template <class T>
struct Work3 {
  unsigned* counters;  // [units][groups] level 1, then [units] level 2
  T* part1;            // [segments][out_len]
  T* part2;            // [groups][out_len] (two levels only)
};

// Sums src[k ld + o0 + i] over k in [first, first + count), for i < len, in increasing k: kQ
// interleaved subsets of k (each summed in order, loads batched 8 at a time), then the kQ subtotals in
// order. Calls emit(i, total) once per i < len. Every thread of the block must call it.
template <class T, int kOut, class Emit>
__device__ __forceinline__ void sum_partials(const T* src, long long ld, int first, int count, int o0, int len,
                                             T* red, Emit emit) {
  constexpr int kQ = kOut >= kThreads ? 1 : kThreads / kOut;
  constexpr int kPer = kOut >= kThreads ? kOut / kThreads : 1;
  static_assert(kOut % kThreads == 0 || kThreads % kOut == 0, "outputs per unit: a divisor or multiple of 256");
  constexpr int kBatch = 8;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = kQ == 1 ? static_cast<int>(threadIdx.x) + j * kThreads : static_cast<int>(threadIdx.x) % kOut;
    const int q = kQ == 1 ? 0 : static_cast<int>(threadIdx.x) / kOut;
    T acc = T(0);
    if (i < len) {
      const T* base = src + o0 + i;
      const int end = first + count;
      int k = first + q;
      for (; k + (kBatch - 1) * kQ < end; k += kBatch * kQ) {
        T v[kBatch];
#pragma unroll
        for (int t = 0; t < kBatch; ++t) v[t] = __ldcg(base + static_cast<long long>(k + t * kQ) * ld);
#pragma unroll
        for (int t = 0; t < kBatch; ++t) acc += v[t];
      }
      for (; k < end; k += kQ) acc += __ldcg(base + static_cast<long long>(k) * ld);
    }
    if constexpr (kQ == 1) {
      if (i < len) emit(i, acc);
    } else {
      red[threadIdx.x] = acc;  // = red[q * kOut + i]
    }
  }
  if constexpr (kQ > 1) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < kOut && static_cast<int>(threadIdx.x) < len) {
      T total = red[threadIdx.x];
#pragma unroll
      for (int q = 1; q < kQ; ++q) total += red[q * kOut + threadIdx.x];
      emit(static_cast<int>(threadIdx.x), total);
    }
  }
}

// Counts the block in on `counter`; true (in every thread) for the last of `arrivals` blocks, which
// also resets the counter. The caller's global writes before the call are visible to that block.
__device__ __forceinline__ bool arrive_last(unsigned* counter, int arrivals, unsigned* flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned prev = atomicAdd(counter, 1u);
    const bool last = prev == static_cast<unsigned>(arrivals - 1);
    if (last) *counter = 0u;  // every block of the group has arrived: ready for the next call
    *flag = last ? 1u : 0u;
  }
  __syncthreads();
  const bool last = *flag != 0u;
  if (last) __threadfence();
  return last;
}

// After the block has written its partials (segment s of unit u, outputs o0 .. o0 + len).
template <class T, int kOut>
__device__ __forceinline__ void finish_unit(const Plan3& p, const Work3<T>& w, int u, int s, int o0, int len, T alpha,
                                            T beta, const Strided<T>& y) {
  __shared__ T red[kThreads];
  __shared__ unsigned flag;
  const int gi = s / p.group_size;
  const int g0 = gi * p.group_size, gn = min(p.segments - g0, p.group_size);
  if (!arrive_last(w.counters + static_cast<long long>(u) * p.groups + gi, gn, &flag)) return;
  auto to_y = [&](int i, T total) {
    const long long r = static_cast<long long>(o0) + i;
    y[r] = beta == T(0) ? alpha * total : alpha * total + beta * y[r];
  };
  if (p.groups == 1) {
    sum_partials<T, kOut>(w.part1, p.out_len, g0, gn, o0, len, red, to_y);
    return;
  }
  T* part2 = w.part2 + static_cast<long long>(gi) * p.out_len + o0;
  sum_partials<T, kOut>(w.part1, p.out_len, g0, gn, o0, len, red, [&](int i, T total) { part2[i] = total; });
  if (!arrive_last(w.counters + static_cast<long long>(p.units) * p.groups + u, p.groups, &flag)) return;
  sum_partials<T, kOut>(w.part2, p.out_len, 0, p.groups, o0, len, red, to_y);
}

// Minimum blocks per SM for gemv3_n_kernel's register cap: one for the tall (4 row vectors) and the
// 512-thread shapes, two for the deep ones (16 loads in flight), else as kSplitReduce's N kernels.
template <class Cfg, bool kVector>
constexpr int n_min_blocks_per_sm() {
  if (Cfg::kMinBlocksPerSm > 0) return Cfg::kMinBlocksPerSm;  // set by the shape (row blocks)
  if (Cfg::kRowVecs > 1 || Cfg::kBlockThreads > kThreads) return 1;
  if (Cfg::kUnroll > 4) return kDeepMinBlocksPerSm;
  return kVector ? kMinBlocksPerSm : kMinBlocksPerSmScalarN;
}

template <class T, class Cfg, bool kVector, bool kStream>
__global__ void __launch_bounds__(Cfg::kBlockThreads, n_min_blocks_per_sm<Cfg, kVector>())
    gemv3_n_kernel(Plan3 plan, const T* __restrict__ A, long long lda, Strided<const T> x, T alpha, T beta,
                   Strided<T> y, Work3<T> ws) {
  constexpr int kV = Cfg::kV, kLanes = Cfg::kLanes, kRV = Cfg::kRowVecs, kU = Cfg::kUnroll;
  constexpr int kGroups = Cfg::kGroups, kRows = Cfg::kRows;
  const int lane = threadIdx.x % kLanes, g = threadIdx.x / kLanes;
  const int row0 = blockIdx.x * kRows;
  const int rows_valid = plan.m - row0;
  const int s = blockIdx.y;
  const int c_begin = s * plan.seg_len, c_end = min(plan.n, c_begin + plan.seg_len);
  const int lane_row = blas2::slot_row<kLanes, kV, kVector>(lane, 0, 0);
  const T* a0 = A + row0 + lane_row;
  const int lane_valid = rows_valid - lane_row;

  T acc[kRV][kV] = {};
  for (int c = c_begin + g; c < c_end; c += Cfg::kCols) {
    T a[kU][kRV][kV], xc[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int col = c + u * kGroups;
      blas2::load_slots<T, kLanes, kRV, kVector, kStream>(a0 + static_cast<long long>(col) * lda,
                                                          col < c_end ? lane_valid : 0, a[u]);
      xc[u] = col < c_end ? blas2::load_x(x, col) : T(0);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int v = 0; v < kRV; ++v)
#pragma unroll
        for (int k = 0; k < kV; ++k) acc[v][k] += a[u][v][k] * xc[u];
  }

  __shared__ T sums[kGroups][kRows];
#pragma unroll
  for (int v = 0; v < kRV; ++v)
#pragma unroll
    for (int k = 0; k < kV; ++k) sums[g][blas2::slot_row<kLanes, kV, kVector>(lane, v, k)] = acc[v][k];
  __syncthreads();
  // The column groups' sums of a row, in group order. With more groups than kTwoStageMinGroups, two
  // stages: kSlices threads per row each sum kGroups / kSlices consecutive groups, then one thread
  // sums the slices in order (fixed order either way: repeated calls are bit-identical); a chain of
  // kGroups / kSlices + kSlices adds instead of kGroups (64 for DeepOneBlockCfg in float).
  constexpr int kSlices = kGroups > kTwoStageMinGroups && Cfg::kBlockThreads % kRows == 0 &&
                                  kGroups % (Cfg::kBlockThreads / kRows) == 0
                              ? Cfg::kBlockThreads / kRows
                              : 1;
  __shared__ T slice_sums[kSlices][kRows];
  if constexpr (kSlices > 1) {
    const int r = threadIdx.x % kRows, sl = threadIdx.x / kRows;
    constexpr int kPerSlice = kGroups / kSlices;
    T part = sums[sl * kPerSlice][r];
#pragma unroll
    for (int q = 1; q < kPerSlice; ++q) part += sums[sl * kPerSlice + q][r];
    slice_sums[sl][r] = part;
    __syncthreads();
  }
  constexpr int kTerms = kSlices > 1 ? kSlices : kGroups;
  const T(*terms)[kRows] = kSlices > 1 ? slice_sums : sums;
  for (int r = threadIdx.x; r < kRows; r += Cfg::kBlockThreads) {
    if (r < rows_valid) {
      T sum = terms[0][r];
#pragma unroll
      for (int q = 1; q < kTerms; ++q) sum += terms[q][r];
      const long long row = static_cast<long long>(row0) + r;
      if (plan.segments == 1)
        y[row] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[row];
      else
        ws.part1[static_cast<long long>(s) * plan.out_len + row] = sum;
    }
  }
  if (plan.segments > 1) finish_unit<T, kRows>(plan, ws, blockIdx.x, s, row0, min(kRows, rows_valid), alpha, beta, y);
}

// kSegMajor: the grid is (segments, units) instead of (units, segments), so that the blocks resident
// together are consecutive row segments of the same columns (long runs down each column) rather than
// the same segment of many column units (2 KB pieces of hundreds of columns): kSinglePass's split
// kTrans grid, faster than units first at A >= 256 MiB (docs/perf/gemv.md). The deep shape has one
// segment, where either order is the same grid.
// kRV: row vectors per column and step (1; kDeepTRowVecs for the deep shape: 4 x kUnroll loads in
// flight per thread).
template <class T, bool kVector, bool kStream, bool kSegMajor, int kRV>
__global__ void __launch_bounds__(kThreads, kRV > 1 ? kDeepMinBlocksPerSm : kMinBlocksPerSm)
    gemv3_t_kernel(Plan3 plan, const T* __restrict__ A, long long lda, Strided<const T> x, T alpha, T beta,
                   Strided<T> y, Work3<T> ws) {
  constexpr int kV = Vec16<T>::kCount, kRows = kRV * rows_per_unit<T>();  // rows per step
  const int lane = threadIdx.x % kRowLanes, g = threadIdx.x / kRowLanes;
  const int unit = kSegMajor ? blockIdx.y : blockIdx.x;
  const int o0 = unit * kColsPerUnit;
  const int col0 = o0 + g;
  const int s = kSegMajor ? blockIdx.x : blockIdx.y;
  const int r_begin = s * plan.seg_len, r_end = min(plan.m, r_begin + plan.seg_len);

  const int lane_row = blas2::slot_row<kRowLanes, kV, kVector>(lane, 0, 0);
  T acc[kUnroll] = {};
  for (int row = r_begin + lane_row; row - lane_row < r_end; row += kRows) {
    const int valid = r_end - row;  // rows from this thread's first slot
    T a[kUnroll][kRV][kV];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = col0 + u * kColGroups;
      blas2::load_slots<T, kRowLanes, kRV, kVector, kStream>(A + static_cast<long long>(col) * lda + row,
                                                             col < plan.n ? valid : 0, a[u]);
    }
    T xv[kRV][kV];
#pragma unroll
    for (int v = 0; v < kRV; ++v)
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const int off = blas2::slot_row<kRowLanes, kV, kVector>(0, v, k);  // slot (v, k)'s offset from slot (0, 0)
        xv[v][k] = off < valid ? blas2::load_x(x, static_cast<long long>(row) + off) : T(0);
      }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < kRV; ++v)
#pragma unroll
        for (int k = 0; k < kV; ++k) acc[u] += a[u][v][k] * xv[v][k];
  }
  const T sum = blas2::reduce_transposed<kUnroll, kRowLanes>(acc, lane);
  constexpr int kLanesPerValue = kRowLanes / kUnroll;
  if (lane % kLanesPerValue == 0) {
    const int col = col0 + (lane / kLanesPerValue) * kColGroups;
    if (col < plan.n) {
      if (plan.segments == 1)
        y[col] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[col];
      else
        ws.part1[static_cast<long long>(s) * plan.out_len + col] = sum;
    }
  }
  if (plan.segments > 1)
    finish_unit<T, kColsPerUnit>(plan, ws, unit, s, o0, min(kColsPerUnit, plan.n - o0), alpha, beta, y);
}

template <class T, bool kVector, bool kStream>
void launch3(Trans trans, const Plan3& plan, const T* A, int lda, Strided<const T> x, T alpha, T beta, Strided<T> y,
             Work3<T> ws, cudaStream_t stream) {
  const dim3 grid(plan.units, plan.segments);
  if (trans == Trans::kTrans) {
    if (plan.deep_t)  // one segment: either grid order is the same
      gemv3_t_kernel<T, kVector, kStream, false, kDeepTRowVecs>
          <<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
    else
      gemv3_t_kernel<T, kVector, kStream, true, 1>
          <<<dim3(plan.segments, plan.units), kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
    return;
  }
  switch (plan.shape) {
    case NShape::kNarrow:
      gemv3_n_kernel<T, NarrowCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta,
                                                                                         y, ws);
      break;
    case NShape::kTall:
      gemv3_n_kernel<T, TallCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kWide:
      gemv3_n_kernel<T, WideCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kDeep:
      gemv3_n_kernel<T, DeepCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y,
                                                                                       ws);
      break;
    case NShape::kDeepOneBlock:
      if constexpr (kVector)
        gemv3_n_kernel<T, DeepOneBlock1024Cfg<T>, kVector, kStream>
            <<<grid, DeepOneBlock1024Cfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      else
        gemv3_n_kernel<T, DeepOneBlockCfg<T>, kVector, kStream>
            <<<grid, DeepOneBlockCfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
    case NShape::kSmallOneBlock:
      gemv3_n_kernel<T, DeepOneBlockCfg<T>, kVector, kStream>
          <<<grid, DeepOneBlockCfg<T>::kBlockThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
    case NShape::kRowBlocks:
      gemv3_n_kernel<T, RowBlockCfg<T>, kVector, kStream><<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta,
                                                                                           y, ws);
      break;
    case NShape::kRowBlocksSector:
      gemv3_n_kernel<T, RowBlockSectorCfg<T>, kVector, kStream>
          <<<grid, kThreads, 0, stream>>>(plan, A, lda, x, alpha, beta, y, ws);
      break;
  }
}

}  // namespace v3

// ---------------------------------------------------------------------------------------------
// GemvImpl::kColumnBlocks, kTrans (kNoTrans runs kSinglePass): cuBLAS's DGEMV T design as
// Nsight Compute shows it at 32768 x 32768, one block of 128 threads per column of A
// (per element of y), no split, no workspace. The block streams its column top to bottom, so the
// blocks resident on the GPU each read one long contiguous run (the hypothesis: better DRAM
// row-buffer locality than kSinglePass's 512-byte pieces of 32 columns), dots it with x, sums its 128
// threads (warp shuffles, then the 4 warps in shared memory, in a fixed order) and writes y[col].
// Every block reads all of x, as many times as A has columns: from the L1 / L2 (x is small), as
// many bytes as the block reads of A, hence 16-byte loads of x too when incx == 1 (kVectorX):
// with scalar loads a float warp would issue 4 x loads, each spread over 512 bytes, per 16-byte A
// load.
namespace cb {

constexpr int kBlockThreads = 128;  // 4 warps: cuBLAS's block
constexpr int kWarps = kBlockThreads / 32;
// kUnroll: 16-byte loads of A in flight per thread and step. 4: 4 x 16 B x 128 threads = 8 KB of the
// column per block step (1024 doubles / 2048 floats), and with 8 blocks per SM 64 KB of A in flight
// per SM, more than the ~25 KB per SM that Little's law asks of the H100 (3.35 TB/s x ~1 us / 132
// SMs). 8 (kDeepUnroll, for columns of kDeepFromRows rows or more): 16 KB a step, 4 blocks per SM,
// the same 64 KB per SM in half as many blocks, faster on long columns and slower on short ones
// (fewer, emptier blocks).
constexpr int kUnroll = 4;
constexpr int kDeepUnroll = 8;
// kAuto runs it for kTrans when a column holds more than kAutoAboveColumnBytes bytes (m sizeof(T)) and
// there are at least kAutoMinColumns columns (gemv_auto_impl). Bytes, not rows: a block's start-up is
// paid against the bytes it reads of its column; at 2 KB columns (float 512 x 262144) column blocks
// lost, hence "more than" 2048 bytes, and with fewer than 512 columns there are too few blocks.
constexpr long long kAutoAboveColumnBytes = 2048;
constexpr int kAutoMinColumns = 512;
constexpr int kDeepFromRows = 8192;
// Register cap: the blocks per SM above (32 or 16 warps of the 64): <= 64 registers a thread
// (kUnroll 4) or 128 (8). ptxas 13.0, sm_90, no spills, float and double alike: kUnroll 4 56-64
// registers, 8 94-102. The main loop is kept at one step per iteration (unroll 1): left to the
// compiler, it unrolled the loop and the double 16-byte A and x kernels spilled (24 bytes) at 64.
template <int kU>
constexpr int min_blocks_per_sm() { return 32 / kU; }
template <class T, int kU>
constexpr int step_rows() { return kU * kBlockThreads * Vec16<T>::kCount; }  // rows per block step
static_assert(step_rows<double, kUnroll>() * sizeof(double) == 8192 && step_rows<float, kUnroll>() * sizeof(float) == 8192,
              "a block step is 8 KB of the column in either precision");
static_assert(min_blocks_per_sm<kUnroll>() * kUnroll == min_blocks_per_sm<kDeepUnroll>() * kDeepUnroll &&
                  min_blocks_per_sm<kUnroll>() * kUnroll * kBlockThreads * 16 == 64 * 1024,
              "either depth: 64 KB of A in flight per SM at the register cap's occupancy");
static_assert(kBlockThreads % 32 == 0 && kWarps * 32 == kBlockThreads, "whole warps");

// The kV elements of x at rows row .. row + kV (the first `valid` of them; the rest 0). kVectorX: one
// 16-byte load (x.inc == 1, x.base 16-byte aligned, row a multiple of kV) when the whole vector is
// inside x; a partial vector at x's end is read element by element (x has no padding).
template <class T, bool kVectorX>
__device__ __forceinline__ void load_x_vec(const Strided<const T>& x, long long row, int valid,
                                           T (&out)[Vec16<T>::kCount]) {
  constexpr int kV = Vec16<T>::kCount;
  if (kVectorX && valid >= kV) {
    const typename Vec16<T>::type v = blas2::load_vec16<T, false>(x.base + row);
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < kV; ++k) out[k] = e[k];
    return;
  }
#pragma unroll
  for (int k = 0; k < kV; ++k) out[k] = k < valid ? blas2::load_x(x, row + k) : T(0);
}

// One block step of a thread: its kUnroll x kV slots of the column (blas2::slot_row over 128
// lanes: kVector, kUnroll 16-byte vectors 128 x 16 B apart; scalar, kUnroll kV loads each over
// consecutive rows across the threads) times the same rows of x, added into acc[u] in slot order.
// p: the thread's slot (0, 0) in the column, at row `row`; `valid` rows from p are in the matrix
// (a step wholly inside passes step_rows: every slot's offset is smaller, nothing is masked).
template <class T, int kUnroll, bool kVector, bool kVectorX, bool kStream>
__device__ __forceinline__ void step(const T* p, const Strided<const T>& x, long long row, int valid,
                                     T (&acc)[kUnroll]) {
  constexpr int kV = Vec16<T>::kCount;
  T a[kUnroll][kV];
  blas2::load_slots<T, kBlockThreads, kUnroll, kVector, kStream>(p, valid, a);
  T xv[kUnroll][kV];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if constexpr (kVector) {
      constexpr int kStride = kBlockThreads * kV;  // slot_row(t, u, 0) - slot_row(t, 0, 0) = u kStride
      load_x_vec<T, kVectorX>(x, row + u * kStride, valid - u * kStride, xv[u]);
    } else {
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const int off = blas2::slot_row<kBlockThreads, kV, false>(0, u, k);  // from slot (0, 0)
        xv[u][k] = off < valid ? blas2::load_x(x, row + off) : T(0);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int k = 0; k < kV; ++k) acc[u] += a[u][k] * xv[u][k];
}

template <class T, int kUnroll, bool kVector, bool kVectorX, bool kStream>
__global__ void __launch_bounds__(kBlockThreads, min_blocks_per_sm<kUnroll>())
    gemv_cb_t_kernel(int m, const T* __restrict__ A, long long lda, Strided<const T> x, T alpha, T beta,
                     Strided<T> y) {
  static_assert(!kVectorX || kVector, "16-byte loads of x go with 16-byte loads of A (the same slots)");
  constexpr int kV = Vec16<T>::kCount, kStep = step_rows<T, kUnroll>();
  const long long col = blockIdx.x;
  const int lane_row = blas2::slot_row<kBlockThreads, kV, kVector>(threadIdx.x, 0, 0);
  const T* a = A + col * lda + lane_row;
  // Whole steps without masks, then at most one masked step (m need not be a multiple of anything;
  // written so that no row index overflows int for m up to 2^31 - 1).
  const int full_end = m - m % kStep;
  T acc[kUnroll] = {};
#pragma unroll 1
  for (int r0 = 0; r0 < full_end; r0 += kStep)
    step<T, kUnroll, kVector, kVectorX, kStream>(a + r0, x, static_cast<long long>(r0) + lane_row, kStep, acc);
  if (full_end < m)
    step<T, kUnroll, kVector, kVectorX, kStream>(a + full_end, x, static_cast<long long>(full_end) + lane_row,
                                        m - full_end - lane_row, acc);

  T sum[1] = {acc[0]};
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) sum[0] += acc[u];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T warp_sum = blas2::reduce_transposed<1, 32>(sum, lane);  // butterfly: every lane holds the total
  __shared__ T warp_sums[kWarps];
  if (lane == 0) warp_sums[warp] = warp_sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    T total = warp_sums[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) total += warp_sums[w];
    y[col] = beta == T(0) ? alpha * total : alpha * total + beta * y[col];
  }
}

template <class T, bool kVector, bool kVectorX>
void launch(bool stream_hint, int m, int n, const T* A, int lda, Strided<const T> x, T alpha, T beta, Strided<T> y,
            cudaStream_t stream) {
  // One block per column: grid x, which allows 2^31 - 1 blocks (any int n).
  const auto kernel = m >= kDeepFromRows
                          ? (stream_hint ? gemv_cb_t_kernel<T, kDeepUnroll, kVector, kVectorX, true>
                                         : gemv_cb_t_kernel<T, kDeepUnroll, kVector, kVectorX, false>)
                          : (stream_hint ? gemv_cb_t_kernel<T, kUnroll, kVector, kVectorX, true>
                                         : gemv_cb_t_kernel<T, kUnroll, kVector, kVectorX, false>);
  kernel<<<n, kBlockThreads, 0, stream>>>(m, A, lda, x, alpha, beta, y);
}

}  // namespace cb

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

// kSinglePass and the row blocks: v3's plan for `impl` (make_plan3) and its one kernel.
template <class T>
GemvPlanSummary plan_single_pass(GemvImpl impl, Trans trans, int m, int n) {
  const v3::Plan3 plan = v3::make_plan3<T>(trans, m, n, impl);
  // The grid's y dimension: the segments, or the units for the segment-major kTrans grid; the
  // counters fit their fixed area.
  const int grid_y = trans == Trans::kTrans ? plan.units : plan.segments;
  return {plan.workspace_bytes(sizeof(T)), grid_y <= 65535 && plan.counters() <= v3::kMaxCounters};
}

template <class T>
cudaError_t launch_single_pass(GemvImpl impl, const GemvArgs<T>& a, cudaStream_t stream) {
  const v3::Plan3 plan = v3::make_plan3<T>(a.trans, a.m, a.n, impl);
  v3::Work3<T> ws{nullptr, nullptr, nullptr};
  if (plan.segments > 1) {
    ws.counters = static_cast<unsigned*>(a.workspace);
    ws.part1 = reinterpret_cast<T*>(static_cast<unsigned char*>(a.workspace) + v3::kCounterBytes);
    ws.part2 = plan.groups > 1 ? ws.part1 + plan.part1_elems() : nullptr;
  }
  // Evict-first loads when A exceeds the L2 (a_exceeds_l2); not on the scalar path (lda not a
  // multiple of 16 bytes) of the one-block deep N kernel and of row blocks, whose lane groups
  // read only part of a sector per load: the next lane group (or load) reads the rest, and
  // evict-first loses it (S N 4097 read 13 % slower with the hint).
  const bool vector = a.vector_a();
  const bool partial_sector_loads = plan.shape == v3::NShape::kDeepOneBlock ||
                                    plan.shape == v3::NShape::kSmallOneBlock ||
                                    plan.shape == v3::NShape::kRowBlocks || plan.shape == v3::NShape::kRowBlocksSector;
  const bool stream_hint = a_exceeds_l2<T>(a.m, a.n) && (vector || !partial_sector_loads);
  const Strided<const T> xs = a.xs();
  const Strided<T> ys = a.ys();
  if (vector)
    stream_hint ? v3::launch3<T, true, true>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream)
                : v3::launch3<T, true, false>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream);
  else
    stream_hint ? v3::launch3<T, false, true>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream)
                : v3::launch3<T, false, false>(a.trans, plan, a.A, a.lda, xs, a.alpha, a.beta, ys, ws, stream);
  return launches_error();
}

}  // namespace

// kSplitReduce: the partials after kSinglePass's counter area (kAuto switches between kSplitReduce
// and kSinglePass by shape, and one workspace may serve both in turn: a kSplitReduce call must not
// overwrite the counters).
template <class T>
GemvPlanSummary GemvSplitReduceKernels::plan(Trans trans, int m, int n) {
  const Plan plan = make_plan<T>(trans, m, n);
  const long long elems = plan.workspace_elems();
  // The segments are the grid's y dimension.
  return {elems > 0 ? v3::kCounterBytes + static_cast<std::size_t>(elems) * sizeof(T) : 0, plan.segments <= 65535};
}
template <class T>
cudaError_t GemvSplitReduceKernels::launch(const GemvArgs<T>& a, cudaStream_t stream) {
  const Plan plan = make_plan<T>(a.trans, a.m, a.n);
  T* part = plan.segments > 1 ? reinterpret_cast<T*>(static_cast<unsigned char*>(a.workspace) + v3::kCounterBytes)
                              : nullptr;
  const Strided<T> ys = a.ys();
  if (a.vector_a())
    launch_main<T, true>(a.trans, plan, a.A, a.lda, a.xs(), a.alpha, a.beta, ys, part, stream);
  else
    launch_main<T, false>(a.trans, plan, a.A, a.lda, a.xs(), a.alpha, a.beta, ys, part, stream);
  cudaError_t reduce = cudaSuccess;
  if (part) {
    const int blocks = (plan.out_len + kReduceElems - 1) / kReduceElems;
    reduce = blas2::launch_dependent(gemv_reduce_kernel<T>, dim3(blocks), dim3(kThreads), stream, plan,
                                     static_cast<const T*>(part), a.alpha, a.beta, ys);
  }
  return launches_error(reduce);
}

template <class T>
GemvPlanSummary GemvSinglePassKernels::plan(Trans trans, int m, int n) {
  return plan_single_pass<T>(GemvImpl::kSinglePass, trans, m, n);
}
template <class T>
cudaError_t GemvSinglePassKernels::launch(const GemvArgs<T>& a, cudaStream_t stream) {
  return launch_single_pass<T>(GemvImpl::kSinglePass, a, stream);
}

// Row blocks: kNoTrans only (their record's trans_runs is kColumnBlocks); one segment, no workspace.
template <class T>
GemvPlanSummary GemvRowBlockKernels::plan(Trans trans, int m, int n) {
  return plan_single_pass<T>(GemvImpl::kRowBlocks, trans, m, n);
}
template <class T>
cudaError_t GemvRowBlockKernels::launch(const GemvArgs<T>& a, cudaStream_t stream) {
  return launch_single_pass<T>(GemvImpl::kRowBlocks, a, stream);
}
template <class T>
GemvPlanSummary GemvRowBlockSectorKernels::plan(Trans trans, int m, int n) {
  return plan_single_pass<T>(GemvImpl::kRowBlocksSector, trans, m, n);
}
template <class T>
cudaError_t GemvRowBlockSectorKernels::launch(const GemvArgs<T>& a, cudaStream_t stream) {
  return launch_single_pass<T>(GemvImpl::kRowBlocksSector, a, stream);
}

// Column blocks: kTrans only (their record's no_trans_runs is kSinglePass); n blocks in the grid's x
// dimension (up to 2^31 - 1: any n), no workspace.
template <class T>
GemvPlanSummary GemvColumnBlockKernels::plan(Trans, int, int) {
  return {0, true};
}
template <class T>
cudaError_t GemvColumnBlockKernels::launch(const GemvArgs<T>& a, cudaStream_t stream) {
  const bool stream_hint = a_exceeds_l2<T>(a.m, a.n);
  const Strided<const T> xs = a.xs();
  const Strided<T> ys = a.ys();
  if (!a.vector_a())
    cb::launch<T, false, false>(stream_hint, a.m, a.n, a.A, a.lda, xs, a.alpha, a.beta, ys, stream);
  else if (a.incx == 1 && blas2::aligned16(a.x))
    cb::launch<T, true, true>(stream_hint, a.m, a.n, a.A, a.lda, xs, a.alpha, a.beta, ys, stream);
  else
    cb::launch<T, true, false>(stream_hint, a.m, a.n, a.A, a.lda, xs, a.alpha, a.beta, ys, stream);
  return launches_error();
}


}  // namespace detail

}  // namespace gpuprobe::kernels

// Instantiates every implementation's entry points for GPUPROBE_GEMV_T (float or double), in the
// unit that defines it before using this.
#define GPUPROBE_GEMV_INSTANTIATE_ONE(Name) GPUPROBE_GEMV_KERNEL_ENTRY_POINTS(, Name, GPUPROBE_GEMV_T)
#define GPUPROBE_GEMV_KERNELS_INSTANTIATE                     \
  namespace gpuprobe::kernels::detail {                       \
  GPUPROBE_GEMV_KERNEL_STRUCTS(GPUPROBE_GEMV_INSTANTIATE_ONE) \
  }
