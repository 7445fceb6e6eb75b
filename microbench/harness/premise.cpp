#include "premise.hpp"

#include <cmath>
#include <cstdio>

#include "gpuprobe/metric_names.hpp"

namespace gpuprobe {

namespace m = metrics;

const char* premise_level_name(PremiseLevel level) {
  switch (level) {
    case PremiseLevel::kNone: return "none";
    case PremiseLevel::kL1: return "L1";
    case PremiseLevel::kL2: return "L2";
    case PremiseLevel::kDram: return "DRAM";
    case PremiseLevel::kShared: return "shared";
    case PremiseLevel::kCompute: return "compute";
  }
  return "none";
}

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string percent(double fraction) { return fixed(100 * fraction, fraction < 0.1 ? 1 : 0) + " %"; }
std::string range(double low, double high) { return fixed(low, 2) + "-" + fixed(high, 2) + "x"; }

}  // namespace

std::string premise_rule(const Premise& p) {
  using B = PremiseBounds;
  switch (p.level) {
    case PremiseLevel::kNone: return "none";
    case PremiseLevel::kL1:
      return "L1 global-load sector hit rate >= " + percent(B::kL1MinHitRate) + " and L1 sectors x 32 B " +
             range(B::kBytesLow, B::kBytesHigh) + " the counted bytes";
    case PremiseLevel::kL2:
      return "SM-sourced L2 read+write sectors x 32 B " + range(B::kBytesLow, B::kBytesHigh) +
             " the counted bytes, L1 hit rate <= " + percent(B::kL2MaxL1HitRate) + ", DRAM bytes <= " +
             percent(B::kL2MaxDramShare) + " of them";
    case PremiseLevel::kDram:
      return "DRAM read+write bytes " + range(B::kDramLow, B::kDramHigh) + " the counted bytes";
    case PremiseLevel::kShared:
      return "shared-memory load bytes " + range(B::kSharedLow, B::kSharedHigh) + " the counted bytes";
    case PremiseLevel::kCompute:
      return p.op_metric + " " + range(B::kOpsLow, B::kOpsHigh) + " the counted operations";
  }
  return "none";
}

std::vector<std::string> premise_metrics(const Premise& p) {
  switch (p.level) {
    case PremiseLevel::kNone: return {};
    case PremiseLevel::kL1: return {m::kL1GlobalLoadSectors, m::kL1GlobalLoadHitSectors};
    case PremiseLevel::kL2:
      return {m::kL2SmReadSectors, m::kL2SmWriteSectors, m::kL1GlobalLoadSectors, m::kL1GlobalLoadHitSectors,
              m::kDramRead};
    case PremiseLevel::kDram: return {m::kDramRead, m::kDramWrite};
    case PremiseLevel::kShared: return {m::kSharedLoadBytes};
    case PremiseLevel::kCompute: return {p.op_metric};
  }
  return {};
}

PremiseCheck check_premise(const Premise& p, double counted, const profilers::MetricValues& values) {
  using B = PremiseBounds;
  PremiseCheck c;
  if (!p.declared()) {
    c.why = "no premise declared";
    return c;
  }
  for (const std::string& metric : premise_metrics(p)) {
    const auto it = values.find(metric);
    if (it == values.end() || !std::isfinite(it->second)) {
      c.why = "counter " + metric + " not collected";
      return c;
    }
  }
  if (!(counted > 0)) {
    c.why = "the probe counted nothing";
    return c;
  }
  auto v = [&](const char* metric) { return values.at(metric); };
  // Conditions in order; the first that fails is the reason given.
  std::vector<std::pair<bool, std::string>> conditions;
  auto within = [&](const char* what, double low, double high) {
    conditions.push_back({c.ratio >= low && c.ratio <= high,
                          std::string(what) + " " + fixed(c.ratio, 3) + "x the counted (needs " + range(low, high) + ")"});
  };
  switch (p.level) {
    case PremiseLevel::kNone: break;
    case PremiseLevel::kL1: {
      const double sectors = v(m::kL1GlobalLoadSectors);
      const double hit_rate = sectors > 0 ? v(m::kL1GlobalLoadHitSectors) / sectors : 0;
      c.measured = sectors * m::kL2SectorBytes;
      c.ratio = c.measured / counted;
      c.details = {{"l1_hit_rate", hit_rate}};
      conditions.push_back({hit_rate >= B::kL1MinHitRate,
                            "L1 hit rate " + percent(hit_rate) + " (needs >= " + percent(B::kL1MinHitRate) + ")"});
      within("L1 sector bytes", B::kBytesLow, B::kBytesHigh);
      break;
    }
    case PremiseLevel::kL2: {
      const double l1_sectors = v(m::kL1GlobalLoadSectors);
      const double l1_hit_rate = l1_sectors > 0 ? v(m::kL1GlobalLoadHitSectors) / l1_sectors : 0;
      c.measured = (v(m::kL2SmReadSectors) + v(m::kL2SmWriteSectors)) * m::kL2SectorBytes;
      c.ratio = c.measured / counted;
      const double dram_share = v(m::kDramRead) / counted;
      c.details = {{"l1_hit_rate", l1_hit_rate}, {"dram_share", dram_share}};
      within("L2 bytes", B::kBytesLow, B::kBytesHigh);
      conditions.push_back({l1_hit_rate <= B::kL2MaxL1HitRate, "L1 hit rate " + percent(l1_hit_rate) +
                                                                    " (needs <= " + percent(B::kL2MaxL1HitRate) + ")"});
      conditions.push_back({dram_share <= B::kL2MaxDramShare, "DRAM reads " + percent(dram_share) +
                                                                   " of the counted bytes (needs <= " +
                                                                   percent(B::kL2MaxDramShare) + ")"});
      break;
    }
    case PremiseLevel::kDram:
      c.measured = v(m::kDramRead) + v(m::kDramWrite);
      c.ratio = c.measured / counted;
      within("DRAM bytes", B::kDramLow, B::kDramHigh);
      break;
    case PremiseLevel::kShared:
      c.measured = v(m::kSharedLoadBytes);
      c.ratio = c.measured / counted;
      within("shared-memory load bytes", B::kSharedLow, B::kSharedHigh);
      break;
    case PremiseLevel::kCompute:
      c.measured = v(p.op_metric.c_str());
      c.ratio = c.measured / counted;
      within("SASS operations", B::kOpsLow, B::kOpsHigh);
      break;
  }
  c.status = PremiseStatus::kOk;
  for (const auto& [held, text] : conditions) {
    if (held) continue;
    c.status = PremiseStatus::kFailed;
    c.why = text;
    break;
  }
  return c;
}

std::string premise_status_text(const PremiseCheck& c) {
  switch (c.status) {
    case PremiseStatus::kOk: return "ok";
    case PremiseStatus::kFailed: return "failed: " + c.why;
    case PremiseStatus::kUnverified: return "unverified: " + c.why;
  }
  return "unverified";
}

}  // namespace gpuprobe
