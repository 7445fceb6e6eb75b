// The stopping rule of settle_reads (microbench/harness/settle.hpp: reading fresh operands until their
// read rate stops improving) and, either way, of the warm-up until steady (settle_rule.hpp).
#include "harness/settle.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuprobe {
namespace {

std::vector<double> repeat(double seconds, int n) { return std::vector<double>(n, seconds); }

TEST(SettleRule, ConstantPassesAreStableOnceTwoWindowsAreIn) {
  const SettleRule rule;  // window 8, gain 1 %
  EXPECT_FALSE(rule.stable(repeat(1e-3, 15)));
  EXPECT_TRUE(rule.stable(repeat(1e-3, 16)));
}

TEST(SettleRule, AStepToFasterPassesIsNotStableUntilAWindowAfterIt) {
  // The H100 pattern: a slow plateau (2470 GB/s), then ~17 % faster passes.
  const SettleRule rule;
  std::vector<double> passes = repeat(1.17e-3, 30);
  EXPECT_TRUE(rule.stable(passes));  // a plateau alone looks stable: hence min_seconds
  for (int i = 0; i < 8; ++i) {
    passes.push_back(1.0e-3);
    EXPECT_FALSE(rule.stable(passes)) << "pass " << passes.size() << ": the faster passes are recent";
  }
  for (int i = 0; i < 8; ++i) passes.push_back(1.0e-3);
  EXPECT_TRUE(rule.stable(passes));
}

TEST(SettleRule, ImprovementsBelowTheGainCountAsStable) {
  const SettleRule rule;
  std::vector<double> passes = repeat(1.0e-3, 8);
  for (int i = 0; i < 8; ++i) passes.push_back(0.995e-3);  // 0.5 % faster: within gain
  EXPECT_TRUE(rule.stable(passes));
  passes.back() = 0.98e-3;  // 2 % faster in the last window
  EXPECT_FALSE(rule.stable(passes));
}

TEST(SettleState, ASettledRateBelowTheFirstPassIsReportedAsSlowed) {
  SettleResult r;
  r.passes = 293;
  r.stable = true;
  r.first_gbps = 2626;  // the H100 case of tree 4b631b9
  r.settled_gbps = 2297;
  EXPECT_STREQ(settle_state(r), "slowed");
  r.settled_gbps = 2973;  // the usual case: fresh memory reads slowest first
  EXPECT_STREQ(settle_state(r), "yes");
  r.settled_gbps = 0.96 * r.first_gbps;  // within kSlowedFraction
  EXPECT_STREQ(settle_state(r), "yes");
  r.stable = false;
  EXPECT_STREQ(settle_state(r), "capped");
  r.settled_gbps = 0.9 * r.first_gbps;
  EXPECT_STREQ(settle_state(r), "slowed");
}

TEST(SettleRule, DoneHonoursTheMinimumAndTheCap) {
  const SettleRule rule;  // 30 ms .. 300 ms
  const std::vector<double> flat = repeat(1e-3, 20);
  EXPECT_FALSE(rule.done(flat, 0.01));  // stable but too early: a slow plateau may still end
  EXPECT_TRUE(rule.done(flat, 0.03));
  std::vector<double> improving;
  for (int i = 0; i < 300; ++i) improving.push_back(1e-3 * (1.0 - 0.002 * i));
  EXPECT_FALSE(rule.done(improving, 0.2));
  EXPECT_TRUE(rule.done(improving, 0.3));  // capped
}

// either_way: a rate that falls (the clock dropping as the power cap bites) is not settled until the
// last two windows agree; the improving-only rule would call the same passes settled at once.
TEST(SettleRule, EitherWayWaitsForAFallingRateToLevelOff) {
  SettleRule rule;
  rule.either_way = true;
  std::vector<double> passes;
  // 16 passes at 1.00 ms then a slide to 1.10 ms over 24 passes, then flat.
  for (int i = 0; i < 16; ++i) passes.push_back(1.0e-3);
  SettleRule improving_only;
  for (int i = 1; i <= 24; ++i) {
    passes.push_back(1.0e-3 * (1.0 + 0.1 * i / 24));
    EXPECT_TRUE(improving_only.stable(passes)) << "slower passes are no improvement";
    if (i >= 8) EXPECT_FALSE(rule.stable(passes)) << "pass " << passes.size() << ": still sliding";
  }
  for (int i = 0; i < 8; ++i) passes.push_back(1.1e-3);
  EXPECT_FALSE(rule.stable(passes)) << "the window before the last still holds the slide";
  for (int i = 0; i < 8; ++i) passes.push_back(1.1e-3);
  EXPECT_TRUE(rule.stable(passes));
}

TEST(SettleRule, EitherWayComparesMediansSoOneOutlierDoesNotUnsettle) {
  SettleRule rule;
  rule.either_way = true;
  std::vector<double> passes = repeat(1e-3, 16);
  passes[12] = 2e-3;  // one slow pass (a host hiccup) in the last window
  EXPECT_TRUE(rule.stable(passes));
  for (std::size_t i = 8; i < 16; ++i) passes[i] = 0.985e-3;  // the last window 1.5 % faster
  EXPECT_FALSE(rule.stable(passes));
  for (std::size_t i = 8; i < 16; ++i) passes[i] = 0.995e-3;  // 0.5 %: within the gain
  EXPECT_TRUE(rule.stable(passes));
}

}  // namespace
}  // namespace gpuprobe
