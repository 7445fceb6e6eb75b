// GemvImpl::kSinglePass's plan (and the row blocks', which are block shapes of its N kernel): the block
// shapes, the shape a problem takes and its split into segments and groups of segments. The kernels:
// gemv_single_pass.cuh.
#pragma once
#include "gemv_common.cuh"

namespace gpuprobe::kernels {
namespace {

namespace v3 {

constexpr long long kTargetBlocks = 8192;  // as kSplitReduce's kTargetUnits: split when the units are fewer
constexpr int kMinSteps = 4;               // a segment is at least 4 steps of a thread
constexpr int kOneLevelMax = 32;           // up to this many segments, one block sums them all
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

}  // namespace v3

}  // namespace

}  // namespace gpuprobe::kernels
