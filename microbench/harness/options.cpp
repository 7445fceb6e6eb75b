#include "options.hpp"

#include <cctype>
#include <limits>
#include <regex>

#include "gpuprobe/check.hpp"

namespace gpuprobe {
namespace {

bool take_value(const std::string& arg, const std::string& flag, std::string& value) {
  const std::string prefix = flag + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  value = arg.substr(prefix.size());
  return true;
}

long long parse_int(const std::string& text, const std::string& flag, long long lo, long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw UsageError(flag + " needs an integer, got '" + text + "'");
  }
  if (used != text.size()) throw UsageError(flag + " needs an integer, got '" + text + "'");
  if (v < lo || v > hi)
    throw UsageError(flag + "=" + text + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return v;
}

}  // namespace

std::uint64_t parse_bytes(const std::string& text, const std::string& flag) {
  if (text.empty()) throw UsageError(flag + " needs a size such as 64K, 1M or 4G");
  std::string digits = text;
  std::uint64_t scale = 1;
  const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (suffix == 'K' || suffix == 'M' || suffix == 'G') {
    scale = suffix == 'K' ? (1ull << 10) : suffix == 'M' ? (1ull << 20) : (1ull << 30);
    digits.pop_back();
  }
  const long long v = parse_int(digits, flag, 1, std::numeric_limits<long long>::max() / (1ll << 30));
  return static_cast<std::uint64_t>(v) * scale;
}

Options parse_options(std::vector<std::string>& args) {
  Options opt;
  std::vector<std::string> rest;
  if (!args.empty()) rest.push_back(args[0]);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (take_value(a, "--device", v)) {
      opt.device = static_cast<int>(parse_int(v, "--device", 0, 1023));
    } else if (take_value(a, "--samples", v)) {
      opt.samples = static_cast<int>(parse_int(v, "--samples", 1, 100000));
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (take_value(a, "--max-footprint", v)) {
      opt.max_footprint_bytes = parse_bytes(v, "--max-footprint");
      opt.max_footprint_given = true;
      if (opt.max_footprint_bytes < (64u << 10))
        throw UsageError("--max-footprint=" + v + " is below the smallest swept footprint (64K)");
    } else if (take_value(a, "--counters", v)) {
      if (v.empty()) throw UsageError("--counters needs a metric set name (see --help)");
      opt.counters = v;
    } else if (take_value(a, "--papi-events", v)) {
      if (v.empty()) throw UsageError("--papi-events needs a comma-separated list of PAPI events");
      opt.papi_events = v;
    } else if (take_value(a, "--exclude", v)) {
      if (v.empty()) throw UsageError("--exclude needs a regular expression");
      try {
        std::regex check(v);
      } catch (const std::regex_error& e) {
        throw UsageError("--exclude=" + v + " is not a valid regular expression (" + e.what() + ")");
      }
      opt.exclude = v;
    } else if (take_value(a, "--launch-gate", v)) {
      if (v != "on" && v != "off") throw UsageError("--launch-gate=" + v + ": write on or off");
      opt.launch_gate = v == "on";
    } else if (a == "--help" || a == "-h") {
      opt.help = true;
    } else if (take_value(a, "--benchmark_out", v)) {
      if (v.empty()) throw UsageError("--benchmark_out needs a file name");
      opt.benchmark_out = v;
      rest.push_back("--benchmark_out=" + v + ".partial");
    } else if (take_value(a, "--benchmark_out_format", v)) {
      opt.benchmark_out_format = v;  // Google Benchmark validates it
      rest.push_back(a);
    } else if (a == "--device" || a == "--samples" || a == "--max-footprint" || a == "--counters" ||
               a == "--papi-events" || a == "--exclude" || a == "--launch-gate") {
      throw UsageError(a + " needs a value: write " + a + "=VALUE");
    } else {
      rest.push_back(a);  // Google Benchmark's (it rejects what it does not know)
    }
  }
  args = rest;
  return opt;
}

std::string usage_text() {
  return
      "usage: gpuprobe [gpuprobe flags] [Google Benchmark flags]\n"
      "\n"
      "Measures a GPU (memory latency/bandwidth, pipelines, launches, barriers, transfers) and\n"
      "benchmarks SYMV/GEMV/SGEMM kernels. Results: Google Benchmark JSON whose context records\n"
      "the GPU and whose entries record parameters, statistics over raw samples and the SM clock\n"
      "(schema: docs/results-schema.md).\n"
      "\n"
      "gpuprobe flags:\n"
      "  --device=N              GPU to measure (default 0)\n"
      "  --samples=N             samples per entry, overriding each probe's default\n"
      "  --quick                 coarse sweeps (smoke runs and tests)\n"
      "  --max-footprint=SIZE    largest footprint of the memory/transfer sweeps (default 4G;\n"
      "                          K/M/G suffixes); when given, also the largest kernel benchmark\n"
      "                          (default for kernels: 80% of device memory)\n"
      "  --counters=SET[,SET]    hardware counters in an untimed replay (sets: roofline, memory,\n"
      "                          occupancy, or Nsight Compute metric names; replay=kernel for\n"
      "                          CUPTI's per-kernel replay, replay=application to time the\n"
      "                          selection first, then replay it once per CUPTI pass (fast for\n"
      "                          many entries); see docs/counters.md)\n"
      "  --papi-events=LIST      PAPI events read around the same ranges\n"
      "  --exclude=RE            leave out the entries whose name matches RE (ECMAScript regex;\n"
      "                          --benchmark_filter then selects among the rest)\n"
      "  --launch-gate=on|off    on (default): event-timed entries queue their work behind a\n"
      "                          gate kernel, so the time is the GPU's, without the host's\n"
      "                          submission of the launches; off: the start event is taken\n"
      "                          as the host begins to submit (entries say which: launch_gated)\n"
      "  --help                  this text\n"
      "\n"
      "Useful Google Benchmark flags:\n"
      "  --benchmark_list_tests  list the entries\n"
      "  --benchmark_filter=RE   run the entries matching RE (e.g. '^memory\\.latency')\n"
      "  --benchmark_out=FILE    write JSON to FILE (kept as FILE.partial if the run fails)\n"
      "\n"
      "Exit codes: 0 success, 1 a GPU/runtime error during the run, 2 usage error or no GPU.\n";
}

}  // namespace gpuprobe
