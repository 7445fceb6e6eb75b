// Is the H200's 16 MiB TLB granule (memory.tlb, issue 32) the page the driver maps, or one TLB entry
// covering several physically contiguous 2 MiB pages? Plan and how to read the output:
// lab/experiments/tlb_16mib.md.
//
//   build: bash scripts/build.sh -DGPUPROBE_BUILD_LAB=ON (BUILD_TARGETS=tlb_granule_experiment)
//          -> $BUILD_DIR/lab/experiments/tlb_granule; or scripts/dev/tlb_granule.sh OUTDIR on the GPU machine
//   run:   tlb_granule > tlb_granule.csv    (about 10 s on an H200; device 0)
//   read:  python3 scripts/dev/tlb_granule_verdict.py tlb_granule.csv
//
// Two checks:
// 1. What the driver maps (no timing): cuMemGetAllocationGranularity (MINIMUM, RECOMMENDED) of a device
//    allocation, and the largest power-of-two alignment of a few 1 GiB cudaMalloc pointers.
// 2. Whether physical contiguity decides (timed): the same fixed-stride chase on four 1 GiB buffers that
//    differ only in how virtual addresses reach physical memory:
//    - cudamalloc: a plain cudaMalloc, what memory.tlb chases (the driver's own choice of pages);
//    - vmm_one_handle: ONE cuMemCreate of the whole 1 GiB, mapped with one cuMemMap into a reserved range.
//      Guarantees one physical allocation and one mapping; physical contiguity is the driver's business
//      (it is the best chance of contiguous memory a program can ask for, not a promise);
//    - vmm_in_order: 1 GiB / granularity separate chunks of the minimum granularity (2 MiB on Hopper),
//      chunk k mapped at VA offset k x chunk. Guarantees only the VA order of the creation order: whether
//      separately created chunks are physically adjacent is the allocator's business;
//    - vmm_scrambled: the SAME chunks (the same physical memory as vmm_in_order), chunk m*k mod n at VA
//      slot k, m chosen (checked below) so that no two chunks within one 16 MiB VA window are neighbours
//      in creation order or fall in the same aligned group of 16 MiB / chunk of them. Guarantees that no
//      16 MiB VA window is backed by consecutively created chunks: wherever the allocator handed out
//      consecutive chunks contiguously, this mapping is discontiguous; where it did not, vmm_in_order is
//      already as scattered, which vmm_in_order's own curve then shows.
//    Every VMM range is reserved aligned to 1 GiB where the driver allows it (else 16 MiB; the header
//    prints the alignment obtained), so VA windows of 16 MiB line up with the chunks.
//
// The chase mirrors memory.tlb (microbench/probes/memory_latency.cu): one thread, ld.global.cg (L2 only),
// each load's address is the previous load's value, unrolled by 32, element i of a stride-S chain at
// i x S + (i mod skew) x 128 B with skew = min(S / 128, 1024) (probes/memory_chains.hpp), a full warm lap in
// the same launch (chains here are <= 512 elements), clock64 around 4096 loads, median of 5 launches.
// Unlike memory.tlb, each point is chased at 4 placements (the whole chain shifted by 37 x 128 B each) and
// averaged: which L2 slices a short chain's lines land in moves it by a few cycles, and the scrambled and
// in-order mappings land in different slices, while a TLB step in this range is only ~14 cycles.
// Strides 2, 4, 16, 32 MiB; footprints 4 per octave from 8 MiB (at least 2 elements) to 1 GiB: the
// smallest footprints lie below the 32 MiB reach that 16 entries of 2 MiB pages would have, so the
// baseline of a scrambled curve is measured before its knee, not at it.
//
// Output (stdout): lines starting with '#' (device, granularity facts, skipped variants), then a CSV
//   mapping,stride_bytes,footprint_bytes,elements,cycles_per_load,placement_min,placement_max
// cycles_per_load: mean over the placements of each placement's median over 5 launches; placement_min/max:
// the extremes among those placement medians. A variant that fails (a driver call, a granularity that
// does not fit) prints "# skipped <mapping>: <why>" and the run goes on; the exit code is then 1.
#include <cuda.h>  // CUmemAllocationProp, CUmemGenericAllocationHandle...: types only, libcuda is not linked
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/driver_api.hpp"
#include "harness/sweep.hpp"
#include "probes/memory_chains.hpp"

