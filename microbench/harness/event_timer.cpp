#include "event_timer.hpp"

#include "gpuprobe/check.hpp"

namespace gpuprobe {

EventTimer::EventTimer(bool gated) {
  if (gated) gate_ = std::make_unique<LaunchGate>();
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GP_CUDA_CHECK(cudaEventCreate(&start_));
  GP_CUDA_CHECK(cudaEventCreate(&stop_));
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

double EventTimer::seconds(const std::function<void(cudaStream_t)>& enqueue) {
  LaunchGate* const g = first_interval_ ? nullptr : gate_.get();
  first_interval_ = false;
  if (g) g->hold(stream_);
  {
    // Opens the gate once the work is queued, or on the way out of an exception.
    struct Opener {
      LaunchGate* g;
      ~Opener() {
        if (g) g->release();
      }
    } opener{g};
    GP_CUDA_CHECK(cudaEventRecord(start_, stream_));
    enqueue(stream_);
    GP_CUDA_CHECK_LAUNCH();
    GP_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  }
  GP_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  GP_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace gpuprobe
