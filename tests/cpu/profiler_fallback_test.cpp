// The fallback paths: without a GPU (this CI machine) --counters degrades to timing only with one
// line saying why; CUPTI's refusals each get a line that says what to do; PAPI events that cannot
// be counted are reported with PAPI's own text and the run goes on; a build without PAPI says so.
#include <cuda_runtime.h>
#include <cupti_version.h>
#include <gtest/gtest.h>

#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cupti.hpp"
#include "gpuprobe/profiler.hpp"

namespace gp = gpuprobe::profilers;

namespace {

bool gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bool any_line_has(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST(CounterFallback, NoGpuMeansTimingOnlyWithOneLine) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present; this path is checked where there is none";
  gp::BackendChoice c = gp::make_counter_backend({"roofline", "", 0});
  ASSERT_NE(c.backend, nullptr);
  EXPECT_EQ(c.backend->name(), "none");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].rfind("counters: ", 0), 0u) << c.notes[0];
  EXPECT_NE(c.notes[0].find("continuing with timing only"), std::string::npos) << c.notes[0];
  EXPECT_EQ(c.notes[0].find('\n'), std::string::npos);
  int runs = 0;
  EXPECT_TRUE(c.backend->collect("entry", [&] { ++runs; }).empty());
  EXPECT_EQ(runs, 0);  // timing only: no replay at all
  bool recorded = false;
  for (const auto& [k, v] : c.backend->context())
    if (k == "counters_unavailable" && !v.empty()) recorded = true;
  EXPECT_TRUE(recorded) << "the result file must say why it has no counters";
}

TEST(CounterFallback, BadSpecIsStillAUsageErrorWithoutGpu) {
  // The syntax is checked before the device is asked, so a typo never degrades silently.
  EXPECT_THROW(gp::make_counter_backend({"roofine", "", 0}), gpuprobe::UsageError);
}

TEST(CounterFallback, RefusalsSayWhatToDo) {
  const std::string privileges = gpuprobe::cupti_refusal_text(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  EXPECT_NE(privileges.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << privileges;
  EXPECT_NE(privileges.find("CUPTI 35"), std::string::npos) << privileges;
  EXPECT_NE(gpuprobe::cupti_refusal_text(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).find("ncu"), std::string::npos);
  EXPECT_NE(gpuprobe::cupti_refusal_text(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES).find("vGPU"),
            std::string::npos);
#if CUPTI_API_VERSION >= 26  // the MIG and WSL refusals have codes of their own from CUPTI 12.8 on
  EXPECT_NE(gpuprobe::cupti_refusal_text(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED).find("MIG"), std::string::npos);
  EXPECT_NE(gpuprobe::cupti_refusal_text(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED).find("WSL"), std::string::npos);
  for (CUptiResult code : {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                           CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED})
    EXPECT_EQ(gpuprobe::cupti_refusal_text(code).find('\n'), std::string::npos);
#endif
  // A programming error is not a refusal: it must not be hidden behind a fallback.
  EXPECT_TRUE(gpuprobe::cupti_refusal_text(CUPTI_ERROR_INVALID_PARAMETER).empty());
}

TEST(CuptiCheck, MacroThrowsWithTheCallAndName) {
  try {
    GP_CUPTI_CHECK(CUPTI_ERROR_INVALID_METRIC_NAME);
    FAIL() << "no throw";
  } catch (const gpuprobe::CuptiError& e) {
    EXPECT_EQ(e.code(), CUPTI_ERROR_INVALID_METRIC_NAME);
    EXPECT_NE(std::string(e.what()).find("CUPTI_ERROR_INVALID_METRIC_NAME"), std::string::npos) << e.what();
  }
}

#ifdef HAVE_PAPI
TEST(PapiFallback, UncountableEventsAreReportedAndTheRunGoesOn) {
  // Neither exists in Debian's PAPI 7.0 (no cuda component; the second is not an event anywhere).
  gp::BackendChoice c = gp::make_counter_backend({"", "cuda:::dram__bytes_read.sum:device=0,GPUPROBE_NO_SUCH_EVENT", 0});
  ASSERT_NE(c.backend, nullptr);
  EXPECT_TRUE(any_line_has(c.notes, "papi: event cuda:::dram__bytes_read.sum:device=0 unavailable: "));
  // PAPI's own text and code follow, e.g. "Not supported (PAPI -18)".
  EXPECT_TRUE(any_line_has(c.notes, "papi: event GPUPROBE_NO_SUCH_EVENT unavailable: "));
  EXPECT_TRUE(any_line_has(c.notes, "(PAPI -"));
  int runs = 0;
  EXPECT_TRUE(c.backend->collect("entry", [&] { ++runs; }).empty());
  bool listed = false;
  for (const auto& [k, v] : c.backend->context())
    if (k == "papi_events_unavailable" && v.find("GPUPROBE_NO_SUCH_EVENT") != std::string::npos) listed = true;
  EXPECT_TRUE(listed);
}

TEST(PapiFallback, DisabledComponentIsReportedWithPapisText) {
  // PAPI_TOT_CYC needs perf_event; in a VM without a PMU PAPI says the component is disabled.
  // Where a PMU exists the event is counted instead: both outcomes are fine, silence is not.
  gp::BackendChoice c = gp::make_counter_backend({"", "PAPI_TOT_CYC", 0});
  const auto values = c.backend->collect("entry", [] {});
  EXPECT_TRUE(values.count("papi.PAPI_TOT_CYC") == 1 || any_line_has(c.notes, "PAPI_TOT_CYC unavailable: "));
}

TEST(PapiFallback, EmptyEventNameIsAUsageError) {
  EXPECT_THROW(gp::make_counter_backend({"", "PAPI_TOT_CYC,,X", 0}), gpuprobe::UsageError);
}
#else
TEST(PapiFallback, BuildWithoutPapiSaysSo) {
  gp::BackendChoice c = gp::make_counter_backend({"", "PAPI_TOT_CYC", 0});
  EXPECT_EQ(c.backend->name(), "none");
  EXPECT_TRUE(any_line_has(c.notes, "built without PAPI"));
}
#endif

}  // namespace
