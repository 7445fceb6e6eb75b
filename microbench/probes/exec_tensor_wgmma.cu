// exec.tensor's wgmma kernels. Built for sm_90a alone (microbench/CMakeLists.txt): wgmma exists only in
// the architecture-specific target, and a plain sm_90 pass would reject it. On any other device these
// kernels are never launched (tensor_form_unavailable says why). A build without 90 compiles this file
// with no form at all (GPUPROBE_WGMMA_LEFT_OUT), so that the binary holds no wgmma instruction.
#include <cstring>
#include <vector>

#include "probes/exec_tensor.hpp"
#include "probes/exec_tensor_device.cuh"

#if defined(GPUPROBE_WGMMA_LEFT_OUT)
// A build without 90 (microbench/CMakeLists.txt): no wgmma kernel at all, only the empty table and the reason.
namespace gpuprobe {
const std::vector<tensor_device::TensorKernels>& tensor_device::wgmma_kernels() {
  static const std::vector<TensorKernels> none;
  return none;
}
std::string tensor_device::wgmma_forms_left_out() { return GPUPROBE_WGMMA_LEFT_OUT; }
}  // namespace gpuprobe
#else

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPUPROBE_WGMMA_ENABLED 1
#endif
#if defined(GPUPROBE_WGMMA_FORMS_GENERATED)
#include "probes/exec_tensor_wgmma_forms.cuh"  // in the build tree (microbench/CMakeLists.txt)
#else
namespace gpuprobe {
template <class F>
void for_each_wgmma_form(F&&) {}  // no wrappers generated: no form (wgmma_forms_left_out says why)
}  // namespace gpuprobe
#endif

namespace gpuprobe {
namespace {

using namespace tensor_device;

constexpr int kMaxN = 256;
constexpr int kRowsA = 64;

__device__ __forceinline__ void wgmma_fence() {
#if defined(GPUPROBE_WGMMA_ENABLED)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(GPUPROBE_WGMMA_ENABLED)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_wait_all() {
#if defined(GPUPROBE_WGMMA_ENABLED)
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}
// Shared memory written by ordinary stores and read next by the tensor cores (the async proxy).
__device__ __forceinline__ void fence_shared_for_async_proxy() {
#if defined(GPUPROBE_WGMMA_ENABLED)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Pins accumulator registers after a wait so that no use is scheduled before it (CUTLASS does the same).
template <class Acc, int N>
__device__ __forceinline__ void fence_accumulators(Acc (&d)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (sizeof(Acc) == 4) {
      std::uint32_t* bits = reinterpret_cast<std::uint32_t*>(&d[j]);
      asm volatile("" : "+r"(*bits)::"memory");
    }
  }
}

template <class F>
constexpr bool kPackedF16 = F::kAccRegs * 4 == F::kN;  // f16 accumulators: two per register

template <class F>
__device__ __forceinline__ int acc_index(int thread, int j) {
  if constexpr (kPackedF16<F>)
    return wgmma_acc_index_16(thread, F::kN, j);
  else
    return wgmma_acc_index_32(thread, F::kN, j);
}
template <class F>
constexpr int kAccElementBytes = kPackedF16<F> ? 2 : 4;

// The A operand of a form is a descriptor of the staged tile, or the lane's four fragment registers of
// its warp's 16 rows (read straight from the image in global memory).
template <class F>
__device__ __forceinline__ void mma(typename F::Acc (&d)[F::kAccRegs], const std::uint8_t* a_tile, std::uint64_t b,
                                    int accumulate, const std::uint32_t (&a_regs)[4]) {
  if constexpr (F::kARegisters)
    F::mma(d, a_regs, b, accumulate);
  else
    F::mma(d, smem_descriptor(a_tile), b, accumulate);
}

template <class F>
__device__ __forceinline__ void load_a_registers(const std::uint8_t* a, std::uint32_t (&regs)[4]) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < 4; ++r) regs[r] = F::kARegisters ? load_a_reg(a, 16 * warp, lane, r) : 0u;
}

// One instruction, D = A B^T + C, for the GPU test. One warpgroup.
template <class F>
__global__ void __launch_bounds__(kTensorThreadsPerBlock, 1)
    wgmma_once_kernel(const std::uint8_t* a, const std::uint8_t* b, const std::uint8_t* c, std::uint8_t* d) {
  __shared__ __align__(128) std::uint8_t a_tile[kRowsA * kRowBytes];
  __shared__ __align__(128) std::uint8_t b_tile[kMaxN * kRowBytes];
  stage_tile(a, kRowsA, a_tile);
  stage_tile(b, F::kN, b_tile);
  fence_shared_for_async_proxy();
  __syncthreads();
  typename F::Acc acc[F::kAccRegs];
  const int t = threadIdx.x;
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j) memcpy(&acc[j], c + acc_index<F>(t, j) * kAccElementBytes<F>, 4);
  std::uint32_t a_regs[4];
  load_a_registers<F>(a, a_regs);
  wgmma_fence();
  mma<F>(acc, a_tile, smem_descriptor(b_tile), 1, a_regs);
  wgmma_commit();
  wgmma_wait_all();
  fence_accumulators(acc);
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j) memcpy(d + acc_index<F>(t, j) * kAccElementBytes<F>, &acc[j], 4);
}

