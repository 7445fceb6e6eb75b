// Device helpers shared by the SYMV and GEMV kernels (symv.cu, gemv.cu): 16-byte row loads with
// masking, strided vectors with BLAS increments, the multi-value warp reduction, y = beta y.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels::blas2 {

// The 16-byte vector of T: the widest load a thread can issue, and the unit of a row "lane".
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kCount = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kCount = 2;
};

// A BLAS vector: element i at base[i * inc]; for inc < 0 the base is moved to the far end, as in
// reference BLAS (element 0 is at x + (n - 1) |inc|).
template <class T>
struct Strided {
  T* base;
  long long inc;
  __device__ __forceinline__ T& operator[](long long i) const { return base[i * inc]; }
};

template <class T>
Strided<T> make_strided(T* p, int n, int inc) {
  const long long step = inc;
  return Strided<T>{inc < 0 ? p - (static_cast<long long>(n) - 1) * step : p, step};
}

template <class T>
__device__ __forceinline__ T load_x(const Strided<const T>& x, long long i) {
  return __ldg(&x[i]);
}

// One element or one 16-byte vector read through the read-only path (kStream = false) or as a
// streaming load (kStream = true: ld.global.cs, "evict first" in L1 and L2, SASS LDG.E.EF): for data
// read once and larger than the L2, so that it is replaced before the L2's other lines (a kernel's
// partials, y).
template <class T, bool kStream>
__device__ __forceinline__ T load_elem(const T* p) {
  if constexpr (kStream)
    return __ldcs(p);
  else
    return __ldg(p);
}
template <class T, bool kStream>
__device__ __forceinline__ typename Vec16<T>::type load_vec16(const T* p) {
  using V = typename Vec16<T>::type;
  if constexpr (kStream)
    return __ldcs(reinterpret_cast<const V*>(p));
  else
    return __ldg(reinterpret_cast<const V*>(p));
}

// Loads kV = 16 / sizeof(T) consecutive elements p[0..kV) of one column, keeping the first `valid`
// (<= 0: none, nothing read) and zeroing the rest by selection, so that NaN or garbage beyond the
// matrix (padding rows of lda, the unstored triangle) never enters a sum. kVector: one 16-byte load;
// the caller guarantees p is 16-byte aligned and that the whole vector lies inside the allocation
// (lda a multiple of kV, so a vector starting at a row < lda ends at a row < lda). kStream: as
// load_elem / load_vec16.
template <class T, bool kVector, bool kStream = false>
__device__ __forceinline__ void load_rows(const T* p, int valid, T (&out)[Vec16<T>::kCount]) {
  constexpr int kV = Vec16<T>::kCount;
  if constexpr (kVector) {
    using V = typename Vec16<T>::type;
    V v{};
    if (valid > 0) v = load_vec16<T, kStream>(p);
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < kV; ++k) out[k] = k < valid ? e[k] : T(0);
  } else {
#pragma unroll
    for (int k = 0; k < kV; ++k) out[k] = k < valid ? load_elem<T, kStream>(p + k) : T(0);
  }
}

// Sums kCount values over kLanes consecutive lanes (a power of two <= 32, aligned groups inside a
// warp) with kCount - 1 + log2(kLanes / kCount) shuffles instead of kCount log2(kLanes): in the first
// rounds each lane keeps half of its values and sends the other half to its partner (a transposing
// butterfly), then a plain butterfly finishes. On return, lane l of the group holds the full sum of
// value index (l / (kLanes / kCount)); every lane of the warp must call it (no divergence).
template <int kCount, int kLanes, class T>
__device__ __forceinline__ T reduce_transposed(T (&v)[kCount], int lane_in_group) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "lanes: a power of two <= 32");
  static_assert(kCount >= 1 && kCount <= kLanes && (kCount & (kCount - 1)) == 0, "count: a power of two <= lanes");
  int offset = kLanes / 2;
