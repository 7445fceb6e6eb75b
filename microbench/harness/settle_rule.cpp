#include "settle_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "stats.hpp"

namespace gpuprobe {

bool SettleRule::stable(const std::vector<double>& pass_seconds) const {
  const std::size_t n = pass_seconds.size(), w = static_cast<std::size_t>(std::max(1, window));
  if (n < 2 * w) return false;
  const auto recent = pass_seconds.end() - static_cast<std::ptrdiff_t>(w);
  if (either_way) {
    const double now = summarize({recent, pass_seconds.end()}).median;
    const double before = summarize({recent - static_cast<std::ptrdiff_t>(w), recent}).median;
    return std::fabs(now / before - 1.0) <= gain;
  }
  const double best_recent = *std::min_element(recent, pass_seconds.end());
  const double best_before = *std::min_element(pass_seconds.begin(), recent);
  return best_recent >= best_before * (1.0 - gain);  // time: larger is slower
}

}  // namespace gpuprobe
