// What in the host path costs the ~3.4 us per kernel launch on the H100 VM, and which legitimate
// change lowers it? exec.launch_submit (microbench/probes/exec_launch.cu) measures 3.3-3.5 us of host
// time per <<<>>> call of a near-empty kernel and exec.launch_rate 3.4-4.7 us per launch, while the
// GPU starts queued kernels only 1.84 us apart (exec.launch_gap): the rate is host-bound. Target:
// <= 4 us per async launch, reliably. A self-contained experiment (gpuprobe's check macro only).
//
//   build: bash scripts/build.sh -DGPUPROBE_BUILD_LAB=ON ->  $BUILD_DIR/lab/experiments/launch_host
//          (or: nvcc -O3 -std=c++17 -arch=sm_90 -Icommon/include lab/experiments/launch_host.cu -o launch_host)
//   run:   launch_host                  all variants, device flags untouched (scheduling: auto)
//          launch_host --spin           baseline only, cudaDeviceScheduleSpin set before the context
//          launch_host --blocking-sync  baseline only, cudaDeviceScheduleBlockingSync likewise
//          (a few seconds each; the flag must precede the context, hence separate invocations)
//
// The same near-empty launch (grid 1, block 128, nullptr argument) goes through each layer and
// setting that could cost host time, so the differences between rows locate the cost:
//   <<<>>> on a non-blocking stream (the probe's case), on the legacy stream and on
//   cudaStreamPerThread (does the stream kind add work per launch?); cudaLaunchKernel with a
//   pre-built argument array (what <<<>>>'s push/pop of the call configuration costs); the driver's
//   cuLaunchKernel called directly (what the runtime layer costs; obtained through the runtime's
//   entry-point query, so libcuda is not linked); the calling thread pinned to one CPU (does
//   migration or a remote NUMA node cost?); the baseline twice (the two rows' difference is the
//   run's noise floor); 4000 launches in a row, plain and behind a gate kernel (what does a full
//   launch queue cost?).
// Per variant and batch size N (256: the probe's submit batch, 1000: its rate batch), 40 reps of:
//   - a plain batch: host std::chrono around N launches / N (two clock reads in all);
//   - a stamped batch: a clock read after every call, giving single-call durations; these tell
//     whether every call costs ~3.4 us or most cost ~2 us and a few stall (queue full, interrupts,
//     preemption by the hypervisor);
//   - an event batch: cudaEventRecord before/after the N launches, elapsed / N (what the probe's
//     exec.launch_rate reports), to see whether a lower host cost also lowers the rate.
// Every batch is synchronized after its timed region, so each one starts on an empty queue. The
// variants are interleaved rep by rep: host launch cost drifts by ~20% within one run on a VM.
//
// Result on the H100 machine (2026-11-23, 4a45bf3:reports/h100/logs/launch_host_experiment.log, a firecracker
// VM): ~3.8 us of host time per <<<>>> call, the same for every call (median single call 3.73 us);
// stream kind, pre-built arguments and CPU pinning move it by 0.2 us at most; cuLaunchKernel called
// directly saves 0.26-0.33 us (the probe's api=driver_cu_launch_kernel). Summary: docs/perf/launch.md.
#include <cuda.h>  // CUresult, CUfunction, CUstream: types only, libcuda is not linked
#include <cuda_runtime.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/driver_api.hpp"

extern char** environ;

