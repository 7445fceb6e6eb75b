#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>

#include <nvtx3/nvToolsExt.h>

#include "event_timer.hpp"
#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_sets.hpp"
#include "fill.hpp"
#include "gpuprobe/profiler.hpp"
#include "nvml.hpp"
#include "stats.hpp"

namespace gpuprobe {

Context& context() {
  static Context ctx;
  return ctx;
}

bool kernel_footprint_fits(double bytes) {
  const Context& ctx = context();
  if (bytes > 0.8 * static_cast<double>(ctx.device.total_mem_bytes)) return false;
  return !ctx.options.max_footprint_given || bytes <= static_cast<double>(ctx.options.max_footprint_bytes);
}

namespace {
// The entry running now (Google Benchmark 1.7 has no State::name()); names counter ranges.
std::string& current_entry() {
  static std::string name;
  return name;
}

// RAII NVTX push/pop range around an entry's timed samples.
class SampleRange {
 public:
  explicit SampleRange(const std::string& entry) { nvtxRangePushA(("gpuprobe:" + entry).c_str()); }
  ~SampleRange() { nvtxRangePop(); }
  SampleRange(const SampleRange&) = delete;
  SampleRange& operator=(const SampleRange&) = delete;
};
}  // namespace

Measurement::Measurement(benchmark::State& state, const ProbeDescriptor& descriptor, const Work& work)
    : state_(state), descriptor_(descriptor), work_(work), premise_(descriptor.premise) {
  label_ = "probe=" + descriptor.family + ";unit=" + descriptor.value_unit() + ";method=" + descriptor.method;
  // The name's axes, spelled once: the counters and tags of the same names come from it. An entry
  // outside register_entry (no current name) has none.
  const std::string& name = current_entry();
  if (name.empty()) return;
  for (const auto& [key, value] : check_entry_name(descriptor, name)) {
    if (descriptor.axis(key)->type == AxisType::kNumeric) {
      state_.counters[key] = std::strtod(value.c_str(), nullptr);
    } else {
      label_ += ";" + key + "=" + value;
      name_tags_.emplace_back(key, value);
    }
  }
}

void Measurement::param(const std::string& name, double value) {
  const Axis* axis = descriptor_.axis(name);
  const Field* field = axis ? nullptr : descriptor_.field(name);
  const bool numeric = axis ? axis->type == AxisType::kNumeric : field && field->type == AxisType::kNumeric;
  if (!numeric)
    throw Error("counter '" + name + "' is not a numeric axis or field of the record of " + descriptor_.family +
                " (microbench/harness/family.hpp: declare it there)");
  state_.counters[name] = value;
}

void Measurement::tag(const std::string& name, const std::string& value) {
  const Axis* axis = descriptor_.axis(name);
  const Field* field = axis ? nullptr : descriptor_.field(name);
  const bool text = axis ? axis->type == AxisType::kText : field && field->type == AxisType::kText;
  if (!text)
    throw Error("tag '" + name + "' is not a text axis or field of the record of " + descriptor_.family +
                " (microbench/harness/family.hpp: declare it there)");
  if (axis && axis->in_name) {
    for (const auto& [key, from_name] : name_tags_)
      if (key == name) {
        if (value != from_name)
          throw Error("tag " + name + "=" + value + " contradicts the entry name's " + name + ":" + from_name);
        return;  // already in the label, from the name
      }
  }
  if (axis) check_axis_value(descriptor_, name, value);  // an axis outside the name: not checked yet
  label_ += ";" + name + "=" + value;
}

void Measurement::harness_counter(const std::string& name, double value) { state_.counters[name] = value; }

void Measurement::harness_tag(const std::string& name, const std::string& value) {
  label_ += ";" + name + "=" + value;
}

double Measurement::value_of(const Sample& s) const {
  switch (descriptor_.figure) {
    case Figure::kBandwidth: return work_.bytes / s.seconds / 1e9;
    case Figure::kFlopRate: return work_.flops / s.seconds / 1e9;
    case Figure::kTimePerOp: return s.seconds / work_.ops * 1e9;
    case Figure::kCyclesPerOp: return s.cycles / work_.ops;
    case Figure::kValue: return s.value;
  }
  return s.value;
}

namespace {

// The counter replay of event-timed work: enqueue it once on the timer's stream and wait for it.
void replay_on(const EventTimer& timer, const std::function<void(cudaStream_t)>& enqueue) {
  enqueue(timer.stream());
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaStreamSynchronize(timer.stream()));
}

}  // namespace

