// Chooses the backends a request asks for, and falls back to timing only, with one line saying why,
// when the system refuses counters.
#include "backends.hpp"
#include "gpuprobe/check_cupti.hpp"

namespace gpuprobe::profilers {

BackendChoice make_counter_backend(const CounterRequest& request) {
  BackendChoice choice;
  std::vector<std::unique_ptr<CounterBackend>> parts;
  std::string refused;
  auto fall_back = [&](const std::string& what, const std::string& why) {
    choice.notes.push_back(what + ": " + why + "; continuing with timing only");
    refused += (refused.empty() ? "" : "; ") + why;
  };

  if (!request.counters.empty()) {
    const CounterSpec spec = parse_counter_spec(request.counters);  // a bad request is the user's error
    try {
      parts.push_back(make_cupti_backend(request.device, spec, choice.notes));
    } catch (const UsageError&) {
      throw;
    } catch (const CounterRefusal& e) {
      fall_back("counters", e.what());
    } catch (const Error& e) {  // CUPTI or CUDA failed in a way that is not a known refusal
      fall_back("counters", std::string("CUPTI could not start: ") + e.what());
    }
  }
  if (!request.papi_events.empty()) {
    try {
      parts.push_back(make_papi_backend(request.papi_events, choice.notes));
    } catch (const UsageError&) {
      throw;
    } catch (const CounterRefusal& e) {
      fall_back("papi", e.what());
    }
  }
  choice.backend = parts.empty() ? make_none_backend(refused) : export_as_papi_sde(make_composite_backend(std::move(parts)));
  return choice;
}

}  // namespace gpuprobe::profilers
