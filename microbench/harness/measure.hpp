// The one measurement loop of gpuprobe. A probe describes what it measures (ProbeDescriptor),
// what one sample does (Work), and how to run one sample; this file does the rest for every
// probe alike: warm-up, the samples, statistics, derived figures (GB/s, GFLOP/s, ns/op,
// cycles/op), the SM clock seen during the samples, and the untimed counter replay.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "device.hpp"
#include "family.hpp"
#include "gpuprobe/profiler.hpp"
#include "options.hpp"
#include "premise.hpp"

namespace gpuprobe {

class Nvml;
class EventTimer;

constexpr int kMaxWarmupSamples = 1000;

// What one sample does; per-sample constants from which figures derive.
struct Work {
  double bytes = 0;  // bytes moved (reads + writes, counted as the probe documents)
  double flops = 0;  // floating-point operations
  double ops = 0;    // items (loads, launches, barriers...) for per-op figures
};

// What one sample measured.
struct Sample {
  double seconds = 0;                                        // measured duration of the region
  double cycles = std::numeric_limits<double>::quiet_NaN();  // SM cycles (clock64) of the region, if any
  double value = std::numeric_limits<double>::quiet_NaN();   // the figure itself, for Figure::kValue
  double clock_mhz = std::numeric_limits<double>::quiet_NaN();  // SM clock measured in the kernel, if any
};

// Process-wide state the harness and probes share: the device, the flags, the clock reader and
// the counter backend. Set up once by main() before registration.
// An entry's declared premise and what it counted, kept from the timed run until the counter passes
// of application replay bring its values (application_replay.cpp).
struct DeclaredPremise {
  Premise premise;
  double counted = 0;
};

struct Context {
  DeviceInfo device;
  Options options;
  Nvml* nvml = nullptr;
  profilers::CounterBackend* counters = nullptr;
  // Application replay (application_replay.hpp). counter_pass: 0 in the timed run (always, without
  // application replay), k >= 1 during counter pass k, when entries replay their work in a range
  // instead of timing it. timed_replays: Measurement::run calls with a replay in the timed run (the
  // ranges one pass will have). pass_ranges / pass_values: per range of the current pass, in order,
  // the entry it belongs to and what collect() returned at once (e.g. PAPI events).
  int counter_pass = 0;
  std::size_t timed_replays = 0;
  std::vector<std::string> pass_ranges;
  std::vector<profilers::MetricValues> pass_values;
  std::map<std::string, DeclaredPremise> premises;  // by entry name, entries that declare one
  // Every registered entry under the name Google Benchmark gives its instance (register_entry), the
  // names --benchmark_filter is matched against.
  std::vector<std::string> entry_instances;
  // Called with the entry's name before its body runs, when set (fleet mode's turns, fleet.hpp).
  std::function<void(const std::string&)> before_entry;
  // What registration left out and why (no peer GPU, no NCCL, a tensor form this GPU lacks), one line
  // each, "FAMILY: why" (FAMILY may be a glob: "kernels.*_mgpu*"): printed by check_selection once the
  // selection is known to run; when it selects nothing, those on families the filter names explain why.
  std::vector<std::string> skip_notes;
};
Context& context();

// Whether a kernel benchmark whose buffers take `bytes` is registered: within 80 % of device
// memory (room for workspaces, cuBLAS and the L2 flush buffer) and within --max-footprint if given.
bool kernel_footprint_fits(double bytes);

// The per-entry measurement. Typical use in a probe body:
//   Measurement m(state, kDescriptor, work);   // the name's axes become counters and tags
//   m.param("elements", n);  m.tag("flavour", "cg");   // declared fields (family.hpp)
//   m.time_events([&](cudaStream_t s) { kernel<<<g, b, 0, s>>>(...); });
class Measurement {
 public:
  // The entry's in-name axes (its name, as register_entry gave it) are written at once: a numeric
  // axis as the counter of its name, a text axis as the label tag of its name.
  Measurement(benchmark::State& state, const ProbeDescriptor& descriptor, const Work& work);

  // A numeric axis or field of the record, written as a counter so that analysis reads it directly.
  // For an in-name axis this replaces the value from the name (the exact figure where the name holds
  // a nominal one, e.g. a working set rounded to whole vectors). Throws Error for a name the record
  // does not declare as numeric.
  void param(const std::string& name, double value);
  // A text axis or field of the record, written into the label as name=value. An in-name axis must
  // have the name's value. Throws Error for a name the record does not declare as text.
  void tag(const std::string& name, const std::string& value);
  // What the harness itself adds to any entry (settle.hpp's fields; docs/results-schema.md, "Fields
  // every entry may carry"): not declared per family, never a probe's own parameter.
  void harness_counter(const std::string& name, double value);
  void harness_tag(const std::string& name, const std::string& value);
  // Reads 2x the L2 of unrelated data before every sample, so each sample starts with a cold L2
  // holding only clean lines (see flush_l2).
  void flush_l2_before_each_sample(bool on) { flush_l2_ = on; }
  // Work enqueued on the timer's stream before every event-timed sample (warm-up included), after
  // the flush if any and outside the timed interval: e.g. flushing the L2 of the other GPUs of a
  // multi-GPU entry (forked from and joined back into that stream).
  void before_each_sample(std::function<void(cudaStream_t)> prepare) { prepare_ = std::move(prepare); }

