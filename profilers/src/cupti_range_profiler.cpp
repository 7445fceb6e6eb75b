// The CUPTI range-profiler backend (cupti_range_profiler.h on the target side, cupti_profiler_host.h on
// the host side; call order in docs/counters.md). A toolkit without the Range Profiling API (CUPTI before
// 12.6.80: CMake leaves GPUPROBE_HAVE_CUPTI_RANGE_PROFILER undefined) gets the refusal at the end instead.
//
// Two replay modes (--counters=...,replay=user|kernel):
//  - user (default): one user range around the whole work, which we replay once per pass. It covers
//    every kernel and copy of the operation (SYMV product + reduction, cudaMemcpy), so the values
//    are the operation's totals.
//  - kernel: auto range + kernel replay: CUPTI replays each kernel itself (saving and restoring the
//    memory it touches) and reports one range per kernel; we combine them (combine_ranges).
//  - application: user ranges as in user replay, one per entry, but one pass spans the whole
//    selection (the harness re-runs it per pass): CUPTI's start/stop, about 11 ms + 3.5 ms per pass
//    on the H100 machine, is then paid once per pass instead of once per pass and entry.
// The profiler is enabled once, at start-up, and stays enabled for the whole run: the ~0.2 s cost of
// an enable...disable session is paid once, not per benchmark entry.
#ifdef GPUPROBE_HAVE_CUPTI_RANGE_PROFILER
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "backends.hpp"
#include "gpuprobe/check_cupti.hpp"
#include "gpuprobe/driver_api.hpp"
#include "gpuprobe/cupti_host.hpp"

