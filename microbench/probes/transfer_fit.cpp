#include "probes/transfer_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpuprobe {

AlphaBetaFit fit_alpha_beta(const std::vector<double>& sizes, const std::vector<double>& times) {
  if (sizes.size() != times.size()) throw std::invalid_argument("alpha-beta fit: sizes and times differ in length");
  if (sizes.size() < 2) throw std::invalid_argument("alpha-beta fit: needs at least 2 points");
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (!(times[i] > 0) || !std::isfinite(times[i]) || !std::isfinite(sizes[i]) || sizes[i] < 0)
      throw std::invalid_argument("alpha-beta fit: times must be positive and finite, sizes non-negative");
  if (*std::max_element(sizes.begin(), sizes.end()) == *std::min_element(sizes.begin(), sizes.end()))
    throw std::invalid_argument("alpha-beta fit: needs at least 2 distinct sizes");

  // Weighted linear least squares for t = alpha + gamma * s with weights w = 1/t^2:
  // minimizes sum(((alpha + gamma s - t) / t)^2). Normal equations of a 2x2 system.
  double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double w = 1.0 / (times[i] * times[i]);
    sw += w;
    sws += w * sizes[i];
    swss += w * sizes[i] * sizes[i];
    swt += w * times[i];
    swst += w * sizes[i] * times[i];
  }
  const double det = sw * swss - sws * sws;
  if (!(det > 0)) throw std::invalid_argument("alpha-beta fit: degenerate sizes");
  const double alpha = (swss * swt - sws * swst) / det;
  const double gamma = (sw * swst - sws * swt) / det;
  if (!(gamma > 0)) throw std::invalid_argument("alpha-beta fit: time does not grow with size");

  AlphaBetaFit fit;
  fit.alpha_s = alpha;
  fit.beta_bytes_per_s = 1.0 / gamma;
  fit.points = sizes.size();
  double sum_sq = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double rel = (alpha + gamma * sizes[i] - times[i]) / times[i];
    sum_sq += rel * rel;
    fit.max_rel_error = std::max(fit.max_rel_error, std::abs(rel));
  }
  fit.rms_rel_error = std::sqrt(sum_sq / static_cast<double>(sizes.size()));
  return fit;
}

}  // namespace gpuprobe
