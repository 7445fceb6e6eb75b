// Parameter sweeps shared by probes: log-spaced sizes with a fixed number of points per octave.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace gpuprobe {

// Sizes lo * 2^(k / per_octave) for k = 0, 1, ... while <= hi, each rounded down to a multiple of
// `granule` (and at least one granule), duplicates removed, ascending. `hi` itself is included
// when it is a point of the grid.
inline std::vector<std::uint64_t> log_sweep(std::uint64_t lo, std::uint64_t hi, int per_octave,
                                            std::uint64_t granule = 1) {
  std::vector<std::uint64_t> out;
  if (lo == 0 || hi < lo || per_octave < 1 || granule == 0) return out;
  for (int k = 0;; ++k) {
    const double v = static_cast<double>(lo) * std::exp2(static_cast<double>(k) / per_octave);
    if (v > static_cast<double>(hi) * (1 + 1e-12)) break;
    std::uint64_t size = static_cast<std::uint64_t>(v + 0.5) / granule * granule;
    if (size < granule) size = granule;
    if (out.empty() || size > out.back()) out.push_back(size);
  }
  return out;
}

}  // namespace gpuprobe
