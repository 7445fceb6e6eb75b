// Named metric sets, the --counters syntax, validation against a device's metric catalog with
// "did you mean" suggestions, and the figures gpuprobe derives from raw metrics. Pure C++ (no CUPTI):
// the CUPTI backend supplies the catalog, tests supply their own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpuprobe/profiler.hpp"

namespace gpuprobe::profilers {

struct MetricSet {
  std::string name;
  std::string purpose;               // one line, for --help and docs
  std::vector<std::string> metrics;  // Nsight Compute names valid under CUPTI on GH100
};

// roofline, memory, occupancy (docs/counters.md).
const std::vector<MetricSet>& builtin_metric_sets();
const MetricSet* find_metric_set(const std::string& name);

// How the CUPTI backend replays the work for its passes.
enum class ReplayMode {
  kUser,    // one user range around the whole work (all kernels and copies in it), replayed by us per pass
  kKernel,  // auto range: one range per kernel, CUPTI replays each kernel (saving/restoring memory); summed
  // One user range per entry as in kUser, but the passes span the whole selection: the harness runs
  // every entry once timed, then once more per pass with only its work inside the entry's range, so
  // CUPTI starts and stops once per pass instead of once per pass and entry (ncu's "application
  // replay" within one process). What a sweep of many short entries needs.
  kApplication,
};

struct CounterSpec {
  std::vector<std::string> sets;          // built-in sets named, in order
  std::vector<std::string> metrics;       // all metrics, deduplicated, in order of first mention
  std::vector<std::string> user_metrics;  // the ones named directly (must be valid; set members may be dropped)
  ReplayMode replay = ReplayMode::kUser;
};

// Parses "roofline,memory", "dram__bytes.sum,roofline", "roofline,replay=kernel" (or user, application). Throws UsageError
// for an empty item, an unknown set name (listing the sets) or an unknown option.
CounterSpec parse_counter_spec(const std::string& text);

// What a device knows about metric names.
class MetricCatalog {
 public:
  virtual ~MetricCatalog() = default;
  virtual std::string device_name() const = 0;                          // e.g. "GH100"
  virtual bool is_valid(const std::string& metric) const = 0;           // full name with rollup/submetric
  virtual std::vector<std::string> base_names() const = 0;              // e.g. "dram__bytes_read"
  virtual std::vector<std::string> suffixes(const std::string& base) const = 0;  // e.g. ".sum", ".avg.per_second"
};

// Levenshtein distance (insert/delete/substitute = 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

// Up to `count` valid names closest to `metric`: if its base is valid, the base with the closest
// suffixes; otherwise the closest bases, each with the user's suffix when valid for it.
std::vector<std::string> closest_metric_names(const std::string& metric, const MetricCatalog& catalog,
                                              std::size_t count = 5);

struct ValidatedMetrics {
  std::vector<std::string> metrics;  // what will be collected
  std::vector<std::string> dropped;  // set members this device does not have (note, not error)
};

// Checks every metric of `spec` against `catalog`. A user-named metric that is invalid throws
// UsageError: "unknown metric 'X' on GH100; closest valid names: a, b, c". An invalid member of a
// built-in set is dropped and reported (sets are written for GH100; other chips may lack a name).
ValidatedMetrics validate_metrics(const CounterSpec& spec, const MetricCatalog& catalog);

// Adds gpuprobe's derived figures when their inputs are present (names start with "gpuprobe__"):
//   gpuprobe__fp32_flop = 2 ffma + fadd + fmul, gpuprobe__fp64_flop = 2 dfma + dadd + dmul  (thread level)
//   gpuprobe__dram_bytes = read + write, gpuprobe__local_bytes = local-memory ld + st bytes (spills)
//   gpuprobe__global_{ld,st}_sectors_per_request = sectors / requests (4 = coalesced 4-byte words)
void add_derived_metrics(MetricValues& values);

// Combines the per-kernel values of an auto-range collection into one value per metric: counters
// (".sum" and gpu__time_duration) add up; other metrics (averages, rates, percentages) are weighted
// by each range's gpu__time_duration.sum when it is present, else averaged.
MetricValues combine_ranges(const std::vector<MetricValues>& ranges);

}  // namespace gpuprobe::profilers
