// The binary's per-compute-capability peak tables (exec.tensor's dense per-clock peaks, exec.throughput's
// FP32/FP64 results per clock) against the datasheet table the analysis uses
// (analysis/gpuprobe_analysis/data/gpu_peaks.csv): where the binary gives a figure for a compute capability,
// every listed GPU of that capability has that figure, for every accumulator. A capability whose boards
// differ (8.9: the L40S runs f16 with FP32 accumulation at twice an RTX 4090's rate) must get none.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "probes/exec_pipeline.hpp"
#include "probes/exec_tensor.hpp"

namespace {

struct PeakRow {
  std::string model, type, acc;
  int cc_major = 0, cc_minor = 0;
  double per_clock = 0;
};

// The first five comma-separated fields of each data row (the sixth, the source, is quoted text).
std::vector<PeakRow> read_peaks() {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/analysis/gpuprobe_analysis/data/gpu_peaks.csv");
  EXPECT_TRUE(in.good()) << "gpu_peaks.csv not found";
  std::vector<PeakRow> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; f.size() < 5 && std::getline(ss, field, ',');) f.push_back(field);
    EXPECT_EQ(f.size(), 5u) << line;
    if (f.size() != 5) continue;
    PeakRow r{f[0], f[2], f[3]};
    const auto dot = f[1].find('.');
    r.cc_major = std::stoi(f[1].substr(0, dot));
    r.cc_minor = std::stoi(f[1].substr(dot + 1));
    r.per_clock = std::stod(f[4]);
    rows.push_back(r);
  }
  return rows;
}

const std::map<std::string, gpuprobe::TensorPrecision> kTensorTypes = {
    {"f16", gpuprobe::TensorPrecision::kF16},   {"bf16", gpuprobe::TensorPrecision::kBF16},
    {"tf32", gpuprobe::TensorPrecision::kTF32}, {"e4m3", gpuprobe::TensorPrecision::kE4M3},
    {"e5m2", gpuprobe::TensorPrecision::kE5M2}, {"s8", gpuprobe::TensorPrecision::kS8},
    {"f64", gpuprobe::TensorPrecision::kF64}};

TEST(GpuPeaks, BinaryTablesAgreeWithTheDatasheetTable) {
  const std::vector<PeakRow> rows = read_peaks();
  ASSERT_GT(rows.size(), 60u);
  int compared = 0;
  for (const PeakRow& r : rows) {
    double binary = 0, table = r.per_clock;
    if (const auto t = kTensorTypes.find(r.type); t != kTensorTypes.end()) {
      binary = gpuprobe::tensor_peak_flops_per_clock_per_sm(t->second, r.cc_major, r.cc_minor);
    } else if (r.type == "fp32" || r.type == "fp64") {
      // exec.throughput counts FMA results per clock; the table counts FLOP (2 per FMA).
      const auto op = r.type == "fp32" ? gpuprobe::PipeOp::kFFma : gpuprobe::PipeOp::kDFma;
      binary = 2 * gpuprobe::theoretical_ops_per_clock_per_sm(op, r.cc_major, r.cc_minor);
    } else {
      ADD_FAILURE() << "unknown type " << r.type << " (" << r.model << ")";
      continue;
    }
    if (binary == 0) continue;  // the binary gives no figure for this capability: nothing to disagree with
    EXPECT_EQ(binary, table) << r.model << " " << r.type << "->" << r.acc << " (compute capability " << r.cc_major
                             << "." << r.cc_minor << ")";
    ++compared;
  }
  EXPECT_GE(compared, 30) << "too few figures compared: the test would pass on an empty table";
}

}  // namespace
