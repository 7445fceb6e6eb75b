// The launch gate (microbench/harness/launch_gate.hpp) holds the work queued behind it until it is
// opened, times out instead of hanging when it is never opened, and a gated EventTimer interval
// holds the queued kernel's time only.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "harness/event_timer.hpp"
#include "harness/launch_gate.hpp"

namespace gpuprobe {
namespace {

__global__ void store_one(int* out) { *out = 1; }

// Spins for about `ns` nanoseconds of %globaltimer.
__global__ void spin_for(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

class Stream {
 public:
  Stream() { GP_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

TEST(LaunchGate, HoldsQueuedWorkUntilOpened) {
  Stream stream;
  DeviceBuffer<int> out(1);
  // Launched once ungated first: lazy module loading may wait for the GPU, i.e. for a closed gate.
  store_one<<<1, 1, 0, stream.get()>>>(out.data());
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  GP_CUDA_CHECK(cudaMemset(out.data(), 0, sizeof(int)));
  LaunchGate gate;
  gate.hold(stream.get());
  store_one<<<1, 1, 0, stream.get()>>>(out.data());
  GP_CUDA_CHECK_LAUNCH();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(cudaStreamQuery(stream.get()), cudaErrorNotReady) << "the kernel behind a closed gate has run";
  int seen = -1;  // a copy on the legacy stream would wait for ours: read through another stream
  Stream probe;
  GP_CUDA_CHECK(cudaMemcpyAsync(&seen, out.data(), sizeof seen, cudaMemcpyDeviceToHost, probe.get()));
  GP_CUDA_CHECK(cudaStreamSynchronize(probe.get()));
  EXPECT_EQ(seen, 0);
  gate.release();
  GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  GP_CUDA_CHECK(cudaMemcpy(&seen, out.data(), sizeof seen, cudaMemcpyDeviceToHost));
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(gate.timeouts(), 0u);
}

TEST(LaunchGate, TimesOutAndCountsWhenNeverOpened) {
  Stream stream;
  LaunchGate gate(5000000ull);  // 5 ms
  gate.hold(stream.get());
  GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // returns: the gate gave up
  EXPECT_EQ(gate.timeouts(), 1u);
  gate.release();
  gate.hold(stream.get());
  gate.release();
  GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(gate.timeouts(), 1u) << "an opened gate counted a time-out";
}

// Behind the gate the interval is the kernel's; without it, it also holds the host's submission,
// which a host-side delay inside the enqueue makes visible (5 ms here, against a 50 us kernel).
TEST(LaunchGateTiming, GatedIntervalExcludesTheHostsEnqueueTime) {
  constexpr unsigned long long kKernelNs = 50000;
  auto enqueue = [&](cudaStream_t s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    spin_for<<<1, 1, 0, s>>>(kKernelNs);
  };
  EventTimer gated(true), ungated(false);
  ASSERT_TRUE(gated.gated());
  const double first = gated.seconds(enqueue);  // the first interval is ungated (lazy module loading)
  EXPECT_GE(first, 5e-3) << "a gated timer's first interval should run ungated";
  const double g = gated.seconds(enqueue);
  const double u = ungated.seconds(enqueue);
  EXPECT_GE(g, kKernelNs * 1e-9);
  EXPECT_LT(g, 1e-3) << "the gated interval holds the host's 5 ms";
  EXPECT_GE(u, 5e-3) << "the ungated interval should start before the host's delay";
  EXPECT_EQ(gated.gate_timeouts(), 0u);
}

}  // namespace
}  // namespace gpuprobe
