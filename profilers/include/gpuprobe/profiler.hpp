// Counter backends behind one interface. A backend knows nothing of probes or kernels: it is handed
// a named range and a callable that performs the GPU work (enqueue + synchronize), replays it as
// often as its passes need, and returns metric values for that range.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gpuprobe::profilers {

// Metric name (Nsight Compute spelling, e.g. "dram__bytes_read.sum") -> value for one range.
using MetricValues = std::map<std::string, double>;

class CounterBackend {
 public:
  virtual ~CounterBackend() = default;
  virtual std::string name() const = 0;
  // Runs `work` under the counters (possibly several times) and returns the values for `range`.
  // `work` must be idempotent: it is replayed, never timed.
  virtual MetricValues collect(const std::string& range, const std::function<void()>& work) = 0;
};

// The timing-only backend: collects nothing.
std::unique_ptr<CounterBackend> make_none_backend();

}  // namespace gpuprobe::profilers