bool Measurement::launch_gated() const { return descriptor_.launch_gate && context().options.launch_gate; }

void Measurement::record_gate(const EventTimer& timer) {
  harness_counter("launch_gated", timer.gated() ? 1 : 0);
  if (!timer.gated()) return;
  const unsigned timeouts = timer.gate_timeouts();
  harness_counter("launch_gate_timeouts", timeouts);
  if (timeouts > 0)
    std::fprintf(stderr, "gpuprobe: %s: %u launch gate(s) timed out: those samples include the host's time\n",
                 current_entry().c_str(), timeouts);
}

void Measurement::time_events(const std::function<void(cudaStream_t)>& enqueue,
                              const std::function<void(Sample&)>& annotate) {
  EventTimer timer(launch_gated());
  auto one_sample = [&]() {
    if (flush_l2_) flush_l2(timer.stream());
    if (prepare_) prepare_(timer.stream());
    Sample s;
    s.seconds = timer.seconds(enqueue);
    if (annotate) annotate(s);
    return s;
  };
  run(one_sample, [&] { replay_on(timer, enqueue); });
  record_gate(timer);
}

void Measurement::time_events_paired(const std::function<void(cudaStream_t)>& enqueue_a,
                                     const std::function<void(cudaStream_t)>& enqueue_b) {
  EventTimer timer(launch_gated());
  auto one = [&](const std::function<void(cudaStream_t)>& enqueue) {
    if (flush_l2_) flush_l2(timer.stream());
    if (prepare_) prepare_(timer.stream());
    return timer.seconds(enqueue);
  };
  auto pair = [&](bool a_first) {
    std::pair<double, double> t;
    if (a_first) {
      t.first = one(enqueue_a);
      t.second = one(enqueue_b);
    } else {
      t.second = one(enqueue_b);
      t.first = one(enqueue_a);
    }
    return t;
  };
  run_paired(pair, [&] { replay_on(timer, enqueue_a); });
  record_gate(timer);
}

void Measurement::run_paired(const std::function<std::pair<double, double>(bool a_first)>& pair,
                             const std::function<void()>& replay) {
  if (descriptor_.figure != Figure::kValue)
    throw Error("paired sampling needs a descriptor whose figure is the per-sample value (B's time over A's)");
  // Every call of `sample`, warm-up included: the timed ones are the last state_.iterations().
  std::vector<double> a_seconds, b_seconds;
  std::vector<bool> a_first_of;
  auto sample = [&]() {
    const bool a_first = a_seconds.size() % 2 == 0;
    const auto [a, b] = pair(a_first);
    if (!(a > 0) || !(b > 0)) throw Error("a paired sample measured a non-positive duration");
    a_seconds.push_back(a);
    b_seconds.push_back(b);
    a_first_of.push_back(a_first);
    Sample s;
    s.seconds = a;
    s.value = b / a;
    return s;
  };
  run(sample, replay);
  if (context().counter_pass > 0) return;  // warm-up only: no timed samples

  const std::size_t timed = static_cast<std::size_t>(state_.iterations());
  const std::size_t first = a_seconds.size() - timed;
  std::vector<double> a(a_seconds.begin() + first, a_seconds.end()), b(b_seconds.begin() + first, b_seconds.end());
  std::vector<double> ratio_a_first, ratio_b_first;
  for (std::size_t i = first; i < a_seconds.size(); ++i)
    (a_first_of[i] ? ratio_a_first : ratio_b_first).push_back(b_seconds[i] / a_seconds[i]);
  const Summary sb = summarize(b);
  harness_counter("b_time_median_s", sb.median);
  harness_counter("b_time_cv", sb.cv);
  harness_counter("ratio_of_medians", sb.median / summarize(a).median);
  if (!ratio_a_first.empty()) harness_counter("value_median_a_first", summarize(ratio_a_first).median);
  if (!ratio_b_first.empty()) harness_counter("value_median_b_first", summarize(ratio_b_first).median);
}

