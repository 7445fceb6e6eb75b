// SGEMM baseline after V. Volkov & J. Demmel, "Benchmarking GPUs to tune dense linear algebra"
// (SC08), section 4 / figure 5: register blocking with 64 x 16 blocks of C.
//
//   C block     (64, 16)          one thread block of 64 threads; thread t owns row t: c[16] in registers
//   op(B) tile  (16, 16) : (17, 1) shared, padded; every thread reads the same element (broadcast)
//   op(A)       thread t streams row t of op(A) from global memory straight into registers, 16 k at a time
//
// Each k step is 16 FFMA per thread with one shared operand read each (V&D's "a*b + c with b in shared
// memory" inner loop). The paper's kernel is NN only; here the op(A) / op(B) accessors are templated on
// the transposition, so the transposed forms are correct but read op(A) uncoalesced (a baseline, not a
// target). Edges: out-of-range elements load as 0, out-of-range rows and columns of C are not written.
#include <cstddef>

#include "sgemm_internal.cuh"

namespace gpuprobe::kernels::detail {
namespace {

constexpr int kVdBlockM = 64;  // = threads per block: one row of C each
constexpr int kVdBlockN = 16;  // = accumulators per thread
constexpr int kVdBlockK = 16;
constexpr int kVdThreads = kVdBlockM;
static_assert(kVdBlockK * kVdBlockN % kVdThreads == 0, "the op(B) tile must split evenly over the threads");
static_assert(kVdThreads % kVdBlockK == 0 && kVdThreads % kVdBlockN == 0, "tile loads walk whole rows");

template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(kVdThreads)
    sgemm_vd_kernel(int m, int n, int k, float alpha, const float* __restrict__ A, int lda,
                    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  __shared__ float b_tile[kVdBlockK][kVdBlockN + 1];  // +1: the transposed fill hits distinct banks
  const int t = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x) * kVdBlockM + t;
  const int col0 = static_cast<int>(blockIdx.y) * kVdBlockN;

  float c[kVdBlockN];
#pragma unroll
  for (int j = 0; j < kVdBlockN; ++j) c[j] = 0.f;

  for (int k0 = 0; k0 < k; k0 += kVdBlockK) {
    // op(B)(k, n) tile: consecutive threads walk the contiguous dimension of B's storage.
#pragma unroll
    for (int p = 0; p < kVdBlockK * kVdBlockN / kVdThreads; ++p) {
      int kk, nn;
      if constexpr (!kTransB) {  // B[k + n ldb]: k contiguous
        kk = t % kVdBlockK;
        nn = t / kVdBlockK + p * (kVdThreads / kVdBlockK);
      } else {  // B[n + k ldb]: n contiguous
        nn = t % kVdBlockN;
        kk = t / kVdBlockN + p * (kVdThreads / kVdBlockN);
      }
      const int gk = k0 + kk, gn = col0 + nn;
      float v = 0.f;
      if (gk < k && gn < n)
        v = kTransB ? B[gn + static_cast<std::ptrdiff_t>(gk) * ldb] : B[gk + static_cast<std::ptrdiff_t>(gn) * ldb];
      b_tile[kk][nn] = v;
    }
    // op(A)(row, k0 .. k0+15) into registers; issued before the barrier so the loads overlap it.
    float a[kVdBlockK];
#pragma unroll
    for (int kk = 0; kk < kVdBlockK; ++kk) {
      const int gk = k0 + kk;
      a[kk] = 0.f;
      if (row < m && gk < k)
        a[kk] = kTransA ? A[gk + static_cast<std::ptrdiff_t>(row) * lda] : A[row + static_cast<std::ptrdiff_t>(gk) * lda];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kVdBlockK; ++kk)
#pragma unroll
      for (int j = 0; j < kVdBlockN; ++j) c[j] = fmaf(a[kk], b_tile[kk][j], c[j]);
    __syncthreads();  // the next fill overwrites b_tile
  }

  if (row >= m) return;
#pragma unroll
  for (int j = 0; j < kVdBlockN; ++j) {
    const int col = col0 + j;
    if (col >= n) break;
    float* out = C + static_cast<std::ptrdiff_t>(col) * ldc + row;
    *out = beta != 0.f ? fmaf(beta, *out, alpha * c[j]) : alpha * c[j];
  }
}

template <bool kTransA, bool kTransB>
cudaError_t launch_vd(const SgemmArgs& a, cudaStream_t stream) {
  const dim3 grid((a.m + kVdBlockM - 1) / kVdBlockM, (a.n + kVdBlockN - 1) / kVdBlockN);
  sgemm_vd_kernel<kTransA, kTransB><<<grid, kVdThreads, 0, stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B,
                                                                      a.ldb, a.beta, a.C, a.ldc);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_sgemm_volkov_demmel(const SgemmArgs& a, cudaStream_t stream) {
  if (a.n > 65535 * kVdBlockN) return cudaErrorInvalidValue;  // grid.y limit
  const bool ta = a.transa == Trans::kTrans, tb = a.transb == Trans::kTrans;
  if (!ta && !tb) return launch_vd<false, false>(a, stream);
  if (!ta && tb) return launch_vd<false, true>(a, stream);
  if (ta && !tb) return launch_vd<true, false>(a, stream);
  return launch_vd<true, true>(a, stream);
}

}  // namespace gpuprobe::kernels::detail
