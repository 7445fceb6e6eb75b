// GPU tests of the memory probes' kernels at tiny sizes: the chase computes the expected value
// (a full lap returns to its start), and invariants hold (latency does not fall from L1 to DRAM).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gpuprobe/device_buffer.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/settle.hpp"
#include "probes/memory_latency.hpp"

namespace gpuprobe {
namespace {

double cycles_per_load(PointerChase& chase, ChaseLoad load, std::uint64_t steps) {
  const ChaseTiming t = chase.chase(load, steps);
  return static_cast<double>(t.cycles) / static_cast<double>(steps);
}

TEST(MemoryLatency, FullLapReturnsToStart) {
  for (auto pattern : {ChainPattern::kRandom, ChainPattern::kStride}) {
    const ChainSpec spec{pattern, 4096, 128, 0, 9};  // 4096 = 128 x kUnroll: whole laps
    DeviceBuffer<char> memory(chain_span_bytes(spec));
    PointerChase chase(memory.data(), spec);
    chase.chase(ChaseLoad::kL2Only, spec.elements);
    EXPECT_EQ(chase.cursor(), chase.start());
    chase.chase(ChaseLoad::kCached, 100 * PointerChase::kUnroll);
    EXPECT_NE(chase.cursor(), chase.start());
  }
}

TEST(MemoryLatencyTiming, LatencyGrowsFromL1ToL2ToDram) {
  const std::uint64_t steps = 2048;
  auto measure = [&](std::uint64_t footprint, ChaseLoad load) {
    const ChainSpec spec{ChainPattern::kRandom, footprint / 128, 128, 0, footprint};
    DeviceBuffer<char> memory(chain_span_bytes(spec));
    PointerChase chase(memory.data(), spec);
    chase.warm(load, std::min<std::uint64_t>(spec.elements, 1 << 16));  // DRAM: no warm lap needed
    return cycles_per_load(chase, load, steps);
  };
  const double l1 = measure(16 << 10, ChaseLoad::kCached);
  const double l2 = measure(4 << 20, ChaseLoad::kCached);
  const double dram = measure(std::size_t(1) << 30, ChaseLoad::kCached);
  const double cg_small = measure(16 << 10, ChaseLoad::kL2Only);
  EXPECT_GT(l1, 4.0);  // a load cannot complete in under a few cycles
  EXPECT_LT(l1 * 2, l2) << "L1 " << l1 << " L2 " << l2;
  EXPECT_LT(l2 * 1.3, dram) << "L2 " << l2 << " DRAM " << dram;
  EXPECT_GT(cg_small, l1 * 2) << "ld.global.cg must bypass L1";
}

// flush_l2 (the harness's "l2=flushed" condition) must evict: a chain that was L2-resident is
// DRAM-latency on its first lap after the flush (H100: ~280 -> ~680 cycles; the margin is 1.5x).
// The chain is longer than kInKernelWarmLimit: a shorter one gets an untimed warm lap inside the
// timed launch, which would reload it into the L2 after the flush (a 1 MiB chain did: 276 -> 276).
TEST(HarnessTiming, FlushL2EvictsAnL2ResidentChain) {
  const ChainSpec spec{ChainPattern::kRandom, (8 << 20) / 128, 128, 0, 5};  // 8 MiB: L2, not L1 (cg)
  ASSERT_GT(spec.elements, PointerChase::kInKernelWarmLimit);
  DeviceBuffer<char> memory(chain_span_bytes(spec));
  PointerChase chase(memory.data(), spec);
  const std::uint64_t steps = 8192;  // an eighth of a lap: every timed load finds its line flushed
  chase.warm(ChaseLoad::kL2Only, 2 * spec.elements);
  const double resident = cycles_per_load(chase, ChaseLoad::kL2Only, steps);
  flush_l2(nullptr);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  const double flushed = cycles_per_load(chase, ChaseLoad::kL2Only, steps);
  EXPECT_GT(flushed, 1.5 * resident) << "resident " << resident << " cycles, after flush_l2 " << flushed;
}

// The flush only reads: whatever it sweeps is left as it was (and memcheck sees no stray access).
TEST(Harness, ReadThroughLeavesDataUnchanged) {
  const std::size_t count = (1 << 20) + 3;  // the tail below 16 bytes is skipped, not overrun
  DeviceBuffer<float> data(count);
  fill_uniform(data.data(), count, 3, 1.f, 2.f);
  std::vector<float> before(count), after(count);
  GP_CUDA_CHECK(cudaMemcpy(before.data(), data.data(), data.bytes(), cudaMemcpyDeviceToHost));
  read_through(data.data(), data.bytes(), nullptr);
  GP_CUDA_CHECK(cudaMemcpy(after.data(), data.data(), data.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(before, after);
}

// settle_reads reads until its rule is satisfied (or capped), reports consistent figures and leaves
// the data as it was. A *Timing* suite: its time bounds do not hold under the sanitizers.
TEST(HarnessTiming, SettleReadsReportsItsPasses) {
  const std::size_t count = std::size_t(64) << 20;  // 256 MiB: beyond the L2
  DeviceBuffer<float> data(count);
  fill_uniform(data.data(), count, 4, 1.f, 2.f);
  std::vector<float> before(1024), after(1024);
  GP_CUDA_CHECK(cudaMemcpy(before.data(), data.data(), 4096, cudaMemcpyDeviceToHost));
  const SettleRule rule{0.01, 0.2, 4, 0.01};
  const SettleResult r = settle_reads(data.data(), data.bytes(), rule);
  EXPECT_GE(r.passes, 2 * rule.window);
  EXPECT_GE(r.seconds, rule.min_seconds);
  EXPECT_LT(r.seconds, rule.max_seconds + 0.1);
  EXPECT_GT(r.first_gbps, 10.0);
  EXPECT_GT(r.settled_gbps, 10.0);
  EXPECT_LT(r.settled_gbps, 1e5);  // not a division by a zero-length pass
  GP_CUDA_CHECK(cudaMemcpy(after.data(), data.data(), 4096, cudaMemcpyDeviceToHost));
  EXPECT_EQ(before, after);
}

TEST(MemoryLatencyTiming, SharedChaseIsFasterThanL2) {
  const ChaseTiming t = shared_memory_chase(4096, 2048, 1);
  const double cycles = static_cast<double>(t.cycles) / 2048;
  EXPECT_GT(cycles, 4.0);
  EXPECT_LT(cycles, 100.0);
}

TEST(MemoryLatency, RejectsBadSpacing) {
  DeviceBuffer<char> memory(4096);
  EXPECT_THROW(PointerChase(memory.data(), ChainSpec{ChainPattern::kStride, 8, 12, 0, 1}), UsageError);
}

}  // namespace
}  // namespace gpuprobe