void Measurement::time_host(const std::function<void()>& work) {
  run(
      [&] {
        const HostTime t0 = host_now();
        work();
        Sample s;
        s.seconds = host_seconds_since(t0);
        return s;
      },
      work);
}

void Measurement::warm_up_until_steady(const std::function<Sample()>& sample, const SettleRule& rule) {
  // The first sample carries one-time costs (module loading, a library's first call): run, not counted.
  sample();
  std::vector<double> seconds;
  const HostTime start = host_now();
  double elapsed = 0;
  do {
    seconds.push_back(sample().seconds);
    elapsed = host_seconds_since(start);
  } while (static_cast<int>(seconds.size()) + 1 < descriptor_.warmup || !rule.done(seconds, elapsed));
  harness_counter("warmup_samples", static_cast<double>(seconds.size() + 1));
  harness_counter("warmup_seconds", elapsed);
  harness_tag("warmup_steady", rule.stable(seconds) ? "yes" : "capped");
}

void Measurement::run(const std::function<Sample()>& sample, const std::function<void()>& replay) {
  Context& ctx = context();
  if (ctx.counter_pass > 0) {
    replay_in_counter_pass(sample, replay);
    return;
  }
  if (descriptor_.warmup_until_steady) {
    warm_up_until_steady(sample, *descriptor_.warmup_until_steady);
  } else {
    int warmup_samples = 0;
    double warmup_seconds = 0;
    while (warmup_samples < descriptor_.warmup ||
           (warmup_seconds < descriptor_.min_warmup_seconds && warmup_samples < kMaxWarmupSamples)) {
      const double seconds = sample().seconds;
      if (warmup_samples++ > 0) warmup_seconds += seconds;  // not the first: see min_warmup_seconds
    }
    if (descriptor_.min_warmup_seconds > 0) harness_counter("warmup_samples", warmup_samples);
  }

  std::vector<Sample> samples;
  std::vector<double> clocks;
  samples.reserve(static_cast<std::size_t>(state_.max_iterations));
  // The timed samples inside one NVTX push/pop range named "gpuprobe:ENTRY" (with the harness's own kernels
  // each sample launches outside its timed region, the L2 flush and the launch gate, which
  // scripts/dev/app_crosscheck.py leaves out): profiled as an application (scripts/profile_app.sh), each
  // launch then carries the entry it belongs to. Without a tool attached the push and pop are no-ops.
  const SampleRange range(current_entry());
  for (auto _ : state_) {
    const Sample s = sample();
    if (!(s.seconds > 0)) throw Error("a sample measured a non-positive duration");
    state_.SetIterationTime(s.seconds);
    samples.push_back(s);
    // Read right after the sample, outside the timed region: the clock the sample ran at.
    if (context().nvml)
      if (auto mhz = context().nvml->sm_clock_mhz()) clocks.push_back(*mhz);
  }
  finish(samples, clocks);

  if (ctx.counters && replay && descriptor_.counter_replay && wants_counters()) {
    if (ctx.counters->application_replay()) {
      ++ctx.timed_replays;  // its range comes in the counter passes
      if (premise_.declared()) ctx.premises[current_entry()] = {premise_, premise_counted(premise_, work_)};
    } else {
      const profilers::MetricValues values = ctx.counters->collect(current_entry(), replay);
      for (const auto& [metric, v] : values) state_.counters[metric] = v;
      if (premise_.declared()) {
        record_premise_check(check_premise(premise_, premise_counted(premise_, work_), values), state_.counters,
                             label_);
        state_.SetLabel(label_);
      }
    }
  }
}

