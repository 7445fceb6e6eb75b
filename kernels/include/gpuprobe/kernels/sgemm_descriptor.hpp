// SGEMM descriptor: the work of one C = alpha op(A) op(B) + beta C, as a function of the shape.
// Every derived figure (GFLOP/s, GB/s on minimal bytes, later the roofline) uses these and only these.
#pragma once

namespace gpuprobe::kernels {

// Floating-point operations, by the BLAS convention: 2mnk (one multiply and one add per term; the
// O(mn) alpha/beta scaling is not counted).
inline double sgemm_flops(int m, int n, int k) { return 2.0 * m * n * static_cast<double>(k); }

// Minimal DRAM bytes: op(A) (m x k) and op(B) (k x n) read once, C (m x n) written once, and read
// once more when beta != 0. Padding (ld > rows) is not counted: it need not be moved.
inline double sgemm_min_bytes(int m, int n, int k, bool beta_nonzero) {
  const double elements = static_cast<double>(m) * k + static_cast<double>(k) * n +
                          static_cast<double>(m) * n * (beta_nonzero ? 2 : 1);
  return elements * sizeof(float);
}

}  // namespace gpuprobe::kernels
