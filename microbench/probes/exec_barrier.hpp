// Global (grid-wide) barriers (V&D SC08 §3.8): the kernels' host interface, shared by the probe
// exec.barrier (exec_barrier.cu) and the GPU correctness tests (tests/gpu/exec_barrier_test.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

namespace gpuprobe {

enum class BarrierKind {
  kCooperativeGroups,  // cooperative_groups::this_grid().sync()
  kArrivalWakeup,      // V&D §3.8: each block stores its arrival; block 0 gathers them, then wakes all
  kSenseReversal,      // one atomic arrival counter and a flag whose sense flips every barrier
  kRelaunch,           // no barrier in the kernel: one kernel launch per round (the baseline)
  kNoBarrierForTesting,  // no barrier at all: the tests' negative control, never a probe entry
};
const char* barrier_name(BarrierKind kind);  // "cg_grid_sync", "arrival_wakeup", "sense_reversal", "relaunch"

constexpr int kBarrierBlockThreads = 128;

// Blocks of kBarrierBlockThreads threads that can be co-resident on the whole GPU for this kind's
// kernel (occupancy API x SMs); the relaunch baseline has no such limit but uses the same sweep.
int barrier_co_resident_blocks(BarrierKind kind, bool check);
// Throws UsageError unless 1 <= blocks <= co_resident (blocks that spin on each other must all be
// resident at once, or the barrier deadlocks).
void validate_barrier_blocks(int blocks, int co_resident);

struct BarrierOutcome {
  std::uint64_t errors = 0;  // words a block read after a barrier that did not hold what was written before it
  bool timed_out = false;    // a spin-wait gave up (blocks not co-resident, or a broken barrier)
};

// `rounds` barriers over `blocks` blocks per enqueue. With `check`, every round each block writes
// one word per thread, passes the barrier, then reads one word written by every block in that
// round and counts mismatches. In-kernel barriers are launched cooperatively (guaranteed
// co-residency); spin-waits give up after `timeout_ms` and set timed_out instead of hanging.
class BarrierRun {
 public:
  BarrierRun(BarrierKind kind, int blocks, unsigned rounds, bool check, unsigned timeout_ms = 5000);
  ~BarrierRun();
  BarrierRun(const BarrierRun&) = delete;
  BarrierRun& operator=(const BarrierRun&) = delete;

  void enqueue(cudaStream_t stream);  // one pass of `rounds` barriers (relaunch: `rounds` launches)
  BarrierOutcome outcome();           // synchronizes, reads and clears the error / timeout counters

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpuprobe
