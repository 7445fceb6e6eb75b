// Which GPU a result file comes from, and in what state it was found: the NVML facts a fleet keys
// its results by (UUID, serial, VBIOS, driver) and judges their health by (power limit, application
// and maximum clocks, ECC error counts, retired pages and remapped rows), and an idle check (other
// compute processes, utilization) before anything is measured. Every value NVML does not give is
// written "unavailable", never guessed (docs/results-schema.md, docs/fleet.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nvml.hpp"

namespace gpuprobe {

// The identity and health fields, in a stable order (context keys gpu_uuid, gpu_serial, gpu_vbios, ...).
std::vector<std::pair<std::string, std::string>> identity_context(const Nvml& nvml);

struct IdleCheck {
  // "yes"; "no: <why>" (other compute processes, utilization); or "unavailable (<why>)".
  std::string verdict;
  std::vector<std::pair<std::string, std::string>> context;  // gpu_idle_at_start and its facts
};

// Utilization above this (percent, NVML's last sample period) counts as busy: this process has
// created its context, but has run no kernel yet.
constexpr unsigned kBusyUtilizationPercent = 10;

// Other compute processes on the GPU (this process excluded) and its utilization, from NVML.
IdleCheck idle_check(const Nvml& nvml);

}  // namespace gpuprobe
