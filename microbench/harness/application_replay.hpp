// Runs Google Benchmark's selection of entries, and under --counters=...,replay=application runs it
// again once per counter pass (ncu's "application replay", within one process).
//
// Why: in user replay every entry starts and stops CUPTI once per pass after its samples; on the
// H100 machine that costs about 11 ms + 3.5 ms per pass, which dominates a sweep of short entries.
// In application replay one CUPTI pass spans the whole selection, so that cost is paid once per pass.
//
// The order of events:
//   1. the timed run: every entry runs its warm-up and samples as usual, no counters; the reports
//      are held back (DeferredReporter);
//   2. per counter pass: every entry runs again with no samples, only its warm-up (to leave the GPU
//      as its samples did) and its replay inside its own range (Measurement::run);
//   3. when CUPTI says all passes are in, the values of each range are attached to the held reports
//      of its entry, which are written then (console, and the --benchmark_out file).
// Without application replay this is one plain RunSpecifiedBenchmarks().
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "gpuprobe/profiler.hpp"

namespace gpuprobe {

// Attaches `values` (entry name -> metrics) to the iteration runs of those entries as user
// counters. Aggregate runs (mean/median of repetitions) get none: they summarize timing.
void attach_counter_values(std::vector<benchmark::BenchmarkReporter::Run>& runs,
                           const std::map<std::string, profilers::MetricValues>& values);

// A display reporter that leaves out of its context lines (on its error stream) those that start
// with one of `hidden` + ": ": the console reporter prints every custom context key, and the family
// records (tens of kB of JSON, kFamiliesContextKey) belong in the result file, not on the terminal.
// Everything else is `inner`'s, unchanged (a JSON display still writes the whole context).
class ContextLineFilter final : public benchmark::BenchmarkReporter {
 public:
  ContextLineFilter(benchmark::BenchmarkReporter* inner, std::vector<std::string> hidden)
      : inner_(inner), hidden_(std::move(hidden)) {}
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  benchmark::BenchmarkReporter* inner_;
  std::vector<std::string> hidden_;
};

// Runs the selected entries (see above). Returns the number of counter passes that ran (0 without
// application replay). `display`: the console reporter (null: Google Benchmark's default); either way
// shown through ContextLineFilter without the family records.
int run_selection(benchmark::BenchmarkReporter* display = nullptr);

}  // namespace gpuprobe
