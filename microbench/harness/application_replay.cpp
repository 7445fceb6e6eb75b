#include "application_replay.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <utility>

#include "gpuprobe/check.hpp"
#include "measure.hpp"

namespace gpuprobe {

void attach_counter_values(std::vector<benchmark::BenchmarkReporter::Run>& runs,
                           const std::map<std::string, profilers::MetricValues>& values) {
  for (auto& run : runs) {
    if (run.run_type != benchmark::BenchmarkReporter::Run::RT_Iteration) continue;
    const std::string& entry = run.run_name.function_name;
    auto it = values.find(entry);
    if (it == values.end()) continue;
    for (const auto& [metric, v] : it->second) run.counters[metric] = benchmark::Counter(v);
    const auto declared = context().premises.find(entry);
    if (declared != context().premises.end())
      record_premise_check(check_premise(declared->second.premise, declared->second.counted, it->second),
                           run.counters, run.report_label);
  }
}

namespace {

// The passes of one application replay: ends each counter pass once (whichever reporter finishes
// first), and after the last one holds the values per entry.
class Passes {
 public:
  explicit Passes(profilers::CounterBackend& backend) : backend_(backend) {}

  // Begins counter pass `pass` (1-based) for `ranges` ranges.
  void begin(int pass, std::size_t ranges) {
    Context& ctx = context();
    ctx.counter_pass = pass;
    ctx.pass_ranges.clear();
    ctx.pass_values.clear();
    pass_ended_ = false;
    started_ = std::chrono::steady_clock::now();
    backend_.begin_application_pass(ranges);
  }

  // Ends the current counter pass (once); true when all passes are in and values() is complete.
  bool end() {
    if (pass_ended_) return done_;
    pass_ended_ = true;
    Context& ctx = context();
    if (ctx.counter_pass == 1) {
      first_ranges_ = ctx.pass_ranges;
    } else if (ctx.pass_ranges != first_ranges_) {
      throw Error("counters: application pass " + std::to_string(ctx.counter_pass) +
                  " ran other entries than pass 1; every pass must run the same selection");
    }
    done_ = backend_.end_application_pass();
    seconds_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
    std::fprintf(stderr, "gpuprobe: counters: application pass %d: %zu ranges in %.2f s%s\n", ctx.counter_pass,
                 ctx.pass_ranges.size(), seconds_.back(), done_ ? " (all passes in)" : "");
    if (!done_) return false;
    std::string list;
    for (double s : seconds_) list += (list.empty() ? "" : ",") + std::to_string(s);
    benchmark::AddCustomContext("counters_application_pass_seconds", list);  // written with the report
    const std::vector<profilers::MetricValues> results = backend_.application_results();
    // Later ranges of an entry (repetitions) overwrite earlier ones, as user replay does per run.
    for (std::size_t i = 0; i < ctx.pass_ranges.size(); ++i) {
      profilers::MetricValues& entry = values_[ctx.pass_ranges[i]];
      entry = ctx.pass_values[i];  // measured at once (e.g. PAPI), from the last pass
      if (i < results.size())
        for (const auto& [metric, v] : results[i]) entry[metric] = v;
    }
    return true;
  }

  bool done() const { return done_; }
  const std::map<std::string, profilers::MetricValues>& values() const { return values_; }
  const std::vector<double>& seconds() const { return seconds_; }

 private:
  profilers::CounterBackend& backend_;
  bool pass_ended_ = true;
  bool done_ = false;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::string> first_ranges_;
  std::map<std::string, profilers::MetricValues> values_;
  std::vector<double> seconds_;
};

// Holds the timed run's reports back and writes them, counters attached, through `inner` (which
// may be null: a reporter that only ends passes) when the last counter pass ends. That happens in
// Finalize() of the last pass's RunSpecifiedBenchmarks call, while Google Benchmark still has the
// output file of that call open (every call reopens, and truncates, --benchmark_out).
class DeferredReporter final : public benchmark::BenchmarkReporter {
 public:
  DeferredReporter(benchmark::BenchmarkReporter* inner, Passes& passes) : inner_(inner), passes_(passes) {}

  void record(bool on) { recording_ = on; }

