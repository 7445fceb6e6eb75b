// Named metric sets, the --counters syntax, validation with suggestions, derived figures.
#include "gpuprobe/metric_sets.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_names.hpp"

namespace gpuprobe::profilers {

namespace {
constexpr const char* kTime = metrics::kGpuTime;
constexpr const char* kSass = "sm__sass_thread_inst_executed_op_";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string set_names() {
  std::vector<std::string> names;
  for (const auto& s : builtin_metric_sets()) names.push_back(s.name);
  return join(names);
}
}  // namespace

// Every name below was checked against CUPTI's host catalog for GH100 (tests/cpu/profiler_cupti_host_test
// re-checks it, and the pass counts, on every CI run: roofline 2 passes, memory 5, occupancy 1).
const std::vector<MetricSet>& builtin_metric_sets() {
  static const std::vector<MetricSet> sets = {
      {"roofline",
       "time, DRAM read/write bytes, L2 and L1 bytes, FP32/FP64 instruction counts, SM clock",
       {metrics::kGpuTime, metrics::kDramRead, metrics::kDramWrite, "lts__t_bytes.sum", "l1tex__t_bytes.sum",
        metrics::kSassFfma, metrics::kSassFadd, metrics::kSassFmul, metrics::kSassDfma, metrics::kSassDadd,
        metrics::kSassDmul, metrics::kSmClock}},
      {"memory",
       "global sectors per request (coalescing), shared-memory bank conflicts, local-memory bytes (spills), "
       "DRAM and SM-to-L2 traffic",
       {kTime, metrics::kDramRead, metrics::kDramWrite, metrics::kL2SmReadSectors,
        metrics::kL2SmWriteSectors, metrics::kL1GlobalLoadSectors,
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"}},
      // What the premise checks read (microbench/harness/premise.hpp): which level served the bytes a
      // probe counts, and whether the operations it counts ran; plus the counters' own peaks.
      {"premise",
       "bytes served per level (L1 lookups and hits, SM-sourced L2 reads and writes, DRAM), shared-memory "
       "load bytes, floating-point SASS instruction counts, tensor-pipe instruction counts, L2 and DRAM peaks per "
       "cycle and their clocks",
       {metrics::kGpuTime, metrics::kL1GlobalLoadSectors, metrics::kL1GlobalLoadHitSectors,
        metrics::kL2SmReadSectors, metrics::kL2SmWriteSectors, metrics::kDramRead, metrics::kDramWrite,
        metrics::kSharedLoadBytes, metrics::kSassFfma, metrics::kSassFadd, metrics::kSassDfma, metrics::kSassDadd,
        metrics::kSassHfma, metrics::kTensorHmmaInst, metrics::kTensorImmaInst, metrics::kTensorDmmaInst,
        metrics::kTensorGmmaInst, metrics::kSmClock, metrics::kL2PeakBytesPerCycle, metrics::kL2Clock,
        metrics::kDramPeakBytesPerCycle, metrics::kDramClock, metrics::kL1PeakBytesPerCycle, metrics::kL1Clock}},
      {"occupancy",
       "achieved occupancy (active warps vs peak), SM active vs elapsed cycles, blocks launched",
       {kTime, "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.per_cycle_active",
        "sm__cycles_active.avg", "sm__cycles_elapsed.avg", "sm__ctas_launched.sum"}},
  };
  return sets;
}

const MetricSet* find_metric_set(const std::string& name) {
  for (const auto& s : builtin_metric_sets())
    if (s.name == name) return &s;
  return nullptr;
}

CounterSpec parse_counter_spec(const std::string& text) {
  CounterSpec spec;
  std::set<std::string> seen;
  auto add = [&](const std::string& m) {
    if (seen.insert(m).second) spec.metrics.push_back(m);
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty())
      throw UsageError("--counters: empty item in '" + text + "' (sets: " + set_names() +
                       "; or Nsight Compute metric names such as dram__bytes_read.sum)");
    if (item.rfind("replay=", 0) == 0) {
      const std::string mode = item.substr(7);
      if (mode == "user") spec.replay = ReplayMode::kUser;
      else if (mode == "kernel") spec.replay = ReplayMode::kKernel;
      else if (mode == "application") spec.replay = ReplayMode::kApplication;
      else throw UsageError("--counters: replay must be 'user', 'kernel' or 'application', not '" + mode + "'");
    } else if (const MetricSet* set = find_metric_set(item)) {
      spec.sets.push_back(set->name);
      for (const auto& m : set->metrics) add(m);
    } else if (item.find("__") != std::string::npos) {
      // Nsight Compute names are unit__counter[.rollup[.submetric]]; the device validates them later.
      spec.user_metrics.push_back(item);
      add(item);
    } else {
      std::vector<std::pair<std::size_t, std::string>> near;
      for (const auto& s : builtin_metric_sets()) near.push_back({edit_distance(item, s.name), s.name});
      std::sort(near.begin(), near.end());
      throw UsageError("--counters: unknown metric set '" + item + "' (did you mean '" + near.front().second +
                       "'? sets: " + set_names() + "; metric names look like dram__bytes_read.sum)");
    }
    if (comma == text.size()) break;
  }
  if (spec.metrics.empty()) throw UsageError("--counters: names no metric (only options in '" + text + "')");
  return spec;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t(0));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {
// Closest `count` of `candidates` to `target`, ties broken alphabetically (stable output for tests).
std::vector<std::string> nearest(const std::string& target, const std::vector<std::string>& candidates,
                                 std::size_t count) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  scored.reserve(candidates.size());
  for (const auto& c : candidates) scored.push_back({edit_distance(target, c), c});
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < count; ++i) out.push_back(scored[i].second);
  return out;
}
}  // namespace

