// The harness writes every field docs/results-schema.md promises, with the figures derived from the
// descriptor and the samples (no GPU needed: the samples are synthetic).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "gpuprobe/check.hpp"
#include "harness/device.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

// Captures the runs Google Benchmark reports.
class CaptureReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) captured[r.benchmark_name()] = r;
  }
  std::map<std::string, Run> captured;
};

const ProbeDescriptor kFakeBandwidth =
    ProbeDescriptor{"test.fake_bandwidth", Figure::kBandwidth, "synthetic samples", "", 5, 1}
        .titled("fake")
        .with_axes({numeric_axis("size", "bytes", AxisRole::kX)})
        .with_fields({text_field("flavour")});
const ProbeDescriptor kFakeCycles{"test.fake_cycles", Figure::kCyclesPerOp, "synthetic cycles", "", 4, 0};

TEST(Measurement, WritesSchemaFieldsAndDerivedFigures) {
  register_entry(entry_name(kFakeBandwidth, {{"size", "1000"}}), kFakeBandwidth, [](benchmark::State& st) {
    Measurement m(st, kFakeBandwidth, Work{2e9, 1e9, 0});  // the counter size comes from the name
    m.tag("flavour", "x");
    int i = 0;
    // Sample durations 1.0, 1.1, 1.2, ... ms (after one warm-up sample).
    m.run([&] { Sample s; s.seconds = 1e-3 * (1.0 + 0.1 * (i++ - 1)); return s; }, {});
  });
  register_entry(entry_name(kFakeCycles, {}), kFakeCycles, [](benchmark::State& st) {
    Measurement m(st, kFakeCycles, Work{0, 0, 100});
    m.run([] { Sample s; s.seconds = 1e-6; s.cycles = 3000; s.clock_mhz = 1500; return s; }, {});
  });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  ASSERT_EQ(reporter.captured.count("test.fake_bandwidth/size:1000/iterations:5/manual_time"), 1u);
  const auto& bw = reporter.captured["test.fake_bandwidth/size:1000/iterations:5/manual_time"];
  EXPECT_EQ(bw.iterations, 5);
  const auto& c = bw.counters;
  for (const char* key : {"samples", "value_median", "value_min", "value_max", "value_mean", "value_cv",
                          "time_median_s", "time_cv", "bytes_per_sample", "gbps", "flops_per_sample", "gflops",
                          "size"})
    EXPECT_EQ(c.count(key), 1u) << key;
  EXPECT_DOUBLE_EQ(c.at("samples").value, 5);
  EXPECT_DOUBLE_EQ(c.at("size").value, 1000);
  EXPECT_NEAR(c.at("time_median_s").value, 1.2e-3, 1e-12);  // samples 1.0 .. 1.4 ms
  EXPECT_NEAR(c.at("value_median").value, 2e9 / 1.2e-3 / 1e9, 1e-6);
  EXPECT_NEAR(c.at("value_max").value, 2e9 / 1.0e-3 / 1e9, 1e-6);  // fastest sample = highest bandwidth
  EXPECT_NEAR(c.at("gflops").value, 1e9 / 1.2e-3 / 1e9, 1e-6);
  EXPECT_GT(c.at("value_cv").value, 0);
  EXPECT_EQ(bw.report_label, "probe=test.fake_bandwidth;unit=GB/s;method=synthetic samples;flavour=x");

  const auto& cy = reporter.captured.at("test.fake_cycles/iterations:4/manual_time");
  EXPECT_DOUBLE_EQ(cy.counters.at("value_median").value, 30);  // 3000 cycles / 100 ops
  EXPECT_DOUBLE_EQ(cy.counters.at("cycles_per_op").value, 30);
  EXPECT_DOUBLE_EQ(cy.counters.at("ns_per_op").value, 10);     // 1 us / 100 ops
  EXPECT_DOUBLE_EQ(cy.counters.at("value_cv").value, 0);
  EXPECT_DOUBLE_EQ(cy.counters.at("sm_clock_kernel_mhz").value, 1500);
  EXPECT_EQ(cy.counters.count("gbps"), 0u);
}

// --exclude: a matching entry is never registered, so it neither runs nor appears in the output.
TEST(Measurement, ExcludedEntriesAreNotRegistered) {
  static const ProbeDescriptor kExclude =
      ProbeDescriptor{"test.exclude", Figure::kCyclesPerOp, "synthetic cycles", "", 4, 0}.titled("fake").with_axes(
          {text_axis("impl", AxisRole::kGroup)});
  context().options.exclude = "ours_v3";
  int ran_excluded = 0;
  auto body = [](int* counter) {
    return [counter](benchmark::State& st) {
      if (counter) ++*counter;
      Measurement m(st, kExclude, Work{0, 0, 1});
      m.run([] { Sample s; s.seconds = 1e-6; s.cycles = 1; return s; }, {});
    };
  };
  register_entry("test.exclude/impl:ours", kExclude, body(nullptr));
  register_entry("test.exclude/impl:ours_v3", kExclude, body(&ran_excluded));
  context().options.exclude.clear();
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  EXPECT_EQ(reporter.captured.count("test.exclude/impl:ours/iterations:4/manual_time"), 1u);
  EXPECT_EQ(reporter.captured.count("test.exclude/impl:ours_v3/iterations:4/manual_time"), 0u);
  EXPECT_EQ(ran_excluded, 0);
}

