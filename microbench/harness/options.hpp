// gpuprobe's own command-line flags. They are parsed (and removed from argv) before Google
// Benchmark sees the rest, so every --benchmark_* flag keeps working unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe {

struct Options {
  int device = 0;                 // --device=N
  int samples = 0;                // --samples=N overrides each probe's default; 0 = probe default
  bool quick = false;             // --quick: coarse sweeps (tests, smoke runs)
  std::uint64_t max_footprint_bytes = std::uint64_t(4) << 30;  // --max-footprint=BYTES[K|M|G]
  // The kernel benchmarks' sizes are fixed (the 512..32768), so the 4G default caps only
  // the memory sweeps; an explicit --max-footprint caps the kernels' matrices too.
  bool max_footprint_given = false;
  std::string counters;           // --counters=SET[,SET...] (empty: timing only)
  std::string papi_events;        // --papi-events=EV1,EV2
  std::string exclude;            // --exclude=RE: entries whose name matches are not registered
  bool launch_gate = true;        // --launch-gate=on|off: event-timed entries start behind a launch gate
  bool help = false;              // --help
  std::string benchmark_out;      // the --benchmark_out=FILE the user gave (written via FILE.partial)
  std::string benchmark_out_format = "json";  // --benchmark_out_format (also left for Google Benchmark)
};

// Parses and removes gpuprobe's flags from args (args[0] is the program name). Rewrites
// --benchmark_out=FILE to --benchmark_out=FILE.partial so that an incomplete run never leaves a
// file that looks complete. Throws UsageError on a malformed or out-of-range value.
Options parse_options(std::vector<std::string>& args);

// "64K", "1M", "4G", "1048576" -> bytes. Throws UsageError.
std::uint64_t parse_bytes(const std::string& text, const std::string& flag);

std::string usage_text();

}  // namespace gpuprobe
