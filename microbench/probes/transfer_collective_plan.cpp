#include "probes/transfer_collective_plan.hpp"

#include <algorithm>

#include "gpuprobe/check.hpp"
#include "harness/family.hpp"

namespace gpuprobe {

const ProbeDescriptor& collective_record() {
  // A pointer, not a reference: GCC 13's -Wdangling-reference takes the temporary argument for what
  // the reference binds to, though declare_family returns its own stored copy.
  static const ProbeDescriptor* const record = &declare_family(
      ProbeDescriptor{"transfer.collective", Figure::kBandwidth,
                      "one NCCL collective of floats (sum, root 0) over GPUs 0..ranks-1, one rank per GPU in this "
                      "process (ncclCommInitAll), all ranks in one ncclGroupStart/End; CUDA events on the probed "
                      "GPU's stream, forked to every rank's stream and joined back: first start to last end; "
                      "size = bytes of the largest buffer of one rank (nccl-tests); value = algbw = size / time, "
                      "busbw_gbps = algbw x busbw_factor (nccl-tests)",
                      "", 15, 2,
                      0.002,  // ~10 us calls get a few hundred warm-up calls, 1 GiB ones their 2
                      true, Premise{},
                      false}  // counter_replay: a kernel replay of one rank's kernel would wait for its peers forever
          .titled("NCCL collectives")
          .with_axes({text_axis("op", AxisRole::kGroup), numeric_axis("ranks", "GPUs", AxisRole::kGroup),
                      numeric_axis("size", "bytes", AxisRole::kX)})
          .with_fields({text_field("dtype"), text_field("redop"), numeric_field("count", "elements"),
                        numeric_field("busbw_factor", "factor"), numeric_field("root", "rank"),
                        text_field("nccl_version"), text_field("nccl_env"), numeric_field("busbw_gbps", "GB/s"),
                        numeric_field("busbw_gbps_min", "GB/s"), numeric_field("busbw_gbps_max", "GB/s")}));
  return *record;
}

namespace {
// Declared at start-up, whether or not anything measures it in this build.
const ProbeDescriptor& kDeclaredAtStartup = collective_record();
}  // namespace

const std::vector<CollectiveOp>& collective_ops() {
  static const std::vector<CollectiveOp> ops{CollectiveOp::kAllReduce, CollectiveOp::kReduce,
                                             CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                                             CollectiveOp::kBroadcast};
  return ops;
}

const char* collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "allreduce";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kReduceScatter: return "reducescatter";
    case CollectiveOp::kAllGather: return "allgather";
    case CollectiveOp::kBroadcast: return "broadcast";
  }
  return "?";
}

namespace {
void check_ranks(int ranks) {
  if (ranks < 1) throw UsageError("transfer.collective: a group needs at least 1 rank, got " + std::to_string(ranks));
}
bool splits_over_ranks(CollectiveOp op) {
  return op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
}
}  // namespace

double busbw_factor(CollectiveOp op, int ranks) {
  check_ranks(ranks);
  const double g = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (g - 1.0) / g;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return (g - 1.0) / g;
    case CollectiveOp::kReduce:
    case CollectiveOp::kBroadcast: return 1.0;
  }
  return 1.0;
}

CollectiveCounts collective_counts_from_nccl_count(CollectiveOp op, int ranks, std::size_t nccl_count) {
  check_ranks(ranks);
  if (nccl_count < 1) throw UsageError("transfer.collective: the element count must be at least 1");
  const std::size_t g = static_cast<std::size_t>(ranks);
  switch (op) {
    case CollectiveOp::kReduceScatter: return {nccl_count * g, nccl_count, nccl_count};
    case CollectiveOp::kAllGather: return {nccl_count, nccl_count * g, nccl_count};
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduce:
    case CollectiveOp::kBroadcast: return {nccl_count, nccl_count, nccl_count};
  }
  return {};
}

bool collective_size_fits(CollectiveOp op, int ranks, std::uint64_t size_bytes) {
  if (ranks < 1) return false;
  const std::uint64_t unit = kCollectiveElementBytes * (splits_over_ranks(op) ? std::uint64_t(ranks) : 1);
  return size_bytes >= unit && size_bytes % unit == 0;
}

CollectiveCounts collective_counts(CollectiveOp op, int ranks, std::uint64_t size_bytes) {
  check_ranks(ranks);
  if (!collective_size_fits(op, ranks, size_bytes))
    throw UsageError(std::string("transfer.collective: ") + collective_name(op) + " of " + std::to_string(size_bytes) +
                     " bytes over " + std::to_string(ranks) + " ranks is not a whole number of floats per rank");
  const std::uint64_t elements = size_bytes / kCollectiveElementBytes;
  const std::uint64_t per_rank = splits_over_ranks(op) ? elements / std::uint64_t(ranks) : elements;
  return collective_counts_from_nccl_count(op, ranks, static_cast<std::size_t>(per_rank));
}

std::vector<int> collective_group_sizes(int device_count) {
  std::vector<int> out;
  for (int g = 2; g <= device_count; g *= 2) out.push_back(g);
  return out;
}

std::vector<std::uint64_t> collective_sizes(std::uint64_t max_bytes, bool quick) {
  if (max_bytes < 8) throw UsageError("transfer.collective: the largest size must be at least 8 bytes");
  const int step = quick ? 3 : 1;  // octaves between sizes
  std::vector<std::uint64_t> sizes;
  for (int k = 3; k < 64; k += step) {
    const std::uint64_t s = std::uint64_t(1) << k;
    if (s > max_bytes) break;
    sizes.push_back(s);
  }
  std::uint64_t top = 8;
  while (top * 2 <= max_bytes) top *= 2;  // the largest power of two <= max_bytes
  if (sizes.back() != top) sizes.push_back(top);
  return sizes;
}

std::uint64_t collective_max_bytes(std::uint64_t max_footprint, std::uint64_t device_memory, bool quick) {
  const std::uint64_t cap = quick ? std::uint64_t(64) << 20 : std::uint64_t(1) << 30;
  return std::max<std::uint64_t>(8, std::min({cap, max_footprint / 2, device_memory / 8}));
}

std::string collective_skip_reason(bool built_with_nccl, int device_count) {
  if (!built_with_nccl)
    return "transfer.collective: left out, gpuprobe was built without NCCL (pip install nvidia-nccl-cu13, "
           "then reconfigure)";
  if (device_count < 2)
    return "transfer.collective: skipped, " + std::to_string(device_count) +
           " GPU visible (collectives need at least 2)";
  return "";
}

}  // namespace gpuprobe