double premise_counted(const Premise& premise, const Work& work) {
  return premise.level == PremiseLevel::kCompute ? work.ops : work.bytes;
}

void record_premise_check(const PremiseCheck& check, benchmark::UserCounters& counters, std::string& label) {
  if (check.status != PremiseStatus::kUnverified) {
    counters["premise_ok"] = check.status == PremiseStatus::kOk ? 1 : 0;
    counters["premise_ratio"] = check.ratio;
    counters["premise_measured"] = check.measured;
    for (const auto& [name, value] : check.details) counters["premise_" + name] = value;
  }
  label += ";premise=" + premise_status_text(check);
}

bool Measurement::wants_counters() const {
  const Options& o = context().options;
  if (premise_.declared() || !o.papi_events.empty() || o.counters.empty()) return true;
  // --counters was checked at start-up; "premise" alone has nothing for an entry without a premise.
  const profilers::CounterSpec spec = profilers::parse_counter_spec(o.counters);
  return !(spec.user_metrics.empty() && spec.sets == std::vector<std::string>{"premise"});
}

void Measurement::replay_in_counter_pass(const std::function<Sample()>& sample, const std::function<void()>& replay) {
  Context& ctx = context();
  if (!wants_counters()) {  // no range in the timed run either, and no warm-up needed for none
    for (auto _ : state_) state_.SetIterationTime(1e-9);
    return;
  }
  // The warm-up leaves the GPU (L2 contents, clocks) about as the timed run's samples left it
  // before its replay; the iterations only satisfy Google Benchmark (this pass's report is dropped).
  for (int i = 0; i < std::max(1, descriptor_.warmup); ++i) sample();
  for (auto _ : state_) state_.SetIterationTime(1e-9);
  if (!ctx.counters || !replay || !descriptor_.counter_replay) return;  // no range: none in the timed run either
  ctx.pass_ranges.push_back(current_entry());
  ctx.pass_values.push_back(ctx.counters->collect(current_entry(), replay));
}

void Measurement::finish(const std::vector<Sample>& samples, const std::vector<double>& clocks) {
  std::vector<double> values, seconds, cycles, kernel_clocks;
  for (const Sample& s : samples) {
    values.push_back(value_of(s));
    seconds.push_back(s.seconds);
    if (!std::isnan(s.cycles)) cycles.push_back(s.cycles);
    if (!std::isnan(s.clock_mhz)) kernel_clocks.push_back(s.clock_mhz);
  }
  const Summary v = summarize(values);
  const Summary t = summarize(seconds);
  auto& c = state_.counters;
  c["samples"] = static_cast<double>(v.count);
  c["value_median"] = v.median;
  c["value_min"] = v.min;
  c["value_max"] = v.max;
  c["value_mean"] = v.mean;
  c["value_cv"] = v.cv;
  c["time_median_s"] = t.median;
  c["time_cv"] = t.cv;
  if (work_.bytes > 0) {
    c["bytes_per_sample"] = work_.bytes;
    c["gbps"] = work_.bytes / t.median / 1e9;
  }
  if (work_.flops > 0) {
    c["flops_per_sample"] = work_.flops;
    c["gflops"] = work_.flops / t.median / 1e9;
  }
  if (work_.ops > 0) {
    c["ops_per_sample"] = work_.ops;
    c["ns_per_op"] = t.median / work_.ops * 1e9;
    if (!cycles.empty()) c["cycles_per_op"] = summarize(cycles).median / work_.ops;
  }
  if (!clocks.empty()) {
    const Summary k = summarize(clocks);
    c["sm_clock_mhz"] = k.median;
    c["sm_clock_mhz_min"] = k.min;
    c["sm_clock_mhz_max"] = k.max;
  }
  if (!kernel_clocks.empty()) c["sm_clock_kernel_mhz"] = summarize(kernel_clocks).median;
  if (premise_.declared()) label_ += ";premise_level=" + std::string(premise_level_name(premise_.level)) +
                                     ";premise_rule=" + premise_rule(premise_);
  state_.SetLabel(label_);
}

