#include "family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <set>

#include "gpuprobe/check.hpp"

namespace gpuprobe {

const char* figure_unit(Figure f) {
  switch (f) {
    case Figure::kBandwidth: return "GB/s";
    case Figure::kFlopRate: return "GFLOP/s";
    case Figure::kTimePerOp: return "ns";
    case Figure::kCyclesPerOp: return "cycles";
    case Figure::kValue: return "";
  }
  return "";
}

const char* figure_name(Figure f) {
  switch (f) {
    case Figure::kBandwidth: return "bandwidth";
    case Figure::kFlopRate: return "flop_rate";
    case Figure::kTimePerOp: return "time_per_op";
    case Figure::kCyclesPerOp: return "cycles_per_op";
    case Figure::kValue: return "value";
  }
  return "value";
}

namespace {

// Whether `name` is what a field declared as `pattern` stands for ("<i>": one or more digits).
bool field_matches(const std::string& pattern, const std::string& name) {
  const std::size_t at = pattern.find("<i>");
  if (at == std::string::npos) return pattern == name;
  const std::string head = pattern.substr(0, at), tail = pattern.substr(at + 3);
  if (name.size() <= head.size() + tail.size()) return false;
  if (name.compare(0, head.size(), head) != 0 || name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string index = name.substr(head.size(), name.size() - head.size() - tail.size());
  return std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
}

const char* type_name(AxisType t) { return t == AxisType::kNumeric ? "numeric" : "text"; }
const char* role_name(AxisRole r) {
  switch (r) {
    case AxisRole::kGroup: return "group";
    case AxisRole::kX: return "x";
    case AxisRole::kFixed: return "fixed";
  }
  return "fixed";
}

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(v);
}

std::string in_name_keys(const ProbeDescriptor& record) {
  std::string keys;
  for (const Axis& a : record.axes)
    if (a.in_name) keys += (keys.empty() ? "" : ", ") + a.name;
  return keys.empty() ? "none" : keys;
}

// The declared records; a deque, so that the references declare_family returns stay valid.
std::deque<ProbeDescriptor>& registry() {
  static std::deque<ProbeDescriptor> records;
  return records;
}

}  // namespace

const Axis* ProbeDescriptor::axis(const std::string& name) const {
  for (const Axis& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

const Field* ProbeDescriptor::field(const std::string& name) const {
  for (const Field& f : fields)
    if (field_matches(f.name, name)) return &f;
  return nullptr;
}

const std::vector<std::string>& compute_ceilings() {
  // The CUDA-core half2/bf16x2 peaks carry their instruction in the name so that no reader takes them
  // for the tensor cores' rate, which is 16x (FP16, BF16) on Hopper.
  static const std::vector<std::string> names = {
      "FP32",        "FP64",        "FP16 half2",  "BF16 bf16x2", "FP16 tensor", "BF16 tensor",
      "TF32 tensor", "FP8 tensor",  "INT8 tensor", "FP64 tensor"};
  return names;
}

namespace {
std::string known_compute_ceilings() {
  std::string out;
  for (const std::string& name : compute_ceilings()) out += (out.empty() ? "" : ", ") + name;
  return out;
}
}  // namespace

bool is_compute_ceiling(const std::string& name) {
  const auto& names = compute_ceilings();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string ProbeDescriptor::compute_ceiling(const std::string& precision) const {
  for (const auto& [key, ceiling] : compute)
    if (key.empty() || key == precision) return ceiling;
  return "";
}

std::string ProbeDescriptor::value_unit() const { return figure == Figure::kValue ? unit : figure_unit(figure); }

bool ProbeDescriptor::higher_is_better() const {
  switch (figure) {
    case Figure::kBandwidth:
    case Figure::kFlopRate: return true;
    case Figure::kTimePerOp:
    case Figure::kCyclesPerOp: return false;
    case Figure::kValue: return !lower_value_is_better;
  }
  return true;
}

std::vector<std::string> record_problems(const ProbeDescriptor& r) {
  std::vector<std::string> out;
  const std::string who = "family " + (r.family.empty() ? std::string("(unnamed)") : r.family) + ": ";
  if (r.family.empty()) out.push_back(who + "no family name");
  if (r.family.find_first_of("/:") != std::string::npos) out.push_back(who + "a family name holds no '/' or ':'");
  if (r.title.empty()) out.push_back(who + "no title");
  if (r.method.empty()) out.push_back(who + "no method");
  if (r.figure == Figure::kValue && r.unit.empty()) out.push_back(who + "Figure::kValue needs a unit");
  std::set<std::string> names;
  int x_axes = 0;
  for (const Axis& a : r.axes) {
    if (a.name.empty() || a.name.find_first_of("/:;=") != std::string::npos)
      out.push_back(who + "axis name '" + a.name + "' is empty or holds one of / : ; =");
    if (!names.insert(a.name).second) out.push_back(who + "axis '" + a.name + "' declared twice");
    if (a.type == AxisType::kNumeric && a.unit.empty()) out.push_back(who + "numeric axis '" + a.name + "' has no unit");
    if (a.role == AxisRole::kX) ++x_axes;
  }
  if (x_axes > 1) out.push_back(who + "more than one x axis");
  for (const Field& f : r.fields) {
    if (f.name.empty() || f.name.find_first_of("/:;=") != std::string::npos)
      out.push_back(who + "field name '" + f.name + "' is empty or holds one of / : ; =");
    if (!names.insert(f.name).second) out.push_back(who + "'" + f.name + "' declared twice (axis or field)");
    if (f.type == AxisType::kNumeric && f.unit.empty()) out.push_back(who + "numeric field '" + f.name + "' has no unit");
  }
  if (!r.ops.empty()) {
    const Axis* op = r.axis("op");
    if (!op || op->type != AxisType::kText) out.push_back(who + "ops declared without a text axis 'op'");
    std::set<std::string> op_names;
    for (const ComputeOp& o : r.ops) {
      if (!op_names.insert(o.name).second) out.push_back(who + "op '" + o.name + "' declared twice");
      if (!(o.flops_per_op >= 0)) out.push_back(who + "op '" + o.name + "': negative flops per op");
      if (o.precision.empty() != (o.flops_per_op == 0))
        out.push_back(who + "op '" + o.name + "': a precision goes with flops per op > 0, and only with them");
    }
  }
  std::set<std::string> precisions;
  for (const auto& [precision, ceiling] : r.compute) {
    if (!is_compute_ceiling(ceiling))
      out.push_back(who + "unknown compute ceiling '" + ceiling + "' (one of: " + known_compute_ceilings() + ")");
    if (!precisions.insert(precision).second)
      out.push_back(who + "compute ceiling of precision '" + precision + "' declared twice");
  }
  if (r.compute.size() > 1 && precisions.count("")) {
    out.push_back(who + "a compute ceiling for every entry goes alone, not with ceilings by precision");
  } else if (!precisions.empty() && !precisions.count("")) {
    const Axis* precision = r.axis("precision");
    if (!precision || precision->type != AxisType::kText)
      out.push_back(who + "compute ceilings by precision declared without a text axis 'precision'");
  }
  return out;
}

namespace {
std::vector<std::string>& declaration_problems() {
  static std::vector<std::string> problems;
  return problems;
}
}  // namespace

const ProbeDescriptor& declare_family(ProbeDescriptor record) {
  for (const std::string& p : record_problems(record)) declaration_problems().push_back(p);
  for (const ProbeDescriptor& r : registry())
    if (r.family == record.family) declaration_problems().push_back("family " + record.family + ": declared twice");
  registry().push_back(std::move(record));
  return registry().back();
}

std::vector<const ProbeDescriptor*> declared_families() {
  std::vector<const ProbeDescriptor*> out;
  for (const ProbeDescriptor& r : registry()) out.push_back(&r);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->family < b->family; });
  return out;
}

void check_declared_families() {
  const auto& problems = declaration_problems();
  if (problems.empty()) return;
  std::string text = "invalid family records:";
  for (const std::string& p : problems) text += "\n  " + p;
  throw Error(text);
}

std::vector<std::pair<std::string, std::string>> check_entry_name(const ProbeDescriptor& record,
                                                                  const std::string& name) {
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const std::string where = "entry name " + name + ": ";
  if (parts.front() != record.family) throw Error(where + "does not start with its family " + record.family);
  std::vector<const Axis*> expected;
  for (const Axis& a : record.axes)
    if (a.in_name) expected.push_back(&a);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t colon = parts[i].find(':');
    if (colon == std::string::npos) throw Error(where + "part '" + parts[i] + "' is not key:value");
    const std::string key = parts[i].substr(0, colon), value = parts[i].substr(colon + 1);
    const Axis* axis = record.axis(key);
    if (!axis || !axis->in_name)
      throw Error(where + "key '" + key + "' is not an in-name axis of the record of " + record.family +
                  " (its name keys, in order: " + in_name_keys(record) + ")");
    if (i - 1 >= expected.size() || expected[i - 1] != axis)
      throw Error(where + "key '" + key + "' out of order (the record of " + record.family +
                  " names, in order: " + in_name_keys(record) + ")");
    if (value.empty() || value.find(':') != std::string::npos)
      throw Error(where + "value of '" + key + "' is empty or holds ':'");
    if (axis->type == AxisType::kNumeric && !is_number(value))
      throw Error(where + "numeric axis '" + key + "' has the value '" + value + "', not a number");
    check_axis_value(record, key, value);
    params.emplace_back(key, value);
  }
  if (params.size() != expected.size())
    throw Error(where + "lacks axis '" + expected[params.size()]->name + "' (the record of " + record.family +
                " names, in order: " + in_name_keys(record) + ")");
  return params;
}

void check_axis_value(const ProbeDescriptor& record, const std::string& axis, const std::string& value) {
  if (axis == "precision" && !record.compute.empty() && record.compute_ceiling(value).empty())
    throw Error("entry of " + record.family + ": precision '" + value +
                "' has no compute ceiling in the record (computing_by_precision)");
}

std::string entry_name(const ProbeDescriptor& record,
                       std::initializer_list<std::pair<const char*, std::string>> params) {
  std::string name = record.family;
  for (const auto& [key, value] : params) {
    if (value.find('/') != std::string::npos)
      throw Error("entry of " + record.family + ": value '" + value + "' of '" + key + "' holds '/'");
    name += std::string("/") + key + ":" + value;
  }
  check_entry_name(record, name);
  return name;
}

// ------------------------------------------------------------------------------------------------
// JSON

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string name_template(const ProbeDescriptor& r) {
  std::string t = r.family;
  for (const Axis& a : r.axes)
    if (a.in_name) t += "/" + a.name + ":<" + a.name + ">";
  return t;
}

}  // namespace

