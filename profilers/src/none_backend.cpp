#include "gpuprobe/profiler.hpp"

namespace gpuprobe::profilers {
namespace {

class NoneBackend final : public CounterBackend {
 public:
  explicit NoneBackend(std::string why) : why_(std::move(why)) {}
  std::string name() const override { return "none"; }
  MetricValues collect(const std::string&, const std::function<void()>&) override { return {}; }
  std::vector<std::pair<std::string, std::string>> context() const override {
    if (why_.empty()) return {{"counters_backend", "none"}};
    return {{"counters_backend", "none"}, {"counters_unavailable", why_}};
  }

 private:
  std::string why_;
};

class CompositeBackend final : public CounterBackend {
 public:
  explicit CompositeBackend(std::vector<std::unique_ptr<CounterBackend>> parts) : parts_(std::move(parts)) {}
  std::string name() const override {
    std::string n;
    for (const auto& p : parts_) n += (n.empty() ? "" : "+") + p->name();
    return n;
  }
  // Each backend replays the work itself: their counters never run at the same time.
  MetricValues collect(const std::string& range, const std::function<void()>& work) override {
    MetricValues all;
    for (const auto& p : parts_)
      for (const auto& [k, v] : p->collect(range, work)) all[k] = v;
    return all;
  }
  std::vector<std::pair<std::string, std::string>> context() const override {
    std::vector<std::pair<std::string, std::string>> all;
    for (const auto& p : parts_)
      for (auto& f : p->context()) all.push_back(f);
    return all;
  }

 private:
  std::vector<std::unique_ptr<CounterBackend>> parts_;
};

}  // namespace

std::unique_ptr<CounterBackend> make_none_backend(const std::string& why) { return std::make_unique<NoneBackend>(why); }

std::unique_ptr<CounterBackend> make_composite_backend(std::vector<std::unique_ptr<CounterBackend>> parts) {
  if (parts.empty()) return make_none_backend();
  if (parts.size() == 1) return std::move(parts.front());
  return std::make_unique<CompositeBackend>(std::move(parts));
}

}  // namespace gpuprobe::profilers