namespace gpuprobe::profilers {
namespace {

constexpr const char* kRangeName = "gpuprobe";
constexpr std::size_t kMaxRanges = 64;  // kernels per entry in kernel-replay mode (more are dropped, and said)

// Throws CounterRefusal when `r` is one of CUPTI's "the system forbids it" answers.
void refuse_if_system(CUptiResult r) {
  if (r == CUPTI_SUCCESS) return;
  const std::string why = cupti_refusal_text(r);
  if (!why.empty()) throw CounterRefusal(why);
}

// The current CUcontext, through the runtime's entry-point query (driver_api.hpp: gpuprobe does not
// link libcuda; the CI machine has none and the binary must start there and say "no GPU").
CUcontext current_context() {
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  GP_CUDA_CHECK(cudaFree(nullptr));  // makes the device's primary context current
  CUcontext ctx = nullptr;
  if (driver_entry_point<CtxGetCurrent>("cuCtxGetCurrent")(&ctx) != CUDA_SUCCESS || !ctx)
    throw CounterRefusal("no current CUDA context for CUPTI");
  return ctx;
}

std::string support_problem(const CUpti_Profiler_DeviceSupported_Params& p) {
  auto bad = [](CUpti_Profiler_Support_Level l) { return l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED; };
  if (bad(p.architecture)) return "the GPU architecture does not support the range profiler (needs sm_70+)";
  if (bad(p.vGpu))
    return p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED
               ? "this vGPU has profiling disabled; the hypervisor administrator must enable it"
               : "profiling is not supported on this vGPU";
  if (bad(p.confidentialCompute)) return "the GPU is in confidential-computing mode, which forbids counters";
  if (bad(p.cmp)) return "CMP (crypto-mining) GPUs do not support counters";
  if (bad(p.sli)) return "SLI configurations do not support counters";
  if (bad(p.wsl)) return "CUPTI cannot profile under WSL on this driver; run on native Linux";
  return "CUPTI reports the device as unsupported for range profiling";
}

class CuptiRangeBackend final : public CounterBackend {
 public:
  CuptiRangeBackend(int device, const CounterSpec& spec, std::vector<std::string>& notes) : replay_(spec.replay) {
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    const CUptiResult r = cuptiProfilerInitialize(&init);
    refuse_if_system(r);
    if (r != CUPTI_SUCCESS)  // e.g. CUPTI_ERROR_UNKNOWN without a driver: nothing we did wrong
      throw CounterRefusal("CUPTI's profiler did not initialize (CUPTI " + std::to_string(static_cast<int>(r)) + " " +
                           cupti_result_name(r) + "); is the NVIDIA driver loaded and the GPU visible?");
    initialized_.on = true;  // from here on, a throw below still de-initializes (member destructor)

    CUpti_Profiler_DeviceSupported_Params supported{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    supported.cuDevice = device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    refuse_if_system(cuptiProfilerDeviceSupported(&supported));
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      throw CounterRefusal(support_problem(supported));

    CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = static_cast<std::size_t>(device);
    GP_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
    chip_ = chip.pChipName;

    ctx_ = current_context();
    CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    avail.ctx = ctx_;
    refuse_if_system(cuptiProfilerGetCounterAvailability(&avail));
    std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    const CUptiResult ra = cuptiProfilerGetCounterAvailability(&avail);
    refuse_if_system(ra);
    GP_CUPTI_CHECK(ra);

    host_ = std::make_unique<CuptiHost>(chip_, std::move(availability));
    const ValidatedMetrics valid = validate_metrics(spec, *host_);
    metrics_ = valid.metrics;
    if (!valid.dropped.empty()) {
      std::string list;
      for (const auto& m : valid.dropped) list += (list.empty() ? "" : ", ") + m;
      notes.push_back("counters: " + chip_ + " lacks " + list + " (dropped from the set)");
    }
    config_ = host_->config_image(metrics_);
    passes_ = CuptiHost::passes(config_);
    for (const auto& set : spec.sets)
      notes.push_back("counters: set '" + set + "' needs " +
                      std::to_string(host_->passes(find_metric_set(set)->metrics)) + " pass(es) on " + chip_);
    notes.push_back("counters: CUPTI range profiler on " + chip_ + ", " + std::to_string(metrics_.size()) +
                    " metrics in " + std::to_string(passes_) + " pass(es), replay=" + replay_name() +
                    (replay_ == ReplayMode::kApplication
                         ? " (the timed run first, then the selection once more per pass, untimed)"
                         : " (untimed replays after each entry's samples)"));

    enable();
  }

  ~CuptiRangeBackend() override { disable(); }

  std::string name() const override { return "cupti"; }

  std::vector<std::pair<std::string, std::string>> context() const override {
    std::string list;
    for (const auto& m : metrics_) list += (list.empty() ? "" : ",") + m;
    return {{"counters_backend", "cupti-range-profiler"},
            {"counters_chip", chip_},
            {"counters_metrics", list},
            {"counters_passes", std::to_string(passes_)},
            {"counters_replay", replay_name()}};
  }

  MetricValues collect(const std::string& range, const std::function<void()>& work) override {
    if (replay_ == ReplayMode::kApplication) return mark_application_range(range, work);
    try {
      return collect_once(range, work);
    } catch (const CuptiError&) {
      // If reusing the enabled session for a new range is what failed, open a fresh session once.
      if (reopened_) throw;
      reopened_ = true;
      std::fprintf(stderr, "gpuprobe: counters: CUPTI refused to reuse its session; re-enabling per entry\n");
      disable();
      enable();
      return collect_once(range, work);
    }
  }

  bool application_replay() const override { return replay_ == ReplayMode::kApplication; }

  void begin_application_pass(std::size_t max_ranges) override {
    if (replay_ != ReplayMode::kApplication) return;
    if (application_.in_pass) throw Error("counters: an application pass began inside another");
    if (application_.passes_done == 0) {
      application_.capacity = std::max<std::size_t>(max_ranges, 1);
      size_counter_data();
      set_config(application_.capacity);
    }
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = profiler_;
    GP_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
    application_.in_pass = true;
    application_.ranges_this_pass = 0;
  }

  bool end_application_pass() override {
    if (replay_ != ReplayMode::kApplication) return true;
    if (!application_.in_pass) throw Error("counters: an application pass ended that had not begun");
    CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = profiler_;
    GP_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    application_.in_pass = false;
    ++application_.passes_done;
    // CUPTI matches ranges across passes: every pass must run the same work in the same order.
    if (application_.passes_done == 1)
      application_.ranges_first_pass = application_.ranges_this_pass;
    else if (application_.ranges_this_pass != application_.ranges_first_pass)
      throw Error("counters: application pass " + std::to_string(application_.passes_done) + " ran " +
                  std::to_string(application_.ranges_this_pass) + " ranges, the first " +
                  std::to_string(application_.ranges_first_pass) + "; every pass must run the same entries");
    if (stop.isAllPassSubmitted == 0) {
      if (application_.passes_done > passes_ + 2)
        throw Error("counters: CUPTI asked for more passes than the " + std::to_string(passes_) + " it scheduled");
      return false;
    }
    const auto decode_begin = std::chrono::steady_clock::now();
    std::size_t dropped = 0;
    application_.results = read_ranges("application replay", dropped);
    if (dropped > 0 || application_.results.size() != application_.ranges_first_pass)
      std::fprintf(stderr, "gpuprobe: counters: application replay: %zu of %zu ranges decoded (%zu dropped)\n",
                   application_.results.size(), application_.ranges_first_pass, dropped);
    const double decode_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decode_begin).count();
    for (auto& one : application_.results) {
      if (!one.empty()) add_derived_metrics(one);
      one["gpuprobe__counter_ranges"] = 1;
      one["gpuprobe__counter_replays"] = static_cast<double>(application_.passes_done);
      one["gpuprobe__counter_seconds_decode"] = decode_seconds / static_cast<double>(application_.results.size());
    }
    return true;
  }

