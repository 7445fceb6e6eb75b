// PAPI backends: named PAPI events read around each range (--papi-events), and gpuprobe's own
// per-range figures published as PAPI Software Defined Events (library "GPUPROBE"), so any PAPI-based
// tool can read them with PAPI_add_named_event("sde:::GPUPROBE::DRAM_BYTES_READ"). Built only with
// PAPI (HAVE_PAPI, from pkg-config papi); without it the PAPI backend refuses and the export is a no-op.
#include <cmath>
#include <map>

#include "backends.hpp"

#ifdef HAVE_PAPI
#include <papi.h>
#include <sde_lib.h>
#endif

namespace gpuprobe::profilers {

bool papi_built_in() {
#ifdef HAVE_PAPI
  return true;
#else
  return false;
#endif
}

#ifdef HAVE_PAPI
namespace {

std::string papi_error(int code) {
  const char* text = PAPI_strerror(code);
  return std::string(text ? text : "unknown PAPI error") + " (PAPI " + std::to_string(code) + ")";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    if (item.empty()) throw UsageError("--papi-events: empty event name in '" + text + "'");
    out.push_back(item);
    start = comma + 1;
  }
  return out;
}

void ensure_papi_initialized() {
  if (PAPI_is_initialized() != PAPI_NOT_INITED) return;
  const int r = PAPI_library_init(PAPI_VER_CURRENT);
  if (r != PAPI_VER_CURRENT) throw CounterRefusal("PAPI failed to initialize: " + papi_error(r));
}

// PAPI allows events of one component per event set, so events are grouped by component.
class PapiBackend final : public CounterBackend {
 public:
  PapiBackend(const std::string& events, std::vector<std::string>& notes) {
    const std::vector<std::string> names = split_list(events);
    ensure_papi_initialized();
    for (const auto& name : names) {
      int code = 0;
      int r = PAPI_event_name_to_code(name.c_str(), &code);
      if (r == PAPI_OK) {
        const int component = PAPI_get_event_component(code);
        Group& g = groups_[component];
        if (g.event_set == PAPI_NULL) {
          r = PAPI_create_eventset(&g.event_set);
          if (r != PAPI_OK) throw CounterRefusal("PAPI_create_eventset failed: " + papi_error(r));
        }
        r = PAPI_add_named_event(g.event_set, name.c_str());
        if (r == PAPI_OK) {
          g.names.push_back(name);
          available_.push_back(name);
          continue;
        }
      }
      unavailable_.push_back(name + ": " + papi_error(r));
      notes.push_back("papi: event " + name + " unavailable: " + papi_error(r) + "; continuing without it");
    }
    if (!available_.empty()) {
      std::string list;
      for (const auto& n : available_) list += (list.empty() ? "" : ", ") + n;
      notes.push_back("papi: reading " + list + " around each entry's replay");
    }
  }

  ~PapiBackend() override {
    for (auto& [component, g] : groups_) {
      if (g.event_set == PAPI_NULL) continue;
      PAPI_cleanup_eventset(g.event_set);
      PAPI_destroy_eventset(&g.event_set);
    }
  }

  std::string name() const override { return "papi"; }

  std::vector<std::pair<std::string, std::string>> context() const override {
    std::string ok, missing;
    for (const auto& n : available_) ok += (ok.empty() ? "" : ",") + n;
    for (const auto& n : unavailable_) missing += (missing.empty() ? "" : "; ") + n;
    return {{"papi_events", ok}, {"papi_events_unavailable", missing}};
  }

  MetricValues collect(const std::string&, const std::function<void()>& work) override {
    MetricValues out;
    std::vector<Group*> active;
    for (auto& [component, g] : groups_)
      if (!g.names.empty()) active.push_back(&g);
    if (active.empty()) return out;
    for (Group* g : active) check(PAPI_start(g->event_set), "PAPI_start");
    work();
    for (Group* g : active) {
      std::vector<long long> values(g->names.size(), 0);
      check(PAPI_stop(g->event_set, values.data()), "PAPI_stop");
      for (std::size_t i = 0; i < values.size(); ++i) out["papi." + g->names[i]] = static_cast<double>(values[i]);
    }
    return out;
  }