std::vector<std::string> closest_metric_names(const std::string& metric, const MetricCatalog& catalog,
                                              std::size_t count) {
  const auto dot = metric.find('.');
  const std::string base = metric.substr(0, dot);
  const std::string suffix = dot == std::string::npos ? "" : metric.substr(dot);
  const std::vector<std::string> bases = catalog.base_names();
  std::vector<std::string> out;
  if (std::find(bases.begin(), bases.end(), base) != bases.end()) {
    for (const auto& s : nearest(suffix, catalog.suffixes(base), count)) out.push_back(base + s);
    return out;
  }
  for (const auto& b : nearest(base, bases, count)) {
    if (!suffix.empty() && catalog.is_valid(b + suffix)) out.push_back(b + suffix);
    else if (catalog.is_valid(b + ".sum")) out.push_back(b + ".sum");
    else out.push_back(b + ".avg");
  }
  return out;
}

ValidatedMetrics validate_metrics(const CounterSpec& spec, const MetricCatalog& catalog) {
  ValidatedMetrics result;
  for (const auto& m : spec.user_metrics)
    if (!catalog.is_valid(m))
      throw UsageError("--counters: unknown metric '" + m + "' on " + catalog.device_name() +
                       "; closest valid names: " + join(closest_metric_names(m, catalog)));
  for (const auto& m : spec.metrics) {
    if (catalog.is_valid(m)) result.metrics.push_back(m);
    else result.dropped.push_back(m);
  }
  if (result.metrics.empty())
    throw UsageError("--counters: none of the requested metrics exists on " + catalog.device_name());
  return result;
}

void add_derived_metrics(MetricValues& v) {
  auto has = [&](const std::string& k) { return v.count(k) > 0; };
  auto sass = [&](const char* op) { return std::string(kSass) + op + "_pred_on.sum"; };
  if (has(sass("ffma")) && has(sass("fadd")) && has(sass("fmul")))
    v["gpuprobe__fp32_flop"] = 2 * v[sass("ffma")] + v[sass("fadd")] + v[sass("fmul")];
  if (has(sass("dfma")) && has(sass("dadd")) && has(sass("dmul")))
    v["gpuprobe__fp64_flop"] = 2 * v[sass("dfma")] + v[sass("dadd")] + v[sass("dmul")];
  if (has("dram__bytes_read.sum") && has("dram__bytes_write.sum"))
    v["gpuprobe__dram_bytes"] = v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"];
  const std::string local = "l1tex__t_bytes_pipe_lsu_mem_local_op_";
  if (has(local + "ld.sum") && has(local + "st.sum"))
    v["gpuprobe__local_bytes"] = v[local + "ld.sum"] + v[local + "st.sum"];
  for (const char* op : {"ld", "st"}) {
    const std::string sectors = std::string("l1tex__t_sectors_pipe_lsu_mem_global_op_") + op + ".sum";
    const std::string requests = std::string("l1tex__t_requests_pipe_lsu_mem_global_op_") + op + ".sum";
    if (has(sectors) && has(requests) && v[requests] > 0)
      v[std::string("gpuprobe__global_") + op + "_sectors_per_request"] = v[sectors] / v[requests];
  }
}

MetricValues combine_ranges(const std::vector<MetricValues>& ranges) {
  MetricValues out;
  if (ranges.empty()) return out;
  auto additive = [](const std::string& name) {
    return name.size() > 4 && name.compare(name.size() - 4, 4, ".sum") == 0;
  };
  double total_time = 0;
  bool timed = true;
  for (const auto& r : ranges) {
    auto t = r.find(kTime);
    if (t == r.end()) timed = false;
    else total_time += t->second;
  }
  timed = timed && total_time > 0;
  std::map<std::string, double> weight_sum;
  for (const auto& r : ranges) {
    const double w = timed ? r.at(kTime) / total_time : 1.0 / static_cast<double>(ranges.size());
    for (const auto& [name, value] : r) {
      out[name] += additive(name) ? value : w * value;
      if (!additive(name)) weight_sum[name] += w;
    }
  }
  // A metric missing from some ranges is averaged over those that had it.
  for (const auto& [name, w] : weight_sum)
    if (w > 0) out[name] /= w;
  return out;
}

}  // namespace gpuprobe::profilers