  std::vector<MetricValues> application_results() override { return std::move(application_.results); }

 private:
  std::size_t range_capacity() const {
    switch (replay_) {
      case ReplayMode::kUser: return 1;
      case ReplayMode::kKernel: return kMaxRanges;
      case ReplayMode::kApplication: return application_.capacity;
    }
    return 1;
  }
  const char* replay_name() const {
    switch (replay_) {
      case ReplayMode::kUser: return "user";
      case ReplayMode::kKernel: return "kernel";
      case ReplayMode::kApplication: return "application";
    }
    return "?";
  }

  // One entry's range in an application pass: the work runs once, inside a range named by its place
  // in the pass (short: names of 60+ characters are not matched across passes on GH100).
  MetricValues mark_application_range(const std::string& range, const std::function<void()>& work) {
    if (!application_.in_pass)
      throw Error("counters: " + range + ": application replay collects only inside an application pass");
    if (application_.ranges_this_pass >= application_.capacity)
      throw Error("counters: more than " + std::to_string(application_.capacity) +
                  " ranges in one application pass (the bound the pass began with)");
    const std::string name = "r" + std::to_string(application_.ranges_this_pass++);
    CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    push.pRangeProfilerObject = profiler_;
    push.pRangeName = name.c_str();
    GP_CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
    work();  // enqueues and synchronizes
    CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    pop.pRangeProfilerObject = profiler_;
    GP_CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
    return {};
  }

  void enable() {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx_;
    const CUptiResult r = cuptiRangeProfilerEnable(&p);
    refuse_if_system(r);
    GP_CUPTI_CHECK(r);
    profiler_ = p.pRangeProfilerObject;
    try {
      size_counter_data();
    } catch (...) {
      disable();  // the destructor does not run for a constructor that throws
      throw;
    }
  }

  void size_counter_data() {
    std::vector<const char*> names;
    for (const auto& m : metrics_) names.push_back(m.c_str());
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = profiler_;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    // User replay has exactly one range per collect; a larger image costs time at every
    // initialize/decode (the per-entry overhead is what a sweep of many small entries pays).
    size.maxNumOfRanges = range_capacity();
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(range_capacity());
    GP_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data_.assign(size.counterDataSize, 0);
  }

