// The family record (microbench/harness/family.hpp): entry names are built and checked from its axes,
// the counters and tags of an entry derive from its name, Measurement accepts only what the record
// declares, and the records go out as JSON. No GPU: the samples are synthetic.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "gpuprobe/check.hpp"
#include "harness/application_replay.hpp"
#include "harness/family.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {
namespace {

const ProbeDescriptor kChase =
    ProbeDescriptor{"test.chase", Figure::kCyclesPerOp, "synthetic chase", "", 3, 0}
        .titled("Synthetic chase")
        .with_axes({text_axis("load", AxisRole::kGroup), numeric_axis("stride", "bytes", AxisRole::kGroup),
                    numeric_axis("footprint", "bytes", AxisRole::kX),
                    numeric_axis("blocks_per_sm", "blocks", AxisRole::kGroup).outside_name()})
        .with_fields({numeric_field("elements", "elements"), text_field("pattern"),
                      numeric_field("local_bytes_gpu<i>", "bytes")});

template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FamilyRecord, EntryNamesAreBuiltFromTheAxesInOrder) {
  EXPECT_EQ(entry_name(kChase, {{"load", "ca"}, {"stride", "128"}, {"footprint", "4096"}}),
            "test.chase/load:ca/stride:128/footprint:4096");
  const ProbeDescriptor none = ProbeDescriptor{"test.none", Figure::kBandwidth, "m", "", 1, 0}.titled("t");
  EXPECT_EQ(entry_name(none, {}), "test.none");
}

TEST(FamilyRecord, AnUndeclaredKeyIsRejectedAtRegistration) {
  // The old spelling of an axis is not the axis.
  const std::string undeclared = error_of([] {
    entry_name(kChase, {{"load", "ca"}, {"stride_bytes", "128"}, {"footprint", "4096"}});
  });
  EXPECT_NE(undeclared.find("key 'stride_bytes' is not an in-name axis of the record of test.chase"),
            std::string::npos) << undeclared;
  EXPECT_NE(undeclared.find("load, stride, footprint"), std::string::npos) << undeclared;
  // A field or an axis outside the name is no name key either.
  EXPECT_THROW(entry_name(kChase, {{"load", "ca"}, {"stride", "1"}, {"footprint", "1"}, {"blocks_per_sm", "1"}}),
               Error);
  EXPECT_THROW(entry_name(kChase, {{"load", "ca"}, {"stride", "1"}, {"footprint", "1"}, {"elements", "1"}}), Error);
  // Out of order, missing, a numeric axis that is no number, a value that would break the name.
  EXPECT_NE(error_of([] { entry_name(kChase, {{"stride", "128"}, {"load", "ca"}, {"footprint", "1"}}); })
                .find("out of order"),
            std::string::npos);
  EXPECT_NE(error_of([] { entry_name(kChase, {{"load", "ca"}, {"stride", "128"}}); }).find("lacks axis 'footprint'"),
            std::string::npos);
  EXPECT_NE(error_of([] { entry_name(kChase, {{"load", "ca"}, {"stride", "wide"}, {"footprint", "1"}}); })
                .find("numeric axis 'stride' has the value 'wide'"),
            std::string::npos);
  EXPECT_THROW(entry_name(kChase, {{"load", "c/a"}, {"stride", "1"}, {"footprint", "1"}}), Error);
  EXPECT_THROW(entry_name(kChase, {{"load", ""}, {"stride", "1"}, {"footprint", "1"}}), Error);

  // register_entry checks a name built elsewhere the same way (before --exclude: a bad name is the
  // probe's bug whether or not it runs).
  EXPECT_THROW(register_entry("test.chase/load:ca/stride:128", kChase, [](benchmark::State&) {}), Error);
  EXPECT_THROW(register_entry("test.other/load:ca/stride:1/footprint:1", kChase, [](benchmark::State&) {}), Error);
  EXPECT_THROW(register_entry("test.chase/load:ca/stride:1/footprint:1/extra:2", kChase, [](benchmark::State&) {}),
               Error);
}

