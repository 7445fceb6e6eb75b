#include "fleet.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include "family.hpp"
#include "gpuprobe/check.hpp"

#ifdef GPUPROBE_HAVE_MPI
#include <mpi.h>
#endif

namespace gpuprobe {
namespace {

// The fleet preset. Each figure is one entry (or, for "worst", one per neighbour) of a probe that the
// full run also measures, so that a full run on a reference GPU (reports/h100) gives the same figures.
// FP32/FP64 read the entry's GFLOP/s rather than its ops/clk/SM, and DRAM latency its ns rather than
// its cycles: a GPU stuck at a low clock must show as slow, not be normalized away (the clock itself
// is a figure of its own).
std::vector<PresetFigure> fleet_figures() {
  using P = FleetPhase;
  std::vector<PresetFigure> f = {
      {"DRAM read", "memory.bandwidth", {{"kernel", "read"}, {"vector", "16"}}, "footprint", "max"},
      {"DRAM write", "memory.bandwidth", {{"kernel", "write"}, {"vector", "16"}}, "footprint", "max"},
      // The L2 read ceiling's probe (walk=blocks), every working set: the figure is the report's L2 read
      // ceiling over them (its premise rules: the smallest working sets, whose loads the L2's request
      // coalescer merges, read faster than the L2 serves and never count), so that fleet and report agree.
      {"L2 read", "memory.l2_bandwidth", {{"kernel", "read_cg"}, {"walk", "blocks"}, {"loads", "32"}}, "footprint",
       "ceiling"},
      {"FP32", "exec.throughput_peak", {{"op", "ffma"}}, "", "", "gflops"},
      {"FP64", "exec.throughput_peak", {{"op", "dfma"}}, "", "", "gflops"},
      // The SM clock the FP32 peak's kernels ran at (clock64 over globaltimer in the kernel): under
      // full load, where power and thermal limits bite.
      {"SM clock under load", "exec.throughput_peak", {{"op", "ffma"}}, "", "", "sm_clock_kernel_mhz"},
      {"DRAM latency", "memory.latency", {{"pattern", "random"}, {"load", "cg"}, {"stride", "128"}}, "footprint",
       "max", "ns_per_op"},
      {"Launch rate", "exec.launch_rate", {{"api", "triple_chevron"}, {"grid", "1"}}, "", "", "value_median", 20},
      {"Pinned H2D", "transfer.host", {{"memory", "pinned"}, {"engine", "ce"}, {"direction", "h2d"}}, "size", "max",
       "value_median", 10, P::kApart},
      {"Pinned D2H", "transfer.host", {{"memory", "pinned"}, {"engine", "ce"}, {"direction", "d2h"}}, "size", "max",
       "value_median", 10, P::kApart},
      // Copies from this GPU to each neighbour it can reach; the figure is the slowest link. Optional:
      // the family is built everywhere, but a node of one GPU has no entry of it.
      {"P2P write, slowest neighbour", "transfer.p2p",
       {{"src", "<device>"}, {"engine", "ce"}, {"form", "write"}, {"direction", "uni"}}, "dst", "worst",
       "value_median", 10, P::kApart, true},
      // The tensor cores: the BF16 ceiling's form (wgmma N = 256, A in shared memory) and FP64's (DMMA
      // m16n8k16), on random operands. Optional: a GPU without wgmma registers no such entry.
      {"BF16 tensor", "exec.tensor",
       {{"instr", "wgmma"}, {"precision", "bf16"}, {"acc", "f32"}, {"a", "smem"}, {"m", "64"}, {"n", "256"}, {"k", "16"},
        {"data", "random"}},
       "", "", "value_median", 5, P::kTogether, true},
      {"FP64 tensor", "exec.tensor",
       {{"instr", "mma"}, {"precision", "f64"}, {"acc", "f64"}, {"a", "reg"}, {"m", "16"}, {"n", "8"}, {"k", "16"},
        {"data", "random"}},
       "", "", "value_median", 5, P::kTogether, true},
  };
  return f;
}

const ProbeDescriptor* declared(const std::string& family) {
  for (const ProbeDescriptor* r : declared_families())
    if (r->family == family) return r;
  return nullptr;
}

std::string base_name(const std::string& instance) {
  const auto cut = instance.find("/iterations:");
  return cut == std::string::npos ? instance : instance.substr(0, cut);
}

const MeasuredField* measured_field(const std::string& name) {
  for (const MeasuredField& f : measured_fields())
    if (name == f.name) return &f;
  return nullptr;
}

bool axis_matches(const std::string& value, const std::string& wanted, int device) {
  return value == (wanted == "<device>" ? std::to_string(device) : wanted);
}

// The (key, value) pairs of a registered instance's name of the figure's family; empty if another.
std::vector<std::pair<std::string, std::string>> name_axes(const std::string& base, const ProbeDescriptor& record) {
  if (base.compare(0, record.family.size() + 1, record.family + "/") != 0) return {};
  return check_entry_name(record, base);
}

}  // namespace

const std::vector<MeasuredField>& measured_fields() {
  // Written by Measurement::run (measure.cpp) for every entry that declares the work.
  static const std::vector<MeasuredField> fields = {
      {"gflops", "GFLOP/s", true},
      {"gbps", "GB/s", true},
      {"ns_per_op", "ns", false},
      {"sm_clock_kernel_mhz", "MHz", true},
      {"sm_clock_mhz", "MHz", true},
  };
  return fields;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    Preset fleet{"fleet",
                 "the figures that tell a healthy GPU from a slow or faulty one, for one process per GPU "
                 "(docs/fleet.md)",
                 {}};
    for (PresetFigure& f : fleet_figures())
      if (!f.optional || declared(f.family)) fleet.figures.push_back(std::move(f));
    return std::vector<Preset>{fleet};
  }();
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (const Preset& p : presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::vector<std::string> preset_problems() {
  std::vector<std::string> out;
  for (const Preset& p : presets()) {
    std::set<std::string> names;
    for (const PresetFigure& f : p.figures) {
      const std::string where = "preset " + p.name + ", figure '" + f.figure + "': ";
      if (!names.insert(f.figure).second) out.push_back(where + "declared twice");
      const ProbeDescriptor* r = declared(f.family);
      if (!r) {
        out.push_back(where + "family " + f.family + " is not declared");
        continue;
      }
      for (const auto& [axis, value] : f.axes)
        if (!r->axis(axis) || !r->axis(axis)->in_name) out.push_back(where + axis + " is no in-name axis of " + f.family);
      if (!f.pick_axis.empty() && (!r->axis(f.pick_axis) || !r->axis(f.pick_axis)->in_name))
        out.push_back(where + "pick axis " + f.pick_axis + " is no in-name axis of " + f.family);
      if (f.pick_axis.empty() != f.take.empty() ||
          (!f.take.empty() && f.take != "max" && f.take != "min" && f.take != "worst" && f.take != "ceiling"))
        out.push_back(where + "take '" + f.take + "' with pick axis '" + f.pick_axis +
                      "': write max, min, worst or ceiling");
      if (f.field != "value_median" && !measured_field(f.field))
        out.push_back(where + "field " + f.field + " is neither value_median nor a counter of measured_fields()");
      if (!(f.tolerance_pct > 0)) out.push_back(where + "tolerance must be > 0");
    }
  }
  return out;
}

std::vector<std::string> preset_selection(const Preset& preset, const std::vector<std::string>& instances, int device) {
  std::set<std::string> chosen;
  for (const PresetFigure& f : preset.figures) {
    const ProbeDescriptor* r = declared(f.family);
    if (!r) continue;  // preset_problems reports it
    std::vector<std::pair<const std::string*, double>> matches;  // instance, pick axis value
    for (const std::string& inst : instances) {
      const auto axes = name_axes(base_name(inst), *r);
      if (axes.empty()) continue;
      bool ok = true;
      double pick = std::numeric_limits<double>::quiet_NaN();
      for (const auto& [axis, wanted] : f.axes) {
        const auto it = std::find_if(axes.begin(), axes.end(), [&](const auto& kv) { return kv.first == axis; });
        ok = ok && it != axes.end() && axis_matches(it->second, wanted, device);
      }
      if (!ok) continue;
      for (const auto& [axis, value] : axes)
        if (axis == f.pick_axis) pick = std::strtod(value.c_str(), nullptr);
      matches.emplace_back(&inst, pick);
    }
    if (matches.empty()) {
      if (f.optional) continue;
      throw UsageError("--preset=" + preset.name + ": no entry on this GPU gives the figure '" + f.figure + "' (" +
                       f.family + "; removed by --exclude or --max-footprint?)");
    }
    if (f.take == "max" || f.take == "min") {
      auto best = matches.front();
      for (const auto& m : matches)
        if (f.take == "max" ? m.second > best.second : m.second < best.second) best = m;
      chosen.insert(*best.first);
    } else {
      for (const auto& m : matches) chosen.insert(*m.first);
    }
  }
  std::vector<std::string> out;
  for (const std::string& inst : instances)
    if (chosen.count(inst)) out.push_back(inst);
  return out;
}

std::vector<std::string> preset_apart(const Preset& preset, const std::vector<std::string>& selected, int device) {
  std::set<std::string> families;
  for (const PresetFigure& f : preset.figures)
    if (f.phase == FleetPhase::kApart) families.insert(f.family);
  std::vector<std::string> out;
  for (const std::string& inst : selected) {
    const std::string base = base_name(inst);
    if (families.count(base.substr(0, base.find('/')))) out.push_back(base);
  }
  (void)device;
  return out;
}

std::string exact_filter(const std::vector<std::string>& instances) {
  // POSIX extended, as Google Benchmark reads --benchmark_filter: every metacharacter escaped.
  std::string re = "^(";
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (i) re += "|";
    for (const char c : instances[i]) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) re += '\\';
      re += c;
    }
  }
  return re + ")$";
}

