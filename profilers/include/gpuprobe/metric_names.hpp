// The hardware-counter names gpuprobe relies on by name (Nsight Compute spelling, valid under CUPTI on
// GH100: tests/cpu/profiler_cupti_host_test.cpp checks each against the chip's catalog on every CI run).
// Spelled once here; the metric sets (metric_sets.cpp) and the premise checks
// (microbench/harness/premise.cpp) use these constants.
#pragma once

namespace gpuprobe::metrics {

constexpr const char* kGpuTime = "gpu__time_duration.sum";
constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";

// L1: global-load sectors looked up in L1TEX, and those that hit.
constexpr const char* kL1GlobalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kL1GlobalLoadHitSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum";
// L2: 32-byte sectors the SMs (through L1TEX) read and wrote. Not lts__t_bytes, which also counts the
// L2's own traffic (DRAM fills, the fabric between L2 partitions): on saxpy it read 1.22 GB where the
// SMs moved 0.81 (docs/counters.md).
constexpr const char* kL2SmReadSectors = "lts__t_sectors_srcunit_tex_op_read.sum";
constexpr const char* kL2SmWriteSectors = "lts__t_sectors_srcunit_tex_op_write.sum";
constexpr double kL2SectorBytes = 32;
// DRAM bytes.
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
// Shared memory: bytes the SASS shared-memory loads returned.
constexpr const char* kSharedLoadBytes = "sm__sass_data_bytes_mem_shared_op_ld.sum";
// Thread-level SASS instruction counts of the floating-point pipes.
constexpr const char* kSassFfma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr const char* kSassFadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr const char* kSassFmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
constexpr const char* kSassDfma = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum";
constexpr const char* kSassDadd = "sm__sass_thread_inst_executed_op_dadd_pred_on.sum";
constexpr const char* kSassDmul = "sm__sass_thread_inst_executed_op_dmul_pred_on.sum";
constexpr const char* kSassHfma = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum";
// Warp-level instructions executed on the tensor pipe, by SASS family: HMMA (mma.sync on f16, bf16,
// tf32), IMMA (integer mma.sync), DMMA (f64 mma.sync) and GMMA (wgmma of any type, counted once per warp
// of the warpgroup). Names from CUPTI's GH100 catalog.
constexpr const char* kTensorHmmaInst = "sm__inst_executed_pipe_tensor_op_hmma.sum";
constexpr const char* kTensorImmaInst = "sm__inst_executed_pipe_tensor_op_imma.sum";
constexpr const char* kTensorDmmaInst = "sm__inst_executed_pipe_tensor_op_dmma.sum";
constexpr const char* kTensorGmmaInst = "sm__inst_executed_pipe_tensor_op_gmma.sum";
// The counters' own peaks, per cycle, and their clocks: theoretical ceilings of the measured GPU.
constexpr const char* kL2PeakBytesPerCycle = "lts__t_bytes.sum.peak_sustained";
constexpr const char* kL2Clock = "lts__cycles_elapsed.avg.per_second";
constexpr const char* kDramPeakBytesPerCycle = "dram__bytes.sum.peak_sustained";
constexpr const char* kDramClock = "dram__cycles_elapsed.avg.per_second";
constexpr const char* kL1PeakBytesPerCycle = "l1tex__t_bytes.sum.peak_sustained";
constexpr const char* kL1Clock = "l1tex__cycles_elapsed.avg.per_second";

}  // namespace gpuprobe::metrics