TEST(FamilyRecord, ProblemsOfARecordAreNamed) {
  EXPECT_TRUE(record_problems(kChase).empty());
  auto problems_of = [](const ProbeDescriptor& d) {
    std::string all;
    for (const std::string& p : record_problems(d)) all += p + "\n";
    return all;
  };
  const ProbeDescriptor base = ProbeDescriptor{"test.bad", Figure::kBandwidth, "m", "", 1, 0}.titled("t");
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_axes({text_axis("a", AxisRole::kGroup),
                                                         text_axis("a", AxisRole::kGroup)}))
                .find("axis 'a' declared twice"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_axes({numeric_axis("n", "", AxisRole::kX)})).find("has no unit"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_axes({numeric_axis("m", "rows", AxisRole::kX),
                                                         numeric_axis("n", "rows", AxisRole::kX)}))
                .find("more than one x axis"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_axes({text_axis("a", AxisRole::kGroup)}).with_fields(
                            {text_field("a")}))
                .find("'a' declared twice"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_ops({{"ffma", "FP32", 2, ""}})).find("without a text axis 'op'"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).with_axes({text_axis("op", AxisRole::kGroup)}).with_ops(
                            {{"iadd3", "FP32", 0, ""}}))
                .find("a precision goes with flops per op > 0"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor{"test.untitled", Figure::kBandwidth, "m", "", 1, 0}).find("no title"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor{"test.unitless", Figure::kValue, "m", "", 1, 0}.titled("t"))
                .find("Figure::kValue needs a unit"),
            std::string::npos);
}

// Captures the runs Google Benchmark reports.
class CaptureReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) captured[r.benchmark_name()] = r;
  }
  std::map<std::string, Run> captured;
};

// The compute ceiling of a kernel family's work: one for every entry, or one per value of its text
// axis `precision`, each a known ceiling; an entry of a precision the record leaves out is refused.
const ProbeDescriptor kBlas =
    ProbeDescriptor{"test.blas", Figure::kBandwidth, "synthetic kernel", "", 3, 0}
        .titled("Synthetic kernel")
        .with_axes({text_axis("precision", AxisRole::kGroup), numeric_axis("n", "rows", AxisRole::kX)})
        .computing_by_precision({{"s", "FP32"}, {"d", "FP64"}});

