// exec.tensor's mma.sync kernels: one warp per instruction, every form sm_80 or newer has (fp8 sm_89, the
// f64 m16n8k* forms sm_90), each compiled only for the architectures that have it. exec_tensor.cu lists
// the forms and launches through the table here; tests/gpu/exec_tensor_test.cu checks every form's result.
#include <cstring>
#include <vector>

#include "probes/exec_tensor.hpp"
#include "probes/exec_tensor_device.cuh"

namespace gpuprobe {
namespace {

using namespace tensor_device;

// ------------------------------------------------------------------------------------------------
// mma.sync forms. Fragments: exec_tensor_device.cuh (rows of 32 bytes for every non-f64 type).

// 32-bit operand registers; accumulators of 32 bits (f32, s32: four per lane) or packed f16 (two).
template <int K, class AccT, int AccRegs>
struct MmaM16N8 {
  static constexpr int kM = 16, kN = 8, kK = K, kARegs = 4, kBRegs = 2, kAccRegs = AccRegs;
  static constexpr int kAccElementBytes = AccRegs == 2 ? 2 : 4;
  using Reg = std::uint32_t;
  using Acc = AccT;
  __device__ static void load_a(const std::uint8_t* a, int lane, Reg (&r)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = load_a_reg(a, 0, lane, i);
  }
  __device__ static void load_b(const std::uint8_t* b, int lane, Reg (&r)[2]) {
#pragma unroll
    for (int i = 0; i < 2; ++i) r[i] = load_b_reg(b, lane, i);
  }
  __device__ static int acc_index(int lane, int j) {
    return AccRegs == 2 ? mma_acc_index_16(lane, j) : mma_acc_index_32(lane, j);
  }
};

#define GP_MMA_F32_ACC(NAME, K, PTX, MIN_ARCH)                                                               \
  struct NAME : MmaM16N8<K, float, 4> {                                                                      \
    __device__ static void mma(float (&d)[4], const Reg (&a)[4], const Reg (&b)[2]) {                        \
      GP_MMA_IF_ARCH(MIN_ARCH, asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"     \
                                            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                 \
                                            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))); \
    }                                                                                                        \
  };
#if defined(__CUDA_ARCH__)
#define GP_MMA_IF_ARCH(MIN_ARCH, ...) \
  if constexpr (__CUDA_ARCH__ >= MIN_ARCH) { __VA_ARGS__; }
#else
#define GP_MMA_IF_ARCH(MIN_ARCH, ...)
#endif

GP_MMA_F32_ACC(MmaF16F32, 16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 800)
GP_MMA_F32_ACC(MmaBF16F32, 16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 800)
GP_MMA_F32_ACC(MmaTF32F32, 8, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 800)
GP_MMA_F32_ACC(MmaE4M3F32, 32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 890)
GP_MMA_F32_ACC(MmaE5M2F32, 32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 890)
#undef GP_MMA_F32_ACC

struct MmaF16F16 : MmaM16N8<16, std::uint32_t, 2> {
  __device__ static void mma(std::uint32_t (&d)[2], const Reg (&a)[4], const Reg (&b)[2]) {
    GP_MMA_IF_ARCH(800, asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
                                     "{%6,%7}, {%0,%1};\n"
                                     : "+r"(d[0]), "+r"(d[1])
                                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));
  }
};

struct MmaS8S32 : MmaM16N8<32, std::uint32_t, 4> {
  __device__ static void mma(std::uint32_t (&d)[4], const Reg (&a)[4], const Reg (&b)[2]) {
    GP_MMA_IF_ARCH(800, asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));
  }
};

// m8n8k4 f64: A 8 x 4 (lane: row g, column t), B 4 x 8 (column g, row t), D row g, columns 2t, 2t+1.
struct MmaF64 {
  static constexpr int kM = 8, kN = 8, kK = 4, kARegs = 1, kBRegs = 1, kAccRegs = 2, kAccElementBytes = 8;
  using Reg = double;
  using Acc = double;
  __device__ static void load_a(const std::uint8_t* a, int lane, Reg (&r)[1]) {
    r[0] = reinterpret_cast<const double*>(a)[(lane >> 2) * 4 + (lane & 3)];
  }
  __device__ static void load_b(const std::uint8_t* b, int lane, Reg (&r)[1]) {
    r[0] = reinterpret_cast<const double*>(b)[(lane >> 2) * 4 + (lane & 3)];
  }
  __device__ static int acc_index(int lane, int j) { return (lane >> 2) * 8 + 2 * (lane & 3) + j; }
  __device__ static void mma(double (&d)[2], const Reg (&a)[1], const Reg (&b)[1]) {
    GP_MMA_IF_ARCH(800, asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                                     : "+d"(d[0]), "+d"(d[1])
                                     : "d"(a[0]), "d"(b[0])));
  }
};
// m16n8k{4,8,16} f64 (sm_90): A 16 x K, register i at row g (+8 for odd i), column t + 4 (i / 2); B K x 8,
// register i at row t + 4i, column g; D as the 32-bit m16n8 accumulators (rows g, g+8; columns 2t, 2t+1).
template <int K>
struct MmaF64M16Base {
  static constexpr int kM = 16, kN = 8, kK = K, kARegs = K / 2, kBRegs = K / 4, kAccRegs = 4, kAccElementBytes = 8;
  using Reg = double;
  using Acc = double;
  __device__ static void load_a(const std::uint8_t* a, int lane, Reg (&r)[kARegs]) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kARegs; ++i) r[i] = reinterpret_cast<const double*>(a)[(g + 8 * (i & 1)) * K + t + 4 * (i >> 1)];
  }
  __device__ static void load_b(const std::uint8_t* b, int lane, Reg (&r)[kBRegs]) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kBRegs; ++i) r[i] = reinterpret_cast<const double*>(b)[g * K + t + 4 * i];
  }
  __device__ static int acc_index(int lane, int j) { return mma_acc_index_32(lane, j); }
};
#define GP_MMA_D4 "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
struct MmaF64K4 : MmaF64M16Base<4> {
  __device__ static void mma(double (&d)[4], const Reg (&a)[2], const Reg (&b)[1]) {
    GP_MMA_IF_ARCH(900, asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                                     "{%0,%1,%2,%3};\n" : GP_MMA_D4 : "d"(a[0]), "d"(a[1]), "d"(b[0])));
  }
};
struct MmaF64K8 : MmaF64M16Base<8> {
  __device__ static void mma(double (&d)[4], const Reg (&a)[4], const Reg (&b)[2]) {
    GP_MMA_IF_ARCH(900, asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                     : GP_MMA_D4 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1])));
  }
};
struct MmaF64K16 : MmaF64M16Base<16> {
  __device__ static void mma(double (&d)[4], const Reg (&a)[8], const Reg (&b)[4]) {
    GP_MMA_IF_ARCH(900, asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                                     "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                                     : GP_MMA_D4
                                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                                       "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3])));
  }
};
#undef GP_MMA_D4
#undef GP_MMA_IF_ARCH

// One instruction by one warp, D = A B^T + C (the GPU test).
template <class F>
__global__ void __launch_bounds__(32) mma_once_kernel(const std::uint8_t* a, const std::uint8_t* b,
                                                      const std::uint8_t* c, std::uint8_t* d) {
  const int lane = threadIdx.x;
  typename F::Reg ar[F::kARegs], br[F::kBRegs];
  F::load_a(a, lane, ar);
  F::load_b(b, lane, br);
  typename F::Acc acc[F::kAccRegs];
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j)
    memcpy(&acc[j], c + F::acc_index(lane, j) * F::kAccElementBytes, sizeof(typename F::Acc));
  F::mma(acc, ar, br);
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j)
    memcpy(d + F::acc_index(lane, j) * F::kAccElementBytes, &acc[j], sizeof(typename F::Acc));
}

