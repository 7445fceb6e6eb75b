// Kernel descriptors: the work of one call of each kernel as a function of its shape. Every derived
// figure (GFLOP/s, GB/s on minimal bytes, the ratio to cudaMemcpy, later the roofline) uses these
// and only these, so that ours and cuBLAS are measured against the same yardstick.
//
// Conventions (BLAS): one multiply and one add per matrix element touched are two flops; the O(n)
// alpha/beta scaling is not counted. Minimal bytes are what any implementation must move between
// DRAM and the chip at least once: the stored matrix elements, x read once, y written once and read
// once more when beta != 0 (BLAS: beta == 0 means y is not read). Padding (lda > rows) is not counted.
#pragma once

#include <cstddef>

#include "gpuprobe/kernels/blas_types.hpp"
#include "gpuprobe/kernels/block_cyclic.hpp"
#include "gpuprobe/kernels/sgemm_descriptor.hpp"  // sgemm_flops, sgemm_min_bytes (one definition)

namespace gpuprobe::kernels {

// SYMV, y = alpha A x + beta y with A symmetric n x n, one triangle stored.
// flops: 2n^2 (every element of the full matrix is used once in a multiply-add).
inline double symv_flops(int n) { return 2.0 * n * static_cast<double>(n); }

// Minimal bytes: the stored triangle n(n+1)/2 (a storage-aware kernel reads nothing else), x (n),
// y written (n) and read (n) when beta != 0.
inline double symv_min_bytes(int n, std::size_t element_bytes, bool beta_nonzero) {
  const double triangle = 0.5 * n * (static_cast<double>(n) + 1.0);
  return (triangle + n + static_cast<double>(n) * (beta_nonzero ? 2 : 1)) * static_cast<double>(element_bytes);
}

// GEMV, y = alpha op(A) x + beta y with A stored m x n. flops: 2mn.
inline double gemv_flops(int m, int n) { return 2.0 * m * static_cast<double>(n); }

// Minimal bytes: A (mn), x (n for kNoTrans, m for kTrans), y written (m or n) and read when beta != 0.
inline double gemv_min_bytes(Trans trans, int m, int n, std::size_t element_bytes, bool beta_nonzero) {
  const double x_len = trans == Trans::kNoTrans ? n : m;
  const double y_len = trans == Trans::kNoTrans ? m : n;
  return (static_cast<double>(m) * n + x_len + y_len * (beta_nonzero ? 2 : 1)) * static_cast<double>(element_bytes);
}

// ---- Multi-GPU SYMV and GEMV (symv_mgpu.hpp): per GPU, what it must move itself; the vector the
// GPUs reduce; the flops are the single-GPU kernels' (symv_flops, gemv_flops of the submatrix). ----

// Stored elements of A(o:o+n, o:o+n) in GPU q's columns: over q's global columns c in [o, o+n), lower
// o + n - c (rows c .. o+n-1), upper c - o + 1 (rows o .. c). Summed over the GPUs: n(n+1)/2.
inline long long symv_mgpu_local_stored(const BlockCyclicLayout& layout, int q, Uplo uplo, int n, int offset) {
  if (n <= 0) return 0;
  const long long cols = layout.local_cols_before(q, offset + n) - layout.local_cols_before(q, offset);
  const long long index_sum = layout.global_index_sum_before(q, offset + n) - layout.global_index_sum_before(q, offset);
  return uplo == Uplo::kLower ? cols * (static_cast<long long>(offset) + n) - index_sum
                              : index_sum - cols * (static_cast<long long>(offset) - 1);
}

// Minimal bytes of GPU q: its stored elements, x (n: the column dots need x at every row), y (n
// written on every GPU: the result lands on all, and read once more when beta != 0).
inline double symv_mgpu_local_min_bytes(const BlockCyclicLayout& layout, int q, Uplo uplo, int n, int offset,
                                        std::size_t element_bytes, bool beta_nonzero) {
  const double vectors = static_cast<double>(n) * (beta_nonzero ? 3 : 2);
  return (static_cast<double>(symv_mgpu_local_stored(layout, q, uplo, n, offset)) + vectors) *
         static_cast<double>(element_bytes);
}

// The cross-GPU reduction: an allreduce (sum) of a vector of n elements; its bytes (the size a
// collective's model takes, as nccl-tests count it); 0 for one GPU.
inline double symv_mgpu_reduction_bytes(int gpus, int n, std::size_t element_bytes) {
  return gpus > 1 ? static_cast<double>(n) * static_cast<double>(element_bytes) : 0.0;
}

// GEMV on A(ro:ro+m, co:co+n): GPU q holds nl = its local columns of [co, co+n). Minimal bytes of GPU
// q: m nl elements of A, x (kNoTrans: the nl elements at its columns; kTrans: all m), y (kNoTrans: m,
// kTrans: n written on every GPU, read once more when beta != 0).
inline double gemv_mgpu_local_min_bytes(const BlockCyclicLayout& layout, int q, Trans trans, int m, int n,
                                        int col_offset, std::size_t element_bytes, bool beta_nonzero) {
  if (m <= 0 || n <= 0) return 0;
  const double nl = layout.local_cols_before(q, col_offset + n) - layout.local_cols_before(q, col_offset);
  const double x_len = trans == Trans::kNoTrans ? nl : m;
  const double y_len = trans == Trans::kNoTrans ? m : n;
  return (static_cast<double>(m) * nl + x_len + y_len * (beta_nonzero ? 2 : 1)) * static_cast<double>(element_bytes);
}

// The cross-GPU step: kNoTrans an allreduce (sum) of m elements, kTrans an allgather whose result
// has n elements (each GPU contributes the elements of its columns); bytes of the result; 0 for one GPU.
inline const char* gemv_mgpu_reduction_op(Trans trans) { return trans == Trans::kNoTrans ? "allreduce" : "allgather"; }
inline double gemv_mgpu_reduction_bytes(Trans trans, int gpus, int m, int n, std::size_t element_bytes) {
  return gpus > 1 ? static_cast<double>(trans == Trans::kNoTrans ? m : n) * static_cast<double>(element_bytes) : 0.0;
}

}  // namespace gpuprobe::kernels
