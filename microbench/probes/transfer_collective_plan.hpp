// Host-side planning of the collective probes (transfer.collective), pure C++ and independent of NCCL
// so that it is built and tested on the CPU everywhere: the operations, the group sizes, the size
// sweep, the element counts of each buffer and nccl-tests' bus-bandwidth factors.
//
// Size convention (nccl-tests, doc/PERFORMANCE.md there): an entry's size is the bytes of the largest
// buffer of one rank -- the receive buffer of allgather, the send buffer of reduce-scatter, the one
// buffer of the others. algbw = size / time; busbw = algbw x busbw_factor(op, ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe {

struct ProbeDescriptor;

// The family record of transfer.collective. Declared here, in the part built with or without NCCL, so
// that every build lists the family (--list-families, the result context) the same way; the probe
// itself (transfer_collective.cu) is built only with NCCL.
const ProbeDescriptor& collective_record();

enum class CollectiveOp { kAllReduce, kReduce, kReduceScatter, kAllGather, kBroadcast };

// Every operation, in the order the entries are registered.
const std::vector<CollectiveOp>& collective_ops();
// "allreduce", "reduce", "reducescatter", "allgather", "broadcast" (the entries' op parameter).
const char* collective_name(CollectiveOp op);

// The element type of every collective probe and test: float, 4 bytes.
constexpr std::size_t kCollectiveElementBytes = 4;
// Reduce and broadcast use rank 0 as root.
constexpr int kCollectiveRoot = 0;

// nccl-tests' factor from algorithm bandwidth to bus bandwidth, the figure comparable across group
// sizes with the link speed: allreduce 2(G-1)/G, reduce-scatter and allgather (G-1)/G, reduce and
// broadcast 1. Throws UsageError for ranks < 1.
double busbw_factor(CollectiveOp op, int ranks);

// Element counts of one rank's buffers and the count passed to NCCL (nccl_count: allreduce, reduce,
// broadcast: the elements of the buffer; reduce-scatter: the receive count; allgather: the send count).
struct CollectiveCounts {
  std::size_t send = 0;
  std::size_t recv = 0;
  std::size_t nccl_count = 0;
  std::size_t largest() const { return send > recv ? send : recv; }
};
// From the count passed to NCCL (the GPU test's irregular counts). Throws UsageError for ranks < 1
// or nccl_count < 1.
CollectiveCounts collective_counts_from_nccl_count(CollectiveOp op, int ranks, std::size_t nccl_count);
// From an entry's size in bytes (the convention above). Throws UsageError when size_bytes is not a
// whole number of elements per rank (collective_size_fits).
CollectiveCounts collective_counts(CollectiveOp op, int ranks, std::uint64_t size_bytes);
// Whether size_bytes splits into whole, non-empty elements per rank: a multiple of 4 bytes, and of
// ranks x 4 bytes for reduce-scatter and allgather.
bool collective_size_fits(CollectiveOp op, int ranks, std::uint64_t size_bytes);

// Group sizes: 2, 4, 8, ... up to device_count; a group of G is devices 0 .. G-1.
std::vector<int> collective_group_sizes(int device_count);

// The sizes of the sweep: 8 B, then x2 (--quick: x8), up to the largest power of two <= max_bytes.
// Throws UsageError when max_bytes < 8.
std::vector<std::uint64_t> collective_sizes(std::uint64_t max_bytes, bool quick);

// The largest size: 1 GiB, bounded by --max-footprint/2 and an eighth of the GPU's memory (each rank
// holds a send and a receive buffer of up to that size, beside NCCL's own buffers); --quick: 64 MiB.
std::uint64_t collective_max_bytes(std::uint64_t max_footprint, std::uint64_t device_memory, bool quick);

// Why no collective entry is registered, or "" when some are: one line for stderr.
std::string collective_skip_reason(bool built_with_nccl, int device_count);

}  // namespace gpuprobe
