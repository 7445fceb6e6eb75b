"""How the analysis reads a probe family: its axes, units, title, flops per op and a kernel's compute
ceiling come from the family's record in the result file (records.py, written by the binary from
microbench/harness/family.hpp); this module holds what is the analysis' own: which families each
report section reads, and the counter metrics it turns into bytes and flops."""
from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .records import FamilyRecord
from .results import Entry, ResultSet

# The families the core sections read (sections/); the others of a file go to its
# generic table, except kernels, paired entries and the families with their own section (sections/).
PROFILE_FAMILIES = (
    "memory.latency", "memory.tlb", "memory.bandwidth", "memory.stride", "memory.shared_bandwidth",
    "memory.l1_peak", "memory.bank_conflicts", "baseline.memcpy_d2d", "exec.latency", "exec.throughput",
    "exec.throughput_peak", "exec.launch_rate", "exec.launch_submit", "exec.launch_gap", "exec.launch_sync",
    "exec.barrier", "transfer.host", "transfer.memcpy_baseline")
KERNEL_PREFIX = "kernels."
# Paired comparisons (paired.symv, paired.gemv): A and B timed in the same samples, value = B time / A time.
PAIRED_PREFIX = "paired."
# A paired entry whose per-sample speedups spread more than this (CV) is marked: something slowed one
# call of some pairs more than the other (docs/probes.md, "Paired entries").
PAIRED_NOISY_CV = 0.2
# The multi-GPU kernels (sections/mgpu.py): not in the roofline or the optimality tables, whose bounds are
# one GPU's (their bytes are summed over the GPUs): roofline.py leaves them out.
MGPU_KERNEL_FAMILIES = ("kernels.symv_mgpu", "kernels.gemv_mgpu", "kernels.symv_mgpu_sytrd",
                        "kernels.symv_mgpu_trailing")
PIPELINE_LATENCY_FAMILIES = ("exec.latency",)
THROUGHPUT_FAMILIES = ("exec.throughput", "exec.throughput_peak")
LAUNCH_PREFIX = "exec.launch"  # exec.launch, exec.launch_rate, _submit, _gap, _sync
# Counter of exec.throughput_peak with the datasheet rate of the op at the measured clock (dashed).
THEORETICAL_COMPUTE_COUNTER = "theoretical_gflops_at_kernel_clock"

# Hardware-counter metrics (Nsight Compute names) -> bytes at each level, summed when several.
LEVEL_BYTES = {
    "L1": (("l1tex__t_bytes.sum",),),
    "L2": (("lts__t_bytes.sum",),),
    "DRAM": (("dram__bytes.sum",), ("dram__bytes_read.sum", "dram__bytes_write.sum")),
}
# FLOP counts from SASS instruction counters: (metric, flops per thread instruction, precision).
FLOP_METRICS = [
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.0, "FP32"),
    ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1.0, "FP32"),
    ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 1.0, "FP32"),
    ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 2.0, "FP64"),
    ("sm__sass_thread_inst_executed_op_dadd_pred_on.sum", 1.0, "FP64"),
    ("sm__sass_thread_inst_executed_op_dmul_pred_on.sum", 1.0, "FP64"),
]
# Theoretical ceilings from peak metrics, when a run recorded them: (per-cycle peak, cycles/s, scale).
# No L1 entry: l1tex__t_bytes.sum.peak_sustained counts tag lookups (512 B/clk/SM on GH100), not the
# load path, so it is no theoretical figure for the L1 load ceiling (it read 133,733 GB/s on the H100
# beside a measured 33,383); the report shows one L1 theoretical figure everywhere, here none.
PEAK_METRICS = {
    "DRAM": ("dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", 1.0),
    "L2": ("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second", 1.0),
    "FP32": ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "sm__cycles_elapsed.avg.per_second", 2.0),
    "FP64": ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", "sm__cycles_elapsed.avg.per_second", 2.0),
}
# Context keys with theoretical ceilings (GB/s or GFLOP/s), if a probe group records them.
PEAK_CONTEXT = {"DRAM": "gpu_theoretical_dram_gbps", "L2": "gpu_theoretical_l2_gbps",
                "L1": "gpu_theoretical_l1_gbps", "FP32": "gpu_theoretical_fp32_gflops",
                "FP64": "gpu_theoretical_fp64_gflops"}


