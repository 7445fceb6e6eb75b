// exec.barrier: microseconds per grid-wide barrier vs number of blocks (1 per SM up to the
// co-resident maximum) for cooperative groups' grid.sync(), V&D's arrival/wake-up barrier, a
// sense-reversing atomic-counter barrier, and kernel relaunch as the baseline.
// docs/probes.md#global-barrier says how it measures what it claims.
#include "probes/exec_barrier.hpp"

#include <cooperative_groups.h>
#include <cuda/atomic>

#include <algorithm>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/hash.hpp"
#include "harness/measure.hpp"
#include "probes/exec_probes.hpp"

namespace gpuprobe {

namespace {

struct DeviceState {
  unsigned* arrive;            // [blocks] arrival/wake-up: generation each block last arrived at
  unsigned* wake;              // arrival/wake-up: generation block 0 last released
  unsigned* count;             // sense reversal: blocks arrived at the current barrier
  unsigned* flag;              // sense reversal: flips when the last block arrives
  unsigned* data;              // [2][blocks][threads] check words, double-buffered by round parity
  unsigned long long* errors;  // mismatching words seen
  unsigned* timed_out;         // set by a spin-wait that gave up
  unsigned long long timeout_ns;
};

using device_ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

__device__ __forceinline__ unsigned check_word(unsigned round, unsigned block, unsigned thread) {
  return static_cast<unsigned>(mix64((std::uint64_t(round) << 40) ^ (std::uint64_t(block) << 16) ^ thread));
}

// Spins until `done()` or the deadline; polls the timer only every 256 tries.
template <class Done>
__device__ __forceinline__ void spin_until(const DeviceState& st, std::uint64_t deadline, Done done) {
  for (unsigned tries = 1; !done(); ++tries) {
    if (tries % 256 == 0 && exec_global_timer_ns() > deadline) {
      atomicExch(st.timed_out, 1u);
      return;
    }
  }
}

// V&D §3.8: every block stores its arrival (release); block 0's threads gather all arrivals
// (acquire), meet at __syncthreads, and thread 0 stores the wake-up (release) that every other
// block's thread 0 waits for (acquire). __syncthreads on both sides carries the ordering to and
// from the block's other threads, so each block's writes before happen-before every read after.
// Generations only grow, so no reset is needed (compared modulo 2^32).
__device__ void arrival_wakeup_barrier(const DeviceState& st, unsigned generation, std::uint64_t deadline) {
  __syncthreads();
  if (threadIdx.x == 0) device_ref(st.arrive[blockIdx.x]).store(generation, cuda::memory_order_release);
  if (blockIdx.x == 0) {
    for (unsigned j = threadIdx.x; j < gridDim.x; j += blockDim.x)
      spin_until(st, deadline, [&] {
        return static_cast<int>(device_ref(st.arrive[j]).load(cuda::memory_order_acquire) - generation) >= 0;
      });
    __syncthreads();
    if (threadIdx.x == 0) device_ref(*st.wake).store(generation, cuda::memory_order_release);
  } else if (threadIdx.x == 0) {
    spin_until(st, deadline, [&] {
      return static_cast<int>(device_ref(*st.wake).load(cuda::memory_order_acquire) - generation) >= 0;
    });
  }
  __syncthreads();
}

// Sense reversal: thread 0 of each block flips its sense and counts itself in (acq_rel: the last
// arriver acquires every earlier arrival through the counter's release sequence); the last one
// resets the counter and publishes the new sense (release), the others wait for it (acquire).
__device__ void sense_reversal_barrier(const DeviceState& st, unsigned& sense, std::uint64_t deadline) {
  __syncthreads();
  if (threadIdx.x == 0) {
    sense ^= 1u;
    const unsigned arrived = device_ref(*st.count).fetch_add(1u, cuda::memory_order_acq_rel);
    if (arrived == gridDim.x - 1) {
      device_ref(*st.count).store(0u, cuda::memory_order_relaxed);  // ordered before the release below
      device_ref(*st.flag).store(sense, cuda::memory_order_release);
    } else {
      spin_until(st, deadline,
                 [&] { return device_ref(*st.flag).load(cuda::memory_order_acquire) == sense; });
    }
  }
  __syncthreads();
}

__device__ __forceinline__ void write_round(const DeviceState& st, unsigned round) {
  const unsigned slot = (round & 1u) * gridDim.x + blockIdx.x;
  st.data[slot * blockDim.x + threadIdx.x] = check_word(round, blockIdx.x, threadIdx.x);
}

// Every block reads, from every block j, the word of thread (this block + round) % threads: plain
// loads, so only the barrier's ordering makes them see this round's values.
__device__ __forceinline__ void verify_round(const DeviceState& st, unsigned round) {
  const unsigned word = (blockIdx.x + round) % blockDim.x;
  unsigned long long bad = 0;
  for (unsigned j = threadIdx.x; j < gridDim.x; j += blockDim.x) {
    const unsigned slot = (round & 1u) * gridDim.x + j;
    bad += st.data[slot * blockDim.x + word] != check_word(round, j, word);
  }
  if (bad) atomicAdd(st.errors, bad);
}

template <BarrierKind Kind, bool kCheck>
__global__ void __launch_bounds__(kBarrierBlockThreads)
    barrier_kernel(DeviceState st, unsigned first_round, unsigned rounds) {
  const std::uint64_t deadline = exec_global_timer_ns() + st.timeout_ns;
  unsigned sense = 0;
  if constexpr (Kind == BarrierKind::kSenseReversal)
    if (threadIdx.x == 0) sense = device_ref(*st.flag).load(cuda::memory_order_relaxed);
  for (unsigned r = 0; r < rounds; ++r) {
    const unsigned round = first_round + r;
    if constexpr (kCheck) write_round(st, round);
    if constexpr (Kind == BarrierKind::kCooperativeGroups) cooperative_groups::this_grid().sync();
    else if constexpr (Kind == BarrierKind::kArrivalWakeup) arrival_wakeup_barrier(st, round + 1, deadline);
    else if constexpr (Kind == BarrierKind::kSenseReversal) sense_reversal_barrier(st, sense, deadline);
    if constexpr (kCheck) verify_round(st, round);
  }
}

// The baseline: the kernel boundary is the barrier. Launch `round` verifies round - 1 (written by
// the previous launch) and writes round.
template <bool kCheck>
__global__ void __launch_bounds__(kBarrierBlockThreads) relaunch_kernel(DeviceState st, unsigned round, bool verify,
                                                                        bool write) {
  if constexpr (kCheck) {
    if (verify) verify_round(st, round - 1);
    if (write) write_round(st, round);
  }
}

using BarrierKernel = void (*)(DeviceState, unsigned, unsigned);

template <bool kCheck>
BarrierKernel barrier_kernel_of(BarrierKind kind) {
  switch (kind) {
    case BarrierKind::kCooperativeGroups: return barrier_kernel<BarrierKind::kCooperativeGroups, kCheck>;
    case BarrierKind::kArrivalWakeup: return barrier_kernel<BarrierKind::kArrivalWakeup, kCheck>;
    case BarrierKind::kSenseReversal: return barrier_kernel<BarrierKind::kSenseReversal, kCheck>;
    case BarrierKind::kNoBarrierForTesting: return barrier_kernel<BarrierKind::kNoBarrierForTesting, kCheck>;
    case BarrierKind::kRelaunch: return nullptr;
  }
  return nullptr;
}

}  // namespace

const char* barrier_name(BarrierKind kind) {
  switch (kind) {
    case BarrierKind::kCooperativeGroups: return "cg_grid_sync";
    case BarrierKind::kArrivalWakeup: return "arrival_wakeup";
    case BarrierKind::kSenseReversal: return "sense_reversal";
    case BarrierKind::kRelaunch: return "relaunch";
    case BarrierKind::kNoBarrierForTesting: return "none_for_testing";
  }
  return "?";
}

int barrier_co_resident_blocks(BarrierKind kind, bool check) {
  int per_sm = 0;
  if (kind == BarrierKind::kRelaunch)
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, check ? relaunch_kernel<true> : relaunch_kernel<false>, kBarrierBlockThreads, 0));
  else
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, check ? barrier_kernel_of<true>(kind) : barrier_kernel_of<false>(kind), kBarrierBlockThreads, 0));
  return per_sm * context().device.sm_count;
}

