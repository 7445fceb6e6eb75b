// Shared-memory probes: memory.shared_bandwidth (aggregate and bytes per clock per SM, conflict-free
// 16-byte accesses) and memory.bank_conflicts (one 32-word access pattern per warp: word stride
// 1..32 for 4- and 8-byte words; cycles per warp-wide access, 1 for 4-byte words without conflicts).
#include <algorithm>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/measure.hpp"
#include "harness/stats.hpp"
#include "probes/memory_probes.hpp"

namespace gpuprobe {
namespace {

constexpr int kSharedThreads = 1024;        // 32 warps per block, one block per SM
constexpr int kSharedBytes = 32 * 1024;     // shared array per block
constexpr std::uint32_t kLoadsPerThread = 4096;

__device__ __forceinline__ float4 load_shared_v4(std::uint32_t address) {
  float4 v;
  asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(address) : "memory");
  return v;
}

// Loads are ld.volatile: plain ld.shared in asm may still be merged by ptxas when an address repeats.
// Each thread reads 16 B at (tid + k * blockDim) mod size: a warp covers 512 contiguous bytes, the
// minimal 4 wavefronts. `cycles` gets the block's clock64 span (between barriers), per block.
__global__ void __launch_bounds__(kSharedThreads) shared_bandwidth_kernel(std::uint32_t loads,
                                                                          unsigned long long* cycles,
                                                                          float* sink) {
  __shared__ float4 data[kSharedBytes / 16];
  for (int i = threadIdx.x; i < kSharedBytes / 16; i += blockDim.x)
    data[i] = make_float4(1.f + i, 2.f, 3.f, 4.f);
  __syncthreads();
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(data));
  constexpr std::uint32_t kMask = kSharedBytes - 1;
  static_assert((kSharedBytes & (kSharedBytes - 1)) == 0, "the address wrap uses a mask");
  std::uint32_t offset = threadIdx.x * 16;
  float4 acc = make_float4(0, 0, 0, 0);
  const long long c0 = clock64();
#pragma unroll 16
  for (std::uint32_t k = 0; k < loads; ++k) {
    const float4 v = load_shared_v4(base + offset);
    acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    offset = (offset + kSharedThreads * 16) & kMask;
  }
  __syncthreads();
  const long long c1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
  if (acc.x + acc.y + acc.z + acc.w < 0.f) sink[0] = acc.x;
}

// Thread i of each warp reads the word at (i * word_stride) mod 1024 words of its warp's region:
// the bank-conflict degree of a stride. 32 warps issue concurrently; thread 0 times the block.
template <class Word>
__global__ void __launch_bounds__(kSharedThreads) bank_conflict_kernel(std::uint32_t word_stride, std::uint32_t loads,
                                                                       unsigned long long* cycles, float* sink) {
  constexpr int kWords = 1024;
  __shared__ Word data[kWords];
  for (int i = threadIdx.x; i < kWords; i += blockDim.x) data[i] = static_cast<Word>(i + 1);
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(data));
  const std::uint32_t address = base + ((lane * word_stride) % kWords) * sizeof(Word);
  Word acc = 0;
  const long long c0 = clock64();
#pragma unroll 16
  for (std::uint32_t k = 0; k < loads; ++k) {
    Word v;
    if constexpr (sizeof(Word) == 4)
      asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
    else
      asm volatile("ld.volatile.shared.u64 %0, [%1];" : "=l"(v) : "r"(address) : "memory");
    acc += v;
  }
  __syncthreads();
  const long long c1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
  if (acc == Word(0)) sink[0] = 1.f;  // data are positive: never taken, keeps the loads
}

const ProbeDescriptor& kSharedBandwidth = declare_family(
    ProbeDescriptor{"memory.shared_bandwidth", Figure::kBandwidth,
                    "one 1024-thread block per SM reading conflict-free 16-byte shared-memory words; CUDA events "
                    "for the aggregate, clock64 per block for bytes per clock per SM",
                    "", 10, 2, 0, true, Premise::shared()}
        .titled("Shared-memory bandwidth")
        .with_fields({numeric_field("blocks", "blocks"), numeric_field("threads_per_block", "threads"),
                      numeric_field("bytes_per_clock_per_sm", "bytes/clock/SM")}));
