// Host side of the tuned SGEMM kernel template (sgemm_tuned.cuh): the launchers that pick each operand's
// copy path from its transposition and alignment, the shared-memory opt-in, and the split-k cluster launch.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "sgemm_tuned.cuh"

namespace gpuprobe::kernels::detail {

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether the current device runs tiling T's split-k kernel from sm_90 code or newer (its ptx version, by
// cudaFuncGetAttributes): its cluster reduction exists there only (a build for sm_80 alone runs compute_80
// code here). Queried once per device, by sgemm_device_traits(), which keeps the answer.
template <class T>
bool split_k_code_here() {
  int device = 0, major = 0;
  cudaFuncAttributes attr{};
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9 &&
         cudaFuncGetAttributes(&attr, sgemm_tuned_kernel<T, OperandCopy::kMnVector, OperandCopy::kKScalar, true>) ==
             cudaSuccess &&
         attr.ptxVersion >= 90;
}

template <class T, OperandCopy kCopyA, OperandCopy kCopyB, bool kSplitK = false>
cudaError_t launch_tuned_with(const SgemmArgs& a, cudaStream_t stream, int splits = 1) {
  auto kernel = sgemm_tuned_kernel<T, kCopyA, kCopyB, kSplitK>;
  // Above 48 KB a block needs the opt-in, once per device: not on every call, where its host time
  // would sit between the caller's start event and the kernel.
  static std::array<std::once_flag, kMaxDevices> opted_in;
  static std::array<cudaError_t, kMaxDevices> opt_in_status;
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
  std::call_once(opted_in[device], [&] {
    opt_in_status[device] =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::kSmemBytes));
  });
  if (opt_in_status[device] != cudaSuccess) return opt_in_status[device];
  const int m_tiles = (a.m - 1) / T::kBlockM + 1, n_tiles = (a.n - 1) / T::kBlockN + 1;  // m, n > 0
  // Grouped: one linear id per tile (launch_tuned checked that m_tiles * n_tiles fits in an int).
  const dim3 grid = T::kGroupM > 0 ? dim3(static_cast<unsigned>(m_tiles) * static_cast<unsigned>(n_tiles))
                                   : dim3(m_tiles, n_tiles);
  const bool c_vector_ok = aligned16(a.C) && a.ldc % kVec == 0;
  if constexpr (kSplitK) {
    // One cluster of `splits` blocks along z per C tile (portable cluster sizes: up to 8).
    if (splits < 2 || splits > 8) return cudaErrorInvalidValue;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(grid.x, grid.y, static_cast<unsigned>(splits));
    config.blockDim = dim3(T::kThreads);
    config.dynamicSmemBytes = T::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = static_cast<unsigned>(splits);
    config.attrs = &cluster;
    config.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&config, kernel, a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta,
                                             a.C, a.ldc, c_vector_ok);
    return e != cudaSuccess ? e : cudaGetLastError();
  } else {
    (void)splits;
    kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta,
                                                          a.C, a.ldc, c_vector_ok);
    return cudaGetLastError();
  }
}

inline bool aligned8(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 8 == 0; }

// Which path moves a K-contiguous operand (A with kTrans, B with kNoTrans) when its storage allows
// 8-byte loads (ld even, pointer 8-byte aligned); otherwise it always takes kKScalar.
enum class KContiguousPath { kRegisterStaged, kCpAsyncScalar };

// Picks the copy path of each operand from the transposition and the alignment of its storage.
// kSplitK with splits >= 2: the split-k kernel in clusters of `splits` (the caller checked
// sgemm_device_traits().split_k); splits == 1 takes the plain kernel.
template <class T, KContiguousPath kKPath = KContiguousPath::kRegisterStaged, bool kSplitK = false>
cudaError_t launch_tuned(const SgemmArgs& a, cudaStream_t stream, int splits = 1) {
  if constexpr (kSplitK) {
    if (splits == 1) return launch_tuned<T, kKPath, false>(a, stream);
  }
  if constexpr (T::kGroupM > 0) {
    // 1-D grid: gridDim.x < 2^31, and grouped_tile's ids and ids per group are ints.
    const long long m_tiles = (a.m - 1) / T::kBlockM + 1, n_tiles = (a.n - 1) / T::kBlockN + 1;
    if (m_tiles * n_tiles > 0x7fffffffLL || T::kGroupM * n_tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  } else if (a.n > 65535 * T::kBlockN) {
    return cudaErrorInvalidValue;  // grid.y limit
  }
  // Register-staged kernels are instantiated only where asked for (their copier needs kBlockK = 16).
  constexpr bool kRegisterPath = kKPath == KContiguousPath::kRegisterStaged;
  auto pick = [](bool k_contiguous, const float* p, int ld) {
    if (k_contiguous)
      return (kKPath == KContiguousPath::kRegisterStaged && aligned8(p) && ld % 2 == 0) ? OperandCopy::kKRegister
                                                                                        : OperandCopy::kKScalar;
    return (aligned16(p) && ld % kVec == 0) ? OperandCopy::kMnVector : OperandCopy::kMnScalar;
  };
  const OperandCopy copy_a = pick(a.transa == Trans::kTrans, a.A, a.lda);
  const OperandCopy copy_b = pick(a.transb == Trans::kNoTrans, a.B, a.ldb);
  auto with_b = [&](auto copy_a_tag) -> cudaError_t {
    constexpr OperandCopy ca = decltype(copy_a_tag)::value;
    switch (copy_b) {
      case OperandCopy::kMnVector: return launch_tuned_with<T, ca, OperandCopy::kMnVector, kSplitK>(a, stream, splits);
      case OperandCopy::kMnScalar: return launch_tuned_with<T, ca, OperandCopy::kMnScalar, kSplitK>(a, stream, splits);
      case OperandCopy::kKScalar: return launch_tuned_with<T, ca, OperandCopy::kKScalar, kSplitK>(a, stream, splits);
      case OperandCopy::kKRegister:
        if constexpr (kRegisterPath)
          return launch_tuned_with<T, ca, OperandCopy::kKRegister, kSplitK>(a, stream, splits);
        break;
    }
    return cudaErrorInvalidValue;
  };
  switch (copy_a) {
    case OperandCopy::kMnVector: return with_b(std::integral_constant<OperandCopy, OperandCopy::kMnVector>{});
    case OperandCopy::kMnScalar: return with_b(std::integral_constant<OperandCopy, OperandCopy::kMnScalar>{});
    case OperandCopy::kKScalar: return with_b(std::integral_constant<OperandCopy, OperandCopy::kKScalar>{});
    case OperandCopy::kKRegister:
      if constexpr (kRegisterPath) return with_b(std::integral_constant<OperandCopy, OperandCopy::kKRegister>{});
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuprobe::kernels::detail
