// Constructors of the concrete backends, for the factory (profiler_factory.cpp) and the tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/metric_sets.hpp"
#include "gpuprobe/profiler.hpp"

namespace gpuprobe::profilers {

// The system refuses counters (no GPU or driver, no permission, another profiler attached, vGPU,
// MIG, WSL...). what() is one line saying why and what would allow it; the caller falls back.
class CounterRefusal : public Error {
 public:
  using Error::Error;
};

// CUPTI range profiler on the current device (`device` = CUDA ordinal). Validates and schedules the
// spec's metrics at construction and enables the profiler once for the whole run. Throws
// UsageError (bad metric), CounterRefusal (refused), CuptiError (anything else). `notes` gets the
// lines to show the user (passes, dropped metrics).
std::unique_ptr<CounterBackend> make_cupti_backend(int device, const CounterSpec& spec,
                                                   std::vector<std::string>& notes);

// PAPI events (comma-separated names). Events PAPI cannot count are reported in `notes` with PAPI's
// own error text and skipped. Throws CounterRefusal when PAPI is not built in or fails to start.
std::unique_ptr<CounterBackend> make_papi_backend(const std::string& events, std::vector<std::string>& notes);

}  // namespace gpuprobe::profilers