void register_entry(const std::string& name, const ProbeDescriptor& descriptor,
                    std::function<void(benchmark::State&)> body, int samples_wanted) {
  check_entry_name(descriptor, name);  // a name off its record is the probe's bug, excluded or not
  const std::string& exclude = context().options.exclude;
  if (!exclude.empty()) {
    static const std::regex excluded(exclude);  // validated by parse_options; the flag is set once
    if (std::regex_search(name, excluded)) return;
  }
  const int samples = context().options.samples > 0 ? context().options.samples
                      : samples_wanted > 0             ? samples_wanted
                                                       : descriptor.default_samples;
  // Google Benchmark names the instance RegisterBenchmark's name, then "/iterations:N" for
  // Iterations(N) and "/manual_time" for UseManualTime() (below); its filter searches that string.
  context().entry_instances.push_back(name + "/iterations:" + std::to_string(samples) + "/manual_time");
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, body](benchmark::State& state) {
                                 try {
                                   if (context().before_entry) context().before_entry(name);
                                   current_entry() = name;
                                   // What the entry costs the tool (setup, warm-up, samples, counters):
                                   // sums per family say how long a sweep takes.
                                   const auto started = std::chrono::steady_clock::now();
                                   body(state);
                                   state.counters["entry_wall_seconds"] = std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - started).count();
                                   current_entry().clear();  // no later Measurement takes this name's axes
                                 } catch (const std::exception& e) {
                                   fail(name, e);
                                 }
                               })
      ->Iterations(samples)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

void flush_l2(cudaStream_t stream) {
  // Reads (never writes) a buffer of 2x the L2 before each sample. The reads evict whatever the L2
  // held -- the previous sample's dirty lines are written back here, before the start event -- and
  // leave only clean lines, so the timed work's own misses never pay for write-backs. A memset
  // flush leaves dirty lines whose write-back lands inside the timed call: on the H100
  // (lab/experiments/l2_flush.cu) a 64 MiB read timed right after a 2x-L2 memset takes 33.5 us, after
  // this read flush 25.4 us; both flushes evict an L2-resident chain (283 -> 688 cycles). Flushed
  // v2 SGEMV n = 4096 went from 36.2 to 28.8 us per call with this flush (docs/perf/gemv.md).
  static float* scratch = nullptr;  // allocated and filled once, never freed: one per process
  static std::size_t bytes = 0;
  if (!scratch) {
    // The L2 size comes from the device itself, not from the harness context: a caller outside
    // the benchmark binary (the GPU tests) has no context, and a 2 MiB default evicts nothing.
    int device = 0, l2_bytes = 0;
    GP_CUDA_CHECK(cudaGetDevice(&device));
    GP_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    bytes = 2 * std::max<std::size_t>(static_cast<std::size_t>(l2_bytes), std::size_t(1) << 20);
    GP_CUDA_CHECK(cudaMalloc(&scratch, bytes));
    fill_uniform(scratch, bytes / sizeof(float), 11, 1.f, 2.f);
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  read_through(scratch, bytes, stream);
}

void fail(const std::string& where, const std::exception& error) {
  std::fflush(stdout);
  // "usage error: " tells a wrong flag apart from "no usable GPU: " (the same exit code, 2), for
  // the reader and for scripts such as main_job.sh.
  const bool usage_error = dynamic_cast<const UsageError*>(&error) != nullptr;
  const char* kind = usage_error ? "usage error: " : "";
  if (where.empty())
    std::fprintf(stderr, "gpuprobe: %s%s\n", kind, error.what());
  else
    std::fprintf(stderr, "gpuprobe: %s: %s%s\n", where.c_str(), kind, error.what());
  std::fflush(stderr);
  const bool usage = usage_error || dynamic_cast<const NoDeviceError*>(&error);
  // _Exit: Google Benchmark is mid-run; no destructor must touch the (possibly broken) CUDA context.
  std::_Exit(usage ? 2 : 1);
}

}  // namespace gpuprobe
