// Counters present and plausible for kernels whose counts are known exactly: z = a x + y over N
// floats executes N FFMA (thread level), reads 8N and writes 4N bytes of DRAM (N far beyond L2).
// Both replay modes, several ranges in one session, a device-to-device copy (copy engine, not a
// kernel), and a typo answered with the device's own names. Where the system refuses counters
// (e.g. under compute-sanitizer or ncu) the tests skip with the refusal line.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/profiler.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

namespace gp = profilers;

constexpr const char* kFfma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";

__global__ void axpy_kernel(std::size_t n, float a, const float* x, const float* y, float* z) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    z[i] = a * x[i] + y[i];
}

struct Axpy {
  std::size_t n;
  DeviceBuffer<float> x, y, z;
  explicit Axpy(std::size_t count) : n(count), x(count), y(count), z(count) {
    fill_uniform(x.data(), n, 1, -1.f, 1.f);
    fill_uniform(y.data(), n, 2, -1.f, 1.f);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void launch(std::size_t count, cudaStream_t s = nullptr) const {
    axpy_kernel<<<context().device.sm_count * 8, 256, 0, s>>>(count, 1.5f, x.data(), y.data(), z.data());
    GP_CUDA_CHECK_LAUNCH();
  }
};

// A backend for `spec`, or a skip naming why the system refused counters.
#define MAKE_BACKEND_OR_SKIP(var, spec)                                                  \
  gp::BackendChoice var = gp::make_counter_backend({spec, "", context().device.index}); \
  for (const auto& line : var.notes) std::printf("  %s\n", line.c_str());               \
  if (var.backend->name() == "none") GTEST_SKIP() << "counters refused: " << var.notes.back();

double near(double value, double expected) { return std::abs(value / expected - 1.0); }

TEST(Counters, RooflineSetOnAxpyUserReplay) {
  const Axpy axpy(std::size_t(1) << 26);  // 256 MiB per array: 15x the L2
  MAKE_BACKEND_OR_SKIP(choice, "roofline");
  const double n = static_cast<double>(axpy.n);
  auto work = [&] {
    axpy.launch(axpy.n);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  };
  // As in the harness, the work has run before its counters are read: the L2 then holds this work's
  // own lines, not the dirty lines of the input fill (whose write-back would add ~4 % DRAM writes).
  work();
  for (int range = 0; range < 3; ++range) {  // one session, several ranges: each must stand alone
    const auto t0 = std::chrono::steady_clock::now();
    gp::MetricValues v = choice.backend->collect("axpy", work);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  range %d: ffma %.0f dram read %.4g (%.4f x 8N) write %.4g (%.4f x 4N) time %.0f ns clock %.0f MHz "
                "passes %.0f, collect %.3f s\n",
                range, v[kFfma], v["dram__bytes_read.sum"], v["dram__bytes_read.sum"] / (8 * n),
                v["dram__bytes_write.sum"], v["dram__bytes_write.sum"] / (4 * n), v["gpu__time_duration.sum"],
                v["sm__cycles_elapsed.avg.per_second"] / 1e6, v["gpuprobe__counter_replays"], wall);
    EXPECT_EQ(v[kFfma], n);  // exact: one FFMA per element
    EXPECT_EQ(v["gpuprobe__fp32_flop"], 2 * n);
    EXPECT_EQ(v["sm__sass_thread_inst_executed_op_dfma_pred_on.sum"], 0);
    EXPECT_LT(near(v["dram__bytes_read.sum"], 8 * n), 0.02);
    EXPECT_LT(near(v["dram__bytes_write.sum"], 4 * n), 0.02);
    EXPECT_GE(v["lts__t_bytes.sum"], 0.98 * 12 * n);  // every byte passes through L2
    // 12N bytes cannot move faster than the 3.35 TB/s peak, nor (here) slower than 100 GB/s.
    EXPECT_GT(v["gpu__time_duration.sum"], 12 * n / 3.5e12 * 1e9);
    EXPECT_LT(v["gpu__time_duration.sum"], 12 * n / 1e11 * 1e9);
    EXPECT_GT(v["sm__cycles_elapsed.avg.per_second"], 0.5e9);
    EXPECT_LT(v["sm__cycles_elapsed.avg.per_second"], 2.5e9);
    EXPECT_EQ(v["gpuprobe__counter_ranges"], 1);
    EXPECT_LE(v["gpuprobe__counter_replays"], 2);  // the roofline set's budget
  }
}

TEST(Counters, LongRangeNamesStillGiveOneCompleteRange) {
  // Entry names are long; CUPTI splits user ranges with names of 60+ characters across passes.
  const Axpy axpy(std::size_t(1) << 22);
  MAKE_BACKEND_OR_SKIP(choice, "roofline");
  const std::string name(120, 'x');
  gp::MetricValues v = choice.backend->collect(name, [&] {
    axpy.launch(axpy.n);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  });
  EXPECT_EQ(v["gpuprobe__counter_ranges"], 1);
  EXPECT_EQ(v[kFfma], static_cast<double>(axpy.n));
  EXPECT_EQ(v.count("dram__bytes_read.sum"), 1u);
}

