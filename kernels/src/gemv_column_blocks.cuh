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
#pragma once
#include "gemv_common.cuh"

namespace gpuprobe::kernels {
namespace {
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

}  // namespace

namespace detail {
namespace {

// Column blocks: kTrans only (their record's no_trans_runs is kSinglePass); n blocks in the grid's x
// dimension (up to 2^31 - 1: any n), no workspace.
template <class T>
GemvPlanSummary plan_column_blocks(Trans, int, int) {
  return {0, true};
}
template <class T>
cudaError_t launch_column_blocks(const GemvArgs<T>& a, cudaStream_t stream) {
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

}  // namespace
}  // namespace detail

}  // namespace gpuprobe::kernels