TEST(FamilyRecord, ComputeCeilingsAreDeclaredOnceAndChecked) {
  EXPECT_TRUE(record_problems(kBlas).empty());
  EXPECT_EQ(kBlas.compute_ceiling("s"), "FP32");
  EXPECT_EQ(kBlas.compute_ceiling("d"), "FP64");
  EXPECT_EQ(kBlas.compute_ceiling("h"), "");
  const ProbeDescriptor base = ProbeDescriptor{"test.bad", Figure::kFlopRate, "m", "", 1, 0}.titled("t");
  const ProbeDescriptor one = ProbeDescriptor(base).computing("FP32");
  EXPECT_TRUE(record_problems(one).empty());
  EXPECT_EQ(one.compute_ceiling(""), "FP32");
  EXPECT_EQ(one.compute_ceiling("anything"), "FP32");
  EXPECT_EQ(base.compute_ceiling(""), "");  // none declared

  auto problems_of = [](const ProbeDescriptor& d) {
    std::string all;
    for (const std::string& p : record_problems(d)) all += p + "\n";
    return all;
  };
  EXPECT_NE(problems_of(ProbeDescriptor(base).computing_by_precision({{"s", "FP32"}}))
                .find("compute ceilings by precision declared without a text axis 'precision'"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base)
                            .with_axes({numeric_axis("precision", "bits", AxisRole::kGroup)})
                            .computing_by_precision({{"s", "FP32"}}))
                .find("without a text axis 'precision'"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base).computing("fp32")).find("unknown compute ceiling 'fp32'"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base)
                            .with_axes({text_axis("precision", AxisRole::kGroup)})
                            .computing_by_precision({{"s", "FP32"}, {"d", "TF64"}}))
                .find("unknown compute ceiling 'TF64'"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base)
                            .with_axes({text_axis("precision", AxisRole::kGroup)})
                            .computing_by_precision({{"s", "FP32"}, {"s", "FP64"}}))
                .find("compute ceiling of precision 's' declared twice"),
            std::string::npos);
  EXPECT_NE(problems_of(ProbeDescriptor(base)
                            .with_axes({text_axis("precision", AxisRole::kGroup)})
                            .computing_by_precision({{"", "FP32"}, {"d", "FP64"}}))
                .find("a compute ceiling for every entry goes alone"),
            std::string::npos);

  // Entry names: a precision the record declares no ceiling for is refused where the entry is named.
  EXPECT_EQ(entry_name(kBlas, {{"precision", "d"}, {"n", "64"}}), "test.blas/precision:d/n:64");
  const std::string missing = error_of([] { entry_name(kBlas, {{"precision", "h"}, {"n", "64"}}); });
  EXPECT_NE(missing.find("precision 'h' has no compute ceiling in the record"), std::string::npos) << missing;
  EXPECT_THROW(check_entry_name(kBlas, "test.blas/precision:z/n:1"), Error);
  EXPECT_THROW(register_entry("test.blas/precision:h/n:1", kBlas, [](benchmark::State&) {}), Error);
  // The same for a precision outside the name, written by the probe as a tag.
  const ProbeDescriptor outside =
      ProbeDescriptor{"test.blas_tagged", Figure::kBandwidth, "synthetic kernel", "", 3, 0}
          .titled("Synthetic kernel")
          .with_axes({text_axis("precision", AxisRole::kGroup).outside_name(), numeric_axis("n", "rows", AxisRole::kX)})
          .computing_by_precision({{"s", "FP32"}});
  EXPECT_NO_THROW(check_axis_value(outside, "precision", "s"));
  EXPECT_THROW(check_axis_value(outside, "precision", "d"), Error);
  benchmark::ClearRegisteredBenchmarks();
  auto tag_errors = std::make_shared<std::map<std::string, std::string>>();
  benchmark::RegisterBenchmark("test.blas_tagged.refusal", [&outside, tag_errors](benchmark::State& st) {
    Measurement m(st, outside, Work{1, 0, 0});
    (*tag_errors)["d"] = error_of([&] { m.tag("precision", "d"); });
    (*tag_errors)["s"] = error_of([&] { m.tag("precision", "s"); });
    for (auto _ : st) st.SetIterationTime(1e-6);
  })->Iterations(1)->UseManualTime();
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_NE((*tag_errors)["d"].find("precision 'd' has no compute ceiling"), std::string::npos) << (*tag_errors)["d"];
  EXPECT_EQ((*tag_errors)["s"], "");
  EXPECT_NO_THROW(check_axis_value(one, "precision", "x"));  // one ceiling for every entry: any precision
  EXPECT_NO_THROW(check_axis_value(base, "precision", "x"));  // none declared: nothing to contradict

  // JSON: the map in declaration order, "" for one ceiling of every entry; absent where none is declared.
  EXPECT_NE(family_record_json(kBlas).find("\"compute\":{\"s\":\"FP32\",\"d\":\"FP64\"}"), std::string::npos)
      << family_record_json(kBlas);
  EXPECT_NE(family_record_json(one).find("\"compute\":{\"\":\"FP32\"}"), std::string::npos) << family_record_json(one);
  EXPECT_EQ(family_record_json(base).find("\"compute\""), std::string::npos);
}

TEST(FamilyRecord, CountersAndTagsDeriveFromTheName) {
  benchmark::ClearRegisteredBenchmarks();
  register_entry(entry_name(kChase, {{"load", "cg"}, {"stride", "128"}, {"footprint", "65536"}}), kChase,
                 [](benchmark::State& st) {
                   Measurement m(st, kChase, Work{0, 0, 100});
                   m.param("blocks_per_sm", 2);  // an axis outside the name: the probe writes it
                   m.param("elements", 512);
                   m.param("local_bytes_gpu3", 7);  // a "<i>" field
                   m.tag("pattern", "random");
                   m.tag("load", "cg");  // an in-name text axis: allowed with the name's value, not repeated
                   m.run([] { Sample s; s.seconds = 1e-6; s.cycles = 3000; return s; }, {});
                 });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  const std::string instance = "test.chase/load:cg/stride:128/footprint:65536/iterations:3/manual_time";
  ASSERT_EQ(reporter.captured.count(instance), 1u);
  const auto& run = reporter.captured[instance];
  EXPECT_DOUBLE_EQ(run.counters.at("stride").value, 128);
  EXPECT_DOUBLE_EQ(run.counters.at("footprint").value, 65536);
  EXPECT_DOUBLE_EQ(run.counters.at("blocks_per_sm").value, 2);
  EXPECT_DOUBLE_EQ(run.counters.at("elements").value, 512);
  EXPECT_DOUBLE_EQ(run.counters.at("local_bytes_gpu3").value, 7);
  EXPECT_EQ(run.counters.count("load"), 0u);  // text: a tag
  EXPECT_EQ(run.report_label, "probe=test.chase;unit=cycles;method=synthetic chase;load=cg;pattern=random");
}

