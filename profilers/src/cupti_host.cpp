// The CUPTI host side (metric catalog, config images, evaluation); only with the Range Profiling API.
#ifdef GPUPROBE_HAVE_CUPTI_RANGE_PROFILER
#include "gpuprobe/cupti_host.hpp"

#include <cupti_profiler_host.h>

#include <algorithm>

#include "gpuprobe/check_cupti.hpp"

namespace gpuprobe::profilers {

CuptiHost::CuptiHost(std::string chip, std::vector<std::uint8_t> availability)
    : chip_(std::move(chip)), availability_(std::move(availability)) {
  host_ = new_host_object();
}

CuptiHost::~CuptiHost() {
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = host_;
  cuptiProfilerHostDeinitialize(&p);  // nothing useful to do on failure in a destructor
}

CUpti_Profiler_Host_Object* CuptiHost::new_host_object() const {
  CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip_.c_str();
  p.pCounterAvailabilityImage = availability_.empty() ? nullptr : availability_.data();
  GP_CUPTI_CHECK(cuptiProfilerHostInitialize(&p));
  return p.pHostObject;
}

bool CuptiHost::is_valid(const std::string& metric) const {
  CUpti_Profiler_Host_GetMetricProperties_Params p{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
  p.pHostObject = host_;
  p.pMetricName = metric.c_str();
  const CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
  if (r == CUPTI_SUCCESS) return true;
  if (r == CUPTI_ERROR_INVALID_METRIC_NAME || r == CUPTI_ERROR_INVALID_PARAMETER) return false;
  GP_CUPTI_CHECK(r);
  return false;
}

std::vector<std::string> CuptiHost::base_names() const {
  if (!base_names_.empty()) return base_names_;
  for (CUpti_MetricType type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p{CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    p.metricType = type;
    GP_CUPTI_CHECK(cuptiProfilerHostGetBaseMetrics(&p));
    for (std::size_t i = 0; i < p.numMetrics; ++i) {
      // CUPTI lists them with a group prefix ("DRAM.TriageCompute.dram__bytes_read"); the metric name
      // is what follows the last dot (base names themselves contain none).
      std::string name = p.ppMetricNames[i];
      const auto dot = name.rfind('.');
      base_names_.push_back(dot == std::string::npos ? name : name.substr(dot + 1));
    }
  }
  std::sort(base_names_.begin(), base_names_.end());
  base_names_.erase(std::unique(base_names_.begin(), base_names_.end()), base_names_.end());
  return base_names_;
}

std::vector<std::string> CuptiHost::suffixes(const std::string& base) const {
  CUpti_Profiler_Host_GetMetricProperties_Params props{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
  props.pHostObject = host_;
  props.pMetricName = base.c_str();
  if (cuptiProfilerHostGetMetricProperties(&props) != CUPTI_SUCCESS) return {};
  CUpti_Profiler_Host_GetSubMetrics_Params p{CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
  p.pHostObject = host_;
  p.metricType = props.metricType;
  p.pMetricName = base.c_str();
  GP_CUPTI_CHECK(cuptiProfilerHostGetSubMetrics(&p));
  return std::vector<std::string>(p.ppSubMetrics, p.ppSubMetrics + p.numOfSubmetrics);
}

std::vector<std::uint8_t> CuptiHost::config_image(const std::vector<std::string>& metrics) const {
  // A fresh host object: ConfigAddMetrics accumulates, and each image must hold only its own metrics.
  CUpti_Profiler_Host_Object* host = new_host_object();
  struct Release {
    CUpti_Profiler_Host_Object* h;
    ~Release() {
      CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      p.pHostObject = h;
      cuptiProfilerHostDeinitialize(&p);
    }
  } release{host};
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  GP_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
  CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host;
  GP_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
  std::vector<std::uint8_t> image(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params get{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  GP_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&get));
  return image;
}

std::size_t CuptiHost::passes(const std::vector<std::uint8_t>& config_image) {
  std::vector<std::uint8_t> image = config_image;  // the API takes a non-const pointer
  CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  GP_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&p));
  return p.numOfPasses;
}

std::vector<double> CuptiHost::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range_index,
                                        const std::vector<std::string>& metrics) const {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  std::vector<double> values(metrics.size(), 0.0);
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range_index;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  GP_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&p));
  return values;
}

}  // namespace gpuprobe::profilers

#endif  // GPUPROBE_HAVE_CUPTI_RANGE_PROFILER