void validate_barrier_blocks(int blocks, int co_resident) {
  if (blocks < 1 || blocks > co_resident)
    throw UsageError("barrier: " + std::to_string(blocks) + " blocks requested; blocks that wait on each other must "
                     "all be resident at once, and at most " + std::to_string(co_resident) + " can be");
}

struct BarrierRun::State {
  BarrierKind kind;
  int blocks;
  unsigned rounds;
  bool check;
  unsigned next_round = 0;
  DeviceBuffer<unsigned> words;  // arrive[blocks], wake, count, flag, timed_out, data[2*blocks*threads]
  DeviceBuffer<unsigned long long> errors{1};
  DeviceState device{};
};

BarrierRun::BarrierRun(BarrierKind kind, int blocks, unsigned rounds, bool check, unsigned timeout_ms)
    : s_(std::make_unique<State>()) {
  if (rounds < 1) throw UsageError("barrier: at least one round");
  validate_barrier_blocks(blocks, barrier_co_resident_blocks(kind, check));
  if (kind != BarrierKind::kRelaunch && !context().device.cooperative_launch)
    throw Error("barrier: this GPU does not support cooperative launch (needed for guaranteed co-residency)");
  s_->kind = kind;
  s_->blocks = blocks;
  s_->rounds = rounds;
  s_->check = check;
  const std::size_t data_words = 2 * std::size_t(blocks) * kBarrierBlockThreads;
  s_->words = DeviceBuffer<unsigned>(std::size_t(blocks) + 4 + data_words);
  GP_CUDA_CHECK(cudaMemset(s_->words.data(), 0, s_->words.bytes()));
  GP_CUDA_CHECK(cudaMemset(s_->errors.data(), 0, s_->errors.bytes()));
  unsigned* w = s_->words.data();
  s_->device = DeviceState{w, w + blocks, w + blocks + 1, w + blocks + 2, w + blocks + 4, s_->errors.data(),
                           w + blocks + 3, std::uint64_t(timeout_ms) * 1000000ull};
}

