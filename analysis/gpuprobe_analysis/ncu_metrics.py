"""The one declaration of the Nsight Compute metrics an application profile collects, and what each counts.

scripts/profile_app.sh asks ncu for exactly these (`python3 -m gpuprobe_analysis.ncu_metrics` prints the
list) and ncu.py turns each launch's values into time, clock, bytes per level, FLOPs per precision and
tensor operations per type from this table alone. The targets are the report's ceiling names: the levels
of ceilings.py ("DRAM", "L2", "L1", "shared"), the compute ceilings of the pipelines section ("FP32",
"FP64", "FP16 half2") and the tensor ceilings of the exec.tensor record ("FP16 tensor", ...).

Where each name was checked is in `source` (docs/app-profiling.md has the same table):
  COUNTERS_MD   shared/notes/counters.md: accepted by CUPTI on GH100 on the project's H100 test machine;
  METRIC_NAMES  profilers/include/gpuprobe/metric_names.hpp, checked against the GH100 catalog by
                tests/cpu/profiler_cupti_host_test.cpp;
  NCU_SECTION   spelled as ncu's own roofline sections spell it (SpeedOfLight_Hierarchical*RooflineChart),
                seen only through public copies of those files, not in an ncu installation;
  UNVERIFIED    seen only in third-party scripts; not yet checked against ncu --query-metrics on a GPU.
Nothing here was checked on a GPU in the session that wrote it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple

TIME, CLOCK, BYTES, FLOPS, TENSOR = "time", "clock", "bytes", "flops", "tensor"

COUNTERS_MD = "counters.md (CUPTI, GH100)"
METRIC_NAMES = "metric_names.hpp (CUPTI catalog, GH100)"
NCU_SECTION = "ncu roofline sections (public copies)"
UNVERIFIED = "unverified"


@dataclass(frozen=True)
class NcuMetric:
    name: str          # the metric, exactly as ncu spells it
    role: str          # TIME, CLOCK, BYTES, FLOPS or TENSOR
    target: str        # the ceiling it feeds: a level, a compute precision or a tensor type ("" for time/clock)
    weight: float      # FLOP per count (FLOPS, TENSOR); 1 for bytes, time and clock
    dimension: str     # what its base unit must be: "second", "1/second", "byte" or "count"
    source: str        # where the name was checked (see the module text)
    why: str = ""      # what it counts, when the name does not say
    read: bool = False # BYTES at DRAM: the read half (the DRAM read vs copy ceiling)


_SASS = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
_TENSOR = "sm__ops_path_tensor_{}.sum"

METRICS: Tuple[NcuMetric, ...] = (
    NcuMetric("gpu__time_duration.sum", TIME, "", 1.0, "second", COUNTERS_MD),
    NcuMetric("sm__cycles_elapsed.avg.per_second", CLOCK, "", 1.0, "1/second", COUNTERS_MD,
              "the SM clock the launch ran at (profiled with --clock-control none)"),
    # DRAM as read + write, not dram__bytes.sum: the read half picks the read or the copy ceiling.
    NcuMetric("dram__bytes_read.sum", BYTES, "DRAM", 1.0, "byte", METRIC_NAMES, read=True),
    NcuMetric("dram__bytes_write.sum", BYTES, "DRAM", 1.0, "byte", METRIC_NAMES),
    # All L2 traffic, as the report's kernel roofline counts it (families.LEVEL_BYTES), so that the
    # application's kernels and ours sit on the same axis.
    NcuMetric("lts__t_bytes.sum", BYTES, "L2", 1.0, "byte", COUNTERS_MD),
    NcuMetric("l1tex__t_bytes.sum", BYTES, "L1", 1.0, "byte", COUNTERS_MD),
    # Shared memory: loads, stores and atomics together (the _op_ld form alone would leave a kernel that
    # mostly stores to shared memory with too little traffic for its level).
    NcuMetric("sm__sass_data_bytes_mem_shared.sum", BYTES, "shared", 1.0, "byte", COUNTERS_MD,
              "bytes the SASS shared-memory instructions moved"),
    # Non-tensor FLOPs from thread-instruction counts, with ncu's own weights: an FMA is 2 FLOP; the half
    # instructions are half2 (two lanes): HADD2/HMUL2 2, HFMA2 4 (ncu's derived__..._hadd_pred_on_x2,
    # _hmul_pred_on_x2 and _hfma_pred_on_x4 of SpeedOfLight_HierarchicalHalfRooflineChart).
    NcuMetric(_SASS.format("ffma"), FLOPS, "FP32", 2.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("fadd"), FLOPS, "FP32", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("fmul"), FLOPS, "FP32", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dfma"), FLOPS, "FP64", 2.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dadd"), FLOPS, "FP64", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dmul"), FLOPS, "FP64", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("hfma"), FLOPS, "FP16 half2", 4.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("hadd"), FLOPS, "FP16 half2", 2.0, "count", NCU_SECTION),
    NcuMetric(_SASS.format("hmul"), FLOPS, "FP16 half2", 2.0, "count", NCU_SECTION),
    # Tensor-pipe operations per type (provisional list; see docs/app-profiling.md).
    NcuMetric(_TENSOR.format("op_hgmma_src_fp16_sparsity_off"), TENSOR, "FP16 tensor", 1.0, "count", UNVERIFIED),
    NcuMetric(_TENSOR.format("op_hgmma_src_bf16_dst_fp32_sparsity_off"), TENSOR, "BF16 tensor", 1.0, "count", UNVERIFIED),
    NcuMetric(_TENSOR.format("op_hgmma_src_tf32_dst_fp32_sparsity_off"), TENSOR, "TF32 tensor", 1.0, "count", UNVERIFIED),
    NcuMetric(_TENSOR.format("src_fp8_sparsity_off"), TENSOR, "FP8 tensor", 1.0, "count", UNVERIFIED),
    NcuMetric(_TENSOR.format("op_igmma_src_int8_sparsity_off"), TENSOR, "INT8 tensor", 1.0, "count", UNVERIFIED),
    NcuMetric(_TENSOR.format("src_fp64"), TENSOR, "FP64 tensor", 1.0, "count", UNVERIFIED),
)

BY_NAME: Dict[str, NcuMetric] = {m.name: m for m in METRICS}


def metric_list() -> str:
    """The comma-separated list for `ncu --metrics`."""
    return ",".join(m.name for m in METRICS)


if __name__ == "__main__":
    print(metric_list())
