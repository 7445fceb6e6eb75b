#include "harness/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuprobe {
namespace {

TEST(Summarize, OddCountMedianIsMiddleElement) {
  const Summary s = summarize({5, 1, 3});
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.stddev, 2);
  EXPECT_DOUBLE_EQ(s.cv, 2.0 / 3.0);
}

TEST(Summarize, EvenCountMedianAveragesMiddlePair) {
  EXPECT_DOUBLE_EQ(summarize({4, 1, 2, 10}).median, 3);
}

TEST(Summarize, SingleSampleHasNoSpread) {
  const Summary s = summarize({7});
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.cv, 0);
}

TEST(Summarize, RejectsEmptyAndNonFinite) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(summarize({1, std::numeric_limits<double>::infinity()}), std::invalid_argument);
}

}  // namespace
}  // namespace gpuprobe