namespace {

constexpr int kBlock = 128;                  // threads per block, as in the probe
constexpr unsigned kWarmup = 200;            // launches before each variant's timing
constexpr int kReps = 40;                    // batches of each kind per variant and N
constexpr unsigned kBatchSizes[] = {256, 1000};
constexpr unsigned kMaxBatch = 1000;
constexpr unsigned kQueueLaunches = 4000;    // queue check: launches per run
constexpr unsigned kQueueSlice = 1000;       // ... reported as the first and the last this many
constexpr int kQueueReps = 10;
constexpr unsigned long long kGateTimeoutNs = 20000000ull;  // gate gives up after 20 ms
constexpr double kStallUs = 1000.0;          // a single call this long is a stall, not a launch

// The launched kernel: never stores (p is nullptr), so its duration is the launch itself.
__global__ void k(unsigned long long* p, unsigned i) {
  if (p && blockIdx.x == 0 && threadIdx.x == 0) p[i] = 0;
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds the stream until the host sets *release (mapped pinned memory), so launches behind it pile
// up in the launch queue. Gives up after timeout_ns (sets *timed_out): when the queue fills, the
// host blocks in a launch call and could never set the flag, so without the timeout it deadlocks.
__global__ void gate(const volatile int* release, unsigned long long timeout_ns, volatile int* timed_out) {
  const unsigned long long t0 = global_timer_ns();
  while (*release == 0) {
    if (global_timer_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Value at quantile q (0..1) of a sorted sample, nearest rank.
double at_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = rank == 0 ? 0 : rank - 1;
  return sorted[std::min(rank, sorted.size() - 1)];
}

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}

// First line of a (sysfs/proc) file, or "" when it cannot be read.
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

std::string or_unavailable(const std::string& s) { return s.empty() ? "unavailable" : s; }

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::vector<int> parse_cpulist(const std::string& list) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string part = list.substr(pos, end - pos);
    int a = 0, b = 0;
    if (std::sscanf(part.c_str(), "%d-%d", &a, &b) == 2) {
      for (int c = a; c <= b; ++c) cpus.push_back(c);
    } else if (std::sscanf(part.c_str(), "%d", &a) == 1) {
      cpus.push_back(a);
    }
    pos = end + 1;
  }
  return cpus;
}

// Restores the thread's CPU mask on scope exit, also when a measurement throws.
class AffinityGuard {
 public:
  AffinityGuard() {
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0)
      throw gpuprobe::Error(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  ~AffinityGuard() { sched_setaffinity(0, sizeof saved_, &saved_); }
  AffinityGuard(const AffinityGuard&) = delete;
  AffinityGuard& operator=(const AffinityGuard&) = delete;
  const cpu_set_t& saved() const { return saved_; }

 private:
  cpu_set_t saved_;
};

// Pins the calling thread only (pid 0 = this thread); CUDA's own helper threads keep their masks.
void pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    throw gpuprobe::Error("sched_setaffinity(cpu " + std::to_string(cpu) + "): " + std::strerror(errno));
}

// Samples of one variant at one batch size N.
struct Samples {
  std::vector<double> host;           // us per launch, plain batches
  std::vector<double> event;          // us per launch, event-timed batches
  std::vector<double> calls;          // us, every single call of the stamped batches
  std::vector<double> firsts;         // us, the first call of each stamped batch
  std::vector<double> stamped_means;  // us per launch, stamped batches
};

// One way of launching. `measure(n, samples)` runs one plain, one stamped and one event-timed
// batch of n launches (each synchronized after its timed region, so each starts on an empty
// queue); `before`/`after` run around it, untimed (pinning). The loops are compiled per variant
// (make_variant's template), so the std::function indirection is per batch, not per launch.
struct Variant {
  std::string name;
  std::function<void(unsigned, Samples&)> measure;
  std::function<void()> warm_up;
  std::function<void()> before = [] {};
  std::function<void()> after = [] {};
  Samples samples[std::size(kBatchSizes)];
};

// `launch(i)` enqueues one launch on `stream`, where the events are recorded and which is
// synchronized after each batch.
template <class Launch>
Variant make_variant(const std::string& name, cudaStream_t stream, cudaEvent_t e0, cudaEvent_t e1,
                     std::vector<long long>& stamps, Launch launch) {
  Variant v;
  v.name = name;
  v.warm_up = [stream, launch] {
    for (unsigned i = 0; i < kWarmup; ++i) launch(i);
    GP_CUDA_CHECK(cudaGetLastError());
    GP_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  v.measure = [stream, launch, e0, e1, &stamps](unsigned n, Samples& s) {
    // Plain: no clock read between calls, so this is the launches' own cost (the probe's submit).
    const long long t0 = now_ns();
    for (unsigned i = 0; i < n; ++i) launch(i);
    const long long t1 = now_ns();
    GP_CUDA_CHECK(cudaGetLastError());
    GP_CUDA_CHECK(cudaStreamSynchronize(stream));
    s.host.push_back(static_cast<double>(t1 - t0) * 1e-3 / n);

    // Stamped: each duration includes one clock read (its cost is printed in the header).
    stamps[0] = now_ns();
    for (unsigned i = 0; i < n; ++i) {
      launch(i);
      stamps[i + 1] = now_ns();
    }
    GP_CUDA_CHECK(cudaGetLastError());
    GP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (unsigned i = 0; i < n; ++i) s.calls.push_back(static_cast<double>(stamps[i + 1] - stamps[i]) * 1e-3);
    s.firsts.push_back(static_cast<double>(stamps[1] - stamps[0]) * 1e-3);
    s.stamped_means.push_back(static_cast<double>(stamps[n] - stamps[0]) * 1e-3 / n);

    // Events: the GPU-side span of the batch, as exec.launch_rate times it.
    GP_CUDA_CHECK(cudaEventRecord(e0, stream));
    for (unsigned i = 0; i < n; ++i) launch(i);
    GP_CUDA_CHECK(cudaEventRecord(e1, stream));
    GP_CUDA_CHECK(cudaGetLastError());
    GP_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    s.event.push_back(static_cast<double>(ms) * 1e3 / n);
  };
  return v;
}

// Measures all variants interleaved: each rep runs every variant once per N, starting at a
// different variant each rep. Host launch cost drifts by ~20% within a run on the VM, so
// measuring the variants one after another would mix that drift into their differences.
void measure_interleaved(std::vector<Variant>& variants) {
  for (Variant& v : variants) {
    v.before();
    v.warm_up();
    v.after();
  }
  const std::size_t count = variants.size();
  for (int rep = 0; rep < kReps; ++rep)
    for (std::size_t j = 0; j < count; ++j) {
      Variant& v = variants[(j + static_cast<std::size_t>(rep)) % count];
      v.before();
      for (std::size_t b = 0; b < std::size(kBatchSizes); ++b) v.measure(kBatchSizes[b], v.samples[b]);
      v.after();
    }

  std::printf("\n%-40s %5s | %-20s | %-13s | %s\n", "", "", "host us/launch", "event us/l",
              "single calls in stamped batches, us");
  std::printf("%-40s %5s | %6s %6s %6s | %6s %6s | %6s %6s %6s %6s %6s %8s\n", "variant", "N", "med", "min", "p90",
              "med", "p90", "mean", "1st", "med", "p90", "p99", "max");
  for (const Variant& v : variants)
    for (std::size_t b = 0; b < std::size(kBatchSizes); ++b) {
      const Samples& s = v.samples[b];
      const auto h = sorted(s.host), ev = sorted(s.event), c = sorted(s.calls), f = sorted(s.firsts);
      std::printf("%-40s %5u | %6.2f %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f %6.2f %6.2f %6.2f %8.1f\n",
                  v.name.c_str(), kBatchSizes[b], at_rank(h, 0.5), h.front(), at_rank(h, 0.9), at_rank(ev, 0.5),
                  at_rank(ev, 0.9), mean_of(s.stamped_means), at_rank(f, 0.5), at_rank(c, 0.5), at_rank(c, 0.9),
                  at_rank(c, 0.99), c.back());
    }
  std::fflush(stdout);
}

// 4000 <<<>>> launches per run, every call stamped. Plain: the GPU drains at ~1.8 us per kernel,
// faster than the host submits, so the queue should never fill; a jump between the first and the
// last 1000 calls would say otherwise. Gated: the kernels pile up behind the gate, so if the queue
// holds fewer than 4000 the host blocks in one call (a stall of about the gate's timeout) at the
// queue's depth, and the calls before it show whether a nearly full queue makes launches dearer.
void queue_check(cudaStream_t stream) {
  int* flags = nullptr;  // [0]: release the gate, [1]: the gate timed out
  GP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flags), 2 * sizeof(int), cudaHostAllocMapped));
  int* device_flags = nullptr;
  GP_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), flags, 0));
  for (unsigned i = 0; i < kWarmup; ++i) k<<<1, kBlock, 0, stream>>>(nullptr, i);
  GP_CUDA_CHECK(cudaGetLastError());
  GP_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::printf("\nlaunch queue: %u back-to-back <<<>>> launches per run on the non-blocking stream, every call "
              "stamped; median over %d runs (us)\n",
              kQueueLaunches, kQueueReps);
  std::printf("  %-22s | %-19s | %-19s | %8s | %-26s | %s\n", "", "mean per launch", "median single call", "",
              "first call > 1 ms", "gate");
  std::printf("  %-22s | %9s %9s | %9s %9s | %8s | %-26s | %s\n", "run", "0-999", "3000-3999", "0-999", "3000-3999",
              "max call", "runs  at call#   stall us", "timeouts");
  std::vector<long long> stamps(kQueueLaunches + 1);
  std::vector<double> durations(kQueueLaunches);
  for (bool gated : {false, true}) {
    std::vector<double> first_mean, last_mean, first_med, last_med, max_call, stall_at, stall_us;
    int timeouts = 0;
    for (int rep = 0; rep < kQueueReps; ++rep) {
      if (gated) {
        __atomic_store_n(&flags[0], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&flags[1], 0, __ATOMIC_SEQ_CST);
        gate<<<1, 1, 0, stream>>>(device_flags, kGateTimeoutNs, device_flags + 1);
        GP_CUDA_CHECK(cudaGetLastError());
      }
      stamps[0] = now_ns();
      for (unsigned i = 0; i < kQueueLaunches; ++i) {
        k<<<1, kBlock, 0, stream>>>(nullptr, i);
        stamps[i + 1] = now_ns();
      }
      if (gated) __atomic_store_n(&flags[0], 1, __ATOMIC_SEQ_CST);
      GP_CUDA_CHECK(cudaGetLastError());
      GP_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (gated) timeouts += __atomic_load_n(&flags[1], __ATOMIC_SEQ_CST);

      for (unsigned i = 0; i < kQueueLaunches; ++i)
        durations[i] = static_cast<double>(stamps[i + 1] - stamps[i]) * 1e-3;
      const unsigned last = kQueueLaunches - kQueueSlice;
      first_mean.push_back(static_cast<double>(stamps[kQueueSlice] - stamps[0]) * 1e-3 / kQueueSlice);
      last_mean.push_back(static_cast<double>(stamps[kQueueLaunches] - stamps[last]) * 1e-3 / kQueueSlice);
      first_med.push_back(at_rank(sorted(std::vector<double>(durations.begin(), durations.begin() + kQueueSlice)), 0.5));
      last_med.push_back(at_rank(sorted(std::vector<double>(durations.begin() + last, durations.end())), 0.5));
      max_call.push_back(*std::max_element(durations.begin(), durations.end()));
      for (unsigned i = 0; i < kQueueLaunches; ++i)
        if (durations[i] > kStallUs) {
          stall_at.push_back(i);
          stall_us.push_back(durations[i]);
          break;
        }
    }
    const auto med = [](const std::vector<double>& v) { return at_rank(sorted(v), 0.5); };
    char stall[64];
    if (stall_at.empty())
      std::snprintf(stall, sizeof stall, "%2d/%d   -", 0, kQueueReps);
    else
      std::snprintf(stall, sizeof stall, "%2zu/%d %8.0f %10.0f", stall_at.size(), kQueueReps, med(stall_at),
                    med(stall_us));
    char gate_text[32];
    if (gated)
      std::snprintf(gate_text, sizeof gate_text, "%d/%d", timeouts, kQueueReps);
    else
      std::snprintf(gate_text, sizeof gate_text, "-");
    std::printf("  %-22s | %9.2f %9.2f | %9.2f %9.2f | %8.1f | %-26s | %s\n",
                gated ? "behind gate (20 ms)" : "plain", med(first_mean), med(last_mean), med(first_med),
                med(last_med), med(max_call), stall, gate_text);
    std::fflush(stdout);
  }
  GP_CUDA_CHECK(cudaFreeHost(flags));
}

