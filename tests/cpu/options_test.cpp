#include "harness/options.hpp"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_sets.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

std::vector<std::string> argv_of(std::initializer_list<const char*> a) {
  std::vector<std::string> v{"gpuprobe"};
  for (const char* s : a) v.emplace_back(s);
  return v;
}

TEST(Options, OwnFlagsAreRemovedOthersKept) {
  auto args = argv_of({"--device=1", "--benchmark_filter=memory", "--quick", "--samples=7"});
  const Options o = parse_options(args);
  EXPECT_EQ(o.device, 1);
  EXPECT_TRUE(o.quick);
  EXPECT_EQ(o.samples, 7);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1], "--benchmark_filter=memory");
}

TEST(Options, BenchmarkOutIsWrittenThroughPartialFile) {
  auto args = argv_of({"--benchmark_out=r.json"});
  const Options o = parse_options(args);
  EXPECT_EQ(o.benchmark_out, "r.json");
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1], "--benchmark_out=r.json.partial");
}

TEST(Options, MaxFootprintRemembersWhetherItWasGiven) {
  auto defaults = argv_of({});
  const Options d = parse_options(defaults);
  EXPECT_FALSE(d.max_footprint_given);
  EXPECT_EQ(d.max_footprint_bytes, 4ull << 30);
  auto given = argv_of({"--max-footprint=20G"});
  const Options g = parse_options(given);
  EXPECT_TRUE(g.max_footprint_given);
  EXPECT_EQ(g.max_footprint_bytes, 20ull << 30);
}

TEST(Options, ExcludeTakesAValidRegex) {
  auto args = argv_of({"--exclude=_v3|oblivious"});
  EXPECT_EQ(parse_options(args).exclude, "_v3|oblivious");
  for (const char* bad : {"--exclude=", "--exclude=(unclosed", "--exclude"}) {
    auto a = argv_of({bad});
    EXPECT_THROW(parse_options(a), UsageError) << bad;
  }
}

TEST(Options, LaunchGateIsOnUnlessTurnedOff) {
  auto defaults = argv_of({});
  EXPECT_TRUE(parse_options(defaults).launch_gate);
  auto off = argv_of({"--launch-gate=off"});
  EXPECT_FALSE(parse_options(off).launch_gate);
  EXPECT_TRUE(off.size() == 1u);  // removed: Google Benchmark would reject it
  auto on = argv_of({"--launch-gate=on"});
  EXPECT_TRUE(parse_options(on).launch_gate);
  for (const char* bad : {"--launch-gate=yes", "--launch-gate=", "--launch-gate"}) {
    auto a = argv_of({bad});
    EXPECT_THROW(parse_options(a), UsageError) << bad;
  }
}

std::string usage_error_of(std::vector<std::string> args, bool benchmark_flags = false) {
  try {
    parse_options(args);
    if (benchmark_flags) initialize_benchmark_flags(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no usage error)";
}

TEST(Options, SizesAcceptSuffixes) {
  EXPECT_EQ(parse_bytes("64K", "--x"), 64u << 10);
  EXPECT_EQ(parse_bytes("3m", "--x"), 3u << 20);
  EXPECT_EQ(parse_bytes("4G", "--x"), 4ull << 30);
  EXPECT_EQ(parse_bytes("1000", "--x"), 1000u);
}

TEST(Options, SizeWithAnUnknownSuffixNamesTheSuffixesAccepted) {
  for (const char* bad : {"12Q", "K", "1.5G", "-1K", "4 G"})
    EXPECT_EQ(std::string(usage_error_of(argv_of({("--max-footprint=" + std::string(bad)).c_str()}))),
              "--max-footprint needs a size: a whole number of bytes, or of K, M or G (e.g. 64K, 1M, 4G), got '" +
                  std::string(bad) + "'")
        << bad;
  EXPECT_EQ(usage_error_of(argv_of({"--max-footprint="})),
            "--max-footprint needs a size: a whole number of bytes, or of K, M or G (e.g. 64K, 1M, 4G)");
}

TEST(Options, HelpListsEveryCounterSet) {
  const std::string help = usage_text();
  for (const auto& set : profilers::builtin_metric_sets())
    EXPECT_NE(help.find("  " + set.name + ": "), std::string::npos) << set.name << "\n" << help;
  EXPECT_NE(help.find("  premise: bytes served per level"), std::string::npos) << help;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 94u) << line;  // the width the rest of the text keeps
}

