// The alpha-beta transfer model fit (microbench/probes/transfer_fit.hpp) recovers known
// parameters from synthetic data, exact and noisy, and refuses inputs it cannot fit.
#include "probes/transfer_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpuprobe {
namespace {

std::vector<double> log_sizes() {
  std::vector<double> s;
  for (int k = 0; k <= 30; ++k) s.push_back(std::ldexp(1.0, k));  // 1 B .. 1 GiB
  return s;
}

std::vector<double> model_times(const std::vector<double>& sizes, double alpha, double beta) {
  std::vector<double> t;
  for (double s : sizes) t.push_back(alpha + s / beta);
  return t;
}

TEST(AlphaBetaFit, RecoversExactParameters) {
  const auto sizes = log_sizes();
  const double alpha = 2.5e-6, beta = 52e9;  // a PCIe gen5 x16 pinned copy
  const AlphaBetaFit fit = fit_alpha_beta(sizes, model_times(sizes, alpha, beta));
  EXPECT_NEAR(fit.alpha_s, alpha, alpha * 1e-9);
  EXPECT_NEAR(fit.beta_bytes_per_s, beta, beta * 1e-9);
  EXPECT_LT(fit.rms_rel_error, 1e-12);
  EXPECT_EQ(fit.points, sizes.size());
}

TEST(AlphaBetaFit, RecoversParametersFromNoisyData) {
  const auto sizes = log_sizes();
  const double alpha = 8e-6, beta = 12e9;
  std::mt19937_64 rng(20261122);
  std::normal_distribution<double> noise(0.0, 0.02);  // 2 % multiplicative noise on every point
  for (int trial = 0; trial < 20; ++trial) {
    auto times = model_times(sizes, alpha, beta);
    for (double& t : times) t *= std::exp(noise(rng));
    const AlphaBetaFit fit = fit_alpha_beta(sizes, times);
    EXPECT_NEAR(fit.alpha_s, alpha, 0.03 * alpha) << "trial " << trial;
    EXPECT_NEAR(fit.beta_bytes_per_s, beta, 0.03 * beta) << "trial " << trial;
    EXPECT_GT(fit.rms_rel_error, 0.005);  // the noise shows up as fit error
    EXPECT_LT(fit.rms_rel_error, 0.04);
    EXPECT_GE(fit.max_rel_error, fit.rms_rel_error);
  }
}

TEST(AlphaBetaFit, SmallSizesDetermineAlphaDespiteHugeOnes) {
  // Unweighted least squares would let the 1 GiB point's noise swamp alpha; relative weighting does not.
  const std::vector<double> sizes = {1, 8, 64, 512, 4096, 1 << 30};
  auto times = model_times(sizes, 3e-6, 25e9);
  times.back() *= 1.01;  // 1 % off on the largest point: ~430 us, 140x alpha
  const AlphaBetaFit fit = fit_alpha_beta(sizes, times);
  EXPECT_NEAR(fit.alpha_s, 3e-6, 0.02 * 3e-6);
}

TEST(AlphaBetaFit, RejectsUnfittableInput) {
  EXPECT_THROW(fit_alpha_beta({1.0}, {1e-6}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1.0, 2.0}, {1e-6}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({8.0, 8.0, 8.0}, {1e-6, 2e-6, 3e-6}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1.0, 2.0}, {1e-6, 0.0}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1.0, 2.0}, {1e-6, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1.0, 1e6}, {2e-6, 1e-6}), std::invalid_argument);  // shrinking time: no bandwidth
}

}  // namespace
}  // namespace gpuprobe