  void disable() {
    if (!profiler_) return;
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = profiler_;
    cuptiRangeProfilerDisable(&p);
    profiler_ = nullptr;
  }

  MetricValues collect_once(const std::string& range, const std::function<void()>& work) {
    const auto started = std::chrono::steady_clock::now();
    set_config(range_capacity());
    const auto configured = std::chrono::steady_clock::now();

    // One iteration per pass in user replay; kernel replay does all passes inside one iteration.
    bool all_passes = false;
    std::size_t iterations = 0;
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double>(to - from).count();
    };
    double start_seconds = 0, work_seconds = 0, stop_seconds = 0;  // summed over the passes
    while (!all_passes) {
      const auto pass_begin = Clock::now();
      if (++iterations > passes_ + 2)
        throw Error("counters: CUPTI asked for more passes than the " + std::to_string(passes_) + " it scheduled");
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = profiler_;
      GP_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
      if (replay_ == ReplayMode::kUser) {
        CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
        push.pRangeProfilerObject = profiler_;
        // Not the entry's name: on GH100 / CUDA 13.0 a user-range name of 60 characters or more is not
        // matched across passes (the range splits into several, each with NaN for the other pass's
        // metrics). One range per collect needs no name; the entry name is the result's key anyway.
        push.pRangeName = kRangeName;
        GP_CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
      }
      const auto work_begin = Clock::now();
      work();  // enqueues and synchronizes
      const auto work_end = Clock::now();
      start_seconds += seconds(pass_begin, work_begin);
      work_seconds += seconds(work_begin, work_end);
      if (replay_ == ReplayMode::kUser) {
        CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
        pop.pRangeProfilerObject = profiler_;
        GP_CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
      }
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = profiler_;
      GP_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
      stop_seconds += seconds(work_end, Clock::now());
      all_passes = stop.isAllPassSubmitted != 0;
    }

    const auto passed = std::chrono::steady_clock::now();
    std::size_t dropped = 0;
    const std::vector<MetricValues> ranges = read_ranges(range, dropped);
    MetricValues out = combine_ranges(ranges);
    if (!out.empty()) add_derived_metrics(out);
    // How many ranges the values cover (1 in user replay; kernels in kernel replay), how often the work
    // ran for them (passes in user replay; 1 in kernel replay, where CUPTI replays inside), drops.
    out["gpuprobe__counter_ranges"] = static_cast<double>(ranges.size());
    out["gpuprobe__counter_replays"] = static_cast<double>(iterations);
    // Wall time of this collect (passes + CUPTI's own work): what counters cost per entry, and its
    // phases: image initialize + set config; per pass (summed) start + push range, the work, pop range
    // + stop; decode + evaluate.
    const auto done = Clock::now();
    out["gpuprobe__counter_seconds"] = seconds(started, done);
    out["gpuprobe__counter_seconds_configure"] = seconds(started, configured);
    out["gpuprobe__counter_seconds_passes"] = seconds(configured, passed);
    out["gpuprobe__counter_seconds_start"] = start_seconds;
    out["gpuprobe__counter_seconds_work"] = work_seconds;
    out["gpuprobe__counter_seconds_stop"] = stop_seconds;
    out["gpuprobe__counter_seconds_decode"] = seconds(passed, done);
    if (dropped > 0) out["gpuprobe__counter_ranges_dropped"] = static_cast<double>(dropped);
    return out;
  }

  // A fresh counter-data image (the previous entry's ranges must not be read again) and the config
  // for `max_ranges` ranges per pass, in this backend's replay mode.
  void set_config(std::size_t max_ranges) {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = profiler_;
    init.counterDataSize = counter_data_.size();
    init.pCounterData = counter_data_.data();
    GP_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));

