#include "gpuprobe/profiler.hpp"

namespace gpuprobe::profilers {
namespace {

class NoneBackend final : public CounterBackend {
 public:
  std::string name() const override { return "none"; }
  MetricValues collect(const std::string&, const std::function<void()>&) override { return {}; }
};

}  // namespace

std::unique_ptr<CounterBackend> make_none_backend() { return std::make_unique<NoneBackend>(); }

}  // namespace gpuprobe::profilers
