// The chain builders give one cycle through every element exactly once (random and strided, odd
// sizes), using the same host/device functions the GPU chain builder runs.
#include "probes/memory_chains.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "harness/sweep.hpp"

namespace gpuprobe {
namespace {

// Builds next[] exactly as build_chain_kernel does and walks it from position 0.
void expect_single_cycle(ChainPattern pattern, std::uint64_t n, std::uint64_t seed) {
  const ChainOrder order = make_chain_order(pattern, n, seed);
  std::vector<std::uint64_t> next(n, UINT64_MAX);
  for (std::uint64_t p = 0; p < n; ++p) {
    const std::uint64_t here = chain_position_to_element(order, p);
    ASSERT_LT(here, n);
    ASSERT_EQ(next[here], UINT64_MAX) << "element " << here << " written twice (not a permutation)";
    next[here] = chain_position_to_element(order, p + 1 == n ? 0 : p + 1);
  }
  const std::uint64_t start = chain_position_to_element(order, 0);
  std::vector<bool> seen(n, false);
  std::uint64_t e = start;
  for (std::uint64_t step = 0; step < n; ++step) {
    ASSERT_FALSE(seen[e]) << "element " << e << " visited twice within one lap (n=" << n << ")";
    seen[e] = true;
    e = next[e];
  }
  EXPECT_EQ(e, start) << "the lap does not return to its start";
}

TEST(MemoryChains, RandomChainIsOneCycleForOddAndEvenSizes) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 8ull, 127ull, 1000ull, 4097ull, 65537ull, 262144ull})
    expect_single_cycle(ChainPattern::kRandom, n, n * 31 + 5);
}

TEST(MemoryChains, StrideChainIsOneCycle) {
  for (std::uint64_t n : {1ull, 5ull, 64ull, 1001ull}) expect_single_cycle(ChainPattern::kStride, n, 1);
}

TEST(MemoryChains, RandomChainHasNoSpatialLocality) {
  // Consecutive visits should rarely be neighbours: a sequential order would defeat the probe.
  const std::uint64_t n = 1 << 16;
  const ChainOrder order = make_chain_order(ChainPattern::kRandom, n, 3);
  int neighbours = 0;
  for (std::uint64_t p = 0; p + 1 < n; ++p) {
    const auto a = static_cast<std::int64_t>(chain_position_to_element(order, p));
    const auto b = static_cast<std::int64_t>(chain_position_to_element(order, p + 1));
    if (std::llabs(a - b) <= 1) ++neighbours;
  }
  EXPECT_LT(neighbours, 16);  // ~2 expected for a random permutation of 65536
}

TEST(MemoryChains, DifferentSeedsGiveDifferentOrders) {
  const ChainOrder a = make_chain_order(ChainPattern::kRandom, 1000, 1);
  const ChainOrder b = make_chain_order(ChainPattern::kRandom, 1000, 2);
  int same = 0;
  for (std::uint64_t p = 0; p < 1000; ++p)
    same += chain_position_to_element(a, p) == chain_position_to_element(b, p);
  EXPECT_LT(same, 20);
}

TEST(MemoryChains, SkewStaysInsideTheStrideSlot) {
  const std::uint64_t stride = 64 << 10;
  for (std::uint64_t e = 0; e < 1000; ++e) {
    const std::uint64_t off = chain_element_offset(e, stride, 64);
    EXPECT_EQ(off / stride, e);
    EXPECT_EQ(off % 8, 0u);
  }
}

TEST(LogSweep, PointsPerOctaveAndBounds) {
  const auto s = log_sweep(1024, 1 << 20, 4, 128);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front(), 1024u);
  EXPECT_EQ(s.back(), 1u << 20);
  EXPECT_EQ(s.size(), 41u);  // 10 octaves x 4 + 1
  for (std::size_t i = 1; i < s.size(); ++i) {
    EXPECT_GT(s[i], s[i - 1]);
    EXPECT_EQ(s[i] % 128, 0u);
  }
  EXPECT_TRUE(log_sweep(10, 5, 4).empty());
}

}  // namespace
}  // namespace gpuprobe
