// One CUDA-event timer for the harness: its own non-blocking stream and a start/stop event pair.
// Measurement::time_events (every event-timed probe) and settle_reads (fresh operands) time their
// passes with it, so there is one way a GPU interval is measured.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "launch_gate.hpp"

namespace gpuprobe {

class EventTimer {
 public:
  // gated: every timed interval but the first starts behind a LaunchGate (launch_gate.hpp), so it
  // holds the GPU's time for the enqueued work and not the host's time to submit it. The first runs
  // ungated: its launches may load modules lazily, which can wait for the GPU and so for the gate.
  explicit EventTimer(bool gated = false);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Seconds between two events recorded on stream() around `enqueue(stream())`, which must only
  // enqueue work (launch errors are checked here); waits for the stop event.
  double seconds(const std::function<void(cudaStream_t)>& enqueue);
  bool gated() const { return gate_ != nullptr; }
  // Gated intervals whose gate gave up before the host had queued the work (they hold host time).
  unsigned gate_timeouts() const { return gate_ ? gate_->timeouts() : 0; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  std::unique_ptr<LaunchGate> gate_;
  bool first_interval_ = true;
};

}  // namespace gpuprobe
