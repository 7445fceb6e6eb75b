#include "harness/options.hpp"

#include <gtest/gtest.h>

#include "gpuprobe/check.hpp"

namespace gpuprobe {
namespace {

std::vector<std::string> argv_of(std::initializer_list<const char*> a) {
  std::vector<std::string> v{"gpuprobe"};
  for (const char* s : a) v.emplace_back(s);
  return v;
}

TEST(Options, OwnFlagsAreRemovedOthersKept) {
  auto args = argv_of({"--device=1", "--benchmark_filter=memory", "--quick", "--samples=7"});
  const Options o = parse_options(args);
  EXPECT_EQ(o.device, 1);
  EXPECT_TRUE(o.quick);
  EXPECT_EQ(o.samples, 7);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1], "--benchmark_filter=memory");
}

TEST(Options, BenchmarkOutIsWrittenThroughPartialFile) {
  auto args = argv_of({"--benchmark_out=r.json"});
  const Options o = parse_options(args);
  EXPECT_EQ(o.benchmark_out, "r.json");
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1], "--benchmark_out=r.json.partial");
}

TEST(Options, MaxFootprintRemembersWhetherItWasGiven) {
  auto defaults = argv_of({});
  const Options d = parse_options(defaults);
  EXPECT_FALSE(d.max_footprint_given);
  EXPECT_EQ(d.max_footprint_bytes, 4ull << 30);
  auto given = argv_of({"--max-footprint=20G"});
  const Options g = parse_options(given);
  EXPECT_TRUE(g.max_footprint_given);
  EXPECT_EQ(g.max_footprint_bytes, 20ull << 30);
}

TEST(Options, ExcludeTakesAValidRegex) {
  auto args = argv_of({"--exclude=_v3|oblivious"});
  EXPECT_EQ(parse_options(args).exclude, "_v3|oblivious");
  for (const char* bad : {"--exclude=", "--exclude=(unclosed", "--exclude"}) {
    auto a = argv_of({bad});
    EXPECT_THROW(parse_options(a), UsageError) << bad;
  }
}

TEST(Options, LaunchGateIsOnUnlessTurnedOff) {
  auto defaults = argv_of({});
  EXPECT_TRUE(parse_options(defaults).launch_gate);
  auto off = argv_of({"--launch-gate=off"});
  EXPECT_FALSE(parse_options(off).launch_gate);
  EXPECT_TRUE(off.size() == 1u);  // removed: Google Benchmark would reject it
  auto on = argv_of({"--launch-gate=on"});
  EXPECT_TRUE(parse_options(on).launch_gate);
  for (const char* bad : {"--launch-gate=yes", "--launch-gate=", "--launch-gate"}) {
    auto a = argv_of({bad});
    EXPECT_THROW(parse_options(a), UsageError) << bad;
  }
}

TEST(Options, SizesAcceptSuffixes) {
  EXPECT_EQ(parse_bytes("64K", "--x"), 64u << 10);
  EXPECT_EQ(parse_bytes("3m", "--x"), 3u << 20);
  EXPECT_EQ(parse_bytes("4G", "--x"), 4ull << 30);
  EXPECT_EQ(parse_bytes("1000", "--x"), 1000u);
}

TEST(Options, OutOfRangeAndMalformedValuesAreUsageErrors) {
  for (const char* bad : {"--device=-1", "--device=abc", "--device=", "--samples=0", "--samples=1e3",
                          "--max-footprint=1K", "--max-footprint=12Q", "--counters=", "--device",
                          "--benchmark_out="}) {
    auto args = argv_of({bad});
    EXPECT_THROW(parse_options(args), UsageError) << bad;
  }
}

}  // namespace
}  // namespace gpuprobe