std::string family_record_json(const ProbeDescriptor& r) {
  std::string j = "{\"family\":" + quoted(r.family) + ",\"title\":" + quoted(r.title) +
                  ",\"figure\":" + quoted(figure_name(r.figure)) + ",\"unit\":" + quoted(r.value_unit()) +
                  ",\"better\":" + quoted(r.higher_is_better() ? "higher" : "lower") +
                  ",\"method\":" + quoted(r.method) + ",\"entry_name\":" + quoted(name_template(r)) +
                  ",\"premise\":{\"level\":" + quoted(premise_level_name(r.premise.level));
  if (r.premise.declared()) j += ",\"rule\":" + quoted(premise_rule(r.premise));
  if (!r.premise_note.empty()) j += ",\"by_entry\":" + quoted(r.premise_note);
  j += "},\"axes\":[";
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    const Axis& a = r.axes[i];
    j += std::string(i ? "," : "") + "{\"name\":" + quoted(a.name) + ",\"type\":" + quoted(type_name(a.type)) +
         ",\"unit\":" + quoted(a.unit) + ",\"role\":" + quoted(role_name(a.role)) +
         ",\"in_name\":" + (a.in_name ? "true" : "false") + "}";
  }
  j += "],\"fields\":[";
  for (std::size_t i = 0; i < r.fields.size(); ++i) {
    const Field& f = r.fields[i];
    j += std::string(i ? "," : "") + "{\"name\":" + quoted(f.name) + ",\"type\":" + quoted(type_name(f.type)) +
         ",\"unit\":" + quoted(f.unit) + "}";
  }
  j += "]";
  if (!r.ops.empty()) {
    j += ",\"ops\":[";
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const ComputeOp& o = r.ops[i];
      j += std::string(i ? "," : "") + "{\"name\":" + quoted(o.name) + ",\"precision\":" + quoted(o.precision) +
           ",\"flops_per_op\":" + number(o.flops_per_op) + ",\"premise_metric\":" + quoted(o.premise_metric) + "}";
    }
    j += "]";
  }
  if (!r.compute.empty()) {
    j += ",\"compute\":{";
    for (std::size_t i = 0; i < r.compute.size(); ++i)
      j += std::string(i ? "," : "") + quoted(r.compute[i].first) + ":" + quoted(r.compute[i].second);
    j += "}";
  }
  return j + "}";
}

std::string declared_families_json() {
  std::string j = "[";
  bool first = true;
  for (const ProbeDescriptor* r : declared_families()) {
    j += (first ? "" : ",") + family_record_json(*r);
    first = false;
  }
  return j + "]";
}

std::string json_quoted(const std::string& s) { return quoted(s); }

}  // namespace gpuprobe
