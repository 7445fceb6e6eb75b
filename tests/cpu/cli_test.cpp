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

Result run_gpuprobe(const std::string& flags) {
  // One file per test: ctest runs these tests as separate processes, in parallel with -j.
  const std::string err_file = ::testing::TempDir() + "gpuprobe_cli_stderr_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
  const std::string cmd = std::string(GPUPROBE_EXE) + " " + flags + " >/dev/null 2>" + err_file;
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

}  // namespace