// min_warmup_seconds: warm-up runs past `warmup` samples until those after the first add up to that
// time (at most kMaxWarmupSamples) and says how many it ran; the timed samples start after them. A
// per-entry sample count replaces the descriptor's.
TEST(Measurement, WarmsUpForAMinimumTimeAndTakesThePerEntrySampleCount) {
  // Sample times in powers of two, so that the sums are exact: a slow first call (1/64 s, as a lazy
  // module load) that does not count, then 4 x 1/1024 s = the minimum.
  const std::vector<Axis> size_axis{numeric_axis("size", "bytes", AxisRole::kX)};
  const ProbeDescriptor timed_warmup =
      ProbeDescriptor{"test.timed_warmup", Figure::kBandwidth, "synthetic", "", 5, 1, 4.0 / 1024}.with_axes(size_axis);
  const ProbeDescriptor capped_warmup =
      ProbeDescriptor{"test.capped_warmup", Figure::kBandwidth, "synthetic", "", 3, 0, 1.0}.with_axes(size_axis);
  // Shared with the registered bodies, which Google Benchmark keeps after this test returns.
  auto calls = std::make_shared<int>(0), capped_calls = std::make_shared<int>(0);
  register_entry(
      "test.timed_warmup/size:1", timed_warmup,
      [calls, timed_warmup](benchmark::State& st) {
        Measurement m(st, timed_warmup, Work{1e6, 0, 0});
        // Warm-up samples 1/64 s then 1/1024 s, timed samples 1/512 s: the median tells them apart.
        m.run(
            [calls] {
              const int i = (*calls)++;
              Sample s;
              s.seconds = i == 0 ? 1.0 / 64 : (i < 5 ? 1.0 : 2.0) / 1024;
              return s;
            },
            {});
      },
      7);
  register_entry("test.capped_warmup/size:1", capped_warmup, [capped_calls, capped_warmup](benchmark::State& st) {
    Measurement m(st, capped_warmup, Work{1e6, 0, 0});
    m.run([capped_calls] { ++*capped_calls; Sample s; s.seconds = 1e-9; return s; }, {});
  });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  ASSERT_EQ(reporter.captured.count("test.timed_warmup/size:1/iterations:7/manual_time"), 1u);
  const auto& c = reporter.captured["test.timed_warmup/size:1/iterations:7/manual_time"].counters;
  EXPECT_DOUBLE_EQ(c.at("warmup_samples").value, 5);
  EXPECT_DOUBLE_EQ(c.at("samples").value, 7);
  EXPECT_DOUBLE_EQ(c.at("time_median_s").value, 2.0 / 1024);  // no warm-up sample among the timed ones
  EXPECT_EQ(*calls, 5 + 7);

  ASSERT_EQ(reporter.captured.count("test.capped_warmup/size:1/iterations:3/manual_time"), 1u);
  EXPECT_DOUBLE_EQ(reporter.captured["test.capped_warmup/size:1/iterations:3/manual_time"]
                       .counters.at("warmup_samples")
                       .value,
                   kMaxWarmupSamples);
  EXPECT_EQ(*capped_calls, kMaxWarmupSamples + 3);
}

// warmup_until_steady: warm-up runs until the sample times settle (here: 30 samples sliding from 1 to
// 2 ms, then flat), says how it went, and the timed samples come after it.
TEST(Measurement, WarmsUpUntilTheSampleTimesSettle) {
  const std::vector<Axis> size_axis{numeric_axis("size", "bytes", AxisRole::kX)};
  const ProbeDescriptor steady =
      ProbeDescriptor{"test.steady_warmup", Figure::kBandwidth, "synthetic", "", 5, 2}
          .with_axes(size_axis)
          .warming_until_steady(SettleRule{0.0, 1e9, 4, 0.01});
  auto calls = std::make_shared<int>(0);
  register_entry("test.steady_warmup/size:1", steady, [calls, steady](benchmark::State& st) {
    Measurement m(st, steady, Work{1e6, 0, 0});
    m.run(
        [calls] {
          const int i = (*calls)++;
          Sample s;
          s.seconds = 1e-3 * (1.0 + std::min(i, 30) / 30.0);
          return s;
        },
        {});
  });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const std::string name = "test.steady_warmup/size:1/iterations:5/manual_time";
  ASSERT_EQ(reporter.captured.count(name), 1u);
  const auto& c = reporter.captured[name].counters;
  // Settled once the medians of the last two windows of 4 agree within 1 %: first at i = 35, whose
  // window before (i = 28..31) has the median (1.967 + 2) / 2 = 1.983 ms, 0.8 % off; at i = 34 it is
  // (1.933 + 1.967) / 2 = 1.95 ms, 2.6 % off. Samples 0..35 are warm-up: 36.
  EXPECT_DOUBLE_EQ(c.at("warmup_samples").value, 36);
  EXPECT_GE(c.at("warmup_seconds").value, 0);
  EXPECT_DOUBLE_EQ(c.at("time_median_s").value, 2e-3);
  EXPECT_NE(reporter.captured[name].report_label.find("warmup_steady=yes"), std::string::npos) << reporter.captured[name].report_label;
  EXPECT_EQ(*calls, 36 + 5);
}

