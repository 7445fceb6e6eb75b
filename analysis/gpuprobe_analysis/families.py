"""What the analysis knows about each probe family, in tables: adapting to a renamed counter or tag
is one line here. Families not listed go to the generic table unchanged."""
from __future__ import annotations

import math
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .results import Entry

# Numeric parameters: the names a probe may give them (counter first, then name parameter).
NUMERIC = {
    "footprint": ("footprint_bytes", "footprint"),
    "stride": ("stride_bytes", "stride"),
    "size": ("size_bytes", "size", "bytes"),
    "vector": ("vector_bytes", "vector"),
    "blocks_per_sm": ("blocks_per_sm",),
    "stride_elements": ("stride_elements", "stride"),
    "offset": ("offset_bytes", "offset"),
    "word_stride": ("word_stride", "stride"),
    "word_bytes": ("word_bytes", "word"),
    "ilp": ("ilp",),
    "loads": ("loads_per_thread", "loads"),
    "warps_per_sm": ("warps_per_sm", "warps"),
    "blocks": ("blocks", "blocks_total"),
    "grid": ("grid_blocks", "grid"),
    "n": ("n",),
    "m": ("m",),
    "k": ("k",),
}

# Textual parameters (label tags, else name parameters).
TEXT = {
    "pattern": ("pattern",),
    "load": ("load",),
    "kernel": ("kernel",),
    "op": ("op",),
    "mode": ("mode", "api"),
    "kind": ("kind", "barrier"),
    "direction": ("direction", "dir"),
    "memory": ("memory", "mem"),
    "engine": ("engine",),
    "form": ("form",),
    "impl": ("impl",),
    "precision": ("precision", "dtype", "type"),
    "uplo": ("uplo",),
    "trans": ("trans",),
    "carveout": ("carveout",),
    "l2": ("l2",),
    "store": ("store",),
    "walk": ("walk",),
}

# Per family: the parameters that define one curve/row ("group") and the swept one ("x").
FAMILY = {
    "memory.latency": dict(group=("pattern", "load", "stride"), x="footprint", title="Load latency (pointer chase)"),
    "memory.tlb": dict(group=("pattern", "load", "stride"), x="footprint", title="TLB (large-stride pointer chase)"),
    "memory.bandwidth": dict(group=("kernel", "vector", "blocks_per_sm"), x="footprint", title="Bandwidth vs working set"),
    "memory.stride": dict(group=("offset",), x="stride_elements", title="Strided and misaligned access"),
    "memory.shared_bandwidth": dict(group=(), x=None, title="Shared-memory bandwidth"),
    "memory.l1_peak": dict(group=("vector",), x=None, title="L1 load bandwidth, per-block resident arrays"),
    "memory.bank_conflicts": dict(group=("word_bytes",), x="word_stride", title="Shared-memory bank conflicts"),
    "baseline.memcpy_d2d": dict(group=(), x="size", title="cudaMemcpy device-to-device"),
    "exec.pipeline_latency": dict(group=("op",), x=None, title="Pipeline latency"),
    "exec.latency": dict(group=("op",), x=None, title="Pipeline latency"),
    "exec.throughput": dict(group=("op",), x="ilp", title="Instruction throughput"),
    "exec.throughput_peak": dict(group=("op",), x=None, title="Instruction throughput, best configuration"),
    "exec.launch": dict(group=("mode",), x=None, title="Kernel launch cost"),
    "exec.launch_rate": dict(group=("mode",), x=None, title="Kernel launch cost"),
    "exec.launch_submit": dict(group=("mode",), x=None, title="Kernel launch cost"),
    "exec.launch_gap": dict(group=("mode",), x=None, title="Kernel launch cost"),
    "exec.launch_sync": dict(group=("mode",), x=None, title="Kernel launch cost"),
    "exec.barrier": dict(group=("kind",), x="blocks", title="Barrier cost"),
    "transfer.host": dict(group=("direction", "memory", "engine"), x="size", title="Host-device transfers"),
    "transfer.memcpy_baseline": dict(group=("direction",), x="size", title="Blocking cudaMemcpy baseline"),
    "transfer.collective": dict(group=("op", "ranks"), x="size", title="NCCL collectives"),  # collectives.py
}
# Peer-to-peer families: their own module and report section (p2p.py), never the generic table.
P2P_FAMILIES = ("transfer.p2p", "transfer.p2p_latency", "transfer.p2p_chase")
KERNEL_PREFIX = "kernels."
# Multi-GPU kernels: their own module and report section (mgpu.py); not in the roofline or the optimality
# tables, whose bounds are one GPU's (their bytes are summed over the GPUs).
MGPU_FAMILIES = ("kernels.symv_mgpu", "kernels.gemv_mgpu", "kernels.symv_mgpu_sytrd", "kernels.symv_mgpu_trailing")
# Paired comparisons (paired.symv, paired.gemv): A and B timed in the same samples, value = B time / A time.
PAIRED_PREFIX = "paired."
# A paired entry whose per-sample speedups spread more than this (CV) is marked: something slowed one
# call of some pairs more than the other (docs/probes.md, "Paired entries").
PAIRED_NOISY_CV = 0.2
PIPELINE_LATENCY_FAMILIES = ("exec.pipeline_latency", "exec.latency")
THROUGHPUT_FAMILIES = ("exec.throughput", "exec.throughput_peak")
LAUNCH_PREFIX = "exec.launch"  # exec.launch, exec.launch_rate, _submit, _gap, _sync
# Counter of exec.throughput_peak with the datasheet rate of the op at the measured clock (dashed).
THEORETICAL_COMPUTE_COUNTER = "theoretical_gflops_at_kernel_clock"

