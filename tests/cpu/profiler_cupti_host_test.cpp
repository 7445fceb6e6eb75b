// CUPTI's host side needs no GPU: given the chip name it knows GH100's metrics and schedules passes.
// These tests check our built-in sets against the real catalog of the H100 we measure on, on every
// CI run: every name valid, the roofline set within 2 passes, typos answered with the right names.
// Only where the build has the Range Profiling API (cmake/cuda_toolkit.cmake).
#ifdef GPUPROBE_HAVE_CUPTI_RANGE_PROFILER
#include <gtest/gtest.h>

#include <algorithm>

#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cupti.hpp"
#include "gpuprobe/cupti_host.hpp"

namespace gp = gpuprobe::profilers;

namespace {

const gp::CuptiHost& gh100() {
  static const gp::CuptiHost host("GH100");
  return host;
}

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpuprobe::UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(CuptiHostGH100, EveryBuiltInMetricIsValid) {
  for (const auto& set : gp::builtin_metric_sets())
    for (const auto& m : set.metrics) EXPECT_TRUE(gh100().is_valid(m)) << set.name << ": " << m;
}

TEST(CuptiHostGH100, PassesPerSet) {
  // The budget: the roofline set in at most 2 passes. The others are what they cost today;
  // a change here means the schedule changed and docs/counters.md needs the new number.
  EXPECT_LE(gh100().passes(gp::find_metric_set("roofline")->metrics), 2u);
  EXPECT_EQ(gh100().passes(gp::find_metric_set("memory")->metrics), 5u);
  EXPECT_EQ(gh100().passes(gp::find_metric_set("occupancy")->metrics), 1u);
  // The premise checks ride along the main job's counter run: 2 passes, alone or with roofline.
  EXPECT_EQ(gh100().passes(gp::find_metric_set("premise")->metrics), 2u);
  EXPECT_EQ(gh100().passes(gp::validate_metrics(gp::parse_counter_spec("roofline,premise"), gh100()).metrics), 2u);
  EXPECT_EQ(gh100().passes(std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum"}), 1u);
}

TEST(CuptiHostGH100, CatalogIsTheFullOne) {
  const auto bases = gh100().base_names();
  EXPECT_GT(bases.size(), 3000u);  // 3389 counters + 205 ratios + 56 throughputs on GH100 (some shared)
  EXPECT_TRUE(std::binary_search(bases.begin(), bases.end(), "dram__bytes_read"));
  const auto sfx = gh100().suffixes("dram__bytes_read");
  EXPECT_NE(std::find(sfx.begin(), sfx.end(), ".sum.per_second"), sfx.end());
}

TEST(CuptiHostGH100, TypoGetsTheIntendedName) {
  const std::string msg = usage_error_of(
      [] { gp::validate_metrics(gp::parse_counter_spec("roofline,dram__bytes_reed.sum"), gh100()); });
  EXPECT_NE(msg.find("unknown metric 'dram__bytes_reed.sum' on GH100"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dram__bytes_read.sum"), std::string::npos) << msg;
  const auto near = gp::closest_metric_names("dram__bytes_read.summ", gh100(), 3);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "dram__bytes_read.sum");
}

TEST(CuptiHostGH100, NcuOnlyNamesAreRejected) {
  // Nsight Compute computes these itself; CUPTI does not know them (shared/notes/counters.md).
  EXPECT_FALSE(gh100().is_valid("launch__registers_per_thread"));
  EXPECT_FALSE(gh100().is_valid("l1tex__lsu_writeback_active_mem_lg.sum"));
  EXPECT_TRUE(gh100().is_valid("l1tex__lsu_writeback_active_mem_lgds.sum"));
}

TEST(CuptiHost, UnknownChipIsACuptiError) {
  EXPECT_THROW(gp::CuptiHost("GX999"), gpuprobe::CuptiError);
}

}  // namespace

#endif  // GPUPROBE_HAVE_CUPTI_RANGE_PROFILER