namespace {

constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
constexpr std::uint64_t kRangeBytes = std::uint64_t(1) << 30;  // every chased buffer
constexpr std::uint64_t kGranuleUnderTest = 16 * kMiB;         // memory.tlb's page on the H200
constexpr std::uint64_t kStrides[] = {2 * kMiB, 4 * kMiB, 16 * kMiB, 32 * kMiB};
constexpr std::uint64_t kSmallestFootprint = 8 * kMiB;
constexpr int kFootprintsPerOctave = 4;
constexpr std::uint64_t kLine = 128;
constexpr std::uint64_t kTimedLoads = 4096;  // as memory.tlb
constexpr std::uint64_t kUnroll = 32;        // as PointerChase::kUnroll
constexpr int kLaunches = 5;                 // per placement; the median is kept
constexpr int kPlacements = 4;
constexpr std::uint64_t kPlacementShift = 37 * kLine;  // an odd number of lines: other L2 slices
constexpr int kAlignmentAllocations = 4;               // 1 GiB cudaMallocs whose alignment is printed

std::string mib_text(std::uint64_t bytes) {
  char text[48];
  if (bytes % kMiB == 0)
    std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
  else
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  return text;
}

// The largest power of two dividing `address` (its alignment).
std::uint64_t alignment_of(std::uint64_t address) { return address & (~address + 1); }

// ------------------------------------------------------------------------------------------------
// Kernels

// One thread per element: element i holds the absolute address of element i + 1 (the last, of element 0).
__global__ void build_stride_chain(char* base, std::uint64_t elements, std::uint64_t stride, std::uint64_t skew) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < elements;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t next = i + 1 == elements ? 0 : i + 1;
    *reinterpret_cast<std::uint64_t*>(base + gpuprobe::chain_element_offset(i, stride, skew)) =
        reinterpret_cast<std::uint64_t>(base + gpuprobe::chain_element_offset(next, stride, skew));
  }
}

__device__ __forceinline__ std::uint64_t load_cg(std::uint64_t address) {
  std::uint64_t next;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(next) : "l"(address) : "memory");
  return next;
}

// One thread: a warm lap of `warm` loads, then kUnroll x `groups` timed dependent loads.
// out[0]: where the chase stopped (keeps the loads), out[1]: clock64 cycles of the timed loads.
__global__ void chase(std::uint64_t start, std::uint64_t warm, std::uint64_t groups, std::uint64_t* out) {
  std::uint64_t p = start;
  for (std::uint64_t i = 0; i < warm; ++i) p = load_cg(p);
  const long long c0 = clock64();
  for (std::uint64_t g = 0; g < groups; ++g) {
#pragma unroll
    for (int u = 0; u < int(kUnroll); ++u) p = load_cg(p);
  }
  const long long c1 = clock64();
  out[0] = p;
  out[1] = static_cast<std::uint64_t>(c1 - c0);
}

// ------------------------------------------------------------------------------------------------
// The chase sweep over one buffer

struct Point {
  double mean = 0, lowest = 0, highest = 0;  // cycles per load over the placements
};

Point chase_point(char* base, std::uint64_t stride, std::uint64_t elements, std::uint64_t* out) {
  const std::uint64_t skew = std::min<std::uint64_t>(stride / kLine, 1024);
  // The chain's last element ends inside its slot: (skew - 1) lines + the placement shift < stride.
  if ((skew - 1) * kLine + (kPlacements - 1) * kPlacementShift + 8 > stride || elements * stride > kRangeBytes)
    throw gpuprobe::Error("chain of " + std::to_string(elements) + " x " + mib_text(stride) +
                          " does not fit its buffer");
  std::vector<double> placement_medians;
  for (int k = 0; k < kPlacements; ++k) {
    char* chain = base + k * kPlacementShift;
    const unsigned blocks = static_cast<unsigned>((elements + 255) / 256);
    build_stride_chain<<<blocks, 256>>>(chain, elements, stride, skew);
    GP_CUDA_CHECK_LAUNCH();
    std::vector<double> launches;
    for (int l = 0; l < kLaunches; ++l) {
      chase<<<1, 1>>>(reinterpret_cast<std::uint64_t>(chain), elements, kTimedLoads / kUnroll, out);
      GP_CUDA_CHECK_LAUNCH();
      std::uint64_t host[2];
      GP_CUDA_CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
      launches.push_back(static_cast<double>(host[1]) / kTimedLoads);
    }
    std::sort(launches.begin(), launches.end());
    placement_medians.push_back(launches[launches.size() / 2]);
  }
  Point p;
  p.mean = std::accumulate(placement_medians.begin(), placement_medians.end(), 0.0) / placement_medians.size();
  p.lowest = *std::min_element(placement_medians.begin(), placement_medians.end());
  p.highest = *std::max_element(placement_medians.begin(), placement_medians.end());
  return p;
}