const ProbeDescriptor& kBankConflicts = declare_family(
    ProbeDescriptor{"memory.bank_conflicts", Figure::kValue,
                    "one 1024-thread block; each warp's lane i reads word (i x stride) mod 1024 repeatedly; clock64 "
                    "between barriers / (32 warps x loads) = cycles per warp-wide access",
                    "cycles", 5, 1}
        .titled("Shared-memory bank conflicts")
        .lower_is_better()
        .with_axes({numeric_axis("word", "bytes", AxisRole::kGroup), numeric_axis("stride", "words", AxisRole::kX)}));

struct CycleBuffers {
  DeviceBuffer<unsigned long long> cycles;
  DeviceBuffer<float> sink{1};
  explicit CycleBuffers(int blocks) : cycles(blocks) {}
  double median_cycles() const {
    std::vector<unsigned long long> host(cycles.size());
    GP_CUDA_CHECK(cudaMemcpy(host.data(), cycles.data(), cycles.bytes(), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    return static_cast<double>(host[host.size() / 2]);
  }
};

void shared_bandwidth_entry(benchmark::State& state) {
  const int sms = context().device.sm_count;
  CycleBuffers buffers(sms);
  const double bytes_per_block = double(kSharedThreads) * kLoadsPerThread * 16;
  Measurement m(state, kSharedBandwidth, Work{bytes_per_block * sms, 0, 0});
  m.param("blocks", sms);
  m.param("threads_per_block", kSharedThreads);
  std::vector<double> bytes_per_clock;
  m.time_events(
      [&](cudaStream_t s) {
        shared_bandwidth_kernel<<<sms, kSharedThreads, 0, s>>>(kLoadsPerThread, buffers.cycles.data(),
                                                               buffers.sink.data());
      },
      [&](Sample& s) {
        s.cycles = buffers.median_cycles();
        bytes_per_clock.push_back(bytes_per_block / s.cycles);
      });
  // A counter pass of application replay runs only warm-up samples: nothing to summarize.
  if (context().counter_pass > 0) return;
  // The first entries come from the harness's warm-up samples.
  bytes_per_clock.erase(bytes_per_clock.begin(), bytes_per_clock.begin() + kSharedBandwidth.warmup);
  m.extra("bytes_per_clock_per_sm", summarize(bytes_per_clock).median);
}

template <class Word>
void bank_conflict_entry(benchmark::State& state, std::uint32_t word_stride) {
  CycleBuffers buffers(1);
  constexpr std::uint32_t kLoads = 1024;
  const double warp_accesses = double(kSharedThreads / 32) * kLoads;
  Measurement m(state, kBankConflicts, Work{0, 0, warp_accesses});
  // word and stride (in words) come from the entry's name.
  m.time_events(
      [&](cudaStream_t s) {
        bank_conflict_kernel<Word><<<1, kSharedThreads, 0, s>>>(word_stride, kLoads, buffers.cycles.data(),
                                                                buffers.sink.data());
      },
      [&](Sample& s) {
        s.cycles = buffers.median_cycles();
        s.value = s.cycles / warp_accesses;
      });
}

}  // namespace

void register_memory_shared_probes() {
  const bool quick = context().options.quick;
  register_entry(entry_name(kSharedBandwidth, {}), kSharedBandwidth, shared_bandwidth_entry);
  for (std::uint32_t stride = 1; stride <= 32; stride += (quick ? 7 : 1)) {
    register_entry(entry_name(kBankConflicts, {{"word", "4"}, {"stride", std::to_string(stride)}}),
                   kBankConflicts, [stride](benchmark::State& st) { bank_conflict_entry<std::uint32_t>(st, stride); });
    register_entry(entry_name(kBankConflicts, {{"word", "8"}, {"stride", std::to_string(stride)}}),
                   kBankConflicts, [stride](benchmark::State& st) { bank_conflict_entry<std::uint64_t>(st, stride); });
  }
}

}  // namespace gpuprobe
