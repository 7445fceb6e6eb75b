// CUPTI's host side for one chip (cupti_profiler_host.h): the metric catalog used for validation and
// suggestions, config images and their pass counts, and evaluation of decoded counter data. Needs no
// GPU and no driver: given a chip name such as "GH100" it works on a CPU-only machine (CI uses this).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuprobe/metric_sets.hpp"

struct CUpti_Profiler_Host_Object;

namespace gpuprobe::profilers {

class CuptiHost final : public MetricCatalog {
 public:
  // `availability`: the device's counter-availability image (empty: assume all counters available,
  // which is what CUPTI does for a chip it knows). Throws CuptiError if CUPTI rejects the chip.
  explicit CuptiHost(std::string chip, std::vector<std::uint8_t> availability = {});
  ~CuptiHost() override;
  CuptiHost(const CuptiHost&) = delete;
  CuptiHost& operator=(const CuptiHost&) = delete;

  std::string device_name() const override { return chip_; }
  bool is_valid(const std::string& metric) const override;
  std::vector<std::string> base_names() const override;
  std::vector<std::string> suffixes(const std::string& base) const override;

  // Config image scheduling `metrics` (all must be valid), and how many replay passes it needs.
  std::vector<std::uint8_t> config_image(const std::vector<std::string>& metrics) const;
  static std::size_t passes(const std::vector<std::uint8_t>& config_image);
  std::size_t passes(const std::vector<std::string>& metrics) const { return passes(config_image(metrics)); }

  // Values of `metrics` for range `range_index` of a decoded counter-data image.
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range_index,
                               const std::vector<std::string>& metrics) const;

 private:
  CUpti_Profiler_Host_Object* new_host_object() const;
  std::string chip_;
  std::vector<std::uint8_t> availability_;
  CUpti_Profiler_Host_Object* host_ = nullptr;  // catalog and evaluation
  mutable std::vector<std::string> base_names_;  // cached: ~3650 names on GH100
};

}  // namespace gpuprobe::profilers