def num(e: Entry, key: str) -> float:
    """A numeric axis or field: the entry's counter of that name, else its name's parameter."""
    return e.num(key)


def text(e: Entry, key: str) -> Optional[str]:
    """A text axis or field: the entry's label tag of that name, else its name's parameter."""
    return e.tag(key)


def param(e: Entry, key: str):
    """An axis, textual or numeric as the entry's record declares it, as a hashable value (None when
    absent). Without a record: the tag if there is one, else the number."""
    if key == "family":
        return e.family
    is_text = e.record.is_text(key) if e.record is not None else None
    # Without a record, only a label tag says "text": a name parameter (e.g. word:4) reads as a number.
    if is_text or (is_text is None and key in e.tags):
        return text(e, key)
    v = num(e, key)
    return None if math.isnan(v) else v


def record(rs: ResultSet, family: str) -> Optional[FamilyRecord]:
    return rs.record(family)


def group_keys(rs: ResultSet, family: str) -> Optional[Tuple[str, ...]]:
    """The axes that key the family's curves (its record's group axes); None without a record."""
    r = rs.record(family)
    return r.group if r is not None else None


def x_key(rs: ResultSet, family: str) -> Optional[str]:
    """The family's swept axis; None without a record or without one."""
    r = rs.record(family)
    return r.x if r is not None else None


def title(rs: ResultSet, family: str, default: str) -> str:
    r = rs.record(family)
    return r.title if r is not None and r.title else default


def higher_is_better(e: Entry) -> Optional[bool]:
    """Whether a larger value is the better figure, as the entry's record says (None: no record)."""
    return None if e.record is None else e.record.better == "higher"


def group(entries: Iterable[Entry], keys: Sequence[str]) -> Dict[tuple, List[Entry]]:
    out: Dict[tuple, List[Entry]] = {}
    for e in entries:
        out.setdefault(tuple(param(e, k) for k in keys), []).append(e)
    return out


def compute_op(e: Entry, op: Optional[str]):
    """(precision, flops per op) of an instruction as the entry's record declares it, or None for an
    op that is no floating-point peak (or an entry without a record)."""
    o = e.record.op(op) if e.record is not None and op else None
    if o is None or not o.precision or not o.flops_per_op > 0:
        return None
    return o.precision, o.flops_per_op


def kernel_precision(e: Entry) -> Optional[str]:
    """The compute ceiling ("FP32", "FP64", ...) of a kernel entry's work, as its family record declares
    it for the entry's `precision`; None where the record declares none (or the entry has no record)."""
    return e.record.compute_ceiling(text(e, "precision")) if e.record is not None else None


def name_pattern(entries: Sequence[Entry]) -> str:
    """Entry-name template of a group, `*` where the entries differ: the hop from a figure to
    the result entries."""
    if not entries:
        return ""
    parts = [e.name.split("/") for e in entries]
    if len({len(p) for p in parts}) != 1:
        return entries[0].family + "/*"
    out = []
    for col in zip(*parts):
        if len(set(col)) == 1:
            out.append(col[0])
        else:
            keys = {c.split(":", 1)[0] for c in col}
            out.append((keys.pop() + ":*") if len(keys) == 1 and ":" in col[0] else "*")
    return "/".join(out)


def provenance(entries: Sequence[Entry]) -> dict:
    """Where a figure comes from: entry names, probe family (its ProbeDescriptor), method, files."""
    methods = sorted({e.method for e in entries if e.method})
    return {
        "entries": name_pattern(entries),
        "count": len(entries),
        "probe": sorted({e.family for e in entries}),
        "method": methods,
        "units": sorted({e.unit for e in entries if e.unit}),
        "files": sorted({e.source for e in entries}),
    }