BarrierRun::~BarrierRun() = default;

void BarrierRun::enqueue(cudaStream_t stream) {
  State& s = *s_;
  unsigned first = s.next_round;
  if (s.kind == BarrierKind::kRelaunch) {
    for (unsigned r = 0; r < s.rounds; ++r) {
      const unsigned round = first + r;
      if (s.check)
        relaunch_kernel<true><<<s.blocks, kBarrierBlockThreads, 0, stream>>>(s.device, round, r > 0, true);
      else
        relaunch_kernel<false><<<s.blocks, kBarrierBlockThreads, 0, stream>>>(s.device, round, false, false);
    }
    if (s.check)  // the last round is verified by one more launch
      relaunch_kernel<true><<<s.blocks, kBarrierBlockThreads, 0, stream>>>(s.device, first + s.rounds, true, false);
    GP_CUDA_CHECK_LAUNCH();
  } else {
    DeviceState device = s.device;
    unsigned rounds = s.rounds;
    void* args[] = {&device, &first, &rounds};
    const BarrierKernel kernel = s.check ? barrier_kernel_of<true>(s.kind) : barrier_kernel_of<false>(s.kind);
    GP_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), dim3(s.blocks),
                                              dim3(kBarrierBlockThreads), args, 0, stream));
  }
  // Rounds keep counting across enqueues: generations and the data's round tags never repeat.
  s.next_round += s.rounds + 1;
}

