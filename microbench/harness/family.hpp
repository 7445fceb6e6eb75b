// The family record: one per probe family (or kernel benchmark), the single place where its facts are
// spelled. Entry names are built from its axes (entry_name), the counters and label tags an entry
// writes must be its axes or its declared fields (Measurement::param/tag), and the binary writes every
// declared record into the result file's context (`gpuprobe_families`) and prints them with
// `gpuprobe --list-families`. The analysis reads axes, units, titles and flops per op from there
// (docs/results-schema.md, "Family records"; docs/adding-a-family.md).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "premise.hpp"
#include "settle_rule.hpp"

namespace gpuprobe {

// Which figure a probe reports as its value_* statistics (docs/results-schema.md).
enum class Figure {
  kBandwidth,    // GB/s   = Work::bytes / sample seconds / 1e9
  kFlopRate,     // GFLOP/s = Work::flops / seconds / 1e9
  kTimePerOp,    // ns per op = seconds / Work::ops * 1e9
  kCyclesPerOp,  // cycles per op = Sample::cycles / Work::ops
  kValue,        // the probe's own per-sample value (Sample::value), unit in the descriptor
};

const char* figure_unit(Figure f);  // "GB/s", "GFLOP/s", "ns", "cycles"
const char* figure_name(Figure f);  // "bandwidth", "flop_rate", "time_per_op", "cycles_per_op", "value"

enum class AxisType { kNumeric, kText };
// What an axis is to the family's figures: the key of a curve (or table row), the swept x of a
// curve, or a parameter that identifies the entry but neither groups nor is swept.
enum class AxisRole { kGroup, kX, kFixed };

// One parameter of the family's entries. An axis in the name is written `key:value` there, in the
// record's order, and the entry's counter (numeric) or label tag (text) of the same name is derived
// from it. An axis outside the name (in_name = false) is written by the probe with
// Measurement::param/tag, e.g. a constant of the family that still keys its curves.
struct Axis {
  std::string name;
  AxisType type = AxisType::kText;
  std::string unit;  // of a numeric axis ("bytes", "elements", ...); "" for text
  AxisRole role = AxisRole::kFixed;
  bool in_name = true;

  Axis outside_name() && {
    in_name = false;
    return std::move(*this);
  }
};
inline Axis text_axis(std::string name, AxisRole role) { return Axis{std::move(name), AxisType::kText, "", role}; }
inline Axis numeric_axis(std::string name, std::string unit, AxisRole role) {
  return Axis{std::move(name), AxisType::kNumeric, std::move(unit), role};
}

// A declared output of the family's entries that is not an axis (a counter or a label tag the probe
// computes). A name containing "<i>" stands for that name with any decimal index there (one field
// per GPU of a multi-GPU entry).
struct Field {
  std::string name;
  AxisType type = AxisType::kNumeric;
  std::string unit;
};
inline Field numeric_field(std::string name, std::string unit) {
  return Field{std::move(name), AxisType::kNumeric, std::move(unit)};
}
inline Field text_field(std::string name) { return Field{std::move(name), AxisType::kText, ""}; }

// A value of the family's `op` axis that does floating-point work: the ceiling it belongs to
// ("FP32", "FP64", ...) and the floating-point operations one thread-instruction performs.
struct ComputeOp {
  std::string name;
  std::string precision;  // "" for an op that is no floating-point peak (integer, special function)
  double flops_per_op = 0;
  std::string premise_metric;  // the SASS counter that proves its peak ("" if none does)
};

// The compute ceilings a kernel family may declare for its work (ProbeDescriptor::compute): the peaks
// the analysis measures under these names (the pipeline probes' ops).
// Every name, CUDA-core peaks first ("FP32", "FP64", "FP16 half2", "BF16 bf16x2"), then the tensor
// cores' ("FP16 tensor", "BF16 tensor", "TF32 tensor", "FP8 tensor", "INT8 tensor", "FP64 tensor").
const std::vector<std::string>& compute_ceilings();
bool is_compute_ceiling(const std::string& name);

// One per probe family (or kernel benchmark): every derived figure and output field comes from it.
struct ProbeDescriptor {
  std::string family;   // dotted, e.g. "memory.latency"; the entry names start with it
  Figure figure;        // what value_* is
  std::string method;   // how one sample is measured, one line (goes into the label)
  std::string unit;     // unit of value_* for Figure::kValue (others derive it from the figure)
  int default_samples = 10;
  int warmup = 2;
  // Warm-up continues past `warmup` samples until those after the first add up to this much
  // measured time (at most kMaxWarmupSamples): a ~10 us kernel then gets a few hundred warm-up
  // calls, a long one its `warmup`. The first sample does not count: it carries one-time costs
  // (lazy loading of the kernel's module, a library's first call), which on the H100 made it alone
  // exceed 2 ms for 10 us kernels (2026-11-25). 0: `warmup` samples only. The count run goes into
  // the entry (`warmup_samples`).
  double min_warmup_seconds = 0;
  // time_events / time_events_paired start each timed interval behind a launch gate
  // (launch_gate.hpp): the interval holds the GPU's time for the work, not the host's time to submit
  // it (3.5-4.7 us per launch on the H100 machines). false where the host belongs to the figure (launch
  // rate, relaunch barriers) or may block behind the gate (transfers: a pageable cudaMemcpyAsync
  // is staged by the host). --launch-gate=off turns it off for every entry.
  bool launch_gate = true;
  // Which level must serve what the entries count, checked against the counters whenever they run
  // (premise.hpp). Entries whose premise depends on their parameters set it with Measurement::premise.
  Premise premise;
  // false: the work is never handed to the counter backend (--counters, --papi-events), whose kernel
  // replay would run one kernel alone -- a collective's kernel on one GPU then waits for its peers
  // forever (transfer.collective). Such entries are timed as usual and carry no counters.
  bool counter_replay = true;
  // For Figure::kValue: whether a smaller value is the better one (cycles, seconds); the other figures
  // say it themselves (bandwidth and flop rate: higher; time and cycles per op: lower).
  bool lower_value_is_better = false;
  // Set: warm-up runs, after `warmup` samples, until the rule says the sample times have settled
  // (SettleRule with either_way: no drift up or down), for work whose rate depends on how long the
  // GPU has run it (tensor-core GEMMs: the clock falls as the board power reaches the limit), so that
  // the samples hold a steady state and not a transient. Replaces min_warmup_seconds. The entry
  // records `warmup_samples`, `warmup_seconds` and the tag `warmup_steady=yes|capped`. Declared after
  // the fields above, which probes initialise by position.
  std::optional<SettleRule> warmup_until_steady{};

