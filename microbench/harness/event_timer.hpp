// One CUDA-event timer for the harness: its own non-blocking stream and a start/stop event pair.
// Measurement::time_events (every event-timed probe) and settle_reads (fresh operands) time their
// passes with it, so there is one way a GPU interval is measured.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace gpuprobe {

class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Seconds between two events recorded on stream() around `enqueue(stream())`, which must only
  // enqueue work (launch errors are checked here); waits for the stop event.
  double seconds(const std::function<void(cudaStream_t)>& enqueue);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace gpuprobe
