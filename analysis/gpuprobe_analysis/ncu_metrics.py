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
  NCU_GH100     listed by `ncu --query-metrics` (ncu 2025.3.1) on an H100 and read back from its profiles
                (2026-12-05); the tensor counters' weight (1 FLOP per count) settled by the cross-check on
                exec.tensor (docs/app-profiling.md);
  UNVERIFIED    seen only in third-party scripts; not yet checked against ncu --query-metrics on a GPU.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from typing import Dict, List, Tuple

TIME, CLOCK, BYTES, FLOPS, TENSOR, LAUNCH = "time", "clock", "bytes", "flops", "tensor", "launch"
# Nsight Compute's own roof of a level, as its roofline charts draw it: `<bytes>.peak_sustained` per cycle x
# that unit's cycles per second in the profile. Shown beside the measured verdict; it bounds nothing.
NCU_PEAK, NCU_PEAK_CLOCK = "ncu_peak", "ncu_peak_clock"

COUNTERS_MD = "counters.md (CUPTI, GH100)"
METRIC_NAMES = "metric_names.hpp (CUPTI catalog, GH100)"
NCU_SECTION = "ncu roofline sections (public copies)"
UNVERIFIED = "unverified"
NCU_GH100 = "ncu --query-metrics (GH100)"

# A tensor type's structured-sparsity form: its operations count twice the dense work the ceiling was
# measured with, so they go to a ceiling of their own name, which no probe measures (held to none, and said so).
SPARSE_SUFFIX = " (sparse)"


@dataclass(frozen=True)
class NcuMetric:
    name: str          # the metric, exactly as ncu spells it
    role: str          # TIME, CLOCK, BYTES, FLOPS, TENSOR, NCU_PEAK(_CLOCK) or LAUNCH (an attribute of the launch)
    target: str        # the ceiling it feeds: a level, a compute precision or a tensor type ("" otherwise)
    weight: float      # FLOP per count (FLOPS, TENSOR); 1 otherwise
    dimension: str     # its base unit: "second", "1/second", "byte", "byte/cycle", "count" or "text"
    source: str        # where the name was checked (see the module text)
    why: str = ""      # what it counts, when the name does not say
    read: bool = False # BYTES at DRAM: the read half (the DRAM read vs copy ceiling)


_SASS = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
_OPS = "sm__ops_path_tensor_{}.sum"


def _tensor(path: str, target: str, source: str = NCU_GH100) -> NcuMetric:
    # Weight 1: the op-path counters count operations, a multiply-add being two: on an H100 they equal
    # exec.tensor's 2mnk per instruction for every type, mma.sync and wgmma (the cross-check, 2026-12-05).
    return NcuMetric(_OPS.format(path), TENSOR, target, 1.0, "count", source)


