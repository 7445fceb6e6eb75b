// Fresh device memory is not at full speed at once. On the lent H100 (2026-11-24,
// lab/experiments/free_settle.cu, docs/perf/gemv.md "fresh operands") a freshly allocated and filled
// buffer read up to ~20 % slower than the same buffer later (256 MiB: ~2470 GB/s for its first
// 20-40 reads, then ~2900; some 1 GiB buffers 2570 then 3055), and in benchmark runs the first
// entries of a problem read 13-17 % slower than the later ones on the same operands. Freeing memory
// did not slow anything else down. So operands a timed entry reads are first read back to back
// until their read rate stops improving, and the entry records how that went.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "settle_rule.hpp"

namespace gpuprobe {

class Measurement;

struct SettleResult {
  int passes = 0;
  double seconds = 0;       // wall time spent
  double first_gbps = 0;    // the first pass
  double settled_gbps = 0;  // median of the last `window` passes
  bool stable = false;      // false: stopped at max_seconds while still improving
};

// Fresh memory reads slowest first, so a settled rate more than kSlowedFraction below the first pass
// means the device slowed down while settling (a disturbance, not fresh memory): on the H100 run of
// one 256 MiB matrix read 2626 GB/s at first and 2297 after 293 passes, and the rule (no recent
// improvement) called that settled; the GEMV entry that followed read 10 % below the same kernel two
// entries later.
constexpr double kSlowedFraction = 0.05;

// The state an entry reports: "yes" (stable), "capped" (still improving at max_seconds) or
// "slowed" (settled_gbps < (1 - kSlowedFraction) first_gbps, whether stable or not).
const char* settle_state(const SettleResult& r);

// Reads [data, data + bytes) (16-byte aligned; a tail below 16 bytes is skipped) on all SMs, one
// timed pass after another (CUDA events), until `rule` says done. Synchronizes the device first.
SettleResult settle_reads(const void* data, std::size_t bytes, const SettleRule& rule = {});

// The result as parameters of an entry: <what>_settle_passes, <what>_settle_seconds,
// <what>_read_gbps_first, <what>_read_gbps_settled, and the tag <what>_settled=yes|capped|slowed.
void record_settle(Measurement& m, const std::string& what, const SettleResult& r);

}  // namespace gpuprobe