TEST(Options, OutOfRangeAndMalformedValuesAreUsageErrors) {
  for (const char* bad : {"--device=-1", "--device=abc", "--device=", "--samples=0", "--samples=1e3",
                          "--max-footprint=1K", "--max-footprint=12Q", "--counters=", "--device",
                          "--benchmark_out="}) {
    auto args = argv_of({bad});
    EXPECT_THROW(parse_options(args), UsageError) << bad;
  }
}

TEST(Options, CountersSyntaxIsCheckedWithTheOtherFlags) {
  EXPECT_NE(usage_error_of(argv_of({"--counters=bogus"})).find("--counters: unknown metric set 'bogus'"),
            std::string::npos);
  EXPECT_NE(usage_error_of(argv_of({"--counters=roofline,replay=sometimes"})).find("replay must be"),
            std::string::npos);
  auto good = argv_of({"--counters=roofline,dram__bytes_read.sum,replay=application"});
  EXPECT_EQ(parse_options(good).counters, "roofline,dram__bytes_read.sum,replay=application");
}

TEST(Options, OutputFormatsGoogleBenchmarkWouldAnswerWithItsHelpAreUsageErrors) {
  // Google Benchmark 1.7 prints its help and exits 0 on these: a mistake that would end as success.
  EXPECT_NE(usage_error_of(argv_of({"--benchmark_format=xml"})).find("--benchmark_format=xml: write console, json or csv"),
            std::string::npos);
  EXPECT_NE(usage_error_of(argv_of({"--benchmark_out_format=yaml"})).find("--benchmark_out_format=yaml"),
            std::string::npos);
  auto good = argv_of({"--benchmark_format=console", "--benchmark_out_format=csv"});
  EXPECT_EQ(parse_options(good).benchmark_out_format, "csv");
}

TEST(Options, ListTestsIsNotedAndLeftForGoogleBenchmark) {
  auto bare = argv_of({"--benchmark_list_tests"});
  EXPECT_TRUE(parse_options(bare).list_tests);
  EXPECT_EQ(bare.size(), 2u);
  auto off = argv_of({"--benchmark_list_tests=false"});
  EXPECT_FALSE(parse_options(off).list_tests);
  for (const char* on : {"--benchmark_list_tests=true", "--benchmark_list_tests=", "--benchmark_list_tests=Y"}) {
    auto a = argv_of({on});
    EXPECT_TRUE(parse_options(a).list_tests) << on;
  }
  for (const char* off : {"--benchmark_list_tests=OFF", "--benchmark_list_tests=0", "--benchmark_list_tests=-"}) {
    auto a = argv_of({off});
    EXPECT_FALSE(parse_options(a).list_tests) << off;
  }
}

TEST(Options, FlagsNobodyKnowsAreUsageErrors) {
  EXPECT_EQ(usage_error_of(argv_of({"--bogus"}), true), "unknown flag --bogus (gpuprobe --help lists the flags)");
  EXPECT_EQ(usage_error_of(argv_of({"stray"}), true), "unexpected argument stray (gpuprobe --help lists the flags)");
  // A Google Benchmark flag with a value it cannot read: its own words, one line.
  const std::string bad_value = usage_error_of(argv_of({"--benchmark_repetitions=abc"}), true);
  EXPECT_NE(bad_value.find("--benchmark_repetitions"), std::string::npos) << bad_value;
  EXPECT_NE(bad_value.find("\"abc\""), std::string::npos) << bad_value;
  EXPECT_EQ(bad_value.find('\n'), std::string::npos) << bad_value;
  // Known flags pass and are removed; Google Benchmark keeps their values.
  auto good = argv_of({"--quick", "--benchmark_min_warmup_time=0", "--benchmark_filter=^memory"});
  parse_options(good);
  initialize_benchmark_flags(good);
  EXPECT_EQ(good.size(), 1u);
  EXPECT_EQ(benchmark::GetBenchmarkFilter(), "^memory");
  benchmark::SetBenchmarkFilter(".");
}