// Back-to-back wgmma into one accumulator tile, B and -B alternately, one commit and wait at the end.
template <class F>
__global__ void __launch_bounds__(kTensorThreadsPerBlock, 1)
    wgmma_throughput_kernel(const std::uint8_t* a, const std::uint8_t* b, const std::uint8_t* neg_b,
                            unsigned iterations, unsigned long long* stamps, std::uint32_t* sink) {
  __shared__ __align__(128) std::uint8_t a_tile[kRowsA * kRowBytes];
  __shared__ __align__(128) std::uint8_t b_tiles[2][kMaxN * kRowBytes];
  stage_tile(a, kRowsA, a_tile);
  stage_tile(b, F::kN, b_tiles[0]);
  stage_tile(neg_b, F::kN, b_tiles[1]);
  fence_shared_for_async_proxy();
  __syncthreads();
  typename F::Acc acc[F::kAccRegs];
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j) acc[j] = 0;
  std::uint32_t a_regs[4];
  load_a_registers<F>(a, a_regs);
  const std::uint64_t b0 = smem_descriptor(b_tiles[0]), b1 = smem_descriptor(b_tiles[1]);
  __syncthreads();
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  stamp_start(stamps, t0, c0);
  wgmma_fence();
  for (unsigned i = 0; i < iterations; ++i) {
    mma<F>(acc, a_tile, b0, 1, a_regs);
    mma<F>(acc, a_tile, b1, 1, a_regs);
  }
  wgmma_commit();
  wgmma_wait_all();
  fence_accumulators(acc);
  stamp_end(stamps, t0, c0);
  keep(acc, sink);
}

// A dependent chain: each instruction waits for the one before (fence, mma, commit, wait).
template <class F>
__global__ void __launch_bounds__(kTensorThreadsPerBlock, 1)
    wgmma_latency_kernel(const std::uint8_t* a, const std::uint8_t* b, unsigned chain, unsigned long long* out,
                         std::uint32_t* sink) {
  __shared__ __align__(128) std::uint8_t a_tile[kRowsA * kRowBytes];
  __shared__ __align__(128) std::uint8_t b_tile[kMaxN * kRowBytes];
  stage_tile(a, kRowsA, a_tile);
  stage_tile(b, F::kN, b_tile);
  fence_shared_for_async_proxy();
  __syncthreads();
  typename F::Acc acc[F::kAccRegs];
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j) acc[j] = 0;
  std::uint32_t a_regs[4];
  load_a_registers<F>(a, a_regs);
  const std::uint64_t b_desc = smem_descriptor(b_tile);
  __syncthreads();
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  for (unsigned i = 0; i < chain; ++i) {
    wgmma_fence();
    mma<F>(acc, a_tile, b_desc, 1, a_regs);
    wgmma_commit();
    wgmma_wait_all();
  }
  fence_accumulators(acc);
  const long long c1 = clock64();
  const std::uint64_t t1 = exec_global_timer_ns();
  if (threadIdx.x == 0) {
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
  }
  keep(acc, sink);
}

struct CollectForms {
  std::vector<TensorKernels>* out;
  template <class F>
  void operator()(TensorPrecision precision, TensorAccum accum, int n, int k, bool a_registers) const {
    static_assert(F::kN <= kMaxN, "the shared B tile holds at most kMaxN rows");
    out->push_back({TensorForm{TensorInstr::kWgmma, precision, accum, kRowsA, n, k, a_registers},
                    wgmma_once_kernel<F>, wgmma_throughput_kernel<F>, wgmma_latency_kernel<F>});
  }
};

}  // namespace

const std::vector<TensorKernels>& tensor_device::wgmma_kernels() {
  static const std::vector<TensorKernels> table = [] {
    std::vector<TensorKernels> t;
    for_each_wgmma_form(CollectForms{&t});
    return t;
  }();
  return table;
}

std::string tensor_device::wgmma_forms_left_out() {
#if defined(GPUPROBE_WGMMA_FORMS_GENERATED)
  return "";
#else
  return "wgmma forms not built: their wrappers are generated by microbench/probes/gen_wgmma_forms.py, and the "
         "build found no Python 3";
#endif
}

}  // namespace gpuprobe

#endif  // GPUPROBE_WGMMA_LEFT_OUT