// Measurement refuses what the record does not declare, and a tag that contradicts the name. The
// entry is registered with Google Benchmark directly (register_entry would end the process on the
// exception, as it must in the binary), so the name's axes are not derived here.
TEST(FamilyRecord, MeasurementAcceptsOnlyDeclaredAxesAndFields) {
  benchmark::ClearRegisteredBenchmarks();
  auto errors = std::make_shared<std::map<std::string, std::string>>();
  benchmark::RegisterBenchmark("test.chase.refusals", [errors](benchmark::State& st) {
    Measurement m(st, kChase, Work{0, 0, 1});
    (*errors)["undeclared counter"] = error_of([&] { m.param("footprint_bytes", 1); });
    (*errors)["text as counter"] = error_of([&] { m.param("pattern", 1); });
    (*errors)["numeric as tag"] = error_of([&] { m.tag("elements", "x"); });
    (*errors)["undeclared tag"] = error_of([&] { m.tag("api", "graph"); });
    (*errors)["undeclared extra"] = error_of([&] { m.extra("bogus", 1); });
    (*errors)["indexed field without index"] = error_of([&] { m.param("local_bytes_gpu", 1); });
    (*errors)["declared"] = error_of([&] {
      m.param("elements", 1);
      m.tag("pattern", "x");
      m.harness_counter("a_settle_passes", 3);  // the harness's own fields are not the family's
    });
    for (auto _ : st) st.SetIterationTime(1e-6);
  })->Iterations(1)->UseManualTime();
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(errors->size(), 7u);
  EXPECT_NE((*errors)["undeclared counter"].find("counter 'footprint_bytes' is not a numeric axis or field of the "
                                                 "record of test.chase"),
            std::string::npos)
      << (*errors)["undeclared counter"];
  for (const char* k : {"text as counter", "numeric as tag", "undeclared tag", "undeclared extra",
                        "indexed field without index"})
    EXPECT_FALSE((*errors)[k].empty()) << k;
  EXPECT_EQ((*errors)["declared"], "");
}

TEST(FamilyRecord, ATagContradictingTheNameIsRefused) {
  benchmark::ClearRegisteredBenchmarks();
  auto error = std::make_shared<std::string>();
  // register_entry sets the entry's name, the body catches before the harness's guard sees it.
  register_entry(entry_name(kChase, {{"load", "ca"}, {"stride", "8"}, {"footprint", "1024"}}), kChase,
                 [error](benchmark::State& st) {
                   Measurement m(st, kChase, Work{0, 0, 1});
                   *error = error_of([&] { m.tag("load", "cg"); });
                   for (auto _ : st) st.SetIterationTime(1e-6);
                 });
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_NE(error->find("tag load=cg contradicts the entry name's load:ca"), std::string::npos) << *error;
}

