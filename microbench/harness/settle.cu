#include "settle.hpp"

#include <algorithm>
#include <chrono>

#include "event_timer.hpp"
#include "gpuprobe/check.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"

namespace gpuprobe {

SettleResult settle_reads(const void* data, std::size_t bytes, const SettleRule& rule) {
  SettleResult r;
  if (bytes < 16) return r;
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer timer;
  const auto read_pass = [&](cudaStream_t stream) { read_through(data, bytes, stream); };
  std::vector<double> passes;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    passes.push_back(std::max(1e-9, timer.seconds(read_pass)));
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (!rule.done(passes, elapsed));
  const std::size_t w = std::min(passes.size(), static_cast<std::size_t>(std::max(1, rule.window)));
  std::vector<double> last(passes.end() - w, passes.end());
  std::nth_element(last.begin(), last.begin() + w / 2, last.end());
  r.passes = static_cast<int>(passes.size());
  r.seconds = elapsed;
  r.first_gbps = bytes / passes.front() / 1e9;
  r.settled_gbps = bytes / last[w / 2] / 1e9;
  r.stable = rule.stable(passes);
  return r;
}

const char* settle_state(const SettleResult& r) {
  if (r.passes > 0 && r.settled_gbps < (1.0 - kSlowedFraction) * r.first_gbps) return "slowed";
  return r.stable ? "yes" : "capped";
}

void record_settle(Measurement& m, const std::string& what, const SettleResult& r) {
  m.harness_counter(what + "_settle_passes", r.passes);
  m.harness_counter(what + "_settle_seconds", r.seconds);
  m.harness_counter(what + "_read_gbps_first", r.first_gbps);
  m.harness_counter(what + "_read_gbps_settled", r.settled_gbps);
  m.harness_tag(what + "_settled", settle_state(r));
}

}  // namespace gpuprobe