  bool ReportContext(const Context& c) override {
    if (inner_) {
      // The streams Google Benchmark set for this call (the --benchmark_out file, or stdout).
      inner_->SetOutputStream(&GetOutputStream());
      inner_->SetErrorStream(&GetErrorStream());
    }
    pending_context_ = std::make_unique<Context>(c);
    return true;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    if (recording_) runs_.insert(runs_.end(), runs.begin(), runs.end());
  }

  void Finalize() override {
    const bool timed_run = context().counter_pass == 0;
    // Nothing to replay (no entry has a replay, or only a listing ran): written as it stands.
    const bool write = timed_run ? context().timed_replays == 0 : passes_.end();
    if (!write || !inner_) return;
    attach_counter_values(runs_, passes_.values());
    inner_->ReportContext(*pending_context_);
    if (!runs_.empty()) inner_->ReportRuns(runs_);
    inner_->Finalize();
  }

 private:
  benchmark::BenchmarkReporter* inner_;
  Passes& passes_;
  bool recording_ = true;
  std::unique_ptr<Context> pending_context_;
  std::vector<Run> runs_;
};

std::unique_ptr<benchmark::BenchmarkReporter> file_reporter_for(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "console") return std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
  // csv: Google Benchmark deprecates its CSV reporter; ask for what replay=application can write.
  throw UsageError("--counters=...,replay=application writes --benchmark_out_format=json or console, not '" + format +
                   "'");
}

}  // namespace

bool ContextLineFilter::ReportContext(const Context& context) {
  inner_->SetOutputStream(&GetOutputStream());
  std::ostringstream lines;
  inner_->SetErrorStream(&lines);
  const bool go_on = inner_->ReportContext(context);
  inner_->SetErrorStream(&GetErrorStream());
  std::istringstream in(lines.str());
  std::string line;
  while (std::getline(in, line)) {
    bool hide = false;
    for (const std::string& key : hidden_) hide = hide || line.rfind(key + ": ", 0) == 0;
    if (!hide) GetErrorStream() << line << '\n';
  }
  GetErrorStream().flush();
  return go_on;
}

void ContextLineFilter::ReportRuns(const std::vector<Run>& runs) { inner_->ReportRuns(runs); }

void ContextLineFilter::Finalize() { inner_->Finalize(); }

int run_selection(benchmark::BenchmarkReporter* display) {
  Context& ctx = context();
  std::unique_ptr<benchmark::BenchmarkReporter> default_display;
  if (!display) {
    default_display.reset(benchmark::CreateDefaultDisplayReporter());
    display = default_display.get();
  }
  ContextLineFilter shown(display, {kFamiliesContextKey});
  display = &shown;
  if (!ctx.counters || !ctx.counters->application_replay()) {
    benchmark::RunSpecifiedBenchmarks(display);
    return 0;
  }
  ctx.timed_replays = 0;
  Passes passes(*ctx.counters);
  const bool to_file = !ctx.options.benchmark_out.empty();
  std::unique_ptr<benchmark::BenchmarkReporter> file_inner;
  if (to_file) file_inner = file_reporter_for(ctx.options.benchmark_out_format);
  // With a result file the console shows the timed run as it goes (progress) and the file gets the
  // counters; without one, the console report waits for the counters.
  DeferredReporter file(file_inner.get(), passes);
  DeferredReporter console(to_file ? nullptr : display, passes);

  const auto t0 = std::chrono::steady_clock::now();
  if (to_file)
    benchmark::RunSpecifiedBenchmarks(display, &file);
  else
    benchmark::RunSpecifiedBenchmarks(&console);
  if (ctx.timed_replays == 0) return 0;
  std::fprintf(stderr, "gpuprobe: counters: application replay: timed run %.2f s; now the counter passes\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  file.record(false);
  console.record(false);

  int pass = 0;
  while (!passes.done()) {
    passes.begin(++pass, ctx.timed_replays);
    if (to_file)
      benchmark::RunSpecifiedBenchmarks(&console, &file);  // `console` has no inner: it prints nothing
    else
      benchmark::RunSpecifiedBenchmarks(&console);
    passes.end();  // in case no reporter's Finalize ran (it always does; cheap when it did)
  }
  ctx.counter_pass = 0;
  return pass;
}

}  // namespace gpuprobe
