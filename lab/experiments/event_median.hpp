// The experiments' one timing loop: `warmups` untimed calls of `launch`, then `samples` calls each
// between two CUDA events on the default stream, synchronized after each; returns the median in ms.
// `launch` only enqueues work on the default stream; launch errors are checked once at the end.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "gpuprobe/check.hpp"

namespace gpuprobe_experiments {

template <class Launch>
float median_event_ms(Launch launch, int warmups, int samples) {
  cudaEvent_t start, stop;
  GP_CUDA_CHECK(cudaEventCreate(&start));
  GP_CUDA_CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < warmups; ++w) launch();
  std::vector<float> ms;
  for (int s = 0; s < samples; ++s) {
    GP_CUDA_CHECK(cudaEventRecord(start));
    launch();
    GP_CUDA_CHECK(cudaEventRecord(stop));
    GP_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  GP_CUDA_CHECK(cudaGetLastError());
  GP_CUDA_CHECK(cudaEventDestroy(start));
  GP_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace gpuprobe_experiments
