// gpuprobe's own command-line flags. They are parsed (and removed from argv) before Google
// Benchmark sees the rest, so every --benchmark_* flag keeps working unchanged. Every flag, ours and
// Google Benchmark's, is checked here before the GPU is opened: a mistyped flag is a usage error on
// any machine, never reported as "no usable GPU".
#pragma once

#include <cstdint>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace gpuprobe {

struct Options {
  int device = 0;                 // --device=N
  bool device_from_rank = false;  // --device=local-rank: the launcher's node-local rank picks it (fleet.hpp)
  std::string preset;             // --preset=NAME: the entries of a preset (fleet.hpp), e.g. fleet
  bool list_presets = false;      // --list-presets: print the presets (JSON) and exit
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
  bool list_families = false;     // --list-families: print the family records (JSON) and exit
  std::string benchmark_out;      // the --benchmark_out=FILE the user gave (written via FILE.partial)
  std::string benchmark_out_format = "json";  // --benchmark_out_format (also left for Google Benchmark)
  bool list_tests = false;        // --benchmark_list_tests (also left for Google Benchmark)
};

// Parses and removes gpuprobe's flags from args (args[0] is the program name). Rewrites
// --benchmark_out=FILE to --benchmark_out=FILE.partial so that an incomplete run never leaves a
// file that looks complete. Throws UsageError on a malformed or out-of-range value, including the
// syntax of --counters (its metric names are checked against the device's catalog later).
Options parse_options(std::vector<std::string>& args);

// Hands what parse_options left to Google Benchmark's parser (benchmark::Initialize), which removes
// the flags it knows. Throws UsageError naming the first flag nobody knows, or the value Google
// Benchmark could not read (its own complaint, which it would print besides, is taken as the message).
void initialize_benchmark_flags(std::vector<std::string>& args);

// --benchmark_filter as Google Benchmark applies it (1.7: "" and "all" select everything, a leading
// '-' negates, otherwise a POSIX extended regex searched in the entry's instance name), compiled up
// front so that a bad expression is a usage error before the GPU is opened.
class EntryFilter {
 public:
  explicit EntryFilter(const std::string& spec);  // throws UsageError when the regex does not compile
  bool matches(const std::string& instance_name) const;
  const std::string& spec() const { return spec_; }
  // False when the expression alone shows that no entry of these families can match: every entry's
  // name is its family's name, then '/' or its end, and an anchored filter ("^memory\.lat...") whose
  // literal start fits no family's name selects nothing on any GPU. True whenever that is not
  // certain (unanchored, alternatives, a negated filter): then only the GPU's entries can tell.
  bool may_match_families(const std::vector<std::string>& families) const;

 private:
  std::string spec_;
  bool negative_ = false;
  std::string expression_;  // spec_ as Google Benchmark searches it ("" and "all" read as ".")
  std::regex re_;
};

// After the probes are registered, before the run: throws UsageError when `filter` selects none of
// `entries`. Its one line ends in the `left_out` notes (what registration left out and why, "FAMILY:
// why", FAMILY a name or glob over `families`) on a family the filter may select: there, the notes
// are why nothing matched. Only a selection that runs prints `notes` (the run's own: GPU not idle, no
// counter permission), then `left_out`, on `out`, one "gpuprobe: NOTE" line each (the same note
// once), so that a run ending in a usage error prints that error and nothing else.
void check_selection(const EntryFilter& filter, const std::vector<std::string>& entries,
                     const std::vector<std::string>& families, const std::vector<std::string>& left_out,
                     const std::vector<std::string>& notes, std::FILE* out);

// Throws UsageError unless FILE.partial, which the run writes and renames to FILE, can be created:
// an unwritable --benchmark_out would otherwise surface only after the GPU is set up.
void check_output_writable(const std::string& benchmark_out);

// "64K", "1M", "4G", "1048576" -> bytes. Throws UsageError.
std::uint64_t parse_bytes(const std::string& text, const std::string& flag);

std::string usage_text();

}  // namespace gpuprobe