#pragma unroll
  for (int half = kCount / 2; half >= 1; half /= 2, offset /= 2) {
    const bool upper = (lane_in_group & offset) != 0;
#pragma unroll
    for (int i = 0; i < half; ++i) {
      const T keep = upper ? v[i + half] : v[i];
      const T send = upper ? v[i] : v[i + half];
      v[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
  T s = v[0];
#pragma unroll
  for (; offset >= 1; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

// y = beta y (beta == 0: y = 0, y not read). For alpha == 0 and for the atomic variants' first step.
template <class T>
__global__ void scale_kernel(int n, T beta, Strided<T> y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = beta == T(0) ? T(0) : beta * y[i];
}

template <class T>
void launch_scale(int n, T beta, Strided<T> y, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = static_cast<int>((static_cast<long long>(n) + threads - 1) / threads);
  scale_kernel<T><<<blocks < 4096 ? blocks : 4096, threads, 0, stream>>>(n, beta, y);
}

// Programmatic dependent launch (sm_90): the reduction kernel is launched while the main kernel is
// still draining, its blocks wait in grid_dependency_wait() until the main grid has completed and
// its writes are visible; the main kernel lets it be scheduled from the start. Hides the second
// launch's latency (~1-2 us), which matters for the small, L2-resident sizes.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether the code this binary runs on the current device was compiled for sm_90 or newer, and so holds
// grid_dependency_wait(): a build for sm_80 runs its sm_80 code (no wait) even on a Hopper GPU, where an
// early dependent launch would then read the main kernel's output before it is written. Queried once per
// device (cudaFuncGetAttributes: the PTX version the code came from).
template <int>
__global__ void grid_dependency_marker_kernel() {}
inline bool code_waits_for_grid_dependency() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];  // 0: not queried yet, 1: no, 2: yes
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return false;
  int known = cache[device].load(std::memory_order_relaxed);
  if (known == 0) {
    cudaFuncAttributes attributes{};
    const bool yes = cudaFuncGetAttributes(&attributes, grid_dependency_marker_kernel<0>) == cudaSuccess &&
                     attributes.ptxVersion >= 90;
    cudaGetLastError();  // a failed query is not the caller's launch error
    known = yes ? 2 : 1;
    cache[device].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

// Launches `kernel` on `stream` as a programmatic dependent of the previous kernel in the stream (as an
// ordinary launch where the code has no grid_dependency_wait).
template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = code_waits_for_grid_dependency() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// kLaunchFailed when any launch since the last check failed.
inline Status launch_status() { return cudaGetLastError() == cudaSuccess ? Status::kSuccess : Status::kLaunchFailed; }

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// ---- Used by GEMV's single pass and column blocks (gemv.cu) and by the SYMV kernels. ----

// The current device's L2 size in bytes (queried once per device); 0 if it cannot be queried.
inline long long device_l2_bytes() {
  constexpr int kMaxDevices = 64;
  static std::atomic<long long> cache[kMaxDevices];  // 0: not queried yet
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return 0;
  long long bytes = cache[device].load(std::memory_order_relaxed);
  if (bytes == 0) {
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess || l2 <= 0) return 0;
    bytes = l2;
    cache[device].store(bytes, std::memory_order_relaxed);
  }
  return bytes;
}

// Row offset of a thread's slot (v, k) (v < row vectors, k < kV) inside a block of
// kRowVecs x kLanes x kV rows:
//   kVector: (v kLanes + lane) kV + k — one 16-byte load per v, the lanes on consecutive vectors;
//   scalar:  (v kV + k) kLanes + lane — kRowVecs kV loads, each over consecutive elements across the
//            lanes (coalesced), rather than kV loads 16 bytes apart that all touch the same sectors.
template <int kLanes, int kV, bool kVector>
__device__ __forceinline__ int slot_row(int lane, int v, int k) {
  return kVector ? (v * kLanes + lane) * kV + k : (v * kV + k) * kLanes + lane;
}

// Loads a thread's slots of one column. p points at the thread's slot (0, 0), i.e. the block's first
// row + slot_row(lane, 0, 0); `valid` rows from p are inside the matrix (<= 0: none, nothing read);
// slots beyond are zeroed by selection, as in load_rows. kVector: the caller guarantees the 16-byte
// alignment and the allocation bounds as for load_rows.
template <class T, int kLanes, int kRowVecs, bool kVector, bool kStream>
__device__ __forceinline__ void load_slots(const T* p, int valid, T (&out)[kRowVecs][Vec16<T>::kCount]) {
  constexpr int kV = Vec16<T>::kCount;
#pragma unroll
  for (int v = 0; v < kRowVecs; ++v) {
    if constexpr (kVector) {
      constexpr int kStride = kLanes * kV;  // slot_row(lane, v, 0) - slot_row(lane, 0, 0) = v kStride
      typename Vec16<T>::type vec{};
      if (v * kStride < valid) vec = load_vec16<T, kStream>(p + v * kStride);
      const T* e = reinterpret_cast<const T*>(&vec);
#pragma unroll
      for (int k = 0; k < kV; ++k) out[v][k] = v * kStride + k < valid ? e[k] : T(0);
    } else {
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const int off = (v * kV + k) * kLanes;  // slot_row(lane, v, k) - slot_row(lane, 0, 0)
        out[v][k] = off < valid ? load_elem<T, kStream>(p + off) : T(0);
      }
    }
  }
}

// The last step of the fixed-order reductions (SYMV v1/v3, GEMV v2): the block's threads are kGroups
// groups of kElems; group q holds `sum`, its share of the terms of output element `i`. The groups'
// sums go through shared memory and group 0 adds them in group order, then writes
// y_i = alpha total + beta y_i (y not read when beta == 0). `in_range`: i is an element of y. Every
// thread of the block must call it (it synchronizes the block).
template <int kGroups, int kElems, class T>
__device__ __forceinline__ void sum_groups_into_y(T sum, int q, long long i, bool in_range, T alpha, T beta,
                                                  const Strided<T>& y) {
  __shared__ T part[kGroups][kElems];
  part[q][threadIdx.x % kElems] = sum;
  __syncthreads();
  if (q == 0 && in_range) {  // group 0: threadIdx.x < kElems
    T total = part[0][threadIdx.x];
#pragma unroll
    for (int g = 1; g < kGroups; ++g) total += part[g][threadIdx.x];
    y[i] = beta == T(0) ? alpha * total : alpha * total + beta * y[i];
  }
}

}  // namespace gpuprobe::kernels::blas2
