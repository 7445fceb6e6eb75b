// The executable's behaviour on bad input, checked by running it: one line on stderr naming the
// cause, exit code 2, no result file presented as complete.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct Result {
  int exit_code;
  std::string stderr_text;
};

// `env`: variables set for this run only ("CUDA_VISIBLE_DEVICES=0").
Result run_gpuprobe(const std::string& flags, const std::string& env = "") {
  // One file per test: ctest runs these tests as separate processes, in parallel with -j.
  const std::string err_file = ::testing::TempDir() + "gpuprobe_cli_stderr_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
  const std::string cmd =
      (env.empty() ? "" : "env " + env + " ") + GPUPROBE_EXE + " " + flags + " >/dev/null 2>" + err_file;
  const int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

TEST(Cli, HelpWorksWithoutAGpu) {
  EXPECT_EQ(run_gpuprobe("--help").exit_code, 0);
}

TEST(Cli, MalformedFlagExitsTwoWithOneLine) {
  const Result r = run_gpuprobe("--samples=zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("--samples needs an integer"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
}

TEST(Cli, MissingDeviceExitsTwoAndWritesNoCompleteFile) {
  const std::string out = ::testing::TempDir() + "gpuprobe_cli_out.json";
  std::remove(out.c_str());
  // On a machine without a GPU this names the missing GPU; with one, the missing index.
  const Result r = run_gpuprobe("--device=999 --benchmark_out=" + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.stderr_text.find("no usable GPU") != std::string::npos ||
              r.stderr_text.find("--device=999 does not exist") != std::string::npos)
      << r.stderr_text;
  EXPECT_FALSE(std::ifstream(out).good());
}

// A usage error: exit code 2, one line "gpuprobe: usage error: ..." holding `what`, and never
// the GPU's state (every flag is checked before the GPU is opened, so this holds on any machine).
void expect_usage_error(const Result& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.rfind("gpuprobe: usage error: ", 0), 0u) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(what), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("no usable GPU"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string fresh_output(const std::string& tag) {
  const std::string out = ::testing::TempDir() + "gpuprobe_cli_" + tag + ".json";
  std::remove(out.c_str());
  std::remove((out + ".partial").c_str());
  return out;
}

TEST(Cli, DeviceThatIsNoNumberIsAUsageError) {
  expect_usage_error(run_gpuprobe("--device=abc"), "--device needs an integer, got 'abc'");
}

TEST(Cli, UnknownFlagIsAUsageError) {
  expect_usage_error(run_gpuprobe("--bogus"), "unknown flag --bogus (gpuprobe --help lists the flags)");
  expect_usage_error(run_gpuprobe("--quick stray"), "unexpected argument stray");
}

TEST(Cli, GoogleBenchmarkFlagWithABadValueIsAUsageError) {
  expect_usage_error(run_gpuprobe("--benchmark_repetitions=abc"), "--benchmark_repetitions");
  // Google Benchmark itself would print its help and exit 0 here.
  expect_usage_error(run_gpuprobe("--benchmark_format=xml"), "--benchmark_format=xml: write console, json or csv");
}

TEST(Cli, CountersSyntaxIsAUsageError) {
  expect_usage_error(run_gpuprobe("--counters=bogus"), "--counters: unknown metric set 'bogus'");
}

TEST(Cli, FilterThatDoesNotCompileIsAUsageErrorAndWritesNothing) {
  const std::string out = fresh_output("bad_filter");
  expect_usage_error(run_gpuprobe("'--benchmark_filter=(memory' --benchmark_out=" + out),
                     "--benchmark_filter=(memory is not a valid regular expression");
  EXPECT_FALSE(exists(out));
  EXPECT_FALSE(exists(out + ".partial"));
}

TEST(Cli, UnwritableOutputIsAUsageError) {
  expect_usage_error(run_gpuprobe("--benchmark_out=/nonexistent-dir/r.json"),
                     "--benchmark_out=/nonexistent-dir/r.json: cannot write /nonexistent-dir/r.json.partial");
  const std::string dir = ::testing::TempDir();
  expect_usage_error(run_gpuprobe("--benchmark_out=" + dir), "is a directory: name a file");
}

// Decided from the family names, before the GPU is opened: the same one line on every machine.
TEST(Cli, FilterMatchingNothingExitsTwoAndWritesNothing) {
  const std::string out = fresh_output("no_match");
  expect_usage_error(run_gpuprobe("'--benchmark_filter=^no_such_entry$' --benchmark_out=" + out),
                     "--benchmark_filter=^no_such_entry$ matches none of the entries: every entry's name starts "
                     "with its family's name (gpuprobe --list-families lists the ");
  EXPECT_FALSE(exists(out));
  EXPECT_FALSE(exists(out + ".partial"));
}

// A filter naming a family but none of its entries is known only from the GPU's entries. On a GPU
// machine this run registers everything, and registration has notes to give (one GPU: no
// transfer.p2p, no collectives, no multi-GPU kernels): the usage error must still be the only line.
TEST(Cli, FilterMatchingNoEntryOfAFamilyPrintsOnlyTheUsageError) {
  const std::string out = fresh_output("no_entry_of_family");
  const Result r = run_gpuprobe("'--benchmark_filter=^memory\\.latency/no_such_axis' --benchmark_out=" + out);
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  if (r.stderr_text.rfind("gpuprobe: no usable GPU: ", 0) != 0)
    EXPECT_EQ(r.stderr_text.rfind("gpuprobe: usage error: --benchmark_filter=^memory\\.latency/no_such_axis matches "
                                  "none of the ", 0),
              0u) << r.stderr_text;
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
  EXPECT_FALSE(exists(out));
  EXPECT_FALSE(exists(out + ".partial"));
}

// On one GPU, a filter for the peer-to-peer family selects nothing: the one line says why (the note
// registration gave), not only that nothing matched.
TEST(Cli, FilterForAFamilyLeftOutHereSaysWhy) {
  const Result r =
      run_gpuprobe("'--benchmark_filter=^transfer\\.p2p/' --benchmark_list_tests", "CUDA_VISIBLE_DEVICES=0");
  if (r.stderr_text.rfind("gpuprobe: no usable GPU: ", 0) == 0) GTEST_SKIP() << "no GPU: nothing is registered";
  expect_usage_error(r, "--benchmark_filter=^transfer\\.p2p/ matches none of the ");
  EXPECT_NE(r.stderr_text.find(" entries on this GPU (--benchmark_list_tests lists them); "
                               "transfer.p2p: skipped, 1 GPU"),
            std::string::npos)
      << r.stderr_text;
}

TEST(Cli, ListTestsWithoutAGpuSaysItNeedsOne) {
  const Result r = run_gpuprobe("--benchmark_list_tests");
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is present: its entries were listed";
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.rfind("gpuprobe: no usable GPU: ", 0), 0u) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("; --benchmark_list_tests lists the entries registered from a GPU's own facts, so it needs "
                               "one (--list-families lists the families without a GPU)"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
}

TEST(Cli, SizeWithAnUnknownSuffixIsAUsageError) {
  expect_usage_error(run_gpuprobe("--max-footprint=12Q"),
                     "--max-footprint needs a size: a whole number of bytes, or of K, M or G (e.g. 64K, 1M, 4G), "
                     "got '12Q'");
}

}  // namespace
