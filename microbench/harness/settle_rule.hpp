// When a sequence of timed passes has settled: the stopping rule of settle_reads (settle.hpp: fresh
// operands read until their rate stops improving) and of the warm-up of families that warm up until
// steady (ProbeDescriptor::warmup_until_steady: work whose clock falls as the power cap bites). Pure
// logic, so it is tested on the CPU.
#pragma once

#include <vector>

namespace gpuprobe {

// Done after at least min_seconds and 2 x window passes, once the passes have settled; at max_seconds
// in any case.
// - Default (improving only): settled once the best pass of the last `window` is no more than `gain`
//   faster than the best before them (no recent improvement). Right for fresh memory, which only
//   gets faster.
// - either_way: settled once the median of the last `window` passes is within `gain` of the median
//   of the `window` before them, in either direction. Right where the rate may fall as well: under
//   the power cap a long run of tensor-core GEMMs starts at the highest clock and slows as the board
//   power reaches the limit, which "no recent improvement" would call settled at once.
struct SettleRule {
  double min_seconds = 0.03;
  double max_seconds = 0.3;
  int window = 8;
  double gain = 0.01;
  bool either_way = false;
  // pass_seconds: the timed passes so far, in order; elapsed: wall seconds since the first began.
  bool stable(const std::vector<double>& pass_seconds) const;
  bool done(const std::vector<double>& pass_seconds, double elapsed) const {
    return elapsed >= max_seconds || (elapsed >= min_seconds && stable(pass_seconds));
  }
};

}  // namespace gpuprobe
