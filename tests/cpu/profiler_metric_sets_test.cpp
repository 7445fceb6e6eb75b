// The --counters syntax, the built-in sets, validation errors with suggestions, derived figures and
// the combination of per-kernel ranges. Pure logic: a small fake catalog stands in for the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_sets.hpp"

namespace gp = gpuprobe::profilers;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpuprobe::UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

// Knows dram__bytes_{read,write} and gpu__time_duration with suffixes .sum/.avg/.sum.per_second.
class FakeCatalog final : public gp::MetricCatalog {
 public:
  std::string device_name() const override { return "FAKE100"; }
  bool is_valid(const std::string& m) const override {
    const auto dot = m.find('.');
    if (dot == std::string::npos) return false;
    const auto s = suffixes(m.substr(0, dot));
    return contains(s, m.substr(dot));
  }
  std::vector<std::string> base_names() const override {
    return {"dram__bytes_read", "dram__bytes_write", "gpu__time_duration"};
  }
  std::vector<std::string> suffixes(const std::string& base) const override {
    if (!contains(base_names(), base)) return {};
    return {".avg", ".sum", ".sum.per_second"};
  }
};

TEST(MetricSpec, RooflineSetHasTheIssuesMetrics) {
  const gp::CounterSpec spec = gp::parse_counter_spec("roofline");
  EXPECT_EQ(spec.sets, std::vector<std::string>{"roofline"});
  EXPECT_TRUE(spec.user_metrics.empty());
  EXPECT_EQ(spec.replay, gp::ReplayMode::kUser);
  for (const char* m : {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
                        "l1tex__t_bytes.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "sm__cycles_elapsed.avg.per_second"})
    EXPECT_TRUE(contains(spec.metrics, m)) << m;
}

TEST(MetricSpec, SetsAndNamesMergeWithoutDuplicates) {
  const gp::CounterSpec spec = gp::parse_counter_spec("roofline, memory,dram__bytes.sum,replay=kernel");
  EXPECT_EQ(spec.sets, (std::vector<std::string>{"roofline", "memory"}));
  EXPECT_EQ(spec.user_metrics, std::vector<std::string>{"dram__bytes.sum"});
  EXPECT_EQ(spec.replay, gp::ReplayMode::kKernel);
  const std::set<std::string> unique(spec.metrics.begin(), spec.metrics.end());
  EXPECT_EQ(unique.size(), spec.metrics.size());
  EXPECT_EQ(spec.metrics.front(), "gpu__time_duration.sum");  // order of first mention
  EXPECT_EQ(spec.metrics.back(), "dram__bytes.sum");
}

TEST(MetricSpec, ApplicationReplayIsAReplayMode) {
  EXPECT_EQ(gp::parse_counter_spec("roofline,replay=application").replay, gp::ReplayMode::kApplication);
  EXPECT_EQ(gp::parse_counter_spec("replay=user,roofline").replay, gp::ReplayMode::kUser);
}

TEST(MetricSpec, MalformedSpecsAreUsageErrors) {
  EXPECT_NE(usage_error_of([] { gp::parse_counter_spec("roofline,,memory"); }).find("empty item"), std::string::npos);
  const std::string typo = usage_error_of([] { gp::parse_counter_spec("roofine"); });
  EXPECT_NE(typo.find("unknown metric set 'roofine'"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean 'roofline'"), std::string::npos) << typo;
  EXPECT_NE(usage_error_of([] { gp::parse_counter_spec("roofline,replay=range"); }).find("replay must be"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] { gp::parse_counter_spec("replay=kernel"); }).find("names no metric"),
            std::string::npos);
}

TEST(MetricSpec, EditDistance) {
  EXPECT_EQ(gp::edit_distance("", "abc"), 3u);
  EXPECT_EQ(gp::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(gp::edit_distance("dram__bytes_read", "dram__bytes_read"), 0u);
}

TEST(MetricValidation, UnknownUserMetricListsClosestValidNames) {
  const FakeCatalog catalog;
  const std::string msg = usage_error_of([&] {
    gp::validate_metrics(gp::parse_counter_spec("dram__bytes_reed.sum"), catalog);
  });
  EXPECT_NE(msg.find("unknown metric 'dram__bytes_reed.sum' on FAKE100"), std::string::npos) << msg;
  EXPECT_NE(msg.find("closest valid names: dram__bytes_read.sum"), std::string::npos) << msg;
}

TEST(MetricValidation, ValidBaseWithBadSuffixSuggestsSuffixes) {
  const FakeCatalog catalog;
  const auto near = gp::closest_metric_names("dram__bytes_read.summ", catalog, 2);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "dram__bytes_read.sum");
}

TEST(MetricValidation, InvalidSetMembersAreDroppedNotFatal) {
  const FakeCatalog catalog;
  gp::CounterSpec spec;
  spec.metrics = {"dram__bytes_read.sum", "lts__t_bytes.sum"};  // as if from a built-in set
  const gp::ValidatedMetrics v = gp::validate_metrics(spec, catalog);
  EXPECT_EQ(v.metrics, std::vector<std::string>{"dram__bytes_read.sum"});
  EXPECT_EQ(v.dropped, std::vector<std::string>{"lts__t_bytes.sum"});
  spec.metrics = {"lts__t_bytes.sum"};
  EXPECT_NE(usage_error_of([&] { gp::validate_metrics(spec, catalog); }).find("none of the requested"),
            std::string::npos);
}

TEST(DerivedMetrics, FlopsBytesAndSectorsPerRequest) {
  const std::string s = "sm__sass_thread_inst_executed_op_";
  gp::MetricValues v{{s + "ffma_pred_on.sum", 100}, {s + "fadd_pred_on.sum", 10}, {s + "fmul_pred_on.sum", 1},
                     {s + "dfma_pred_on.sum", 7},   {s + "dadd_pred_on.sum", 0},  {s + "dmul_pred_on.sum", 3},
                     {"dram__bytes_read.sum", 4096}, {"dram__bytes_write.sum", 1024},
                     {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 400},
                     {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100},
                     {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0},
                     {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0}};
  gp::add_derived_metrics(v);
  EXPECT_DOUBLE_EQ(v["gpuprobe__fp32_flop"], 211);
  EXPECT_DOUBLE_EQ(v["gpuprobe__fp64_flop"], 17);
  EXPECT_DOUBLE_EQ(v["gpuprobe__dram_bytes"], 5120);
  EXPECT_DOUBLE_EQ(v["gpuprobe__global_ld_sectors_per_request"], 4);
  EXPECT_EQ(v.count("gpuprobe__global_st_sectors_per_request"), 0u);  // no requests: no ratio, not NaN
  EXPECT_EQ(v.count("gpuprobe__local_bytes"), 0u);                     // inputs absent
}

TEST(CombineRanges, CountsAddRatesAreTimeWeighted) {
  const std::vector<gp::MetricValues> ranges = {
      {{"gpu__time_duration.sum", 300}, {"dram__bytes_read.sum", 1000}, {"sm__cycles_elapsed.avg.per_second", 2e9}},
      {{"gpu__time_duration.sum", 100}, {"dram__bytes_read.sum", 24}, {"sm__cycles_elapsed.avg.per_second", 1e9}}};
  const gp::MetricValues c = gp::combine_ranges(ranges);
  EXPECT_DOUBLE_EQ(c.at("gpu__time_duration.sum"), 400);
  EXPECT_DOUBLE_EQ(c.at("dram__bytes_read.sum"), 1024);
  EXPECT_DOUBLE_EQ(c.at("sm__cycles_elapsed.avg.per_second"), 1.75e9);
  EXPECT_TRUE(gp::combine_ranges({}).empty());
}

}  // namespace