METRICS: Tuple[NcuMetric, ...] = (
    NcuMetric("gpu__time_duration.sum", TIME, "", 1.0, "second", COUNTERS_MD),
    NcuMetric("sm__cycles_elapsed.avg.per_second", CLOCK, "", 1.0, "1/second", COUNTERS_MD,
              "the SM clock the launch ran at (profiled with --clock-control none)"),
    # DRAM as read + write, not dram__bytes.sum: the read half picks the read or the copy ceiling.
    NcuMetric("dram__bytes_read.sum", BYTES, "DRAM", 1.0, "byte", METRIC_NAMES, read=True),
    NcuMetric("dram__bytes_write.sum", BYTES, "DRAM", 1.0, "byte", METRIC_NAMES),
    # All L2 traffic, as the report's kernel roofline counts it (families.LEVEL_BYTES), so that an
    # application's kernels and ours sit on the same axis. It includes the L2's own traffic (DRAM fills,
    # the fabric between partitions), which the SM-sourced sector counts of metric_names.hpp leave out.
    NcuMetric("lts__t_bytes.sum", BYTES, "L2", 1.0, "byte", COUNTERS_MD),
    NcuMetric("l1tex__t_bytes.sum", BYTES, "L1", 1.0, "byte", COUNTERS_MD),
    # Shared memory: loads, stores and atomics together. metric_names.hpp's _op_ld form counts the loads
    # only, which is what the shared-bandwidth probe needs; an application kernel that mostly stores to
    # shared memory would sit at too high an intensity for its level with it.
    NcuMetric("sm__sass_data_bytes_mem_shared.sum", BYTES, "shared", 1.0, "byte", COUNTERS_MD,
              "bytes the SASS shared-memory instructions moved"),
    # Non-tensor FLOPs from thread-instruction counts, with ncu's own weights: an FMA is 2 FLOP; the half
    # instructions are half2 (two lanes): HADD2/HMUL2 2, HFMA2 4 (the derived metrics
    # derived__smsp__sass_thread_inst_executed_op_{hadd,hmul}_pred_on_x2 and _hfma_pred_on_x4 of ncu's
    # SpeedOfLight_HierarchicalHalfRooflineChart, as public copies of it spell them). Their ceiling is the
    # pipelines section's "FP16 half2".
    NcuMetric(_SASS.format("ffma"), FLOPS, "FP32", 2.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("fadd"), FLOPS, "FP32", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("fmul"), FLOPS, "FP32", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dfma"), FLOPS, "FP64", 2.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dadd"), FLOPS, "FP64", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("dmul"), FLOPS, "FP64", 1.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("hfma"), FLOPS, "FP16 half2", 4.0, "count", METRIC_NAMES),
    NcuMetric(_SASS.format("hadd"), FLOPS, "FP16 half2", 2.0, "count", NCU_SECTION),
    NcuMetric(_SASS.format("hmul"), FLOPS, "FP16 half2", 2.0, "count", NCU_SECTION),
    # Tensor-pipe operations per type, named as the exec.tensor record names its ceilings. Each type has a
    # warpgroup path (wgmma: hgmma, igmma) and a warp path (mma.sync: hmma, imma); both go to the type's
    # ceiling. FP8 (wgmma only on Hopper) and FP64 (DMMA) have no per-path form on GH100, only the per-type
    # total.
    _tensor("op_hgmma_src_fp16_sparsity_off", "FP16 tensor"),
    _tensor("op_hmma_src_fp16_dst_fp32_sparsity_off", "FP16 tensor"),
    _tensor("op_hmma_src_fp16_dst_fp16_sparsity_off", "FP16 tensor"),
    _tensor("op_hgmma_src_bf16_dst_fp32_sparsity_off", "BF16 tensor"),
    _tensor("op_hmma_src_bf16_dst_fp32_sparsity_off", "BF16 tensor"),
    _tensor("op_hgmma_src_tf32_dst_fp32_sparsity_off", "TF32 tensor"),
    _tensor("op_hmma_src_tf32_dst_fp32_sparsity_off", "TF32 tensor"),
    _tensor("src_fp8_sparsity_off", "FP8 tensor"),
    _tensor("op_igmma_src_int8_sparsity_off", "INT8 tensor"),
    _tensor("op_imma_src_int8_sparsity_off", "INT8 tensor"),
    _tensor("src_fp64", "FP64 tensor"),
    _tensor("op_hgmma_src_fp16_sparsity_on", "FP16 tensor" + SPARSE_SUFFIX),
    _tensor("op_hmma_src_fp16_dst_fp32_sparsity_on", "FP16 tensor" + SPARSE_SUFFIX),
    _tensor("op_hgmma_src_bf16_dst_fp32_sparsity_on", "BF16 tensor" + SPARSE_SUFFIX),
    _tensor("op_hmma_src_bf16_dst_fp32_sparsity_on", "BF16 tensor" + SPARSE_SUFFIX),
    _tensor("op_hgmma_src_tf32_dst_fp32_sparsity_on", "TF32 tensor" + SPARSE_SUFFIX),
    _tensor("op_hmma_src_tf32_dst_fp32_sparsity_on", "TF32 tensor" + SPARSE_SUFFIX),
    _tensor("src_fp8_sparsity_on", "FP8 tensor" + SPARSE_SUFFIX),
    _tensor("op_igmma_src_int8_sparsity_on", "INT8 tensor" + SPARSE_SUFFIX),
    _tensor("op_imma_src_int8_sparsity_on", "INT8 tensor" + SPARSE_SUFFIX),
    # ncu's own roof per level: its peak bytes per cycle and the cycles per second of that unit.
    *(m for counter, unit, level in (("dram__bytes", "dram", "DRAM"), ("lts__t_bytes", "lts", "L2"),
                                      ("l1tex__t_bytes", "l1tex", "L1"))
      for m in (NcuMetric(f"{counter}.sum.peak_sustained", NCU_PEAK, level, 1.0, "byte/cycle",
                          METRIC_NAMES, f"ncu's peak {level} bytes per cycle"),
                NcuMetric(f"{unit}__cycles_elapsed.avg.per_second", NCU_PEAK_CLOCK, level, 1.0, "1/second",
                          METRIC_NAMES, f"the {level} unit's clock in the profile"))),
    # Attributes of the launch. The raw page has the shape in its Grid Size / Block Size columns; a
    # .ncu-rep gives it only as these metrics. The GPU model tells a profile of another GPU apart.
    NcuMetric("device__attribute_display_name", LAUNCH, "", 1.0, "text", NCU_GH100, "the GPU model"),
    *(NcuMetric(f"launch__{what}_dim_{axis}", LAUNCH, "", 1.0, "count", NCU_GH100)
      for what in ("grid", "block") for axis in "xyz"),
)

