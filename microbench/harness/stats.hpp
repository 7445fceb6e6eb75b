// Statistics over raw samples. Every figure gpuprobe reports is a median over samples, with its
// spread (min, max, coefficient of variation) beside it so a reader can judge the noise.
#pragma once

#include <cstddef>
#include <vector>

namespace gpuprobe {

struct Summary {
  std::size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double cv = 0;      // stddev / mean; 0 for a single sample
};

// Summarizes `samples` (copied: the median needs a partial sort). Throws std::invalid_argument
// on an empty input or a non-finite sample: a NaN must never hide inside a median.
Summary summarize(std::vector<double> samples);

}  // namespace gpuprobe
