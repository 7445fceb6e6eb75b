// The transfer-time model of V&D SC08 eq. (1): time(s) = alpha + s / beta, fitted by least squares
// on relative error (each point weighted by 1/time^2), so that microsecond-scale small transfers
// determine alpha as much as gigabyte transfers determine beta. Pure C++: tested on the CPU
// (tests/cpu/alpha_beta_fit_test.cpp). The analysis package fits the same model from the result file.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuprobe {

struct AlphaBetaFit {
  double alpha_s = 0;           // fixed cost per transfer, seconds
  double beta_bytes_per_s = 0;  // asymptotic bandwidth, bytes/s
  double rms_rel_error = 0;     // sqrt(mean(((model - t) / t)^2)) over the points
  double max_rel_error = 0;     // max |model - t| / t
  std::size_t points = 0;
};

// Throws std::invalid_argument with fewer than 2 points, sizes and times of different lengths,
// a non-positive or non-finite time, fewer than 2 distinct sizes, or a fit whose slope is not
// positive (no bandwidth can be read from it).
AlphaBetaFit fit_alpha_beta(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s);

}  // namespace gpuprobe
