// Fleet mode (microbench/harness/fleet.hpp): the launcher's ranks, the per-rank file names, the exact
// filter of a preset's selection, and the preset's declaration as the binary prints it (the analysis
// tests' copy must equal it). No GPU.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>

#include "gpuprobe/check.hpp"
#include "harness/fleet.hpp"

namespace gpuprobe {
namespace {

RankInfo ranks(std::map<std::string, std::string> vars) {
  return rank_from_environment([&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(FleetRanks, SlurmGivesGlobalAndNodeLocalRanks) {
  const RankInfo r = ranks({{"SLURM_PROCID", "13"}, {"SLURM_LOCALID", "5"}, {"SLURM_NTASKS_PER_NODE", "8"}});
  EXPECT_EQ(r.rank, 13);
  EXPECT_EQ(r.local_rank, 5);
  EXPECT_EQ(r.local_size, 8);
  EXPECT_EQ(r.source, "SLURM_PROCID/SLURM_LOCALID");
  EXPECT_FALSE(r.mpi);
}

TEST(FleetRanks, OpenMpiVariables) {
  const RankInfo r = ranks({{"OMPI_COMM_WORLD_RANK", "9"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  EXPECT_EQ(r.rank, 9);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.local_size, 2);  // at least local_rank + 1 where no size is given
}

TEST(FleetRanks, PmiRankAloneIsTakenAsNodeLocal) {
  const RankInfo r = ranks({{"PMI_RANK", "3"}});
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.local_rank, 3);
  EXPECT_NE(r.source.find("as node-local"), std::string::npos) << r.source;
}

TEST(FleetRanks, NoLauncherOrABadValueIsAUsageError) {
  EXPECT_THROW(ranks({}), UsageError);
  EXPECT_THROW(ranks({{"SLURM_LOCALID", "x1"}}), UsageError);
  EXPECT_THROW(ranks({{"SLURM_LOCALID", "-1"}}), UsageError);
}

TEST(FleetRanks, EachRankItsOwnFile) {
  EXPECT_EQ(rank_file_name("out/fleet.json", 7), "out/fleet.rank7.json");
  EXPECT_EQ(rank_file_name("out/fleet", 0), "out/fleet.rank0");
}

TEST(FleetPreset, ExactFilterSelectsOnlyTheNamedInstances) {
  const std::string a = "memory.bandwidth/kernel:read/vector:16/footprint:4294967296/iterations:10/manual_time";
  const std::string b = "exec.launch_rate/api:triple_chevron/grid:1/iterations:10/manual_time";
  const std::regex re(exact_filter({a, b}), std::regex::extended);
  EXPECT_TRUE(std::regex_search(a, re));
  EXPECT_TRUE(std::regex_search(b, re));
  EXPECT_FALSE(std::regex_search("memory.bandwidth/kernel:read/vector:16/footprint:42949672960/iterations:10/manual_time", re));
  EXPECT_FALSE(std::regex_search("exec.launch_rate/api:triple_chevron/grid:132/iterations:10/manual_time", re));
  // A '.' is literal: "memoryXbandwidth" is no match.
  EXPECT_FALSE(std::regex_search("memoryXbandwidth/kernel:read/vector:16/footprint:4294967296/iterations:10/manual_time", re));
}

// The binary checks its declarations (preset_problems) before printing them; the analysis tests'
// fixture is a copy of what it prints, kept equal here.
TEST(FleetPreset, ListPresetsWorksWithoutAGpuAndMatchesTheAnalysisFixture) {
  const std::string out_file = ::testing::TempDir() + "gpuprobe_list_presets.json";
  const std::string cmd = std::string(GPUPROBE_EXE) + " --list-presets >" + out_file + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(out_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* figure : {"\"figure\":\"DRAM read\"", "\"figure\":\"DRAM write\"", "\"figure\":\"L2 read\"",
                             "\"figure\":\"FP32\"", "\"figure\":\"FP64\"", "\"figure\":\"SM clock under load\"",
                             "\"figure\":\"DRAM latency\"", "\"figure\":\"Launch rate\"", "\"figure\":\"Pinned H2D\"",
                             "\"figure\":\"Pinned D2H\"", "\"figure\":\"P2P write, slowest neighbour\""})
    EXPECT_NE(text.find(figure), std::string::npos) << figure;
  // Directions derived from the records: a launch's time is lower-is-better, a bandwidth higher.
  EXPECT_NE(text.find("\"figure\":\"Launch rate\",\"family\":\"exec.launch_rate\",\"axes\":{\"api\":\"triple_chevron\","
                      "\"grid\":\"1\"},\"field\":\"value_median\",\"unit\":\"ns\",\"better\":\"lower\""),
            std::string::npos);
  std::ifstream fixture(std::string(GPUPROBE_SOURCE_DIR) + "/analysis/tests/data/presets.json");
  ASSERT_TRUE(fixture.good());
  const std::string copy((std::istreambuf_iterator<char>(fixture)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(copy == text) << "analysis/tests/data/presets.json differs from gpuprobe --list-presets: regenerate "
                               "it with build/gpuprobe --list-presets > analysis/tests/data/presets.json";
}

TEST(FleetPreset, UnknownPresetAndFilterBesideItAreUsageErrors) {
  for (const char* args : {" --preset=nope", " --preset=fleet --benchmark_filter=memory", " --preset"}) {
    const int status = std::system((std::string(GPUPROBE_EXE) + args + " >/dev/null 2>&1").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
  }
}

}  // namespace
}  // namespace gpuprobe