// Every (stride, footprint) point on `base` (kRangeBytes, mapped and accessible), one CSV row each.
void sweep(const char* mapping, char* base) {
  std::uint64_t* out = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&out, 2 * sizeof(std::uint64_t)));
  try {
    for (std::uint64_t stride : kStrides) {
      for (std::uint64_t footprint :
           gpuprobe::log_sweep(std::max(kSmallestFootprint, 2 * stride), kRangeBytes, kFootprintsPerOctave, stride)) {
        const std::uint64_t elements = footprint / stride;
        const Point p = chase_point(base, stride, elements, out);
        std::printf("%s,%llu,%llu,%llu,%.3f,%.3f,%.3f\n", mapping, static_cast<unsigned long long>(stride),
                    static_cast<unsigned long long>(footprint), static_cast<unsigned long long>(elements), p.mean,
                    p.lowest, p.highest);
      }
      std::fflush(stdout);
    }
  } catch (...) {
    cudaFree(out);  // the error being reported is the one that matters
    throw;
  }
  GP_CUDA_CHECK(cudaFree(out));
}

// ------------------------------------------------------------------------------------------------
// The driver's virtual memory management (VMM) calls, through the runtime's entry-point query

struct Vmm {
  using GranularityFn = CUresult(CUDAAPI*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  using CreateFn = CUresult(CUDAAPI*)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                                      unsigned long long);
  using ReleaseFn = CUresult(CUDAAPI*)(CUmemGenericAllocationHandle);
  using ReserveFn = CUresult(CUDAAPI*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  using FreeFn = CUresult(CUDAAPI*)(CUdeviceptr, size_t);
  using MapFn = CUresult(CUDAAPI*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  using UnmapFn = CUresult(CUDAAPI*)(CUdeviceptr, size_t);
  using SetAccessFn = CUresult(CUDAAPI*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);

  GranularityFn granularity = gpuprobe::driver_entry_point<GranularityFn>("cuMemGetAllocationGranularity");
  CreateFn create = gpuprobe::driver_entry_point<CreateFn>("cuMemCreate");
  ReleaseFn release = gpuprobe::driver_entry_point<ReleaseFn>("cuMemRelease");
  ReserveFn reserve = gpuprobe::driver_entry_point<ReserveFn>("cuMemAddressReserve");
  FreeFn address_free = gpuprobe::driver_entry_point<FreeFn>("cuMemAddressFree");
  MapFn map = gpuprobe::driver_entry_point<MapFn>("cuMemMap");
  UnmapFn unmap = gpuprobe::driver_entry_point<UnmapFn>("cuMemUnmap");
  SetAccessFn set_access = gpuprobe::driver_entry_point<SetAccessFn>("cuMemSetAccess");
};

CUmemAllocationProp device_allocation(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// Physical allocations (cuMemCreate handles), released on destruction.
class PhysicalMemory {
 public:
  PhysicalMemory(const Vmm& vmm, std::uint64_t chunk_bytes, std::uint64_t chunks) : vmm_(vmm) {
    const CUmemAllocationProp prop = device_allocation(0);
    for (std::uint64_t k = 0; k < chunks; ++k) {
      CUmemGenericAllocationHandle h{};
      GP_CU_CHECK(vmm_.create(&h, chunk_bytes, &prop, 0));
      handles_.push_back(h);
    }
  }
  ~PhysicalMemory() {
    for (auto h : handles_) vmm_.release(h);  // a mapping keeps its memory alive until unmapped
  }
  PhysicalMemory(const PhysicalMemory&) = delete;
  PhysicalMemory& operator=(const PhysicalMemory&) = delete;
  CUmemGenericAllocationHandle operator[](std::uint64_t k) const { return handles_[k]; }

 private:
  const Vmm& vmm_;
  std::vector<CUmemGenericAllocationHandle> handles_;
};

// A reserved virtual range with physical chunks mapped into it (read/write for device 0), unmapped and
// given back on destruction (or by close(), which checks the calls).
class MappedRange {
 public:
  MappedRange(const Vmm& vmm, std::uint64_t bytes) : vmm_(vmm), bytes_(bytes) {
    // Aligned to its own size if the driver allows it, else to the granule under test.
    if (vmm_.reserve(&base_, bytes, bytes, 0, 0) != CUDA_SUCCESS) {
      base_ = 0;
      std::printf("# note: cuMemAddressReserve refused %s alignment; asking for %s\n", mib_text(bytes).c_str(),
                  mib_text(kGranuleUnderTest).c_str());
      GP_CU_CHECK(vmm_.reserve(&base_, bytes, kGranuleUnderTest, 0, 0));
    }
  }
  ~MappedRange() {
    if (!base_) return;
    for (const auto& m : mapped_) vmm_.unmap(base_ + m.first, m.second);
    vmm_.address_free(base_, bytes_);
  }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

  // `handle` (bytes long) at `offset`, then access for device 0 on that mapping.
  void map(std::uint64_t offset, std::uint64_t bytes, CUmemGenericAllocationHandle handle) {
    GP_CU_CHECK(vmm_.map(base_ + offset, bytes, 0, handle, 0));
    mapped_.emplace_back(offset, bytes);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    GP_CU_CHECK(vmm_.set_access(base_ + offset, bytes, &access, 1));
  }
  void close() {
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    for (const auto& m : mapped_) GP_CU_CHECK(vmm_.unmap(base_ + m.first, m.second));
    mapped_.clear();
    GP_CU_CHECK(vmm_.address_free(base_, bytes_));
    base_ = 0;
  }
  char* data() const { return reinterpret_cast<char*>(base_); }

 private:
  const Vmm& vmm_;
  std::uint64_t bytes_;
  CUdeviceptr base_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> mapped_;  // (offset, bytes)
};

// The scrambled mapping's chunk for VA slot k: (multiplier * k) mod n. The multiplier is the first one
// from 37 on that is a bijection and leaves, within every aligned window of `window` VA slots, no two
// chunks that are neighbours in creation order or share an aligned group of `window` chunks. 0: none.
std::uint64_t scramble_multiplier(std::uint64_t n, std::uint64_t window) {
  for (std::uint64_t m = 37; m < n; ++m) {
    if (std::gcd(m, n) != 1) continue;
    bool ok = true;
    for (std::uint64_t w = 0; ok && w + window <= n; w += window) {
      for (std::uint64_t a = w; ok && a < w + window; ++a) {
        for (std::uint64_t b = a + 1; ok && b < w + window; ++b) {
          const std::uint64_t ca = m * a % n, cb = m * b % n;
          const std::uint64_t gap = ca > cb ? ca - cb : cb - ca;
          ok = gap != 1 && ca / window != cb / window;
        }
      }
    }
    if (ok) return m;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------
// The variants

// Prints both granularities; returns the minimum (the chunk size of the chunked mappings).
std::uint64_t print_granularity(const Vmm& vmm) {
  const CUmemAllocationProp prop = device_allocation(0);
  size_t minimum = 0, recommended = 0;
  GP_CU_CHECK(vmm.granularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  GP_CU_CHECK(vmm.granularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  std::printf("# vmm granularity (device 0, pinned device memory): minimum %s, recommended %s\n",
              mib_text(minimum).c_str(), mib_text(recommended).c_str());
  return minimum;
}

void print_cudamalloc_alignment() {
  std::vector<void*> buffers;
  try {
    for (int k = 0; k < kAlignmentAllocations; ++k) {
      void* p = nullptr;
      GP_CUDA_CHECK(cudaMalloc(&p, kRangeBytes));
      buffers.push_back(p);
      const auto address = reinterpret_cast<std::uint64_t>(p);
      std::printf("# cudaMalloc %s #%d: 0x%llx, aligned to %s\n", mib_text(kRangeBytes).c_str(), k,
                  static_cast<unsigned long long>(address), mib_text(alignment_of(address)).c_str());
    }
  } catch (...) {
    for (void* p : buffers) cudaFree(p);
    throw;
  }
  for (void* p : buffers) GP_CUDA_CHECK(cudaFree(p));
}

void run_cudamalloc() {
  void* p = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&p, kRangeBytes));
  const auto address = reinterpret_cast<std::uint64_t>(p);
  std::printf("# cudamalloc: buffer at 0x%llx (aligned to %s)\n", static_cast<unsigned long long>(address),
              mib_text(alignment_of(address)).c_str());
  try {
    sweep("cudamalloc", static_cast<char*>(p));
  } catch (...) {
    cudaFree(p);
    throw;
  }
  GP_CUDA_CHECK(cudaFree(p));
}

void print_range(const char* mapping, const MappedRange& range, const std::string& how) {
  const auto address = reinterpret_cast<std::uint64_t>(range.data());
  std::printf("# %s: VA 0x%llx (aligned to %s), %s\n", mapping, static_cast<unsigned long long>(address),
              mib_text(alignment_of(address)).c_str(), how.c_str());
}

void run_one_handle(const Vmm& vmm) {
  PhysicalMemory memory(vmm, kRangeBytes, 1);
  MappedRange range(vmm, kRangeBytes);
  range.map(0, kRangeBytes, memory[0]);
  print_range("vmm_one_handle", range, "one cuMemCreate of " + mib_text(kRangeBytes) + ", one cuMemMap");
  sweep("vmm_one_handle", range.data());
  range.close();
}

// vmm_in_order and vmm_scrambled on the same chunks of the minimum granularity.
int run_chunks(const Vmm& vmm, std::uint64_t chunk) {
  int skipped = 0;
  if (chunk == 0 || kRangeBytes % chunk != 0 || kRangeBytes / chunk < 2) {
    std::printf("# skipped vmm_in_order, vmm_scrambled: minimum granularity %s does not divide %s into chunks\n",
                mib_text(chunk).c_str(), mib_text(kRangeBytes).c_str());
    return 2;
  }
  const std::uint64_t n = kRangeBytes / chunk;
  PhysicalMemory memory(vmm, chunk, n);
  try {
    MappedRange range(vmm, kRangeBytes);
    for (std::uint64_t k = 0; k < n; ++k) range.map(k * chunk, chunk, memory[k]);
    print_range("vmm_in_order", range,
                std::to_string(n) + " cuMemCreate chunks of " + mib_text(chunk) + ", chunk k at VA slot k");
    sweep("vmm_in_order", range.data());
    range.close();
  } catch (const std::exception& e) {
    std::printf("# skipped vmm_in_order: %s\n", e.what());
    std::fprintf(stderr, "tlb_granule: vmm_in_order skipped: %s\n", e.what());
    ++skipped;
  }
  const std::uint64_t window = kGranuleUnderTest / chunk;
  const std::uint64_t multiplier = window >= 2 && kGranuleUnderTest % chunk == 0 ? scramble_multiplier(n, window) : 0;
  if (multiplier == 0) {
    std::printf("# skipped vmm_scrambled: with %s chunks no scramble breaks every %s window (needs chunks of at "
                "most half the granule and a suitable multiplier)\n",
                mib_text(chunk).c_str(), mib_text(kGranuleUnderTest).c_str());
    return skipped + 1;
  }
  MappedRange range(vmm, kRangeBytes);
  for (std::uint64_t k = 0; k < n; ++k) range.map(k * chunk, chunk, memory[multiplier * k % n]);
  print_range("vmm_scrambled", range,
              "the same chunks, chunk " + std::to_string(multiplier) + " x k mod " + std::to_string(n) +
                  " at VA slot k (no two chunks of one " + mib_text(kGranuleUnderTest) +
                  " VA window adjacent or in one aligned group in creation order)");
  sweep("vmm_scrambled", range.data());
  range.close();
  return skipped;
}

// Runs `body`; a failure becomes a "# skipped" line and a count, never the end of the run.
template <class Body>
int attempt(const char* what, Body body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::printf("# skipped %s: %s\n", what, e.what());
    std::fprintf(stderr, "tlb_granule: %s skipped: %s\n", what, e.what());
    std::fflush(stdout);
    return 1;
  }
}

}  // namespace

int main() {
  const auto t0 = std::chrono::steady_clock::now();
  cudaDeviceProp prop{};
  try {
    GP_CUDA_CHECK(cudaSetDevice(0));
    GP_CUDA_CHECK(cudaFree(nullptr));  // the primary context, current for the driver calls too
    GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlb_granule: no usable GPU: %s\n", e.what());
    return 2;
  }
  std::printf("# tlb_granule: device 0 %s (cc %d.%d); cycles per ld.global.cg of one thread (clock64)\n", prop.name,
              prop.major, prop.minor);
  int skipped = 0;
  std::unique_ptr<Vmm> vmm;
  std::uint64_t chunk = 0;
  skipped += attempt("vmm entry points", [&] { vmm = std::make_unique<Vmm>(); });
  if (vmm) skipped += attempt("granularity", [&] { chunk = print_granularity(*vmm); });
  skipped += attempt("cudaMalloc alignment", print_cudamalloc_alignment);
  std::printf("mapping,stride_bytes,footprint_bytes,elements,cycles_per_load,placement_min,placement_max\n");
  std::fflush(stdout);
  skipped += attempt("cudamalloc", run_cudamalloc);
  if (vmm) {
    skipped += attempt("vmm_one_handle", [&] { run_one_handle(*vmm); });
    int chunk_skips = 0;
    skipped += attempt("vmm_in_order, vmm_scrambled", [&] { chunk_skips = run_chunks(*vmm, chunk); });
    skipped += chunk_skips;
  } else {
    std::printf("# skipped vmm_one_handle, vmm_in_order, vmm_scrambled: no VMM entry points\n");
    skipped += 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("# done in %.1f s, %d part(s) skipped\n", seconds, skipped);
  return skipped ? 1 : 0;
}