 private:
  struct Group {
    int event_set = PAPI_NULL;
    std::vector<std::string> names;
  };
  static void check(int r, const char* what) {
    if (r != PAPI_OK) throw Error(std::string("papi: ") + what + " failed: " + papi_error(r));
  }
  std::map<int, Group> groups_;
  std::vector<std::string> available_, unavailable_;
};

// The GPUPROBE software-defined-event library: registered once per process and never shut down
// (PAPI 7.0's libsde crashes in papi_sde_init after a papi_sde_shutdown). Cumulative totals over all
// ranges collected so far; PAPI reads them as deltas between PAPI_start and PAPI_stop, so a tool
// that brackets one range sees that range's figures.
struct SdeCounter {
  const char* event;
  const char* metric;  // nullptr: counts ranges
  const char* description;
  long long total;
};

SdeCounter* sde_counters(std::size_t& count) {
  static SdeCounter counters[] = {
      {"RANGES", nullptr, "gpuprobe ranges (benchmark entries) collected", 0},
      {"GPU_TIME_NS", "gpu__time_duration.sum", "GPU time of the ranges, ns (gpu__time_duration.sum)", 0},
      {"DRAM_BYTES_READ", "dram__bytes_read.sum", "bytes read from DRAM (dram__bytes_read.sum)", 0},
      {"DRAM_BYTES_WRITE", "dram__bytes_write.sum", "bytes written to DRAM (dram__bytes_write.sum)", 0},
      {"L2_BYTES", "lts__t_bytes.sum", "bytes requested from L2 (lts__t_bytes.sum)", 0},
      {"L1_BYTES", "l1tex__t_bytes.sum", "bytes requested from L1 (l1tex__t_bytes.sum)", 0},
      {"FP32_FLOP", "gpuprobe__fp32_flop", "FP32 operations, 2 ffma + fadd + fmul (thread level)", 0},
      {"FP64_FLOP", "gpuprobe__fp64_flop", "FP64 operations, 2 dfma + dadd + dmul (thread level)", 0},
  };
  static const bool registered = [] {
    papi_handle_t handle = papi_sde_init("GPUPROBE");
    for (auto& c : counters) {
      papi_sde_register_counter(handle, c.event, PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &c.total);
      papi_sde_describe_counter(handle, c.event, c.description);
    }
    return true;
  }();
  (void)registered;
  count = sizeof(counters) / sizeof(counters[0]);
  return counters;
}

class SdeExport final : public CounterBackend {
 public:
  explicit SdeExport(std::unique_ptr<CounterBackend> inner) : inner_(std::move(inner)) {
    std::size_t n = 0;
    sde_counters(n);  // registers the library before any range, so tools can add its events early
  }

  std::string name() const override { return inner_->name(); }
  std::vector<std::pair<std::string, std::string>> context() const override {
    auto fields = inner_->context();
    fields.push_back({"papi_sde_library", "GPUPROBE"});
    return fields;
  }

  MetricValues collect(const std::string& range, const std::function<void()>& work) override {
    MetricValues values = inner_->collect(range, work);
    // Under application replay the range's figures exist only after the last pass: published then.
    if (!inner_->application_replay()) publish(values);
    return values;
  }

  bool application_replay() const override { return inner_->application_replay(); }
  void begin_application_pass(std::size_t max_ranges) override { inner_->begin_application_pass(max_ranges); }
  bool end_application_pass() override { return inner_->end_application_pass(); }
  std::vector<MetricValues> application_results() override {
    std::vector<MetricValues> ranges = inner_->application_results();
    for (const auto& values : ranges) publish(values);
    return ranges;
  }

 private:
  static void publish(const MetricValues& values) {
    std::size_t n = 0;
    SdeCounter* counters = sde_counters(n);
    for (std::size_t i = 0; i < n; ++i) {
      SdeCounter& c = counters[i];
      if (!c.metric) {
        c.total += 1;
        continue;
      }
      auto it = values.find(c.metric);
      if (it != values.end() && std::isfinite(it->second)) c.total += std::llround(it->second);
    }
  }

  std::unique_ptr<CounterBackend> inner_;
};

}  // namespace

std::unique_ptr<CounterBackend> make_papi_backend(const std::string& events, std::vector<std::string>& notes) {
  return std::make_unique<PapiBackend>(events, notes);
}

std::unique_ptr<CounterBackend> export_as_papi_sde(std::unique_ptr<CounterBackend> inner) {
  return std::make_unique<SdeExport>(std::move(inner));
}

#else  // no PAPI in this build

std::unique_ptr<CounterBackend> make_papi_backend(const std::string&, std::vector<std::string>&) {
  throw CounterRefusal("this gpuprobe was built without PAPI (pkg-config found no 'papi'); "
                       "install libpapi-dev and rebuild to use --papi-events");
}

std::unique_ptr<CounterBackend> export_as_papi_sde(std::unique_ptr<CounterBackend> inner) { return inner; }

#endif

}  // namespace gpuprobe::profilers
