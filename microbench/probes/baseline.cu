// Vendor reference figures measured in the same run as every probe: cudaMemcpy device-to-device
// bandwidth, so each DRAM figure has a baseline beside it in the result file.
#include "gpuprobe/device_buffer.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/settle.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

const ProbeDescriptor& kMemcpyD2D = declare_family(
    ProbeDescriptor{"baseline.memcpy_d2d", Figure::kBandwidth,
                    "cudaMemcpyAsync device-to-device timed with CUDA events; bytes = 2 x size (read + write); both "
                    "fresh buffers read until their read rate is stable first (src_/dst_ settle fields)",
                    "", 10, 3}
        .titled("cudaMemcpy device-to-device")
        .with_axes({numeric_axis("size", "bytes", AxisRole::kX)}));

void memcpy_d2d(benchmark::State& state, std::size_t bytes) {
  DeviceBuffer<float> src(bytes / sizeof(float)), dst(bytes / sizeof(float));
  fill_uniform(src.data(), src.size(), 42, -1.f, 1.f);
  fill_uniform(dst.data(), dst.size(), 43, -1.f, 1.f);
  Measurement m(state, kMemcpyD2D, Work{2.0 * bytes, 0, 0});
  record_settle(m, "src", settle_reads(src.data(), src.bytes()));
  record_settle(m, "dst", settle_reads(dst.data(), dst.bytes()));
  m.time_events([&](cudaStream_t s) {
    GP_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s));
  });
}

}  // namespace

void register_baseline_probes() {
  const Context& ctx = context();
  std::vector<std::size_t> sizes = ctx.options.quick ? std::vector<std::size_t>{std::size_t(64) << 20}
                                                     : std::vector<std::size_t>{std::size_t(256) << 20,
                                                                                std::size_t(1) << 30};
  for (std::size_t bytes : sizes) {
    if (2 * bytes > ctx.device.total_mem_bytes / 2) continue;
    register_entry(entry_name(kMemcpyD2D, {{"size", std::to_string(bytes)}}), kMemcpyD2D,
                   [bytes](benchmark::State& st) { memcpy_d2d(st, bytes); });
  }
}

}  // namespace gpuprobe
