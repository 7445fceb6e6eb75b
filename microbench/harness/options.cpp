#include "options.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "fleet.hpp"
#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_sets.hpp"

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

// Google Benchmark 1.7 checks these values only inside benchmark::Initialize, where a bad one makes
// it print its help and exit with status 0: a usage error that would end as success.
void check_format(const std::string& flag, const std::string& value) {
  if (value != "console" && value != "json" && value != "csv")
    throw UsageError(flag + "=" + value + ": write console, json or csv");
}

// A boolean flag's value as Google Benchmark reads it (IsTruthyFlagValue in its commandlineflags.cc):
// a bare flag and an empty value are true; one character is false when 0/f/n or not alphanumeric;
// longer values are false when false/no/off, in any case.
bool truthy(const std::string& arg, const std::string& flag) {
  std::string v;
  if (arg == flag || !take_value(arg, flag, v) || v.empty()) return true;  // the caller matched flag[=...]
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v.size() == 1) return std::isalnum(static_cast<unsigned char>(v[0])) && v != "0" && v != "f" && v != "n";
  return v != "false" && v != "no" && v != "off";
}

// The built-in counter sets for --help, each name with its purpose wrapped under it (one source:
// profilers/src/metric_sets.cpp).
std::string counter_set_lines() {
  const std::string indent(28, ' ');
  const std::size_t width = 94;  // the widest line of the text around it
  std::string out;
  for (const auto& set : profilers::builtin_metric_sets()) {
    std::string line = indent + "  " + set.name + ":";
    std::istringstream words(set.purpose);
    for (std::string word; words >> word;) {
      if (line.size() + 1 + word.size() > width) {
        out += line + "\n";
        line = indent + "    ";
      } else {
        line += ' ';
      }
      line += word;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::uint64_t parse_bytes(const std::string& text, const std::string& flag) {
  const std::string form = " needs a size: a whole number of bytes, or of K, M or G (e.g. 64K, 1M, 4G)";
  if (text.empty()) throw UsageError(flag + form);
  std::string digits = text;
  std::uint64_t scale = 1;
  const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (suffix == 'K' || suffix == 'M' || suffix == 'G') {
    scale = suffix == 'K' ? (1ull << 10) : suffix == 'M' ? (1ull << 20) : (1ull << 30);
    digits.pop_back();
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw UsageError(flag + form + ", got '" + text + "'");
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
      opt.device_from_rank = v == "local-rank";
      if (!opt.device_from_rank) opt.device = static_cast<int>(parse_int(v, "--device", 0, 1023));
    } else if (take_value(a, "--preset", v)) {
      if (!find_preset(v)) throw UsageError("--preset=" + v + ": no such preset (" + preset_names() + ")");
      opt.preset = v;
    } else if (a == "--list-presets") {
      opt.list_presets = true;
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
      profilers::parse_counter_spec(v);  // the syntax and set names now; the backend parses it again
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
    } else if (a == "--list-families") {
      opt.list_families = true;
    } else if (take_value(a, "--benchmark_out", v)) {
      if (v.empty()) throw UsageError("--benchmark_out needs a file name");
      opt.benchmark_out = v;
      rest.push_back("--benchmark_out=" + v + ".partial");
    } else if (take_value(a, "--benchmark_out_format", v)) {
      check_format("--benchmark_out_format", v);
      opt.benchmark_out_format = v;
      rest.push_back(a);
    } else if (take_value(a, "--benchmark_format", v)) {
      check_format("--benchmark_format", v);
      rest.push_back(a);
    } else if (a == "--benchmark_list_tests" || a.rfind("--benchmark_list_tests=", 0) == 0) {
      opt.list_tests = truthy(a, "--benchmark_list_tests");
      rest.push_back(a);
    } else if (a == "--device" || a == "--samples" || a == "--max-footprint" || a == "--counters" ||
               a == "--papi-events" || a == "--exclude" || a == "--launch-gate" || a == "--preset") {
      throw UsageError(a + " needs a value: write " + a + "=VALUE");
    } else {
      rest.push_back(a);  // Google Benchmark's (it rejects what it does not know)
    }
  }
  // One file per rank: OUT.json -> OUT.rank<k>.json, k the launcher's global rank.
  if (opt.device_from_rank && !opt.benchmark_out.empty() && !opt.list_tests) {
    const RankInfo rank = rank_from_environment([](const char* name) { return std::getenv(name); });
    for (auto& r : rest)
      if (r == "--benchmark_out=" + opt.benchmark_out + ".partial")
        r = "--benchmark_out=" + rank_file_name(opt.benchmark_out, rank.rank) + ".partial";
    opt.benchmark_out = rank_file_name(opt.benchmark_out, rank.rank);
  }
  args = rest;
  return opt;
}

void initialize_benchmark_flags(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  // Google Benchmark reports a value it cannot read on std::cerr and leaves the flag in argv.
  std::ostringstream complaint;
  std::streambuf* const cerr_buffer = std::cerr.rdbuf(complaint.rdbuf());
  benchmark::Initialize(&argc, argv.data());
  std::cerr.rdbuf(cerr_buffer);
  std::vector<std::string> left(argv.begin(), argv.begin() + argc);
  args = left;
  if (left.size() <= 1) return;
  std::string why = complaint.str();
  why = why.substr(0, why.find('\n'));
  if (why.empty())
    why = std::string(left[1].rfind("-", 0) == 0 ? "unknown flag " : "unexpected argument ") + left[1];
  throw UsageError(why + " (gpuprobe --help lists the flags)");
}

EntryFilter::EntryFilter(const std::string& spec) : spec_(spec) {
  std::string re = spec;
  if (re.empty() || re == "all") re = ".";
  if (re[0] == '-') {
    negative_ = true;
    re.erase(0, 1);
  }
  expression_ = re;
  try {
    re_ = std::regex(re, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw UsageError("--benchmark_filter=" + spec + " is not a valid regular expression (POSIX extended, as " +
                     "Google Benchmark reads it): " + e.what());
  }
}

bool EntryFilter::matches(const std::string& instance_name) const {
  return std::regex_search(instance_name, re_) != negative_;
}

bool EntryFilter::may_match_families(const std::vector<std::string>& families) const {
  const std::string& re = expression_;
  // Only "^literal..." without alternatives is decided: '|' anywhere may open an unanchored branch.
  if (negative_ || re.empty() || re[0] != '^' || re.find('|') != std::string::npos) return true;
  // The literal text every match starts with: up to the first operator; an escaped punctuation
  // character is itself; a character that a quantifier may repeat zero times is not certain.
  const std::string operators = ".[]()*+?{}^$\\";
  std::string start;
  for (std::size_t i = 1; i < re.size(); ++i) {
    char c = re[i];
    std::size_t next = i + 1;
    if (c == '\\') {
      if (next >= re.size() || std::isalnum(static_cast<unsigned char>(re[next]))) break;
      c = re[next++];
    } else if (operators.find(c) != std::string::npos) {
      break;
    }
    if (next < re.size() && (re[next] == '*' || re[next] == '?' || re[next] == '{')) break;
    start += c;
    i = next - 1;
  }
  for (const std::string& family : families) {
    if (family.compare(0, start.size(), start) == 0) return true;  // the start is a start of the family's name
    if (start.compare(0, family.size(), family) == 0 && (start.size() == family.size() || start[family.size()] == '/'))
      return true;  // the start is the family's name, then its entry's axes
  }
  return false;
}

namespace {
// Whether a left-out note concerns a family `filter` may select. A note's subject (before its first
// ": ") names a family or is a glob over them; a subject that names none concerns every filter.
bool note_concerns_filter(const std::string& note, const EntryFilter& filter,
                          const std::vector<std::string>& families) {
  const std::string subject = note.substr(0, note.find(": "));
  std::vector<std::string> named;
  for (const std::string& family : families)
    if (fnmatch(subject.c_str(), family.c_str(), 0) == 0) named.push_back(family);
  return named.empty() || filter.may_match_families(named);
}
}  // namespace

void check_selection(const EntryFilter& filter, const std::vector<std::string>& entries,
                     const std::vector<std::string>& families, const std::vector<std::string>& left_out,
                     const std::vector<std::string>& notes, std::FILE* out) {
  std::vector<std::string> unique_left_out;  // a registrar asked twice (the multi-GPU kernels' GPU counts) notes once
  for (const std::string& note : left_out)
    if (std::find(unique_left_out.begin(), unique_left_out.end(), note) == unique_left_out.end())
      unique_left_out.push_back(note);
  if (std::none_of(entries.begin(), entries.end(), [&](const std::string& e) { return filter.matches(e); })) {
    std::string why;
    for (const std::string& note : unique_left_out)
      if (note_concerns_filter(note, filter, families)) why += "; " + note;
    throw UsageError("--benchmark_filter=" + filter.spec() + " matches none of the " + std::to_string(entries.size()) +
                     " entries on this GPU (--benchmark_list_tests lists them)" + why);
  }
  std::set<std::string> printed;
  auto print = [&](const std::vector<std::string>& list) {
    for (const std::string& note : list)
      if (printed.insert(note).second) std::fprintf(out, "gpuprobe: %s\n", note.c_str());
  };
  print(notes);
  print(unique_left_out);
}

void check_output_writable(const std::string& benchmark_out) {
  std::error_code ignored;  // a path that cannot be inspected is left to the open below
  if (std::filesystem::is_directory(benchmark_out, ignored))
    throw UsageError("--benchmark_out=" + benchmark_out + " is a directory: name a file");
  const std::string partial = benchmark_out + ".partial";
  const bool existed = std::ifstream(partial).good();
  errno = 0;
  // Append: probing must not truncate a FILE.partial an earlier run left (the run itself will).
  std::ofstream probe(partial, std::ios::app);
  if (!probe)
    throw UsageError("--benchmark_out=" + benchmark_out + ": cannot write " + partial +
                     (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()));
  probe.close();
  if (!existed) std::remove(partial.c_str());
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
      "  --device=N              GPU to measure (default 0); --device=local-rank: the GPU of the\n"
      "                          launcher's node-local rank (srun, mpirun), each rank writing\n"
      "                          --benchmark_out=OUT.json as OUT.rank<k>.json (docs/fleet.md)\n"
      "  --preset=fleet          the fleet health check's entries only (DRAM, L2, FP32/FP64, clock\n"
      "                          under load, DRAM latency, launch rate, pinned H2D/D2H, P2P;\n"
      "                          with --benchmark_filter a usage error; docs/fleet.md)\n"
      "  --list-presets          print the presets' figures (JSON) and exit; needs no GPU\n"
      "  --samples=N             samples per entry, overriding each probe's default\n"
      "  --quick                 coarse sweeps (smoke runs and tests)\n"
      "  --max-footprint=SIZE    largest footprint of the memory/transfer sweeps (default 4G;\n"
      "                          K/M/G suffixes); when given, also the largest kernel benchmark\n"
      "                          (default for kernels: 80% of device memory)\n"
      "  --counters=SET[,SET]    hardware counters in an untimed replay: the sets below, or Nsight\n"
      "                          Compute metric names; replay=kernel for CUPTI's per-kernel\n"
      "                          replay, replay=application to time the selection first, then\n"
      "                          replay it once per CUPTI pass (fast for many entries); see\n"
      "                          docs/counters.md\n" +
      counter_set_lines() +
      "  --papi-events=LIST      PAPI events read around the same ranges\n"
      "  --exclude=RE            leave out the entries whose name matches RE (ECMAScript regex;\n"
      "                          --benchmark_filter then selects among the rest)\n"
      "  --launch-gate=on|off    on (default): event-timed entries queue their work behind a\n"
      "                          gate kernel, so the time is the GPU's, without the host's\n"
      "                          submission of the launches; off: the start event is taken\n"
      "                          as the host begins to submit (entries say which: launch_gated)\n"
      "  --list-families         print every probe family's record (name, figure, unit, method,\n"
      "                          axes with units and roles, fields, premise) as JSON and exit;\n"
      "                          needs no GPU (docs/results-schema.md, \"Family records\")\n"
      "  --help                  this text\n"
      "\n"
      "Useful Google Benchmark flags:\n"
      "  --benchmark_list_tests  list the entries (they follow the GPU: needs one; --list-families\n"
      "                          needs none)\n"
      "  --benchmark_filter=RE   run the entries matching RE (e.g. '^memory\\.latency'); matching\n"
      "                          none is a usage error\n"
      "  --benchmark_out=FILE    write JSON to FILE (kept as FILE.partial if the run fails)\n"
      "\n"
      "Every flag is checked before the GPU is opened, and so is a filter starting with '^' whose\n"
      "text names no family (e.g. '^no_such'); whether any other filter selects an entry, only the\n"
      "GPU's entries tell.\n"
      "Exit codes: 0 success, 1 a GPU/runtime error during the run, 2 a usage error (\"gpuprobe: usage\n"
      "error: ...\") or no usable GPU (\"gpuprobe: no usable GPU: ...\").\n";
}

}  // namespace gpuprobe
