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

}  // namespace gpuprobe::kernels