BarrierOutcome BarrierRun::outcome() {
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  BarrierOutcome out;
  unsigned timed_out = 0;
  GP_CUDA_CHECK(cudaMemcpy(&out.errors, s_->errors.data(), sizeof out.errors, cudaMemcpyDeviceToHost));
  GP_CUDA_CHECK(cudaMemcpy(&timed_out, s_->device.timed_out, sizeof timed_out, cudaMemcpyDeviceToHost));
  out.timed_out = timed_out != 0;
  GP_CUDA_CHECK(cudaMemset(s_->errors.data(), 0, sizeof(unsigned long long)));
  GP_CUDA_CHECK(cudaMemset(s_->device.timed_out, 0, sizeof(unsigned)));
  return out;
}

// ------------------------------------------------------------------------------------------------
// Probe

namespace {

const ProbeDescriptor& kBarrier = declare_family(
    ProbeDescriptor{
        "exec.barrier", Figure::kTimePerOp,
        "one cooperative launch running 1000 barriers back to back (relaunch: 1000 launches), CUDA events / 1000; "
        "a checked run (data written before each barrier read by every block after) precedes the timing",
        "", 10, 2, 0, /*launch_gate=*/false}  // relaunch: 1000 launches, about the launch queue's depth
        .titled("Barrier cost")
        .with_axes({text_axis("barrier", AxisRole::kGroup), numeric_axis("blocks", "blocks", AxisRole::kX)})
        .with_fields({numeric_field("blocks_per_sm", "blocks"), numeric_field("block_threads", "threads"),
                      numeric_field("verified", "0/1")}));

void barrier_entry(benchmark::State& state, BarrierKind kind, int blocks) {
  const unsigned rounds = context().options.quick ? 200 : 1000;
  {
    BarrierRun checked(kind, blocks, 8, true);
    checked.enqueue(nullptr);
    const BarrierOutcome o = checked.outcome();
    if (o.errors || o.timed_out)
      throw Error(std::string("barrier ") + barrier_name(kind) + " failed its check: " + std::to_string(o.errors) +
                  " stale words" + (o.timed_out ? ", a spin-wait timed out" : ""));
  }
  BarrierRun run(kind, blocks, rounds, false);
  Measurement m(state, kBarrier, Work{0, 0, double(rounds)});
  m.param("blocks_per_sm", double(blocks) / context().device.sm_count);
  m.param("block_threads", kBarrierBlockThreads);
  m.param("verified", 1);
  m.time_events([&](cudaStream_t s) { run.enqueue(s); });
  if (run.outcome().timed_out) throw Error(std::string("barrier ") + barrier_name(kind) + ": a spin-wait timed out");
}

}  // namespace

void register_barrier_probes() {
  const Context& ctx = context();
  const int sms = ctx.device.sm_count;
  for (BarrierKind kind : {BarrierKind::kCooperativeGroups, BarrierKind::kArrivalWakeup, BarrierKind::kSenseReversal,
                           BarrierKind::kRelaunch}) {
    if (kind != BarrierKind::kRelaunch && !ctx.device.cooperative_launch) continue;
    // The sweep stops at the smallest co-resident maximum of the in-kernel barriers, so every kind
    // (the relaunch baseline included) is measured at the same block counts.
    int max_blocks = barrier_co_resident_blocks(BarrierKind::kCooperativeGroups, false);
    for (BarrierKind k : {BarrierKind::kArrivalWakeup, BarrierKind::kSenseReversal})
      max_blocks = std::min(max_blocks, barrier_co_resident_blocks(k, false));
    std::vector<int> counts;
    for (int per_sm : ctx.options.quick ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8})
      if (per_sm * sms <= max_blocks) counts.push_back(per_sm * sms);
    if (!ctx.options.quick && (counts.empty() || counts.back() != max_blocks)) counts.push_back(max_blocks);
    for (int blocks : counts)
      register_entry(entry_name(kBarrier, {{"barrier", barrier_name(kind)}, {"blocks", std::to_string(blocks)}}),
                     kBarrier, [kind, blocks](benchmark::State& st) { barrier_entry(st, kind, blocks); });
  }
}

}  // namespace gpuprobe