std::string preset_json(const Preset& preset) {
  std::string out = "{\"preset\":" + json_quoted(preset.name) + ",\"description\":" + json_quoted(preset.description) +
                    ",\"figures\":[";
  for (std::size_t i = 0; i < preset.figures.size(); ++i) {
    const PresetFigure& f = preset.figures[i];
    const ProbeDescriptor* r = declared(f.family);
    const MeasuredField* m = measured_field(f.field);
    const std::string unit = f.field == "value_median" ? (r ? r->value_unit() : "") : (m ? m->unit : "");
    const bool higher = f.field == "value_median" ? (r && r->higher_is_better()) : (m && m->higher_is_better);
    out += std::string(i ? "," : "") + "{\"figure\":" + json_quoted(f.figure) + ",\"family\":" + json_quoted(f.family) +
           ",\"axes\":{";
    for (std::size_t k = 0; k < f.axes.size(); ++k)
      out += std::string(k ? "," : "") + json_quoted(f.axes[k].first) + ":" + json_quoted(f.axes[k].second);
    out += "}";
    if (!f.pick_axis.empty())
      out += ",\"pick\":{\"axis\":" + json_quoted(f.pick_axis) + ",\"take\":" + json_quoted(f.take) + "}";
    char tolerance[32];
    std::snprintf(tolerance, sizeof tolerance, "%g", f.tolerance_pct);
    out += ",\"field\":" + json_quoted(f.field) + ",\"unit\":" + json_quoted(unit) + ",\"better\":\"" +
           (higher ? "higher" : "lower") + "\",\"tolerance_pct\":" + tolerance + ",\"phase\":\"" +
           (f.phase == FleetPhase::kApart ? "apart" : "together") + "\",\"optional\":" + (f.optional ? "true" : "false") +
           "}";
  }
  return out + "]}";
}

