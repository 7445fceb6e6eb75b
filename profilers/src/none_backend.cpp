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
  bool application_replay() const override {
    for (const auto& p : parts_)
      if (p->application_replay()) return true;
    return false;
  }
  void begin_application_pass(std::size_t max_ranges) override {
    for (const auto& p : parts_) p->begin_application_pass(max_ranges);
  }
  bool end_application_pass() override {
    bool all_done = true;
    for (const auto& p : parts_) all_done = p->end_application_pass() && all_done;
    return all_done;
  }
  // Range by range, the values of every part that has them (a part measuring at collect() has none).
  std::vector<MetricValues> application_results() override {
    std::vector<MetricValues> all;
    for (const auto& p : parts_) {
      const std::vector<MetricValues> part = p->application_results();
      if (all.size() < part.size()) all.resize(part.size());
      for (std::size_t i = 0; i < part.size(); ++i)
        for (const auto& [k, v] : part[i]) all[i][k] = v;
    }
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
