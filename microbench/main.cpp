// gpuprobe: GPU characterization probes and kernel benchmarks on Google Benchmark.
//
// Flow: every flag checked (ours, Google Benchmark's, the filter's regex and, where it is anchored,
// its start against the family names, the output file) -> open the GPU -> record it in the result
// context -> register the probes (their sweeps depend on the GPU) -> refuse a filter that selects
// none of them, else print what registration left out -> Google Benchmark runs them -> the output
// file is renamed from FILE.partial to FILE only when every entry finished.
//
// The checks come before the GPU is opened so that a mistake in the command line is reported as
// such on any machine, not as "no usable GPU"; and before Google Benchmark opens the output file, so
// that a run which cannot produce results leaves no file behind.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/profiler.hpp"
#include "gpuprobe_revision.h"  // generated at build time (cmake/source_revision.cmake)
#include "harness/application_replay.hpp"
#include "harness/device.hpp"
#include "harness/fleet.hpp"
#include "harness/identity.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"
#include "harness/options.hpp"
#include "probes/registry.hpp"


namespace {

int run(int argc, char** argv) {
  using namespace gpuprobe;
  std::vector<std::string> args(argv, argv + argc);
  Context& ctx = context();
  ctx.options = parse_options(args);
  check_declared_families();  // a malformed record is the build's bug: before anything runs
  if (ctx.options.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  for (const auto& problem : preset_problems()) throw Error("preset declaration: " + problem);
  if (ctx.options.list_presets) {
    std::fputs(presets_json().c_str(), stdout);
    return 0;
  }
  if (ctx.options.list_families) {
    std::string out = "[\n";
    const auto records = declared_families();
    for (std::size_t i = 0; i < records.size(); ++i)
      out += family_record_json(*records[i]) + (i + 1 < records.size() ? ",\n" : "\n");
    std::fputs((out + "]\n").c_str(), stdout);
    return 0;
  }
  initialize_benchmark_flags(args);
  EntryFilter filter(benchmark::GetBenchmarkFilter());
  const Preset* preset = ctx.options.preset.empty() ? nullptr : find_preset(ctx.options.preset);
  if (preset && filter.spec() != "" && filter.spec() != "." && filter.spec() != "all")
    throw UsageError("--preset=" + preset->name + " selects its own entries: leave out --benchmark_filter");
  std::vector<std::string> families;
  for (const auto* record : declared_families()) families.push_back(record->family);
  if (!preset && !filter.may_match_families(families))
    throw UsageError("--benchmark_filter=" + filter.spec() + " matches none of the entries: every entry's name " +
                     "starts with its family's name (gpuprobe --list-families lists the " +
                     std::to_string(families.size()) + " families)");
  if (!ctx.options.benchmark_out.empty()) check_output_writable(ctx.options.benchmark_out);

  // Fleet mode: the launcher's node-local rank picks the GPU (MPI_Init here when built with MPI and
  // launched by mpirun or srun --mpi); each rank's file name already carries its global rank.
  RankInfo rank;
  try {
    if (ctx.options.device_from_rank) {
      rank = fleet_init_ranks(&argc, &argv);
      ctx.options.device = rank.local_rank % device_count();
    }
    ctx.device = open_device(ctx.options.device);
  } catch (const NoDeviceError& e) {
    // The entries are registered from the GPU's own facts (its memory sizes for the sweeps, its
    // occupancy for the grids, its peers): without one there is no honest list to print.
    if (ctx.options.list_tests)
      throw NoDeviceError(std::string(e.what()) + "; --benchmark_list_tests lists the entries registered from " +
                          "a GPU's own facts, so it needs one (--list-families lists the families without a GPU)");
    throw;
  }
  static Nvml nvml(ctx.device.pci_bus_id);
  ctx.nvml = &nvml;
  // Before anything runs: is another process using this GPU? Measured anyway, and said so once.
  // Printed with the other notes once the selection is known to run (a usage error stays one line).
  const IdleCheck idle = idle_check(nvml);
  std::vector<std::string> run_notes;  // the run's own notes (idle, counters); registration's are ctx.skip_notes
  if (idle.verdict.rfind("no:", 0) == 0)
    run_notes.push_back("warning: GPU " + std::to_string(ctx.device.index) + " (" + ctx.device.pci_bus_id +
                        ") is not idle (" + idle.verdict.substr(4) +
                        "): its figures may be a share of another job's GPU; measuring anyway");

  // Counters: chosen and validated once, before any entry runs (a bad metric name stops here); a
  // refusal by the system prints one line and leaves timing only. Collected per entry in an untimed
  // replay after its samples (Measurement::run), or under replay=application in counter passes
  // over the whole selection after the timed run (run_selection).
  std::unique_ptr<profilers::CounterBackend> counters;
  if (!ctx.options.counters.empty() || !ctx.options.papi_events.empty()) {
    profilers::BackendChoice choice =
        profilers::make_counter_backend({ctx.options.counters, ctx.options.papi_events, ctx.device.index});
    for (const auto& line : choice.notes) run_notes.push_back(line);  // printed once the selection is known to run
    counters = std::move(choice.backend);
    for (const auto& [key, value] : counters->context()) benchmark::AddCustomContext(key, value);
  }
  ctx.counters = counters.get();
  // A build without the CUPTI backend says so in every result file, counters asked for or not (when asked
  // for, the timing-only backend's own counters_unavailable carries the same line).
  if (!counters)
    if (const std::string why = profilers::cupti_backend_left_out(); !why.empty())
      benchmark::AddCustomContext("counters_unavailable", why);

  benchmark::AddCustomContext("gpuprobe_version", GPUPROBE_SOURCE_REVISION);
  benchmark::AddCustomContext("gpuprobe_source_tree", GPUPROBE_SOURCE_TREE);
  benchmark::AddCustomContext("gpuprobe_schema", "1");
  // Every family this binary declares (its record: axes, units, title, method, flops per op), so that
  // the result file says what its entries' names and fields mean (docs/results-schema.md).
  benchmark::AddCustomContext(kFamiliesContextKey, declared_families_json());
  for (const auto& [key, value] : context_fields(ctx.device)) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("gpu_sm_clock_at_start_mhz",
                              nvml.sm_clock_mhz() ? std::to_string(*nvml.sm_clock_mhz()) : "unavailable");
  benchmark::AddCustomContext("gpu_mem_clock_at_start_mhz",
                              nvml.mem_clock_mhz() ? std::to_string(*nvml.mem_clock_mhz()) : "unavailable");
  benchmark::AddCustomContext("gpuprobe_sweep", ctx.options.quick ? "quick" : "full");
  for (const auto& [key, value] : identity_context(nvml)) benchmark::AddCustomContext(key, value);
  for (const auto& [key, value] : idle.context) benchmark::AddCustomContext(key, value);
  if (ctx.options.device_from_rank) {
    benchmark::AddCustomContext("fleet_rank", std::to_string(rank.rank));
    benchmark::AddCustomContext("fleet_local_rank", std::to_string(rank.local_rank));
    benchmark::AddCustomContext("fleet_rank_source", rank.source);
    benchmark::AddCustomContext("fleet_sync", rank.mpi ? "MPI: all ranks start together; per node, the apart "
                                                         "figures' entries in turns"
                                                       : "none: ranks run independently (no MPI)");
  }

  register_all_probes();
  if (preset) {
    const std::vector<std::string> selected = preset_selection(*preset, ctx.entry_instances, ctx.device.index);
    benchmark::SetBenchmarkFilter(exact_filter(selected));
    filter = EntryFilter(benchmark::GetBenchmarkFilter());
    fleet_set_apart(preset_apart(*preset, selected, ctx.device.index));
    ctx.before_entry = fleet_before_entry;
    benchmark::AddCustomContext(kPresetContextKey, preset_json(*preset));
  }
  // Google Benchmark would open (and create) the output file first, then find nothing to run and
  // return as if it had succeeded. The notes (entries left out, counters) follow only a selection
  // that runs: a usage error stays one line, ending in the left-out notes on the families it names.
  check_selection(filter, ctx.entry_instances, families, ctx.skip_notes, run_notes, stderr);

  fleet_barrier_all();  // with MPI: every rank starts measuring together
  run_selection();  // once timed; under application replay, then once per counter pass
  benchmark::Shutdown();
  fleet_finalize();  // with MPI: the turns' remaining barriers

  if (!ctx.options.benchmark_out.empty()) {
    const std::string partial = ctx.options.benchmark_out + ".partial";
    // --benchmark_list_tests writes nothing into the file Google Benchmark opened: an empty file
    // under the complete name would read as a result file that lost its content.
    if (ctx.options.list_tests && std::ifstream(partial, std::ios::ate).tellg() == 0) {
      std::remove(partial.c_str());
      return 0;
    }
    if (std::rename(partial.c_str(), ctx.options.benchmark_out.c_str()) != 0)
      throw Error("could not rename " + partial + " to " + ctx.options.benchmark_out);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    gpuprobe::fail("", e);
  }
}
