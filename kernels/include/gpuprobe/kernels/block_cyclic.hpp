// The 1D block-column cyclic layout of the multi-GPU BLAS2 kernels (symv_mgpu.hpp), as in MAGMA's
// dsymv_mgpu / dsytrd_mgpu: global block column J (columns J b .. J b + b - 1) lives on GPU J mod G,
// as local block column J / G of that GPU's local array, so local column lj of GPU q is global
// column ((lj / b) G + q) b + lj % b, and a GPU's local columns are in increasing global order.
// Pure index arithmetic, usable on the host and in kernels; tests/cpu/mgpu_layout_test.cpp checks it.
#pragma once

#if defined(__CUDACC__)
#define GPUPROBE_MGPU_HD __host__ __device__ __forceinline__
#else
#define GPUPROBE_MGPU_HD inline
#endif

namespace gpuprobe::kernels {

struct BlockCyclicLayout {
  int rows = 0;   // global rows (SYMV: n)
  int cols = 0;   // global columns (SYMV: n)
  int block = 1;  // b: columns per block, >= 1
  int gpus = 1;   // G: the number of local arrays, >= 1

  // GPU that holds global column j.
  GPUPROBE_MGPU_HD int owner(int j) const { return (j / block) % gpus; }
  // Local column index of global column j on its owner.
  GPUPROBE_MGPU_HD int local_col(int j) const { return (j / block / gpus) * block + j % block; }
  // Global column of local column lj of GPU q.
  GPUPROBE_MGPU_HD int global_col(int q, int lj) const { return ((lj / block) * gpus + q) * block + lj % block; }
  // How many of the global columns [0, j) GPU q holds (0 <= j <= cols): the local index of the first
  // of q's columns at or after j, so that q's columns of a global range [j0, j1) are the contiguous
  // local range [local_cols_before(q, j0), local_cols_before(q, j1)).
  GPUPROBE_MGPU_HD int local_cols_before(int q, int j) const {
    const long long cycle = static_cast<long long>(block) * gpus;
    const long long rem = j % cycle - static_cast<long long>(q) * block;
    return static_cast<int>(j / cycle * block + (rem < 0 ? 0 : rem > block ? block : rem));
  }
  // Local columns of GPU q.
  GPUPROBE_MGPU_HD int local_cols(int q) const { return local_cols_before(q, cols); }
  // Sum of the global indices of q's columns among [0, j): with local_cols_before, the closed form of
  // a GPU's share of a triangle (kernel_descriptors.hpp). Exact in 64 bits for any int sizes.
  GPUPROBE_MGPU_HD long long global_index_sum_before(int q, int j) const {
    const long long b = block, cycle = b * gpus, first = static_cast<long long>(q) * b;
    const long long full = j / cycle;  // whole cycles below j: q's block of cycle k starts at k cycle + first
    long long sum = b * (cycle * (full * (full - 1) / 2) + full * first) + full * (b * (b - 1) / 2);
    long long r = j % cycle - first;  // q's columns in the partial cycle
    r = r < 0 ? 0 : r > b ? b : r;
    sum += r * (full * cycle + first) + r * (r - 1) / 2;
    return sum;
  }
};

}  // namespace gpuprobe::kernels
