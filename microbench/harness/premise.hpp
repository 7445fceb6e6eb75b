// A probe's premise: which level of the GPU must serve the bytes (or run the operations) it counts,
// and the check of that claim against hardware counters. A figure is a ceiling only if its premise
// held in the run that produced it: the L2 "hot set" of an earlier release counted 64 GB of loads of
// which 25 GB reached L2 (the rest merged in L1 with in-flight misses), and reported 1.9x the L2's
// own peak. docs/counters.md ("Premises") lists the rules; docs/probes-memory.md says which probe
// declares which.
#pragma once

#include <string>
#include <vector>

#include "gpuprobe/profiler.hpp"

namespace gpuprobe {

enum class PremiseLevel {
  kNone,     // a curve point or a cost, not a ceiling: nothing to prove
  kL1,       // loads served by L1
  kL2,       // loads and stores served by L2, each as its own request (no L1 hit, no DRAM)
  kDram,     // every counted byte moved to or from DRAM once
  kShared,   // shared-memory loads
  kCompute,  // the counted operations ran as SASS instructions of one kind
};

struct Premise {
  PremiseLevel level = PremiseLevel::kNone;
  // kCompute: the thread-level SASS counter that must equal the counted operations.
  std::string op_metric;

  static Premise none() { return {}; }
  static Premise l1() { return {PremiseLevel::kL1, ""}; }
  static Premise l2() { return {PremiseLevel::kL2, ""}; }
  static Premise dram() { return {PremiseLevel::kDram, ""}; }
  static Premise shared() { return {PremiseLevel::kShared, ""}; }
  static Premise compute(std::string metric) { return {PremiseLevel::kCompute, std::move(metric)}; }
  bool declared() const { return level != PremiseLevel::kNone; }
};

// The rules, named once. Each bound says how far the counters may stray from the probe's count.
struct PremiseBounds {
  // L1: hits among the global-load sectors looked up; sectors x 32 B within +-3 % of counted bytes.
  static constexpr double kL1MinHitRate = 0.99;
  // L1 and L2: the counted bytes reach the level within +-3 % (whole 32-byte sectors: a probe that
  // reads 16 B per thread fills every sector; 3 % leaves room for the few misses of a first pass).
  static constexpr double kBytesLow = 0.97, kBytesHigh = 1.03;
  // L2: a load served by L1 never reached L2; a byte read from DRAM was a miss.
  static constexpr double kL2MaxL1HitRate = 0.01;
  static constexpr double kL2MaxDramShare = 0.05;
  // DRAM: every counted byte once (-1 %), plus little else (+3 %: refresh, page-table walks, the
  // write-back of a previous sample's dirty lines).
  static constexpr double kDramLow = 0.99, kDramHigh = 1.03;
  // Shared memory and operations: counted exactly (2 % and 1 % for the few set-up instructions).
  static constexpr double kSharedLow = 0.98, kSharedHigh = 1.02;
  static constexpr double kOpsLow = 0.99, kOpsHigh = 1.01;
};

const char* premise_level_name(PremiseLevel level);  // "L1", "L2", "DRAM", "shared", "compute", "none"
// The declared rule in one line (label tag premise_rule; no ';', which separates label fields).
std::string premise_rule(const Premise& premise);
// The counters the check reads (all in the "premise" metric set).
std::vector<std::string> premise_metrics(const Premise& premise);

enum class PremiseStatus { kOk, kFailed, kUnverified };

struct PremiseCheck {
  PremiseStatus status = PremiseStatus::kUnverified;
  double measured = 0;  // bytes (or operations) the counters saw at the premise's level
  double ratio = 0;     // measured / counted
  // Secondary quantities of the rule, named (e.g. l1_hit_rate, dram_share), for the result file.
  std::vector<std::pair<std::string, double>> details;
  std::string why;  // failed: the condition that failed, with its value; unverified: what was missing
};

// Checks `premise` for work that counted `counted` bytes (operations for kCompute) against the
// counters of one replay of that work.
PremiseCheck check_premise(const Premise& premise, double counted, const profilers::MetricValues& values);

// "ok", "failed: ..." or "unverified: ..." (label tag premise).
std::string premise_status_text(const PremiseCheck& check);

}  // namespace gpuprobe
