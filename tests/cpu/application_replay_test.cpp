// Application replay in the harness (run_selection): the selection runs once timed, then once per
// counter pass with only each entry's warm-up and replay, and the values of each range reach the
// report of its own entry. A fake backend stands in for CUPTI (no GPU needed).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "harness/application_replay.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

// Two passes; range i of the last pass gets fake__range = i and fake__passes = passes run. Its
// collect() runs the work once and returns what it "measured at once" (as PAPI does).
class FakeApplicationBackend final : public profilers::CounterBackend {
 public:
  std::string name() const override { return "fake"; }
  profilers::MetricValues collect(const std::string& range, const std::function<void()>& work) override {
    if (!in_pass) throw Error("collect outside a pass: " + range);
    work();
    ++ranges_this_pass;
    return {{"fake__at_once", 7}};
  }
  bool application_replay() const override { return true; }
  void begin_application_pass(std::size_t max_ranges) override {
    in_pass = true;
    ranges_this_pass = 0;
    bounds.push_back(max_ranges);
  }
  bool end_application_pass() override {
    in_pass = false;
    ++passes;
    return passes == 2;
  }
  std::vector<profilers::MetricValues> application_results() override {
    std::vector<profilers::MetricValues> out(ranges_this_pass);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {{"fake__range", double(i)}, {"fake__passes", double(passes)}};
    return out;
  }
  bool in_pass = false;
  int passes = 0;
  std::size_t ranges_this_pass = 0;
  std::vector<std::size_t> bounds;
};

class CaptureReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) captured.push_back(r);
  }
  std::vector<Run> captured;
};

const ProbeDescriptor kFake =
    ProbeDescriptor{"test.application_replay", Figure::kTimePerOp, "synthetic", "", 4, 1}.with_axes(
        {text_axis("entry", AxisRole::kGroup)});

TEST(ApplicationReplay, EachEntryGetsItsOwnRangeAndTheTimedRunsFigures) {
  // Static: the entries stay registered after this test (another test in the process may run them).
  static std::map<std::string, int> samples, replays;
  for (const char* which : {"a", "b", "c"}) {
    const std::string name = entry_name(kFake, {{"entry", which}});
    register_entry(name, kFake, [name](benchmark::State& st) {
      Measurement m(st, kFake, Work{0, 0, 1});
      m.run([&] { ++samples[name]; Sample s; s.seconds = 1e-3; return s; }, [&] { ++replays[name]; });
    });
  }
  // Only this test's entries (others in the same process may have registered theirs).
  benchmark::SetBenchmarkFilter("^test\\.application_replay/");
  FakeApplicationBackend backend;
  context().counters = &backend;
  CaptureReporter display;
  const int passes = run_selection(&display);
  context().counters = nullptr;
  benchmark::SetBenchmarkFilter(".");

  EXPECT_EQ(passes, 2);
  EXPECT_EQ(context().counter_pass, 0);
  EXPECT_EQ(backend.bounds, (std::vector<std::size_t>{3, 3}));  // the timed run's replayable runs
  ASSERT_EQ(display.captured.size(), 3u);  // the timed run's reports only, written once
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& run = display.captured[i];
    const std::string name = run.run_name.function_name;
    // Timed run: 1 warm-up + 4 samples; each counter pass: 1 warm-up, and the replay in its range.
    EXPECT_EQ(samples[name], 5 + 2) << name;
    EXPECT_EQ(replays[name], 2) << name;
    EXPECT_EQ(run.iterations, 4);
    EXPECT_DOUBLE_EQ(run.counters.at("samples").value, 4);
    EXPECT_NEAR(run.counters.at("time_median_s").value, 1e-3, 1e-15);  // not the passes' dummy 1 ns
    EXPECT_DOUBLE_EQ(run.counters.at("fake__range").value, double(i)) << name;  // its own range
    EXPECT_DOUBLE_EQ(run.counters.at("fake__passes").value, 2);
    EXPECT_DOUBLE_EQ(run.counters.at("fake__at_once").value, 7);
  }
}

const ProbeDescriptor kFakePremise =
    ProbeDescriptor{"test.premise_only", Figure::kTimePerOp, "synthetic", "", 4, 1}.with_axes(
        {text_axis("entry", AxisRole::kGroup)});

TEST(ApplicationReplay, PremiseCountersReplayOnlyTheEntriesThatDeclareOne) {
  // --counters=premise alone: an entry without a premise has nothing to collect, so the counter passes
  // neither give it a range nor run its warm-up again; the one that declares a premise gets both.
  static std::map<std::string, int> samples, replays;
  for (const char* which : {"with", "without"}) {
    const std::string name = entry_name(kFakePremise, {{"entry", which}});
    const bool declares = std::string(which) == "with";
    register_entry(name, kFakePremise, [name, declares](benchmark::State& st) {
      Measurement m(st, kFakePremise, Work{1e6, 0, 1});
      if (declares) m.premise(Premise::dram());
      m.run([&] { ++samples[name]; Sample s; s.seconds = 1e-3; return s; }, [&] { ++replays[name]; });
    });
  }
  benchmark::SetBenchmarkFilter("^test\\.premise_only/");
  FakeApplicationBackend backend;
  context().counters = &backend;
  const std::string counters_before = context().options.counters;
  context().options.counters = "premise,replay=application";
  CaptureReporter display;
  const int passes = run_selection(&display);
  context().options.counters = counters_before;
  context().counters = nullptr;
  benchmark::SetBenchmarkFilter(".");

  EXPECT_EQ(passes, 2);
  EXPECT_EQ(backend.bounds, (std::vector<std::size_t>{1, 1}));  // one range per pass: the declared one
  const std::string with = entry_name(kFakePremise, {{"entry", "with"}});
  const std::string without = entry_name(kFakePremise, {{"entry", "without"}});
  EXPECT_EQ(replays[with], 2);
  EXPECT_EQ(replays[without], 0);
  EXPECT_EQ(samples[with], 5 + 2);    // timed run, then a warm-up in each pass
  EXPECT_EQ(samples[without], 5);     // the timed run only
  ASSERT_EQ(display.captured.size(), 2u);
}

TEST(ApplicationReplay, AttachesValuesToIterationRunsByEntryName) {
  benchmark::BenchmarkReporter::Run a, b, mean;
  a.run_name.function_name = "x/n:1";
  b.run_name.function_name = "x/n:2";
  mean.run_name.function_name = "x/n:1";
  mean.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
  std::vector<benchmark::BenchmarkReporter::Run> runs{a, b, mean};
  attach_counter_values(runs, {{"x/n:1", {{"dram__bytes_read.sum", 42}}}});
  EXPECT_DOUBLE_EQ(runs[0].counters.at("dram__bytes_read.sum").value, 42);
  EXPECT_EQ(runs[1].counters.count("dram__bytes_read.sum"), 0u);  // another entry
  EXPECT_EQ(runs[2].counters.count("dram__bytes_read.sum"), 0u);  // an aggregate summarizes timing
}

}  // namespace
}  // namespace gpuprobe
