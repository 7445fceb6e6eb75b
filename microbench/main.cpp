// gpuprobe: GPU characterization probes and kernel benchmarks on Google Benchmark.
//
// Flow: our flags -> open the GPU -> record it in the result context -> register the probes
// (their sweeps depend on the GPU) -> Google Benchmark runs them -> the output file is renamed
// from FILE.partial to FILE only when every entry finished.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/profiler.hpp"
#include "gpuprobe_revision.h"  // generated at build time (cmake/source_revision.cmake)
#include "harness/application_replay.hpp"
#include "harness/device.hpp"
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
  if (ctx.options.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }

  ctx.device = open_device(ctx.options.device);
  static Nvml nvml(ctx.device.pci_bus_id);
  ctx.nvml = &nvml;

  // Counters: chosen and validated once, before any entry runs (a bad metric name stops here); a
  // refusal by the system prints one line and leaves timing only. Collected per entry in an untimed
  // replay after its samples (Measurement::run), or under replay=application in counter passes
  // over the whole selection after the timed run (run_selection).
  std::unique_ptr<profilers::CounterBackend> counters;
  if (!ctx.options.counters.empty() || !ctx.options.papi_events.empty()) {
    profilers::BackendChoice choice =
        profilers::make_counter_backend({ctx.options.counters, ctx.options.papi_events, ctx.device.index});
    for (const auto& line : choice.notes) std::fprintf(stderr, "gpuprobe: %s\n", line.c_str());
    counters = std::move(choice.backend);
    for (const auto& [key, value] : counters->context()) benchmark::AddCustomContext(key, value);
  }
  ctx.counters = counters.get();

  benchmark::AddCustomContext("gpuprobe_version", GPUPROBE_SOURCE_REVISION);
  benchmark::AddCustomContext("gpuprobe_source_tree", GPUPROBE_SOURCE_TREE);
  benchmark::AddCustomContext("gpuprobe_schema", "1");
  for (const auto& [key, value] : context_fields(ctx.device)) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("gpu_sm_clock_at_start_mhz",
                              nvml.sm_clock_mhz() ? std::to_string(*nvml.sm_clock_mhz()) : "unavailable");
  benchmark::AddCustomContext("gpu_mem_clock_at_start_mhz",
                              nvml.mem_clock_mhz() ? std::to_string(*nvml.mem_clock_mhz()) : "unavailable");
  benchmark::AddCustomContext("gpuprobe_sweep", ctx.options.quick ? "quick" : "full");

  register_all_probes();

  // Google Benchmark parses what is left; it reports unknown flags itself.
  std::vector<char*> gb_argv;
  for (auto& a : args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;

  run_selection();  // once timed; under application replay, then once per counter pass
  benchmark::Shutdown();

  if (!ctx.options.benchmark_out.empty()) {
    const std::string partial = ctx.options.benchmark_out + ".partial";
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