TEST(Options, FilterThatDoesNotCompileIsAUsageError) {
  try {
    EntryFilter bad("(memory");
    FAIL() << "accepted an unbalanced parenthesis";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--benchmark_filter=(memory is not a valid regular expression"),
              std::string::npos) << e.what();
  }
  // ECMAScript-only syntax that Google Benchmark's POSIX extended regex rejects.
  EXPECT_THROW(EntryFilter("^(?:kernels)"), UsageError);
}

// Decided before the GPU is opened: an anchored filter whose literal start fits no family's name
// ("FAMILY" then '/' or the end) selects nothing anywhere; anything less certain is left to the
// GPU's entries.
TEST(Options, FilterWhoseStartNamesNoFamilyCannotMatch) {
  const std::vector<std::string> families = {"memory.latency", "kernels.sgemm", "exec.latency"};
  for (const char* never : {"^no_such_entry$", "^memory\\.latencz", "^kernels\\.sgemm_v2", "^kernels\\.sgemmx+",
                            "^Memory", "^memory\\.latency\\.x", "^exec\\.latency:"})
    EXPECT_FALSE(EntryFilter(never).may_match_families(families)) << never;
  for (const char* maybe : {"", "all", "^memory", "^memory\\.latency/size:", "^memory\\.latency$", "^memory.latency",
                            "^kernels\\.sgem", "^kernels\\.sgemm/n", "^kernels\\.sgemmx?", "^kernels\\.sgemmx*",
                            "^kernels\\.sgemmx{0,1}", "^(no_such)", "^no_such|^memory", "no_such", "-^no_such",
                            "^[n]o_such", "^\\no_such"})
    EXPECT_TRUE(EntryFilter(maybe).may_match_families(families)) << maybe;
}