  // Times `enqueue` with CUDA events on a private stream; the same callable is the counter replay.
  // Behind a launch gate unless the descriptor or --launch-gate=off says otherwise (launch_gate.hpp);
  // the first call (warm-up) always runs ungated (EventTimer).
  // `annotate`, if given, runs after each sample has completed and may add what the kernel itself
  // measured (Sample::cycles, ::value, ::clock_mhz).
  void time_events(const std::function<void(cudaStream_t)>& enqueue,
                   const std::function<void(Sample&)>& annotate = {});
  // Times synchronous host work (it must have completed, GPU work included, when it returns) with
  // the host's steady clock: for figures that are host-side by definition (pageable copies, submit
  // cost). `work` is also the counter replay.
  void time_host(const std::function<void()>& work);
  // General form: `sample()` runs and measures one sample itself (in-kernel clocks, host timers);
  // `replay()` re-runs the GPU work, synchronized, for the counter backend (may be empty).
  void run(const std::function<Sample()>& sample, const std::function<void()>& replay);

  // Paired sampling, for comparing two implementations whose calls are too short (~10 us) for two
  // separate entries to settle their ratio: between processes such entries moved by 10-20 % while
  // each entry's own samples agreed to ~2 % (docs/perf/gemv.md, "Sampling of short entries"). Each
  // sample times one call of A and one of B back to back on the same stream with the same events
  // (the L2 flushed before each call if set), A first in even samples and B first in odd ones, so
  // that drift between the two and any "second call is faster" effect fall on both alike.
  // The descriptor's figure must be Figure::kValue: the value of a sample is B's time over A's
  // (A's speedup over B, > 1: A faster); Sample::seconds is A's time, so gbps / gflops are A's.
  // Extra fields: b_time_median_s, b_time_cv, ratio_of_medians (B's median time over A's), and
  // value_median_a_first / value_median_b_first (the per-order medians: if they differ by more than
  // the spread, the order of the two calls matters and the ratio must be read with that in mind).
  void time_events_paired(const std::function<void(cudaStream_t)>& enqueue_a,
                          const std::function<void(cudaStream_t)>& enqueue_b);
  // The same for any timer: `pair(a_first)` runs one call of each, A first when a_first, and returns
  // {A's seconds, B's seconds}. `replay` re-runs A for the counter backend.
  void run_paired(const std::function<std::pair<double, double>(bool a_first)>& pair,
                  const std::function<void()>& replay);

  // Extra output fields computed by the probe (e.g. the smallest ILP reaching peak): a numeric field
  // of the record, as param.
  void extra(const std::string& name, double value) { param(name, value); }
  // This entry's premise, in place of the descriptor's (e.g. DRAM only for DRAM-sized working sets).
  void premise(const Premise& p) { premise_ = p; }

 private:
  // Whether this entry's event timers gate (descriptor and --launch-gate).
  bool launch_gated() const;
  // The entry's launch_gated (0/1) and, when gated, launch_gate_timeouts (warned about on stderr).
  void record_gate(const EventTimer& timer);
  void finish(const std::vector<Sample>& samples, const std::vector<double>& clocks);
  // The warm-up of a descriptor with warmup_until_steady: samples until the rule says settled.
  void warm_up_until_steady(const std::function<Sample()>& sample, const SettleRule& rule);
  // Application replay's counter pass: warm-up, then the replay inside the entry's range; no samples.
  void replay_in_counter_pass(const std::function<Sample()>& sample, const std::function<void()>& replay);
  // Whether the counters have anything to collect for this entry: with --counters=premise alone (no
  // other set, no PAPI) only the entries that declare a premise are replayed.
  bool wants_counters() const;
  double value_of(const Sample& s) const;

  benchmark::State& state_;
  const ProbeDescriptor& descriptor_;
  Work work_;
  std::string label_;
  bool flush_l2_ = false;
  std::function<void(cudaStream_t)> prepare_;
  Premise premise_;
  // The entry's in-name text axes and their values (tag checks against them).
  std::vector<std::pair<std::string, std::string>> name_tags_;
};

// Writes a premise check into an entry's output: counters premise_ok (1 or 0, absent when
// unverified), premise_ratio, premise_measured and premise_<detail>, and the label tag
// premise=ok|failed: why|unverified: why.
void record_premise_check(const PremiseCheck& check, benchmark::UserCounters& counters, std::string& label);
// What a premise counts in `work`: operations for kCompute, bytes otherwise.
double premise_counted(const Premise& premise, const Work& work);

// Host wall-clock time (std::chrono::steady_clock), for probes whose figure is host-side.
using HostTime = std::chrono::steady_clock::time_point;
inline HostTime host_now() { return std::chrono::steady_clock::now(); }
inline double host_seconds_since(HostTime t0) { return std::chrono::duration<double>(host_now() - t0).count(); }

// Registers a probe entry with `samples` samples (0: the descriptor's default), --samples overriding
// either. The name must be one entry_name builds from the descriptor's record (check_entry_name:
// Error otherwise). The body runs inside an error guard: an exception prints one line naming the entry
// and ends the process (exit 1, or 2 for a usage error), leaving any --benchmark_out file as FILE.partial.
void register_entry(const std::string& name, const ProbeDescriptor& descriptor,
                    std::function<void(benchmark::State&)> body, int samples = 0);

// Fills the L2 with unrelated, clean data (a read of 2x its size) on `stream`: nothing the timed
// work touches stays cached, and nothing dirty is left for it to write back.
void flush_l2(cudaStream_t stream);

// Ends the process after printing "gpuprobe: <where>: <what>"; exit code from the error type.
[[noreturn]] void fail(const std::string& where, const std::exception& error);

}  // namespace gpuprobe