TEST(Counters, KernelReplaySumsTheKernelsOfOneOperation) {
  const Axpy axpy(std::size_t(1) << 26);
  MAKE_BACKEND_OR_SKIP(choice, std::string("dram__bytes_read.sum,gpu__time_duration.sum,") + kFfma + ",replay=kernel");
  const double n = static_cast<double>(axpy.n);
  gp::MetricValues v = choice.backend->collect("two kernels", [&] {
    axpy.launch(axpy.n);
    axpy.launch(axpy.n / 2);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  });
  std::printf("  kernel replay: ranges %.0f ffma %.0f dram read %.4f x 12N\n", v["gpuprobe__counter_ranges"], v[kFfma],
              v["dram__bytes_read.sum"] / (12 * n));
  EXPECT_EQ(v["gpuprobe__counter_ranges"], 2);
  EXPECT_EQ(v[kFfma], 1.5 * n);
  EXPECT_LT(near(v["dram__bytes_read.sum"], 12 * n), 0.03);
}

TEST(Counters, ApplicationReplayGivesEachRangeOfAPassItsOwnValues) {
  // As the harness does under replay=application: every pass runs the same ranges in the same
  // order, one CUPTI start/stop per pass; the values come per range after the last pass.
  const Axpy axpy(std::size_t(1) << 26);
  MAKE_BACKEND_OR_SKIP(choice, "roofline,replay=application");
  ASSERT_TRUE(choice.backend->application_replay());
  const double n = static_cast<double>(axpy.n);
  const std::size_t counts[] = {axpy.n, axpy.n / 2, axpy.n};
  axpy.launch(axpy.n);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  int passes = 0;
  for (bool done = false; !done;) {
    ASSERT_LE(++passes, 3) << "the roofline set takes 2 passes";
    const auto t0 = std::chrono::steady_clock::now();
    choice.backend->begin_application_pass(3);
    for (std::size_t count : counts)
      choice.backend->collect("axpy", [&] {
        axpy.launch(count);
        GP_CUDA_CHECK(cudaDeviceSynchronize());
      });
    done = choice.backend->end_application_pass();
    std::printf("  application pass %d: 3 ranges, %.3f s\n", passes,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<gp::MetricValues> v = choice.backend->application_results();
  ASSERT_EQ(v.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    const double count = static_cast<double>(counts[r]);
    std::printf("  range %zu: ffma %.0f dram read %.4f x 8 count, replays %.0f\n", r, v[r][kFfma],
                v[r]["dram__bytes_read.sum"] / (8 * count), v[r]["gpuprobe__counter_replays"]);
    EXPECT_EQ(v[r][kFfma], count);  // exact, and its own range's (the middle one is half)
    EXPECT_LT(near(v[r]["dram__bytes_read.sum"], 8 * count), 0.03);
    EXPECT_EQ(v[r]["gpuprobe__counter_replays"], passes);
  }
  EXPECT_LE(passes, 2);
  EXPECT_EQ(v[1][kFfma] * 2, n);
}

TEST(Counters, DeviceCopyTrafficIsCountedInAUserRange) {
  const std::size_t bytes = std::size_t(512) << 20;
  DeviceBuffer<float> src(bytes / 4), dst(bytes / 4);
  fill_uniform(src.data(), src.size(), 3, -1.f, 1.f);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  MAKE_BACKEND_OR_SKIP(choice, "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum");
  auto copy = [&] {
    GP_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice));
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  };
  copy();  // as in the harness: counters after the work has run
  gp::MetricValues v = choice.backend->collect("memcpy", copy);
  std::printf("  512 MiB D2D copy: dram read %.5f x size, write %.5f x size, %.0f ns\n",
              v["dram__bytes_read.sum"] / bytes, v["dram__bytes_write.sum"] / bytes, v["gpu__time_duration.sum"]);
  EXPECT_LT(near(v["dram__bytes_read.sum"], bytes), 0.01);
  EXPECT_LT(near(v["dram__bytes_write.sum"], bytes), 0.01);
}

TEST(Counters, EnabledProfilerDoesNotSlowTimedLaunches) {
  // The session stays enabled across entries; the timed samples run between ranges and must not
  // pay for it. Median of event-timed launches, without and with an enabled session.
  const Axpy axpy(std::size_t(1) << 24);
  auto median_us = [&] {
    cudaEvent_t a, b;
    GP_CUDA_CHECK(cudaEventCreate(&a));
    GP_CUDA_CHECK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int i = 0; i < 31; ++i) {
      GP_CUDA_CHECK(cudaEventRecord(a));
      axpy.launch(axpy.n);
      GP_CUDA_CHECK(cudaEventRecord(b));
      GP_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      GP_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms * 1000);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  median_us();  // warm-up: clocks up, code loaded
  const float before = median_us();
  MAKE_BACKEND_OR_SKIP(choice, "roofline");
  choice.backend->collect("axpy", [&] {
    axpy.launch(axpy.n);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  });
  const float during = median_us();
  std::printf("  axpy 2^24 median: %.2f us without a session, %.2f us with one enabled (between ranges)\n", before,
              during);
  EXPECT_LT(during, 1.05 * before);  // faster is fine (clock and cache state vary); slower is not
}

TEST(Counters, UnknownMetricIsRejectedWithTheDevicesNames) {
  try {
    gp::BackendChoice c = gp::make_counter_backend({"dram__bytes_reed.sum", "", context().device.index});
    if (c.backend->name() == "none") GTEST_SKIP() << "counters refused: " << c.notes.back();
    FAIL() << "no error for an unknown metric";
  } catch (const UsageError& e) {
    std::printf("  %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("dram__bytes_read.sum"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "counters refused before validation: " << e.what();
  }
}

}  // namespace
}  // namespace gpuprobe
