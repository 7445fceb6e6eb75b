// Shared-memory probes: memory.shared_bandwidth (aggregate and bytes per clock per SM, conflict-free
// 16-byte accesses), memory.bank_conflicts (one 32-word access pattern per warp: word stride
// 1..32 for 4- and 8-byte words; cycles per warp-wide access, 1 for 4-byte words without conflicts)
// and memory.shared_atomics (atomicAdd per clock per SM when `contention` lanes share a word).
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

// Thread t adds ((t mod 7) + 1) to shared word t / contention, `atomics_per_thread` times: groups of
// `contention` consecutive lanes share a word, and contention 1 gives every lane its own word (32
// consecutive words: no bank conflict). The increments differ between lanes and are not known at
// compile time, so every atomic is a real one (the SASS has one ATOMS per atomicAdd); the words start
// at their index. After the timed region the block writes its 1024 / contention words to words_out,
// which the GPU test checks against a host reference (and which keeps the atomics from being dead code).
// u32 compiles to ATOMS.ADD with no result register; f32 to a compare-and-swap loop (LDS, FADD,
// ATOMS.CAST.SPIN, retried until the swap succeeds): sm_90 has no shared-memory float add.
template <class T>
__global__ void __launch_bounds__(kSharedThreads) shared_atomics_kernel(std::uint32_t contention_shift,
                                                                        std::uint32_t atomics_per_thread,
                                                                        unsigned long long* cycles, T* words_out) {
  __shared__ T words[kSharedThreads];
  words[threadIdx.x] = static_cast<T>(threadIdx.x);  // blockDim.x == kSharedThreads
  // contention = 2^contention_shift: a shift, not a division, in front of the timed loop.
  T* const word = &words[threadIdx.x >> contention_shift];
  const T increment = static_cast<T>(threadIdx.x % 7 + 1);
  __syncthreads();
  const long long c0 = clock64();
#pragma unroll 16
  for (std::uint32_t k = 0; k < atomics_per_thread; ++k) atomicAdd(word, increment);
  // A barrier does not wait for an ATOMS without a result: each thread reads its word back (ordered
  // after its own atomics) and the barrier waits for that read, so the closing clock follows them all.
  // Every word is positive after its first atomic; the barrier's result is not needed.
  __syncthreads_or(*static_cast<volatile T*>(word) == static_cast<T>(0));
  const long long c1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
  const std::uint32_t count = kSharedThreads >> contention_shift;
  if (threadIdx.x < count) words_out[blockIdx.x * count + threadIdx.x] = words[threadIdx.x];
}

template <class T>
void enqueue_shared_atomics_kernel(int blocks, int contention, int atomics_per_thread, unsigned long long* cycles,
                                   T* words, cudaStream_t stream) {
  if (blocks < 1 || atomics_per_thread < 0 || contention < 1 || contention > 32 || (contention & (contention - 1)))
    throw UsageError("shared atomics: blocks " + std::to_string(blocks) + ", contention " +
                     std::to_string(contention) + " (a power of two, 1..32), atomics per thread " +
                     std::to_string(atomics_per_thread));
  std::uint32_t shift = 0;
  while ((1 << shift) < contention) ++shift;
  shared_atomics_kernel<T><<<blocks, kSharedThreads, 0, stream>>>(
      shift, static_cast<std::uint32_t>(atomics_per_thread), cycles, words);
  GP_CUDA_CHECK_LAUNCH();
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

const ProbeDescriptor& kSharedAtomics = declare_family(
    ProbeDescriptor{"memory.shared_atomics", Figure::kValue,
                    "one 1024-thread block per SM; thread t atomicAdds (t mod 7) + 1 to shared word t / contention, "
                    "256 times; clock64 per block from a barrier to one that waits for each thread's read-back of "
                    "its word; value = a block's atomicAdd calls / its cycles, median block (f32: a compare-and-swap "
                    "loop where the GPU has no shared-memory float add)",
                    "atomics/clk/SM", 10, 2}
        .titled("Shared-memory atomics vs contention")
        .with_axes({text_axis("type", AxisRole::kGroup),  // one curve per type
                    numeric_axis("contention", "threads per address", AxisRole::kX)})  // swept along it
        .with_fields({numeric_field("atomics_per_thread", "atomics")}));

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

template <class T>
void shared_atomics_entry(benchmark::State& state, int contention) {
  const int sms = context().device.sm_count;
  CycleBuffers buffers(sms);
  DeviceBuffer<T> words(static_cast<std::size_t>(sms) * (kSharedThreads / contention));
  constexpr int kAtomicsPerThread = 256;
  const double atomics = double(sms) * kSharedThreads * kAtomicsPerThread;
  Measurement m(state, kSharedAtomics, Work{0, 0, atomics});  // type and contention: from the name
  m.param("atomics_per_thread", kAtomicsPerThread);
  m.time_events(
      [&](cudaStream_t s) {
        enqueue_shared_atomics_kernel<T>(sms, contention, kAtomicsPerThread, buffers.cycles.data(), words.data(), s);
      },
      [&](Sample& s) {
        s.cycles = buffers.median_cycles();
        s.value = double(kSharedThreads) * kAtomicsPerThread / s.cycles;  // per SM: one block each
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
  const std::vector<int> contentions = quick ? std::vector<int>{1, 8, 32} : std::vector<int>{1, 2, 4, 8, 16, 32};
  for (int contention : contentions) {
    const std::string c = std::to_string(contention);
    register_entry(entry_name(kSharedAtomics, {{"type", "u32"}, {"contention", c}}), kSharedAtomics,
                   [contention](benchmark::State& st) { shared_atomics_entry<std::uint32_t>(st, contention); });
    register_entry(entry_name(kSharedAtomics, {{"type", "f32"}, {"contention", c}}), kSharedAtomics,
                   [contention](benchmark::State& st) { shared_atomics_entry<float>(st, contention); });
  }
}

void enqueue_shared_atomics(int blocks, int contention, int atomics_per_thread, unsigned long long* cycles,
                            std::uint32_t* words, cudaStream_t stream) {
  enqueue_shared_atomics_kernel(blocks, contention, atomics_per_thread, cycles, words, stream);
}
void enqueue_shared_atomics(int blocks, int contention, int atomics_per_thread, unsigned long long* cycles,
                            float* words, cudaStream_t stream) {
  enqueue_shared_atomics_kernel(blocks, contention, atomics_per_thread, cycles, words, stream);
}

}  // namespace gpuprobe