    const bool auto_range = replay_ == ReplayMode::kKernel;
    CUpti_RangeProfiler_SetConfig_Params config{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    config.pRangeProfilerObject = profiler_;
    config.configSize = config_.size();
    config.pConfig = config_.data();
    config.counterDataImageSize = counter_data_.size();
    config.pCounterDataImage = counter_data_.data();
    config.range = auto_range ? CUPTI_AutoRange : CUPTI_UserRange;
    config.replayMode = auto_range ? CUPTI_KernelReplay : CUPTI_UserReplay;
    config.maxRangesPerPass = max_ranges;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    GP_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
  }

  // Decodes the passes just stopped and evaluates every range, in order. A value CUPTI could not
  // complete (NaN: a range missing from one of the passes) is left out and said (under `label`),
  // rather than written into the result file as a number. `dropped`: ranges CUPTI could not keep.
  std::vector<MetricValues> read_ranges(const std::string& label, std::size_t& dropped) {
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = profiler_;
    GP_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    dropped = decode.numOfRangeDropped;
    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    GP_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));

    std::vector<MetricValues> ranges;
    std::string incomplete;
    for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
      const std::vector<double> v = host_->evaluate(counter_data_, i, metrics_);
      MetricValues one;
      for (std::size_t k = 0; k < metrics_.size(); ++k) {
        if (std::isfinite(v[k])) {
          one[metrics_[k]] = v[k];
        } else if (incomplete.find(metrics_[k]) == std::string::npos) {
          incomplete += (incomplete.empty() ? "" : ", ") + metrics_[k];
        }
      }
      ranges.push_back(std::move(one));
    }
    if (!incomplete.empty())
      std::fprintf(stderr, "gpuprobe: %s: counters: CUPTI returned no value for %s (%zu range(s)); left out\n",
                   label.c_str(), incomplete.c_str(), static_cast<std::size_t>(info.numTotalRanges));
    return ranges;
  }

  // The state of an application replay: passes run so far, ranges per pass, results after the last.
  struct ApplicationReplay {
    std::size_t capacity = 1;
    bool in_pass = false;
    std::size_t passes_done = 0;
    std::size_t ranges_this_pass = 0;
    std::size_t ranges_first_pass = 0;
    std::vector<MetricValues> results;
  };

  // De-initializes CUPTI's profiler when the backend goes, or when its constructor throws after
  // initializing (a refusal found later, e.g. at enable, falls back to timing only cleanly).
  struct ProfilerInitialized {
    bool on = false;
    ~ProfilerInitialized() {
      if (!on) return;
      CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      cuptiProfilerDeInitialize(&p);
    }
  };
  ProfilerInitialized initialized_;  // first member: destroyed last
  ReplayMode replay_;
  bool reopened_ = false;
  std::string chip_;
  CUcontext ctx_ = nullptr;
  std::unique_ptr<CuptiHost> host_;
  std::vector<std::string> metrics_;
  std::vector<std::uint8_t> config_;
  std::size_t passes_ = 0;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  std::vector<std::uint8_t> counter_data_;
  ApplicationReplay application_;
};

}  // namespace

std::unique_ptr<CounterBackend> make_cupti_backend(int device, const CounterSpec& spec,
                                                   std::vector<std::string>& notes) {
  return std::make_unique<CuptiRangeBackend>(device, spec, notes);
}

std::string cupti_backend_left_out() { return ""; }

}  // namespace gpuprobe::profilers

#else  // no Range Profiling API in this toolkit's CUPTI

#include <cupti_version.h>

#include "backends.hpp"

namespace gpuprobe::profilers {

std::string cupti_backend_left_out() {
  return "this gpuprobe was built against a CUPTI without the Range Profiling API (CUPTI_API_VERSION " +
         std::to_string(CUPTI_API_VERSION) + "; cupti_range_profiler.h came with CUPTI 12.6.80, CUDA 12.6's last " +
         "update): no hardware counters, every figure is timing-only";
}

std::unique_ptr<CounterBackend> make_cupti_backend(int, const CounterSpec&, std::vector<std::string>&) {
  throw CounterRefusal(cupti_backend_left_out());
}

}  // namespace gpuprobe::profilers

#endif