BY_NAME: Dict[str, NcuMetric] = {m.name: m for m in METRICS}
# The metrics that count: time, clock, bytes, FLOPs and tensor operations.
COUNTED: Tuple[NcuMetric, ...] = tuple(m for m in METRICS if m.role not in (LAUNCH, NCU_PEAK, NCU_PEAK_CLOCK))
# ncu's own roof per level: level -> (peak bytes per cycle, cycles per second) metric names (optional: a
# profile without them is judged the same, with no ncu roof beside the verdict).
NCU_ROOF_OF: Dict[str, Tuple[str, str]] = {
    m.target: (m.name, next(c.name for c in METRICS if c.role == NCU_PEAK_CLOCK and c.target == m.target))
    for m in METRICS if m.role == NCU_PEAK}
DEVICE_NAME = "device__attribute_display_name"
LAUNCH_SHAPE: Tuple[str, ...] = tuple(f"launch__{w}_dim_{a}" for w in ("grid", "block") for a in "xyz")
# The ceiling names the declaration feeds, per role (for the report's lookups and for the tests).
LEVELS: Tuple[str, ...] = tuple(dict.fromkeys(m.target for m in METRICS if m.role == BYTES))
PRECISIONS: Tuple[str, ...] = tuple(dict.fromkeys(m.target for m in METRICS if m.role == FLOPS))
TENSOR_TYPES: Tuple[str, ...] = tuple(dict.fromkeys(m.target for m in METRICS if m.role == TENSOR))


def metric_list(names=None) -> str:
    """The comma-separated list for `ncu --metrics` (of `names`, default every declared metric)."""
    return ",".join(m.name for m in METRICS) if names is None else ",".join(names)


_QUERY_NAME = re.compile(r"^\s*([a-z0-9]+__[a-z0-9_]+)\b")


def split_available(query_text: str) -> Tuple[List[str], List[str]]:
    """The declared metrics this GPU has and those it lacks, by `ncu --query-metrics` output (base names, one
    per line). The launch attributes (device__, launch__) are never dropped; an output that lists no metric
    at all drops nothing (the list cannot be told)."""
    known = {m.group(1) for m in map(_QUERY_NAME.match, query_text.splitlines()) if m}
    if not known:
        return [m.name for m in METRICS], []
    kept, absent = [], []
    for m in METRICS:
        base = m.name.split(".", 1)[0]
        (kept if m.role == LAUNCH or base in known else absent).append(m.name)
    return kept, absent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="The metric list for ncu --metrics (scripts/profile_app.sh).")
    ap.add_argument("--query", metavar="FILE",
                    help="`ncu --query-metrics` output of the GPU to profile: list only the metrics it has")
    ap.add_argument("--absent", action="store_true",
                    help="with --query: print the declared metrics that GPU lacks instead")
    a = ap.parse_args(argv)
    if a.query is None:
        print(metric_list())
        return 0
    try:
        with open(a.query, encoding="utf-8", errors="replace") as f:
            kept, absent = split_available(f.read())
    except OSError as e:
        print(f"ncu_metrics: {a.query}: {e.strerror}", file=sys.stderr)
        return 1
    print(metric_list(absent if a.absent else kept))
    return 0


if __name__ == "__main__":
    sys.exit(main())