// The GPU's PCI address in sysfs form (lower case, "0000:17:00.0"), or "" if it cannot be parsed.
std::string sysfs_pci_address(int device) {
  char bus_id[64] = {};
  GP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
    domain = 0;
    if (std::sscanf(bus_id, "%x:%x.%x", &bus, &dev, &fn) != 3) return "";
  }
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return out;
}

enum class Mode { kDefault, kSpin, kBlockingSync };

int run(Mode mode) {
  const int start_cpu = sched_getcpu();
  int device = 0;
  GP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  GP_CUDA_CHECK(cudaDriverGetVersion(&driver));
  GP_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  // cudaFree(nullptr) creates the context, so the flags printed are the ones in force.
  GP_CUDA_CHECK(cudaFree(nullptr));
  unsigned device_flags = 0;
  GP_CUDA_CHECK(cudaGetDeviceFlags(&device_flags));
  const unsigned schedule = device_flags & cudaDeviceScheduleMask;
  const char* schedule_name = schedule == cudaDeviceScheduleSpin           ? "spin"
                              : schedule == cudaDeviceScheduleYield        ? "yield"
                              : schedule == cudaDeviceScheduleBlockingSync ? "blocking-sync"
                                                                           : "auto (spin while contexts <= CPUs)";

  std::string cpu_model, hypervisor = "no";
  {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (cpu_model.empty() && line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
        cpu_model = line.substr(line.find(':') + 2);
      if (line.rfind("flags", 0) == 0 && (line + " ").find(" hypervisor ") != std::string::npos) hypervisor = "yes";
    }
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);

  // What one clock read costs: each stamped single-call duration includes one. With a clocksource
  // the vDSO cannot read (e.g. hpet, acpi_pm, some hypervisor clocks) it is a system call (~1 us).
  constexpr int kClockReads = 100000;
  const long long c0 = now_ns();
  for (int i = 0; i < kClockReads; ++i) now_ns();
  const double clock_ns = static_cast<double>(now_ns() - c0) / kClockReads;

  std::string cuda_env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_", 5) == 0 || std::strncmp(*e, "LD_PRELOAD=", 11) == 0) cuda_env += std::string(" ") + *e;

  const std::string pci = sysfs_pci_address(device);
  const std::string pci_dir = "/sys/bus/pci/devices/" + pci + "/";
  const std::string local_cpulist = pci.empty() ? "" : read_line(pci_dir + "local_cpulist");
  const std::string numa_node = pci.empty() ? "" : read_line(pci_dir + "numa_node");

  std::printf("launch_host: host cost of kernel launches (k<<<1,%d>>>(nullptr, i), which does nothing)\n", kBlock);
  std::printf("mode:        %s; device schedule flag in force: %s\n",
              mode == Mode::kSpin           ? "--spin (cudaSetDeviceFlags(cudaDeviceScheduleSpin) before the context)"
              : mode == Mode::kBlockingSync ? "--blocking-sync (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) "
                                              "before the context)"
                                            : "default (device flags untouched)",
              schedule_name);
  std::printf("GPU:         %s, PCI %s, driver %d.%d, runtime %d.%d\n", prop.name, pci.empty() ? "?" : pci.c_str(),
              driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  std::printf("GPU-local:   numa_node %s, local_cpulist %s\n", or_unavailable(numa_node).c_str(),
              local_cpulist.empty() ? ("unavailable (" + pci_dir + "local_cpulist unreadable)").c_str()
                                    : local_cpulist.c_str());
  std::printf("host CPU:    %s; hypervisor flag: %s; %ld CPUs online, %d allowed to this thread; on CPU %d at start\n",
              or_unavailable(cpu_model).c_str(), hypervisor.c_str(), sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&allowed),
              start_cpu);
  std::printf("governor:    %s\n",
              or_unavailable(read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")).c_str());
  std::printf("cmdline:     %s\n", or_unavailable(read_line("/proc/cmdline")).c_str());
  std::printf("clock:       steady_clock::now() %.1f ns per read; clocksource %s\n", clock_ns,
              or_unavailable(read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource")).c_str());
  std::printf("environment:%s\n", cuda_env.empty() ? " no CUDA_* or LD_PRELOAD set" : cuda_env.c_str());
  std::printf(
      "columns:     host = std::chrono around N launch calls / N (median, min, p90 of %d batches); event = CUDA "
      "events\n"
      "             around N launches / N; single calls: every call stamped (durations include one clock read),\n"
      "             mean = stamped batch time / N, 1st = median of the first call after a sync, then median, p90, "
      "p99,\n"
      "             max over all %d x N calls. Every batch starts on an empty queue (synchronized after timing).\n",
      kReps, kReps);

  cudaStream_t stream;
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  GP_CUDA_CHECK(cudaEventCreate(&e0));
  GP_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<long long> stamps(kMaxBatch + 1);
  const auto baseline = [stream](unsigned i) { k<<<1, kBlock, 0, stream>>>(nullptr, i); };
  const auto variant = [&](const std::string& name, cudaStream_t s, auto launch) {
    return make_variant(name, s, e0, e1, stamps, launch);
  };

  std::vector<Variant> variants;
  variants.push_back(variant("<<<>>> non-blocking stream (baseline)", stream, baseline));
  // The same variant twice: the difference between the two rows is the noise floor of the run.
  variants.push_back(variant("<<<>>> non-blocking stream (copy)", stream, baseline));

  // <<<>>> compiles to __cudaPushCallConfiguration + a stub that pops it and calls cudaLaunchKernel;
  // calling cudaLaunchKernel directly with a ready argument array skips the push/pop.
  unsigned long long* arg_p = nullptr;
  unsigned arg_i = 0;
  void* args[] = {&arg_p, &arg_i};

  // The driver's cuLaunchKernel without the runtime in between. The entry point comes from the
  // runtime, so the build does not link libcuda; cudaFunction_t and CUfunction are the same handle.
  using CuLaunchKernel = CUresult(CUDAAPI*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                            unsigned, CUstream, void**, void**);
  CuLaunchKernel cu_launch = nullptr;
  CUfunction cu_function = nullptr;
  const CUstream cu_stream = stream;

  AffinityGuard affinity;  // restores the thread's CPU mask when run() ends, also on an exception
  const auto restore_affinity = [&affinity] { sched_setaffinity(0, sizeof affinity.saved(), &affinity.saved()); };
  if (mode == Mode::kDefault) {
    variants.push_back(
        variant("<<<>>> legacy stream 0", nullptr, [](unsigned i) { k<<<1, kBlock, 0, nullptr>>>(nullptr, i); }));
    variants.push_back(variant("<<<>>> cudaStreamPerThread", cudaStreamPerThread,
                               [](unsigned i) { k<<<1, kBlock, 0, cudaStreamPerThread>>>(nullptr, i); }));
    variants.push_back(variant("cudaLaunchKernel, pre-built args", stream, [&arg_i, &args, stream](unsigned i) {
      arg_i = i;
      GP_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(kBlock), args, 0, stream));
    }));

    cu_launch = gpuprobe::driver_entry_point<CuLaunchKernel>("cuLaunchKernel");
    cu_function = gpuprobe::driver_function(reinterpret_cast<const void*>(k));
    variants.push_back(variant("cuLaunchKernel (driver, direct)", stream,
                               [&arg_i, &args, cu_launch, cu_function, cu_stream](unsigned i) {
                                 arg_i = i;
                                 GP_CU_CHECK(cu_launch(cu_function, 1, 1, 1, kBlock, 1, 1, 0, cu_stream, args, nullptr));
                               }));

    // Pinned (around each of its batches, untimed): (a) to the CPU the thread ran on at this
    // point, so the scheduler cannot migrate it mid-batch; (b) to a CPU of the GPU's NUMA-local
    // set (another one than (a) where the set allows), in case (a) sits on a remote node.
    const int here = sched_getcpu();
    Variant pinned_here = variant("pinned to cpu " + std::to_string(here) + " (current)", stream, baseline);
    pinned_here.before = [here] { pin_to(here); };
    pinned_here.after = restore_affinity;
    variants.push_back(std::move(pinned_here));

    std::vector<int> local;
    for (int cpu : parse_cpulist(local_cpulist))
      if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &affinity.saved())) local.push_back(cpu);
    if (local.empty()) {
      std::printf("pinned to a GPU-local cpu: skipped (GPU-local CPU set unreadable, or none of it allowed)\n");
    } else {
      const auto other = std::find_if(local.begin(), local.end(), [here](int cpu) { return cpu != here; });
      const int target = other != local.end() ? *other : local.front();
      Variant pinned_local = variant(
          "pinned to cpu " + std::to_string(target) + " (GPU-local, node " + or_unavailable(numa_node) + ")", stream,
          baseline);
      pinned_local.before = [target] { pin_to(target); };
      pinned_local.after = restore_affinity;
      variants.push_back(std::move(pinned_local));
    }
  }
  measure_interleaved(variants);

  if (mode == Mode::kDefault) queue_check(stream);
  GP_CUDA_CHECK(cudaEventDestroy(e0));
  GP_CUDA_CHECK(cudaEventDestroy(e1));
  GP_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Mode mode = Mode::kDefault;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--spin" && mode == Mode::kDefault) {
      mode = Mode::kSpin;
    } else if (arg == "--blocking-sync" && mode == Mode::kDefault) {
      mode = Mode::kBlockingSync;
    } else {
      std::fprintf(stderr, "usage: launch_host [--spin | --blocking-sync]\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  // The schedule flag only takes effect if set before the context exists: first CUDA call.
  if (mode != Mode::kDefault) {
    const cudaError_t e =
        cudaSetDeviceFlags(mode == Mode::kSpin ? cudaDeviceScheduleSpin : cudaDeviceScheduleBlockingSync);
    if (e != cudaSuccess) {
      std::fprintf(stderr, "launch_host: cudaSetDeviceFlags failed: %s (%s); no usable GPU?\n", cudaGetErrorName(e),
                   cudaGetErrorString(e));
      return 2;
    }
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "launch_host: no usable CUDA device (cudaGetDeviceCount: %s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 2;
  }
  try {
    return run(mode);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "launch_host: %s\n", ex.what());
    return 1;
  }
}