// Four warps per block; each warp keeps kMmaChains independent accumulators and issues them with B,
// then with -B, `iterations` times.
template <class F>
__global__ void __launch_bounds__(kTensorThreadsPerBlock)
    mma_throughput_kernel(const std::uint8_t* a, const std::uint8_t* b, const std::uint8_t* neg_b,
                          unsigned iterations, unsigned long long* stamps, std::uint32_t* sink) {
  const int lane = threadIdx.x & 31;
  typename F::Reg ar[F::kARegs], br[F::kBRegs], nbr[F::kBRegs];
  F::load_a(a, lane, ar);
  F::load_b(b, lane, br);
  F::load_b(neg_b, lane, nbr);
  typename F::Acc acc[kMmaChains][F::kAccRegs];
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c)
#pragma unroll
    for (int j = 0; j < F::kAccRegs; ++j) acc[c][j] = 0;
  __syncthreads();
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  stamp_start(stamps, t0, c0);
  for (unsigned i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kMmaChains; ++c) F::mma(acc[c], ar, br);
#pragma unroll
    for (int c = 0; c < kMmaChains; ++c) F::mma(acc[c], ar, nbr);
  }
  __syncthreads();
  stamp_end(stamps, t0, c0);
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) keep(acc[c], sink);
}

template <class F>
__global__ void __launch_bounds__(32) mma_latency_kernel(const std::uint8_t* a, const std::uint8_t* b,
                                                         unsigned chain, unsigned long long* out,
                                                         std::uint32_t* sink) {
  const int lane = threadIdx.x;
  typename F::Reg ar[F::kARegs], br[F::kBRegs];
  F::load_a(a, lane, ar);
  F::load_b(b, lane, br);
  typename F::Acc acc[F::kAccRegs];
#pragma unroll
  for (int j = 0; j < F::kAccRegs; ++j) acc[j] = 0;
  __syncwarp();
  const std::uint64_t t0 = exec_global_timer_ns();
  const long long c0 = clock64();
  for (unsigned i = 0; i < chain; ++i) F::mma(acc, ar, br);
  // The clock read waits for nothing: the last instruction's latency is not in the count, an error of
  // one latency in `chain` (0.1 % at 1024).
  const long long c1 = clock64();
  const std::uint64_t t1 = exec_global_timer_ns();
  if (lane == 0) {
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
  }
  keep(acc, sink);
}