  // The record proper (family.hpp): the report's title, the axes in name order, the declared fields,
  // and for pipeline families the floating-point work of each op.
  std::string title{};
  // Where entries set their own premise (Measurement::premise): which do, one line.
  std::string premise_note{};
  std::vector<Axis> axes{};
  std::vector<Field> fields{};
  std::vector<ComputeOp> ops{};
  // The compute ceiling a kernel family's floating-point work belongs to (the roofline holds its
  // entries to that peak): one for every entry (key "", computing) or one per value of the text axis
  // `precision` (computing_by_precision). Empty: none declared, and the analysis gives the entries no
  // compute bound.
  std::vector<std::pair<std::string, std::string>> compute{};

  ProbeDescriptor&& titled(std::string t) && {
    title = std::move(t);
    return std::move(*this);
  }
  ProbeDescriptor&& warming_until_steady(SettleRule rule) && {
    rule.either_way = true;
    warmup_until_steady = rule;
    return std::move(*this);
  }
  ProbeDescriptor&& lower_is_better() && {
    lower_value_is_better = true;
    return std::move(*this);
  }
  ProbeDescriptor&& premise_by_entry(std::string note) && {
    premise_note = std::move(note);
    return std::move(*this);
  }
  ProbeDescriptor&& with_axes(std::vector<Axis> a) && {
    axes = std::move(a);
    return std::move(*this);
  }
  ProbeDescriptor&& with_fields(std::vector<Field> f) && {
    fields = std::move(f);
    return std::move(*this);
  }
  ProbeDescriptor&& with_ops(std::vector<ComputeOp> o) && {
    ops = std::move(o);
    return std::move(*this);
  }
  ProbeDescriptor&& computing(std::string ceiling) && {
    compute = {{"", std::move(ceiling)}};
    return std::move(*this);
  }
  ProbeDescriptor&& computing_by_precision(std::vector<std::pair<std::string, std::string>> by_precision) && {
    compute = std::move(by_precision);
    return std::move(*this);
  }

  const Axis* axis(const std::string& name) const;    // nullptr if none
  const Field* field(const std::string& name) const;  // nullptr if none ("<i>" patterns match)
  // The unit of value_*: the figure's, or `unit` for Figure::kValue.
  std::string value_unit() const;
  // Whether a larger value_* is the better figure (compare's verdict).
  bool higher_is_better() const;
  // The compute ceiling of an entry whose `precision` is the given value ("" for a family without that
  // axis); "" where the record declares none for it.
  std::string compute_ceiling(const std::string& precision) const;
};

// What is wrong with a record, one line each (none: it may be declared): an empty family, title or
// method, a name twice among axes and fields, a numeric axis or field without a unit, more than one x
// axis, ops without a text axis `op`, an unknown compute ceiling, compute ceilings by precision without
// a text axis `precision` (or mixed with one for every entry, or a precision twice).
std::vector<std::string> record_problems(const ProbeDescriptor& record);

// Declares a family for the whole binary: it is listed by --list-families and written into every
// result file's context. Called at static initialization from the probe's own file, so that a
// family is declared where it is measured:
//   const ProbeDescriptor& kLatency = declare_family(ProbeDescriptor{...}.titled(...).with_axes({...}));
// A record with problems is kept and reported by check_declared_families() (main's first step).
const ProbeDescriptor& declare_family(ProbeDescriptor record);
// Every declared family, in family-name order.
std::vector<const ProbeDescriptor*> declared_families();
// Throws Error naming every problem of the declared records (and families declared twice).
void check_declared_families();

// Entry names: family/key:value/... (Google Benchmark's own "name/arg:value" convention), the keys
// being the record's in-name axes in its order. Throws Error on a key the record does not declare, a
// missing or misplaced one, a numeric axis whose value is not a number, a value holding '/' or ':', or
// a precision the record's compute ceilings by precision leave out (check_axis_value).
std::string entry_name(const ProbeDescriptor& record,
                       std::initializer_list<std::pair<const char*, std::string>> params);
// The same checks on a name built elsewhere; returns its (key, value) pairs.
std::vector<std::pair<std::string, std::string>> check_entry_name(const ProbeDescriptor& record,
                                                                  const std::string& name);

// Throws Error where the value of an axis contradicts the record: a `precision` that its compute
// ceilings by precision do not name. Called for the name's axes and for a tag of an axis outside it.
void check_axis_value(const ProbeDescriptor& record, const std::string& axis, const std::string& value);

// The record as one compact JSON object, and all declared ones as a JSON array (the context key
// gpuprobe_families; docs/results-schema.md says what each field means).
std::string family_record_json(const ProbeDescriptor& record);
std::string declared_families_json();
constexpr const char* kFamiliesContextKey = "gpuprobe_families";
// A string as a JSON string literal (quotes and escapes), as the records are written.
std::string json_quoted(const std::string& s);

}  // namespace gpuprobe