std::string presets_json() {
  std::string out = "[\n";
  const auto& all = presets();
  for (std::size_t i = 0; i < all.size(); ++i) out += preset_json(all[i]) + (i + 1 < all.size() ? ",\n" : "\n");
  return out + "]\n";
}

// ------------------------------------------------------------------------------------------------
// Ranks

namespace {

bool read_int(const std::function<const char*(const char*)>& env, const char* name, int* out) {
  const char* v = env(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1 << 20) throw UsageError(std::string(name) + "='" + v + "' is no rank");
  *out = static_cast<int>(n);
  return true;
}

}  // namespace

RankInfo rank_from_environment(const std::function<const char*(const char*)>& env) {
  RankInfo r;
  std::string global, local;
  for (const char* name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (read_int(env, name, &r.rank)) {
      global = name;
      break;
    }
  for (const char* name : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
    if (read_int(env, name, &r.local_rank)) {
      local = name;
      break;
    }
  for (const char* name : {"SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (read_int(env, name, &r.local_size)) break;
  if (global.empty() && local.empty())
    throw UsageError("--device=local-rank: no launcher's rank in the environment (SLURM_PROCID/SLURM_LOCALID, "
                     "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_LOCAL_RANK, PMI_RANK, PMIX_RANK, MPI_LOCALRANKID); "
                     "run it under srun or mpirun (docs/fleet.md)");
  if (local.empty()) {  // PMI_RANK alone: one node, where the global rank is the node-local one
    r.local_rank = r.rank;
    local = global + " (as node-local)";
  }
  if (global.empty()) {
    r.rank = r.local_rank;
    global = local;
  }
  r.local_size = std::max(r.local_size, r.local_rank + 1);
  r.source = global == local ? global : global + "/" + local;
  return r;
}

std::string rank_file_name(const std::string& out, int rank) {
  const std::string tag = ".rank" + std::to_string(rank);
  const std::string ext = ".json";
  if (out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0)
    return out.substr(0, out.size() - ext.size()) + tag + ext;
  return out + tag;
}

namespace {

struct FleetSync {
  bool mpi = false;
  int local_rank = 0;
  int local_size = 1;
  std::set<std::string> apart;
  bool turn_taken = false;  // this rank has entered its turn (and so waited for the ranks before it)
#ifdef GPUPROBE_HAVE_MPI
  MPI_Comm node = MPI_COMM_NULL;
#endif
};
FleetSync& sync() {
  static FleetSync s;
  return s;
}

#ifdef GPUPROBE_HAVE_MPI
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}
#endif

}  // namespace

RankInfo fleet_init_ranks(int* argc, char*** argv) {
#ifdef GPUPROBE_HAVE_MPI
  if (launched_by_mpi()) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
    RankInfo r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    FleetSync& s = sync();
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r.rank, MPI_INFO_NULL, &s.node);
    MPI_Comm_rank(s.node, &r.local_rank);
    MPI_Comm_size(s.node, &r.local_size);
    r.source = "MPI";
    r.mpi = true;
    s.mpi = true;
    s.local_rank = r.local_rank;
    s.local_size = r.local_size;
    return r;
  }
#endif
  (void)argc;
  (void)argv;
  return rank_from_environment([](const char* name) { return std::getenv(name); });
}

void fleet_barrier_all() {
#ifdef GPUPROBE_HAVE_MPI
  if (sync().mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void fleet_set_apart(std::vector<std::string> apart_instances) {
  sync().apart = std::set<std::string>(apart_instances.begin(), apart_instances.end());
}

// The turns: barrier 0 ends the together phase on the node; barrier k (1..local_size) says that
// local rank k-1 finished its turn. Every rank calls all local_size + 1 of them, in order: before
// its turn barriers 0..local_rank (here), after it the rest (fleet_finalize, the apart entries
// being the last ones the run registers and so the last it runs).
void fleet_before_entry(const std::string& name) {
  FleetSync& s = sync();
  if (!s.mpi || s.turn_taken || !s.apart.count(name)) return;
  s.turn_taken = true;
#ifdef GPUPROBE_HAVE_MPI
  for (int k = 0; k <= s.local_rank; ++k) MPI_Barrier(s.node);
#endif
}

void fleet_finalize() {
#ifdef GPUPROBE_HAVE_MPI
  FleetSync& s = sync();
  if (!s.mpi) return;
  const int done = s.turn_taken ? s.local_rank + 1 : 0;
  for (int k = done; k <= s.local_size; ++k) MPI_Barrier(s.node);
  MPI_Comm_free(&s.node);
  MPI_Finalize();
  s.mpi = false;
#endif
}

}  // namespace gpuprobe