// A run that ends in a usage error prints that one line: the notes on what registration left out
// (on a one-GPU machine: no peer GPU, no collectives, no multi-GPU kernels) come only after the
// selection is known to run. Where nothing matched, the notes on the families the filter names end
// that line: they are why (a filter for transfer.p2p on one GPU); notes on other families stay out.
TEST(Options, SkipNotesFollowOnlyASelectionThatRunsOrExplainWhyNothingMatched) {
  const std::vector<std::string> entries = {"transfer.host/memory:pinned/size:4/manual_time"};
  const std::vector<std::string> families = {"transfer.host", "transfer.p2p", "kernels.symv_mgpu",
                                             "kernels.gemv_mgpu", "kernels.symv"};
  const std::vector<std::string> left_out = {"transfer.p2p: skipped, 1 GPU visible",
                                             "kernels.*_mgpu*: left out, they need 2 GPUs",
                                             "transfer.p2p: skipped, 1 GPU visible"};
  const std::vector<std::string> run_notes = {"warning: GPU 0 is not idle"};
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  auto written = [&] {
    std::fflush(out);
    std::string text(static_cast<std::size_t>(std::ftell(out)), '\0');
    std::rewind(out);
    text.resize(std::fread(text.data(), 1, text.size(), out));
    return text;
  };
  auto usage_error = [&](const std::string& spec) -> std::string {
    try {
      check_selection(EntryFilter(spec), entries, families, left_out, run_notes, out);
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << spec << ": a filter selecting nothing was accepted";
    return "";
  };
  const std::string none = " matches none of the 1 entries on this GPU (--benchmark_list_tests lists them)";
  EXPECT_EQ(usage_error("^transfer\\.host/memory:pageable"),
            "--benchmark_filter=^transfer\\.host/memory:pageable" + none);
  EXPECT_EQ(usage_error("^transfer\\.p2p"), "--benchmark_filter=^transfer\\.p2p" + none +
                                               "; transfer.p2p: skipped, 1 GPU visible");
  EXPECT_EQ(usage_error("^kernels\\.gemv_mgpu/"), "--benchmark_filter=^kernels\\.gemv_mgpu/" + none +
                                                   "; kernels.*_mgpu*: left out, they need 2 GPUs");
  EXPECT_EQ(usage_error("^kernels\\.symv/"), "--benchmark_filter=^kernels\\.symv/" + none);
  EXPECT_EQ(usage_error("mgpu"), "--benchmark_filter=mgpu" + none + "; transfer.p2p: skipped, 1 GPU visible" +
                                     "; kernels.*_mgpu*: left out, they need 2 GPUs");  // unanchored: may be any
  EXPECT_EQ(written(), "");
  check_selection(EntryFilter("pinned"), entries, families, left_out, run_notes, out);
  EXPECT_EQ(written(), "gpuprobe: warning: GPU 0 is not idle\ngpuprobe: transfer.p2p: skipped, 1 GPU visible\n"
                       "gpuprobe: kernels.*_mgpu*: left out, they need 2 GPUs\n");
  std::fclose(out);
}

// The filter is checked against the names register_entry records; Google Benchmark must select
// exactly the same entries, or a filter could pass the check and then run nothing.
TEST(Options, FilterSelectsWhatGoogleBenchmarkSelects) {
  static const ProbeDescriptor kFake = ProbeDescriptor{"test.filter", Figure::kTimePerOp, "synthetic", "", 3, 0}
                                           .with_axes({numeric_axis("x", "units", AxisRole::kX)});
  static const ProbeDescriptor kFakeKernel = ProbeDescriptor{"kernels.fake", Figure::kTimePerOp, "synthetic", "", 3, 0}
                                                 .with_axes({numeric_axis("n", "rows", AxisRole::kX)});
  benchmark::ClearRegisteredBenchmarks();
  context().entry_instances.clear();
  for (const char* n : {"test.filter/x:1", "test.filter/x:2", "kernels.fake/n:64"})
    register_entry(n, std::string(n).rfind("kernels", 0) == 0 ? kFakeKernel : kFake,
                   [](benchmark::State& st) { for (auto _ : st) st.SetIterationTime(1e-6); });
  ASSERT_EQ(context().entry_instances.size(), 3u);

  std::vector<std::string> list_flag = {"t", "--benchmark_list_tests=true"};
  initialize_benchmark_flags(list_flag);
  for (const std::string spec : {"", "all", "x:1", "-kernels", "^kernels\\.", "manual_time$", "iterations:3/",
                                 "^test\\.filter/x:[12]/iterations:3/manual_time$", "zzz", "-.", "x:1|n:64"}) {
    std::ostringstream listed, errors;
    benchmark::ConsoleReporter reporter;
    reporter.SetOutputStream(&listed);
    reporter.SetErrorStream(&errors);
    benchmark::RunSpecifiedBenchmarks(&reporter, spec);
    std::string ours;
    const EntryFilter filter(spec);
    for (const auto& e : context().entry_instances)
      if (filter.matches(e)) ours += e + "\n";
    EXPECT_EQ(ours, listed.str()) << "filter '" << spec << "'";
  }
  std::vector<std::string> run_flag = {"t", "--benchmark_list_tests=false"};
  initialize_benchmark_flags(run_flag);
  benchmark::ClearRegisteredBenchmarks();
  context().entry_instances.clear();
}

}  // namespace
}  // namespace gpuprobe
