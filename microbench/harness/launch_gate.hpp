// A launch gate: a one-thread kernel that holds a stream until the host opens it, so that the work
// the host queues behind it starts at the GPU's pace, not the host's (nvbench's "blocking kernel").
//
// Why the harness needs it: an event-timed sample records its start event on an idle GPU, so without
// a gate the interval also holds the host's time to submit the timed launches (3.5-4.7 us per launch
// on the H100 machines, docs/perf/launch.md) -- about half of a 10 us kernel call, twice that for a
// two-kernel call, and it varies by ~20 % between machines. Behind the gate, the start event is
// taken when the gate ends, with the timed work already queued.
//
// The gate gives up after a timeout so that a host that cannot finish queuing (a full launch queue,
// a synchronous API call behind the gate, lazy module loading that waits for the GPU) ends in a
// counted time-out, never a hang; a sample whose gate timed out measured host time after all, and the
// caller must not report it as GPU time.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprobe {

class LaunchGate {
 public:
  // Default timeout: 1 s, far above the time to queue any one sample (a few launches, microseconds).
  explicit LaunchGate(std::uint64_t timeout_ns = 1000000000ull);
  ~LaunchGate();
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;

  // Closes the gate and queues the gate kernel on `stream`: work queued after it waits.
  void hold(cudaStream_t stream);
  // Opens the gate (the gate kernel ends within a PCIe round trip).
  void release();
  // How many gate kernels gave up waiting so far; current once the stream they ran on has been
  // synchronized (the count is in mapped pinned memory: no copy).
  unsigned timeouts() const { return __atomic_load_n(host_words_ + 1, __ATOMIC_SEQ_CST); }

 private:
  std::uint64_t timeout_ns_;
  // Mapped pinned memory: [0] the flag (0 closed, 1 open), [1] the time-out count.
  unsigned* host_words_ = nullptr;
  unsigned* device_words_ = nullptr;  // the same words as the GPU sees them
};

}  // namespace gpuprobe