# Compute pipelines: (regex on the op tag, precision, flops per op). First match wins.
COMPUTE_OPS: List[Tuple[str, str, float]] = [
    (r"_shared", "FP32 (shared operand)", 2.0),  # ffma_shared: an FFMA fed from shared memory, not a peak
    (r"(bfma2|fma.*bf16x2)", "BF16", 4.0),
    (r"(hfma2|fma.*(f16x2|half2))", "FP16", 4.0),
    (r"(dfma|fma.*(f64|fp64|double)|(f64|fp64|double).*fma)", "FP64", 2.0),
    (r"(ffma|fma.*(f32|fp32|float)|(f32|fp32|float).*fma|^fma$)", "FP32", 2.0),
    (r"(hfma|fma.*(f16|fp16|half))", "FP16", 2.0),
    (r"(dadd|dmul|(add|mul).*(f64|fp64|double))", "FP64", 1.0),
    (r"(fadd|fmul|(add|mul).*(f32|fp32|float))", "FP32", 1.0),
]

# Kernel precisions (the precision tag, else the family name) -> compute ceiling.
PRECISION = [
    (r"(fp64|f64|double|^d$|dgemm|dsymv|dgemv)", "FP64"),
    (r"(fp16|f16|half|^h$)", "FP16"),
    (r"(fp32|f32|float|single|^s$|sgemm|ssymv|sgemv|symv|gemv)", "FP32"),
]

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
PEAK_METRICS = {
    "DRAM": ("dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", 1.0),
    "L2": ("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second", 1.0),
    "L1": ("l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second", 1.0),
    "FP32": ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "sm__cycles_elapsed.avg.per_second", 2.0),
    "FP64": ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", "sm__cycles_elapsed.avg.per_second", 2.0),
}
# Context keys with theoretical ceilings (GB/s or GFLOP/s), if a probe group records them.
PEAK_CONTEXT = {"DRAM": "gpu_theoretical_dram_gbps", "L2": "gpu_theoretical_l2_gbps",
                "L1": "gpu_theoretical_l1_gbps", "FP32": "gpu_theoretical_fp32_gflops",
                "FP64": "gpu_theoretical_fp64_gflops"}

# Units in which larger is better (compare's direction); others (time, cycles) smaller is better.
HIGHER_IS_BETTER = re.compile(r"(gb/s|gflop|tflop|/s$|per.?s|ops/|/clock|/cycle|bytes/)", re.I)


def num(e: Entry, key: str) -> float:
    return e.num(*NUMERIC.get(key, (key,)))


def text(e: Entry, key: str) -> Optional[str]:
    for k in TEXT.get(key, (key,)):
        v = e.tag(k)
        if v is not None:
            return v
    return None


def param(e: Entry, key: str):
    """A group parameter, textual or numeric, as a hashable value."""
    if key == "family":
        return e.family
    if key in TEXT:
        return text(e, key)
    v = num(e, key)
    return None if math.isnan(v) else v


def group(entries: Iterable[Entry], keys: Sequence[str]) -> Dict[tuple, List[Entry]]:
    out: Dict[tuple, List[Entry]] = {}
    for e in entries:
        out.setdefault(tuple(param(e, k) for k in keys), []).append(e)
    return out


def compute_op(op: Optional[str]):
    """(precision, flops per op) of an instruction tag, or None."""
    if not op:
        return None
    low = op.lower()
    for rx, prec, flops in COMPUTE_OPS:
        if re.search(rx, low):
            return prec, flops
    return None


def kernel_precision(e: Entry) -> str:
    for probe in (text(e, "precision") or "", e.family.split(".")[-1]):
        low = probe.lower()
        for rx, prec in PRECISION:
            if low and re.search(rx, low):
                return prec
    return "FP32"


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