// Paired sampling: A and B alternate which goes first, the value is B's time over A's per sample,
// and the per-order medians expose an order effect. Synthetic: A takes 1.0 ms, B 1.2 ms, and the
// first call of a pair 0.1 ms more (a "second call is faster" effect).
TEST(Measurement, PairedSamplingAlternatesTheOrderAndReportsTheRatio) {
  const std::vector<Axis> pair_axes{text_axis("a", AxisRole::kGroup), text_axis("b", AxisRole::kGroup)};
  const ProbeDescriptor paired =
      ProbeDescriptor{"test.paired", Figure::kValue, "synthetic pairs", "x", 6, 1}.with_axes(pair_axes);
  auto firsts = std::make_shared<std::vector<bool>>();
  register_entry("test.paired/a:ours/b:ref", paired, [firsts, paired](benchmark::State& st) {
    Measurement m(st, paired, Work{1e6, 0, 0});
    m.run_paired(
        [firsts](bool a_first) {
          firsts->push_back(a_first);
          return std::pair<double, double>{1.0e-3 + (a_first ? 1e-4 : 0), 1.2e-3 + (a_first ? 0 : 1e-4)};
        },
        {});
  });
  const ProbeDescriptor not_value =
      ProbeDescriptor{"test.paired_bad", Figure::kBandwidth, "synthetic", "", 2, 0}.with_axes(pair_axes);
  register_entry("test.paired_bad/a:x/b:y", not_value, [not_value](benchmark::State& st) {
    Measurement m(st, not_value, Work{1e6, 0, 0});
    EXPECT_THROW(m.run_paired([](bool) { return std::pair<double, double>{1e-3, 1e-3}; }, {}), Error);
    for (auto _ : st) st.SetIterationTime(1e-3);
  });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  ASSERT_EQ(reporter.captured.count("test.paired/a:ours/b:ref/iterations:6/manual_time"), 1u);
  const auto& run = reporter.captured["test.paired/a:ours/b:ref/iterations:6/manual_time"];
  const auto& c = run.counters;
  ASSERT_EQ(firsts->size(), 7u);  // one warm-up pair, six timed
  for (std::size_t i = 0; i < firsts->size(); ++i) EXPECT_EQ((*firsts)[i], i % 2 == 0) << i;
  // Timed pairs 1..6: B first in 1, 3, 5 (ratio 1.3 / 1.0), A first in 2, 4, 6 (1.2 / 1.1).
  EXPECT_NEAR(c.at("value_median_a_first").value, 1.2 / 1.1, 1e-12);
  EXPECT_NEAR(c.at("value_median_b_first").value, 1.3 / 1.0, 1e-12);
  EXPECT_NEAR(c.at("value_median").value, (1.2 / 1.1 + 1.3) / 2, 1e-12);  // even count: mean of the middle two
  EXPECT_NEAR(c.at("time_median_s").value, 1.05e-3, 1e-12);                // A: 1.0 and 1.1 ms, three each
  EXPECT_NEAR(c.at("b_time_median_s").value, 1.25e-3, 1e-12);
  EXPECT_NEAR(c.at("ratio_of_medians").value, 1.25 / 1.05, 1e-12);
  EXPECT_NEAR(c.at("gbps").value, 1e6 / 1.05e-3 / 1e9, 1e-9);  // A's
  EXPECT_GT(c.at("b_time_cv").value, 0);
  EXPECT_NE(run.report_label.find("unit=x"), std::string::npos);
}

TEST(DeviceContext, FieldsNameTheGpuAndItsLimits) {
  DeviceInfo d;
  d.name = "Fake GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.driver_version = 13000;
  std::map<std::string, std::string> fields;
  for (const auto& [k, v] : context_fields(d)) fields[k] = v;
  for (const char* key : {"gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz",
                          "gpu_mem_clock_max_mhz", "gpu_bus_width_bits", "gpu_theoretical_dram_gbps", "gpu_l2_bytes",
                          "gpu_smem_per_sm_bytes", "gpu_ecc", "cuda_driver_version", "cuda_runtime_version"})
    EXPECT_EQ(fields.count(key), 1u) << key;
  EXPECT_EQ(fields["gpu_compute_capability"], "9.0");
  EXPECT_EQ(fields["cuda_driver_version"], "13.0");
}

}  // namespace
}  // namespace gpuprobe