TEST(FamilyRecord, JsonHoldsTheAxesUnitsRolesFieldsAndOps) {
  const ProbeDescriptor pipe =
      ProbeDescriptor{"test.pipe", Figure::kValue, "quote \" and backslash \\", "ops/clk/SM", 1, 0, 0, true,
                      Premise::l2()}
          .titled("Pipe")
          .with_axes({text_axis("op", AxisRole::kGroup), numeric_axis("ilp", "chains per thread", AxisRole::kX)})
          .with_ops({{"ffma", "FP32", 2, "sm__x"}, {"iadd3", "", 0, ""}});
  const std::string j = family_record_json(pipe);
  for (const char* part :
       {"\"family\":\"test.pipe\"", "\"title\":\"Pipe\"", "\"figure\":\"value\"", "\"unit\":\"ops/clk/SM\"", "\"better\":\"higher\"",
        "\"method\":\"quote \\\" and backslash \\\\\"", "\"entry_name\":\"test.pipe/op:<op>/ilp:<ilp>\"",
        "\"premise\":{\"level\":\"L2\",\"rule\":\"SM-sourced L2",
        "{\"name\":\"op\",\"type\":\"text\",\"unit\":\"\",\"role\":\"group\",\"in_name\":true}",
        "{\"name\":\"ilp\",\"type\":\"numeric\",\"unit\":\"chains per thread\",\"role\":\"x\",\"in_name\":true}",
        "\"fields\":[]", "{\"name\":\"ffma\",\"precision\":\"FP32\",\"flops_per_op\":2,\"premise_metric\":\"sm__x\"}",
        "{\"name\":\"iadd3\",\"precision\":\"\",\"flops_per_op\":0"})
    EXPECT_NE(j.find(part), std::string::npos) << part << "\n" << j;
  EXPECT_EQ(family_record_json(kChase).find("\"ops\""), std::string::npos);  // only where declared
}

// The console shows the context without the family records; the rest passes through unchanged.
TEST(FamilyRecord, ConsoleContextLeavesTheRecordsOut) {
  class Printing : public benchmark::BenchmarkReporter {
   public:
    bool ReportContext(const Context&) override {
      GetErrorStream() << "gpu_name: Fake\n" << kFamiliesContextKey << ": [{\"family\":\"x\"}]\nafter: 1\n";
      GetOutputStream() << "out\n";
      return true;
    }
    void ReportRuns(const std::vector<Run>&) override {}
  } inner;
  ContextLineFilter filter(&inner, {kFamiliesContextKey});
  std::ostringstream out, err;
  filter.SetOutputStream(&out);
  filter.SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context context;
  EXPECT_TRUE(filter.ReportContext(context));
  EXPECT_EQ(err.str(), "gpu_name: Fake\nafter: 1\n");
  EXPECT_EQ(out.str(), "out\n");
}

// The binary's own records: every one valid, listed without a GPU, each family once.
TEST(FamilyRecord, ListFamiliesWorksWithoutAGpu) {
  const std::string out_file = ::testing::TempDir() + "gpuprobe_list_families.json";
  const std::string cmd = std::string(GPUPROBE_EXE) + " --list-families >" + out_file + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(out_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(text.rfind("[\n{\"family\":", 0), 0u) << text.substr(0, 200);
  for (const char* family : {"\"family\":\"memory.latency\"", "\"family\":\"exec.throughput\"",
                             "\"family\":\"kernels.symv\"", "\"family\":\"kernels.sgemm\"",
                             "\"family\":\"transfer.p2p\"", "\"family\":\"kernels.symv_mgpu\""})
    EXPECT_NE(text.find(family), std::string::npos) << family;
  // The kernels' compute ceilings, declared with their records.
  for (const char* compute : {"\"compute\":{\"s\":\"FP32\",\"d\":\"FP64\"}", "\"compute\":{\"\":\"FP32\"}"})
    EXPECT_NE(text.find(compute), std::string::npos) << compute;
  // Spelled once: the axis is footprint in the name and in the counter, never footprint_bytes.
  EXPECT_EQ(text.find("footprint_bytes"), std::string::npos);
  EXPECT_NE(text.find("\"entry_name\":\"memory.latency/pattern:<pattern>/load:<load>/stride:<stride>/"
                      "footprint:<footprint>\""),
            std::string::npos);

  // The analysis tests' synthetic files carry these records (analysis/tests/synth.py): a copy, kept
  // equal to the binary's here, so that a record changed in C++ is changed for the tests too.
  std::ifstream fixture(std::string(GPUPROBE_SOURCE_DIR) + "/analysis/tests/data/families.json");
  ASSERT_TRUE(fixture.good());
  const std::string copy((std::istreambuf_iterator<char>(fixture)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(copy == text) << "analysis/tests/data/families.json differs from gpuprobe --list-families: "
                               "regenerate it with build/gpuprobe --list-families > analysis/tests/data/families.json";
}

}  // namespace
}  // namespace gpuprobe