template <class F>
TensorKernels mma_row(TensorPrecision p, TensorAccum acc) {
  return {TensorForm{TensorInstr::kMma, p, acc, F::kM, F::kN, F::kK, true}, mma_once_kernel<F>,
          mma_throughput_kernel<F>, mma_latency_kernel<F>};
}

}  // namespace

const std::vector<TensorKernels>& tensor_device::mma_kernels() {
  static const std::vector<TensorKernels> rows = {
      mma_row<MmaF16F32>(TensorPrecision::kF16, TensorAccum::kF32),
      mma_row<MmaF16F16>(TensorPrecision::kF16, TensorAccum::kF16),
      mma_row<MmaBF16F32>(TensorPrecision::kBF16, TensorAccum::kF32),
      mma_row<MmaTF32F32>(TensorPrecision::kTF32, TensorAccum::kF32),
      mma_row<MmaE4M3F32>(TensorPrecision::kE4M3, TensorAccum::kF32),
      mma_row<MmaE5M2F32>(TensorPrecision::kE5M2, TensorAccum::kF32),
      mma_row<MmaS8S32>(TensorPrecision::kS8, TensorAccum::kS32),
      mma_row<MmaF64>(TensorPrecision::kF64, TensorAccum::kF64),
      mma_row<MmaF64K4>(TensorPrecision::kF64, TensorAccum::kF64),
      mma_row<MmaF64K8>(TensorPrecision::kF64, TensorAccum::kF64),
      mma_row<MmaF64K16>(TensorPrecision::kF64, TensorAccum::kF64),
  };
  return rows;
}

}  // namespace gpuprobe
