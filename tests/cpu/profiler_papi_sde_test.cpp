// gpuprobe's per-range figures as PAPI Software Defined Events, read back the way any PAPI tool
// would: PAPI_add_named_event("sde:::GPUPROBE::..."), PAPI_start, ranges, PAPI_stop.
#include <gtest/gtest.h>

#include "gpuprobe/profiler.hpp"

#ifdef HAVE_PAPI
#include <papi.h>

namespace gp = gpuprobe::profilers;

namespace {

// Stands in for the CUPTI backend: fixed values per range, and it runs the work once.
class FixedBackend final : public gp::CounterBackend {
 public:
  std::string name() const override { return "fixed"; }
  gp::MetricValues collect(const std::string&, const std::function<void()>& work) override {
    work();
    return {{"dram__bytes_read.sum", 1073741824.0}, {"dram__bytes_write.sum", 1000.4},
            {"gpu__time_duration.sum", 2500.0}, {"gpuprobe__fp32_flop", 8.0}};
  }
};

TEST(PapiSde, RangeFiguresReadBackThroughPapi) {
  auto backend = gp::export_as_papi_sde(std::make_unique<FixedBackend>());
  ASSERT_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
  int set = PAPI_NULL;
  ASSERT_EQ(PAPI_create_eventset(&set), PAPI_OK);
  const char* events[] = {"sde:::GPUPROBE::RANGES", "sde:::GPUPROBE::DRAM_BYTES_READ",
                          "sde:::GPUPROBE::DRAM_BYTES_WRITE", "sde:::GPUPROBE::GPU_TIME_NS",
                          "sde:::GPUPROBE::FP32_FLOP", "sde:::GPUPROBE::FP64_FLOP"};
  for (const char* e : events) ASSERT_EQ(PAPI_add_named_event(set, e), PAPI_OK) << e;

  backend->collect("before", [] {});  // outside the PAPI window: must not be counted
  ASSERT_EQ(PAPI_start(set), PAPI_OK);
  int runs = 0;
  backend->collect("a", [&] { ++runs; });
  backend->collect("b", [&] { ++runs; });
  long long v[6] = {};
  ASSERT_EQ(PAPI_stop(set, v), PAPI_OK);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(v[0], 2);                      // ranges
  EXPECT_EQ(v[1], 2LL * 1073741824LL);     // DRAM bytes read
  EXPECT_EQ(v[2], 2000);                   // rounded per range: 1000 + 1000
  EXPECT_EQ(v[3], 5000);                   // ns
  EXPECT_EQ(v[4], 16);                     // FP32 FLOP
  EXPECT_EQ(v[5], 0);                      // absent metric contributes nothing
  PAPI_cleanup_eventset(set);
  PAPI_destroy_eventset(&set);
}

}  // namespace
#else
TEST(PapiSde, NotBuilt) { GTEST_SKIP() << "built without PAPI"; }
#endif
