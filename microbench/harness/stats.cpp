#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpuprobe {

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  for (double s : samples)
    if (!std::isfinite(s)) throw std::invalid_argument("summarize: non-finite sample");

  Summary out;
  out.count = samples.size();
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  out.median = (n % 2 == 1) ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  out.min = samples.front();
  out.max = samples.back();
  out.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (double s : samples) sq += (s - out.mean) * (s - out.mean);
    out.stddev = std::sqrt(sq / static_cast<double>(n - 1));
    out.cv = out.mean != 0 ? out.stddev / std::fabs(out.mean) : 0;
  }
  return out;
}

}  // namespace gpuprobe
