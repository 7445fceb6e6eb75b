// GEMV v8 (GemvImpl::kClusterSplit), kNoTrans: the plan, i.e. which rows and columns a block reads
// and how many blocks form the cluster that sums a row unit. Host and device code share it (the grid
// on the host, indexing in the kernel, gemv.cu namespace cs), and so does the CPU test
// tests/cpu/gemv_cluster_plan_test.cpp (segments cover the columns exactly once, grid limits).
// Design and measurements: docs/perf/gemv.md (v8).
//
// Shapes (rows, columns) of A read per load instruction, CuTe style; kV = 16 / sizeof(T) elements
// per 16-byte vector (4 float, 2 double):
//   thread  (kV, 1)                    one 16-byte vector of one column; kUnroll of them per step,
//                                      in the columns g, g + kGroups, ... of its segment
//   warp    (kLanes kV, 32 / kLanes)   8 lanes x 16 B = one 128-byte piece of each of 4 columns
//   block   (kLanes kV, kGroups)       a unit's rows x 32 columns; (kLanes kV, kCols) per step
//   cluster (kLanes kV, n)             C blocks, block rank s reading column segment s
// Units of rows_per_unit<T>() = kLanes kV rows (32 float, 16 double): small units make many blocks
// for the small, L2-resident N shapes this is for (D N 1024: 64 units x 8 segments = 512 blocks,
// where v7.4's 32-row, 512-thread blocks were 32).
#pragma once

#include <climits>

#if defined(__CUDACC__)
#define GPUPROBE_GEMV_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_GEMV_HD inline
#endif

namespace gpuprobe::kernels::gemv_cluster {

constexpr int kLanes = 8;                           // row lanes: 8 x 16 B, one 128-byte piece of a column
constexpr int kBlockThreads = 256;                  // 8 warps
constexpr int kGroups = kBlockThreads / kLanes;     // column groups: 32
constexpr int kUnroll = 4;                          // 16-byte loads in flight per thread and step
constexpr int kCols = kGroups * kUnroll;            // columns per block step: 128
constexpr int kMaxCluster = 8;                      // the portable cluster size limit
constexpr long long kMaxGridX = INT_MAX;            // a 1-D grid: up to 2^31 - 1 blocks
static_assert(kBlockThreads % 32 == 0 && 32 % kLanes == 0, "whole warps, each of whole column groups");
static_assert((kMaxCluster & (kMaxCluster - 1)) == 0, "cluster sizes: powers of two");

template <class T>
constexpr int vec_elems() {  // kV: elements of T in a 16-byte vector (blas2::Vec16<T>::kCount)
  static_assert(16 % sizeof(T) == 0, "T divides a 16-byte vector");
  return static_cast<int>(16 / sizeof(T));
}
template <class T>
constexpr int rows_per_unit() { return kLanes * vec_elems<T>(); }  // 32 float, 16 double
static_assert(rows_per_unit<float>() == 32 && rows_per_unit<double>() == 16, "unit: 128 bytes of a column");
// Each rank sums rows_per_unit / C whole rows of the unit in the cluster stage.
static_assert(rows_per_unit<double>() % kMaxCluster == 0, "every cluster size divides the unit's rows");

struct Plan {
  int m = 0, n = 0;
  int units = 0;    // row units: ceil(m / rows_per_unit)
  int cluster = 1;  // C: column segments per unit = blocks per cluster, a power of two <= kMaxCluster
  int seg_len = 0;  // columns per segment: segment s is [s seg_len, min(n, (s + 1) seg_len))

  // Grid: units x C blocks, block b of unit b / C and rank (segment) b % C: the C blocks of one
  // unit are consecutive, so they form one cluster of dimension (C, 1, 1).
  constexpr long long blocks() const { return static_cast<long long>(units) * cluster; }
  GPUPROBE_GEMV_HD int seg_begin(int s) const { return s * seg_len; }  // <= 7 ceil(n / 8) < n: no overflow
  // Columns of segment s (0 when it is past the end; never, see make_plan).
  GPUPROBE_GEMV_HD int seg_cols(int s) const {
    const int left = n - seg_begin(s);
    return left <= 0 ? 0 : (left < seg_len ? left : seg_len);
  }
  // Rows of the unit's partial sums that rank s adds up over the cluster and writes to y.
  GPUPROBE_GEMV_HD int rows_per_rank(int unit_rows) const { return unit_rows / cluster; }
};

// C: the smallest power of two (<= kMaxCluster) whose segments take at most one block step
// (ceil(n / C) <= kCols columns: kUnroll loads per thread, all in flight at once); beyond
// kMaxCluster kCols columns, C = kMaxCluster and the threads loop over several steps.
template <class T>
constexpr Plan make_plan(int m, int n) {
  Plan p;
  if (m <= 0 || n <= 0) return p;
  p.m = m;
  p.n = n;
  p.units = static_cast<int>((static_cast<long long>(m) + rows_per_unit<T>() - 1) / rows_per_unit<T>());
  int c = 1;
  while (c < kMaxCluster && (static_cast<long long>(n) + c - 1) / c > kCols) c *= 2;
  p.cluster = c;
  p.seg_len = static_cast<int>((static_cast<long long>(n) + c - 1) / c);
  return p;
}

// The shapes of the brief (docs/perf/gemv.md v8): N 512 / 1000 / 1024 one step per thread.
static_assert(make_plan<double>(1024, 1024).units == 64 && make_plan<double>(1024, 1024).cluster == 8 &&
                  make_plan<double>(1024, 1024).seg_len == kCols,
              "D N 1024: 64 units x 8 segments of 128 columns = 512 blocks");
static_assert(make_plan<float>(512, 512).blocks() == 64 && make_plan<float>(512, 512).seg_len == kCols,
              "S N 512: 16 units x 4 segments of 128 columns");
static_assert(make_plan<float>(1000, 1000).cluster == 8 && make_plan<float>(1000, 1000).seg_len == 125,
              "N 1000: 8 segments of 125 columns");
static_assert(make_plan<float>(1, 128).cluster == 1 && make_plan<float>(1, 129).cluster == 2 &&
                  make_plan<float>(1, 1 << 20).cluster == kMaxCluster,
              "C: one block step per segment, clamped to the cluster limit");
// Every int m, n fits the 1-D grid: at most ceil((2^31 - 1) / 16) units x 8 < 2^31 - 1 blocks
// (gemv_check_args checks it all the same).
static_assert(make_plan<double>(INT_MAX, INT_MAX).blocks() <= kMaxGridX, "the largest problem fits the grid");

}  // namespace gpuprobe::kernels::gemv_cluster
