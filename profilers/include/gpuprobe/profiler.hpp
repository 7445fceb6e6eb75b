// Counter backends behind one interface. A backend knows nothing of probes or kernels: it is handed
// a named range and a callable that performs the GPU work (enqueue + synchronize), replays it as
// often as its passes need, and returns metric values for that range.
//
// Backends, chosen at run time by make_counter_backend():
//   cupti  CUPTI range profiler (cupti_range_profiler.h + cupti_profiler_host.h: CUDA 13, or CUDA 12 from
//          CUPTI 12.6.80 on; an older toolkit builds without it), --counters=SET
//   papi   any named PAPI event around the same range, --papi-events=LIST (built when pkg-config finds papi)
//   none   timing only; also what a refused request (no GPU, no permission, profiler attached...) falls back to
// docs/counters.md describes the sets, the replay modes and the names written into result files.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::profilers {

// Metric name (Nsight Compute spelling, e.g. "dram__bytes_read.sum") -> value for one range.
using MetricValues = std::map<std::string, double>;

class CounterBackend {
 public:
  virtual ~CounterBackend() = default;
  virtual std::string name() const = 0;
  // Runs `work` under the counters (possibly several times) and returns the values for `range`.
  // `work` must be idempotent: it is replayed, never timed.
  virtual MetricValues collect(const std::string& range, const std::function<void()>& work) = 0;
  // Fields for the result file's context (backend, metrics, passes, replay mode, unavailable events).
  virtual std::vector<std::pair<std::string, std::string>> context() const { return {}; }

  // Application replay (--counters=...,replay=application). The caller runs its whole selection of
  // work once per pass, between begin_application_pass() and end_application_pass(), calling
  // collect() for each range in the same order every pass; collect() then only marks the range
  // (and returns what other backends measure at once, e.g. PAPI). After the pass for which
  // end_application_pass() returns true, application_results() has one MetricValues per range, in
  // the order collect() was called. `max_ranges` bounds the ranges of one pass.
  virtual bool application_replay() const { return false; }
  virtual void begin_application_pass(std::size_t /*max_ranges*/) {}
  virtual bool end_application_pass() { return true; }
  virtual std::vector<MetricValues> application_results() { return {}; }
};

// The timing-only backend: collects nothing. `why` (when counters were asked for but refused) goes
// into the result context as counters_unavailable.
std::unique_ptr<CounterBackend> make_none_backend(const std::string& why = "");

// Runs several backends one after the other on the same range and merges their values.
std::unique_ptr<CounterBackend> make_composite_backend(std::vector<std::unique_ptr<CounterBackend>> parts);

// What the command line asked for.
struct CounterRequest {
  std::string counters;     // --counters=SET[,SET|METRIC...][,replay=user|kernel]; empty: no CUPTI
  std::string papi_events;  // --papi-events=EV1,EV2; empty: no PAPI
  int device = 0;           // CUDA device ordinal (already current)
};

struct BackendChoice {
  std::unique_ptr<CounterBackend> backend;  // never null
  std::vector<std::string> notes;           // lines for the user: passes per set, refusals, unavailable events
};

// Builds the backends a request asks for. A malformed request (unknown set, unknown metric, empty
// list) throws UsageError naming the closest valid names. A refusal by the system (no GPU or driver,
// CUPTI missing, insufficient privileges, another profiler attached, vGPU, MIG, WSL) is not an error:
// that part falls back to timing only and `notes` says why in one line.
BackendChoice make_counter_backend(const CounterRequest& request);

// Wraps `inner` so that every range's figures are also published as PAPI Software Defined Events:
// library GPUPROBE, counters RANGES, GPU_TIME_NS, DRAM_BYTES_READ, DRAM_BYTES_WRITE, L2_BYTES,
// L1_BYTES, FP32_FLOP, FP64_FLOP (running totals; PAPI reads deltas). Read them with
// PAPI_add_named_event("sde:::GPUPROBE::DRAM_BYTES_READ"). Without PAPI, returns `inner` unchanged.
std::unique_ptr<CounterBackend> export_as_papi_sde(std::unique_ptr<CounterBackend> inner);

// Why this gpuprobe has no CUPTI counter backend (its toolkit's CUPTI lacks the Range Profiling API), one
// line for the result context's counters_unavailable; "" when it has one.
std::string cupti_backend_left_out();

// True when this gpuprobe was built with PAPI (HAVE_PAPI).
bool papi_built_in();

}  // namespace gpuprobe::profilers
