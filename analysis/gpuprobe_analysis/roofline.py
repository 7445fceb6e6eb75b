"""Hierarchical roofline (Williams, Waterman & Patterson; the L1/L2/DRAM form of NERSC and Nsight
Compute) on ceilings measured by our probes, and the optimality table of every kernel x size."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import families as F
from .results import Entry, ResultSet

LEVELS = ("L1", "L2", "DRAM")
# The roofline's compute ceilings: these, and every other one the kernel entries' records declare for
# their work ("BF16 tensor" for kernels.gemm_lt precision=bf16 ...), wherever the profile measured it.
# The other pipes (e.g. "FP16 half2") stay in the profile tables.
COMPUTE = ("FP32", "FP64")


# A level that served less than this share of a kernel's minimal bytes did not hold its data (an
# L2-resident problem reads ~0 B from DRAM): its arithmetic intensity there (10^2 - 10^6 FLOP/B) says
# nothing about the kernel; it is not plotted, and the optimality table gives the share instead.
SERVED_SHARE = 0.5

# A kernel whose DRAM traffic is at least this share reads is held to the DRAM read ceiling; others
# to the copy ceiling (reads and writes mixed). The share comes from the kernel's own counters; without
# counters the read ceiling applies (every kernel here reads most of its minimal bytes).
READ_DOMINATED = 0.9


@dataclass
class Ceiling:
    name: str  # "DRAM", "L2", "L1", "FP32", "FP64"; variants: "DRAM copy"
    value: float  # GB/s for memory levels, GFLOP/s for compute
    measured: bool  # False: theoretical (drawn dashed)
    how: str
    source: dict = field(default_factory=dict)
    cv: Optional[float] = None  # the CV of the samples behind it (median over its entries): its noise
    clock_mhz: Optional[float] = None  # the SM clock its own entries ran at (ceilings_from; None: not recorded)
    clock_how: str = ""                # which entries and field clock_mhz comes from, or why there is none

    @property
    def per_clock(self) -> bool:
        """A ceiling of the SM's own units (compute pipes, tensor types, L1, shared memory) scales with the SM
        clock; DRAM's runs at the memory's clock, and the L2's is not the SM's."""
        return not self.is_memory or self.name in PER_CLOCK_LEVELS

    @property
    def is_memory(self) -> bool:
        return self.name.split()[0] in LEVELS or self.name == "shared"

    @property
    def variant(self) -> bool:
        """A second ceiling of a memory level (e.g. DRAM copy): used for bounds, not drawn. A compute ceiling
        of two words ("BF16 tensor") is a roof of its own."""
        return self.is_memory and " " in self.name

    @property
    def unit(self) -> str:
        """GB/s for a memory level; GOP/s for an integer type's compute ceiling ("INT8 tensor": operations,
        not floating-point ones); GFLOP/s otherwise."""
        if self.is_memory:
            return "GB/s"
        return "GOP/s" if is_integer_ceiling(self.name) else "GFLOP/s"


def is_integer_ceiling(name: str) -> bool:
    """Whether a compute ceiling counts integer operations (the records name them INT8 tensor, ...)."""
    return name.startswith("INT")


# Levels whose ceiling is per SM clock (the SM's own memories); the compute ceilings all are.
PER_CLOCK_LEVELS = ("L1", "shared")
# The fields an entry records its SM clock in: the clock measured while its kernel ran, else the clock
# the run asked for (execution._as_gflops and the tensor section read them in this order).
CLOCK_FIELDS = ("sm_clock_kernel_mhz", "sm_clock_mhz")


# A clock reading above the GPU's maximum SM clock by more than this share is a failed measurement (the
# H100's f64 mma.sync entries read their in-kernel clock at 2,008-2,079 MHz, above its 1,980 MHz); within
# it, the noise of a clock measured over one kernel (ncu read up to 1,991 MHz on the same H100).
ABOVE_MAX_CLOCK = 0.01


def max_sm_clock(rs: ResultSet) -> Optional[float]:
    """The GPU's maximum SM clock as the run's context records it (MHz), None when it does not."""
    v = rs.context_number("gpu_sm_clock_max_mhz")
    return v if math.isfinite(v) and v > 0 else None


def plausible_clock(mhz: float, max_mhz: Optional[float]) -> bool:
    return math.isfinite(mhz) and mhz > 0 and (max_mhz is None or mhz <= max_mhz * (1 + ABOVE_MAX_CLOCK))


def entry_clock(e: Entry, max_mhz: Optional[float] = None) -> Optional[Tuple[float, str]]:
    """(MHz, field) of an entry's SM clock (the first of CLOCK_FIELDS it records plausibly: not above
    `max_mhz`, the GPU's maximum), None when it records none."""
    return next(((e.num(f), f) for f in CLOCK_FIELDS if plausible_clock(e.num(f), max_mhz)), None)


def source_clock(rs: ResultSet, source: dict) -> Tuple[Optional[float], str]:
    """(MHz, how) of a ceiling's own entries (its source's entry pattern): their SM clock, the median over
    them when several (a plateau over working sets); (None, why) when they record none."""
    pattern = source.get("entries", "")
    if not pattern:
        return None, "no source entry"
    parts = pattern.split("/")
    ents = [e for e in rs.entries if len(e.name.split("/")) == len(parts)
            and all(p in ("*", q) or (p.endswith(":*") and q.startswith(p[:-1])) for p, q in zip(parts, e.name.split("/")))]
    top = max_sm_clock(rs)
    clocks = [c for c in (entry_clock(e, top) for e in ents) if c]
    if not clocks:
        return None, f"{pattern}: no {' or '.join(CLOCK_FIELDS)}"
    mhz = float(np.median([v for v, _ in clocks]))
    fields = sorted({f for _, f in clocks})
    return mhz, f"{'/'.join(fields)} of {pattern}" + (f" (median over the {len(clocks)} entries matching)"
                                                      if len(clocks) > 1 else "")


def at_clock(c: Ceiling, clock_mhz: Optional[float]) -> Tuple[float, bool]:
    """A ceiling's value at an SM clock: a per-clock ceiling x clock / its own entries' clock where both are
    known (True), else its value as measured (False)."""
    if c.per_clock and c.clock_mhz and clock_mhz and clock_mhz > 0:
        return c.value * clock_mhz / c.clock_mhz, True
    return c.value, False


@dataclass
class KernelPoint:
    entry: Entry
    kernel: str  # family without "kernels."
    impl: str
    precision: Optional[str]  # the compute ceiling its record declares for its work; None: none (no compute bound)
    size: str  # human-readable shape, e.g. "n=4096"
    size_key: tuple  # shape parameters, to match the same problem across impls
    gflops: float
    gbps: float
    seconds: float
    flops: float
    bytes_by_level: Dict[str, float]  # counter-derived bytes per level
    minimal_bytes: float  # descriptor's bytes_per_sample
    counter_flops: Optional[float]
    ai_source: str  # "counters" or "minimal bytes (no counters)"
    l2: str = ""  # "resident" (timed with its data in L2), "flushed", or "" (not said)
    max_clock_mhz: Optional[float] = None  # the GPU's maximum SM clock (the run's context), None: not recorded

    @property
    def clock_mhz(self) -> Optional[float]:
        """The SM clock the kernel's entry ran at (CLOCK_FIELDS, read as plausibly as a ceiling's own:
        entry_clock), None when not recorded."""
        c = entry_clock(self.entry, self.max_clock_mhz)
        return c[0] if c else None

    @property
    def minimal_level(self) -> str:
        """The level that must serve the minimal bytes: L2 for problems timed L2-resident, else DRAM."""
        return "L2" if self.l2 == "resident" else "DRAM"

    @property
    def dram_read_share(self) -> Optional[float]:
        r, w = self.entry.counters.get("dram__bytes_read.sum"), self.entry.counters.get("dram__bytes_write.sum")
        if r is None or w is None or not (r + w) > 0:
            return None
        return r / (r + w)

    @property
    def excess_traffic(self) -> Optional[float]:
        """Bytes the counters saw at the minimal level over the minimal bytes (1 = no excess)."""
        b = self.bytes_by_level.get(self.minimal_level)
        return b / self.minimal_bytes if b and self.minimal_bytes > 0 else None

    def intensity(self) -> Dict[str, float]:
        """Arithmetic intensity per level, FLOP/byte."""
        if self.bytes_by_level:
            return {lvl: self.flops / b for lvl, b in self.bytes_by_level.items() if b > 0}
        if self.minimal_bytes > 0:
            return {"DRAM": self.flops / self.minimal_bytes}
        return {}


def declared_compute(rs: ResultSet) -> List[str]:
    """The roofline's compute ceilings for these results: COMPUTE, then those the kernel entries'
    records declare for their work, in first-seen order."""
    out = list(COMPUTE)
    for e in rs.entries:
        if e.family.startswith(F.KERNEL_PREFIX):
            ceiling = F.kernel_precision(e)
            if ceiling and ceiling not in out:
                out.append(ceiling)
    return out


def ceilings_from(profile_data: dict, rs: ResultSet, section_ceilings: Sequence[dict] = (),
                  all_measured: bool = False) -> List[Ceiling]:
    """Measured ceilings from the profile and the family sections (the tensor cores'), then theoretical
    ones (the sections', context, peak metrics). `all_measured`: also the shared-memory ceiling and every
    measured pipe (e.g. "FP16 half2"), not only the precisions our kernels declare: an application's
    kernels may use any of them."""
    out: List[Ceiling] = []
    compute = declared_compute(rs)
    if all_measured:
        compute += [n for n in (profile_data.get("pipelines", {}).get("compute_ceilings") or {}) if n not in compute]
    levels = LEVELS + ("DRAM copy",) + (("shared",) if all_measured else ())
    for name, c in (profile_data.get("bandwidth", {}).get("ceilings") or {}).items():
        if name in levels:
            how = f"{c.get('how', '')} (premise {c.get('premise', 'not declared')})"
            out.append(Ceiling(name, c["gbps"], True, how, c.get("source", {}), c.get("cv")))
    for name, c in (profile_data.get("pipelines", {}).get("compute_ceilings") or {}).items():
        if name in compute:
            out.append(Ceiling(name, c["gflops"], True, c.get("how", ""), c.get("source", {}), c.get("cv")))
    out += [Ceiling(c["name"], c["gflops"], True, c.get("how", ""), c.get("source", {}), c.get("cv"))
            for c in section_ceilings if c["measured"]]
    for name, c in (profile_data.get("pipelines", {}).get("compute_theoretical") or {}).items():
        if name in compute:
            out.append(Ceiling(name, c["gflops"], False, c.get("how", "")))
    out += [Ceiling(c["name"], c["gflops"], False, c.get("how", "")) for c in section_ceilings if not c["measured"]]
    ctx = rs.context
    for name, key in F.PEAK_CONTEXT.items():
        v = _num(ctx.get(key))
        if v and v > 0 and name not in {c.name for c in out if not c.measured}:
            out.append(Ceiling(name, v, False, f"context {key}"))
    for i, c in enumerate(out):  # every measured one: a point above an unscaled roof names its clock too
        if c.measured:
            mhz, how = source_clock(rs, c.source)
            out[i] = replace(c, clock_mhz=mhz, clock_how=how)
    have = {c.name for c in out if not c.measured}
    for name, (peak, clock, scale) in F.PEAK_METRICS.items():  # only where nothing else gave one
        if name in have:
            continue
        vals = [e.counters[peak] * e.counters[clock] * scale / 1e9 for e in rs.entries
                if peak in e.counters and clock in e.counters]
        if vals:
            vals.sort()
            out.append(Ceiling(name, vals[len(vals) // 2], False, f"peak metric {peak} x {clock}"))
    return out


def _num(v) -> Optional[float]:
    try:
        f = float(v)
        return f if math.isfinite(f) else None
    except (TypeError, ValueError):
        return None


def kernel_points(rs: ResultSet) -> Tuple[List[KernelPoint], List[str]]:
    pts: List[KernelPoint] = []
    notes: List[str] = []
    undeclared: Dict[Tuple[str, str, str], int] = {}  # (family, precision, why) -> entries without a ceiling
    top = max_sm_clock(rs)
    for e in rs.entries:
        if not e.family.startswith(F.KERNEL_PREFIX) or e.family in F.MGPU_KERNEL_FAMILIES:  # multi-GPU: sections/mgpu.py
            continue
        flops = e.num("flops_per_sample")
        secs = e.num("time_median_s")
        if not math.isfinite(secs) and math.isfinite(e.num("gflops")) and math.isfinite(flops):
            secs = flops / (e.num("gflops") * 1e9)
        if not (math.isfinite(flops) and flops > 0 and math.isfinite(secs) and secs > 0):
            notes.append(f"{e.name}: no flops_per_sample/time_median_s; left out of the roofline")
            continue
        by_level: Dict[str, float] = {}
        for lvl, alternatives in F.LEVEL_BYTES.items():
            for metrics in alternatives:
                if all(m in e.counters for m in metrics):
                    by_level[lvl] = sum(e.counters[m] for m in metrics)
                    break
        cflops = None
        present = [(m, f) for m, f, _ in F.FLOP_METRICS if m in e.counters]
        if present:
            cflops = sum(e.counters[m] * f for m, f in present)
        keys = [k for k in ("m", "n", "k") if math.isfinite(F.num(e, k))]
        # The text axes that tell one problem from another, from the record (all but the implementation:
        # e.g. precision and trans; precision and data for the cuBLASLt GEMMs, whose random and zero
        # operands are two problems).
        txt = [a.name for a in e.record.axes if a.type == "text" and a.role == "group" and a.name != "impl"
               and F.text(e, a.name)] if e.record is not None else \
            [k for k in ("precision", "uplo", "trans") if F.text(e, k)]
        size = " ".join([f"{k}={int(F.num(e, k))}" for k in keys] + [f"{k}={F.text(e, k)}" for k in txt])
        # Same problem = same shape and the same L2 condition (flushed / resident) across impls.
        size_key = (tuple((k, F.num(e, k)) for k in keys) + tuple((k, F.text(e, k)) for k in txt)
                    + ((("l2", F.text(e, "l2")),) if F.text(e, "l2") else ()))
        ceiling = F.kernel_precision(e)
        if ceiling is None:
            key = (e.family, F.text(e, "precision") or "",
                   "no family record" if e.record is None else "its family record declares none for it")
            undeclared[key] = undeclared.get(key, 0) + 1
        pts.append(KernelPoint(
            entry=e, kernel=e.family[len(F.KERNEL_PREFIX):], impl=F.text(e, "impl") or "?",
            precision=ceiling, size=size or e.name, size_key=size_key,
            gflops=flops / secs / 1e9,
            gbps=(e.num("bytes_per_sample") / secs / 1e9) if e.num("bytes_per_sample") > 0 else math.nan,
            seconds=secs, flops=flops, bytes_by_level=by_level, minimal_bytes=e.num("bytes_per_sample", default=0.0),
            counter_flops=cflops, ai_source="counters" if by_level else "minimal bytes (no counters)",
            l2=F.text(e, "l2") or "", max_clock_mhz=top))
    for (family, precision, why), count in sorted(undeclared.items()):
        notes.append(f"{family}" + (f" precision={precision}" if precision else "") + f" ({count} entries): no "
                     f"compute ceiling ({why}): held to no compute peak, only to their bytes")
    if pts and not any(p.bytes_by_level for p in pts):
        notes.append("no kernel entry has hardware counters (run with --counters): arithmetic intensity uses the "
                     "descriptor's minimal bytes, placed at DRAM only")
    return pts, notes


def is_reference(impl: str) -> bool:
    return bool(re.match(r"^cublas", impl or "", re.I))


# Our default implementation per kernel (what the library's API runs when no variant is named); the
# other "ours_*" entries are variants kept for analysis. Names newest first: the first one present in
# the data is the default (result files from before SymvImpl::kAuto, 2026-11-23, name SYMV's default
# "ours_aware"; from before SgemmImpl::kAuto, 2026-12-05, SGEMM's "ours_tuned"). A kernel not listed: every impl is shown as a default.
DEFAULT_IMPL = {"symv": ("ours", "ours_aware"), "gemv": ("ours",), "sgemm": ("ours_auto", "ours_tuned")}


def default_impl(kernel: str, impls: Iterable[str]) -> Optional[str]:
    """The default among the impls present for `kernel` (None if none of its names is there)."""
    present = set(impls)
    return next((name for name in DEFAULT_IMPL.get(kernel, ()) if name in present), None)


def is_default(kernel: str, impl: str, impls: Iterable[str]) -> bool:
    """Whether `impl` is our default for `kernel`, given the impls present for it."""
    return kernel not in DEFAULT_IMPL or impl == default_impl(kernel, impls)


def memcpy_reference(rs: ResultSet) -> Optional[Tuple[float, str]]:
    """The same run's cudaMemcpy D2D figure at its largest size (GB/s) and its entry name."""
    ents = [e for e in rs.by_family("baseline.memcpy_d2d") if math.isfinite(e.value)]
    if not ents:
        return None
    e = max(ents, key=lambda e: F.num(e, "size") if math.isfinite(F.num(e, "size")) else -1.0)
    return e.value, e.name


def kernel_metric(points: List[KernelPoint]) -> str:
    """The figure a kernel is judged by: its descriptor's unit (GB/s on minimal bytes for the
    memory-bound BLAS2 kernels, GFLOP/s for SGEMM)."""
    return "GB/s" if any(p.entry.unit == "GB/s" for p in points) else "GFLOP/s"


def kernel_comparison(points: List[KernelPoint], memcpy_gbps: Optional[float]) -> Dict[str, dict]:
    """Per kernel: one row per problem (shape, precision, uplo/trans, L2 condition) with every impl's
    figure, the default's ratio to each cuBLAS mode and, for GB/s kernels, to the same run's memcpy."""
    out: Dict[str, dict] = {}
    for kernel in sorted({p.kernel for p in points}):
        pts = [p for p in points if p.kernel == kernel]
        metric = kernel_metric(pts)
        present = {p.impl for p in pts}
        impls = sorted(present, key=lambda i: (is_reference(i), not is_default(kernel, i, present), i))
        refs = [i for i in impls if is_reference(i)]
        default = next((i for i in impls if is_default(kernel, i, present) and not is_reference(i)), None)
        rows = []
        def order(key):  # textual parameters (precision, uplo, trans) first, then the sizes numerically
            return (tuple(v for k, v in key if isinstance(v, str) and k != "l2"),
                    tuple(v for _, v in key if not isinstance(v, str)))

        for key in sorted({p.size_key for p in pts}, key=order):
            by_impl = {p.impl: p for p in pts if p.size_key == key}
            val = {i: (q.gbps if metric == "GB/s" else q.gflops) for i, q in by_impl.items()}
            ours = val.get(default) if default else None
            rows.append({
                "size": next(iter(by_impl.values())).size, "l2": dict(key).get("l2", ""), "values": val,
                "ratios": {r: (ours / val[r]) if ours and val.get(r) else None for r in refs},
                "vs_memcpy": (ours / memcpy_gbps) if ours and memcpy_gbps and metric == "GB/s" else None,
            })
        out[kernel] = {"metric": metric, "impls": impls, "default": default, "references": refs, "rows": rows}
    return out


@dataclass
class Bound:
    bound_gflops: Optional[float]  # None: a ceiling the bound needs was not measured
    limiter: Optional[str]  # level or compute ceiling name; None with the bound
    per_ceiling: Dict[str, float]
    missing: List[str] = field(default_factory=list)  # the ceilings it needs that were not measured
    note: str = ""  # how the limiter is known although a ceiling is missing
    scaled: Dict[str, Tuple[float, float]] = field(default_factory=dict)  # ceiling -> (its clock, the kernel's), MHz


def memory_ceiling_name(point: KernelPoint, measured: Dict[str, float]) -> str:
    """The ceiling that bounds a kernel's minimal bytes: its level (L2 for L2-resident problems, else
    DRAM); at DRAM the read ceiling unless its counters say it is not read-dominated (READ_DOMINATED)
    and a copy ceiling was measured."""
    level = point.minimal_level
    share = point.dram_read_share
    if level == "DRAM" and share is not None and share < READ_DOMINATED and "DRAM copy" in measured:
        return "DRAM copy"
    return level


def bound_of(point: KernelPoint, ceilings: List[Ceiling]) -> Optional[Bound]:
    """min over the measured ceilings: the kernel's minimal bytes (its descriptor's: what any
    implementation must move) at the ceiling of the level that must serve them, and its flops at the
    compute peak. Counter traffic does not enter the bound: a variant that moves twice the bytes must
    not get twice the bound (it shows as excess traffic instead). Without minimal bytes, the counters'
    bytes per level.

    Every ceiling the bound needs must have been measured: without one, the minimum over the others
    would name another limiter (a DRAM-speed kernel called FP64-bound because no DRAM ceiling was
    measured), so the bound is None and `missing` names what was not measured."""
    # Per-clock ceilings at the kernel's own clock: a kernel that ran at 1,455 MHz is held to what the pipe
    # gives at 1,455 MHz, not at the 1,764 MHz its probe ran at (the application verdict does the same).
    measured: Dict[str, float] = {}
    scaled: Dict[str, Tuple[float, float]] = {}
    for c in ceilings:
        if c.measured:
            measured[c.name], was = at_clock(c, getattr(point, "clock_mhz", None))
            if was:
                scaled[c.name] = (c.clock_mhz, point.clock_mhz)
    per: Dict[str, float] = {}
    missing: List[str] = []
    if point.minimal_bytes > 0:
        name = memory_ceiling_name(point, measured)
        if name in measured:
            per[name] = point.flops / point.minimal_bytes * measured[name]
        else:
            missing.append(name)
    else:
        for lvl, ai in point.intensity().items():
            if lvl in measured:
                per[lvl] = ai * measured[lvl]
        if point.intensity() and not per:
            missing.append("/".join(point.intensity()))
    if point.precision is not None:  # None: no ceiling declared, no compute bound
        if point.precision in measured:
            per[point.precision] = measured[point.precision]
        else:
            missing.append(point.precision)
    if missing and point.minimal_bytes > 0 and missing == [memory_ceiling_name(point, measured)]:
        known = _limiter_without_memory_ceiling(point, missing[0], ceilings, per)
        if known is not None:
            return known
    scaled = {k: v for k, v in scaled.items() if k in per}
    if missing:
        return Bound(None, None, per, missing, scaled=scaled)
    if not per:
        return None
    lim = min(per, key=per.get)
    return Bound(per[lim], lim, per, scaled=scaled)


def _limiter_without_memory_ceiling(point: KernelPoint, name: str, ceilings: List[Ceiling],
                                    per: Dict[str, float]) -> Optional[Bound]:
    """The limiter where the memory ceiling `name` was not measured, when the data decide it anyway.
    The compute peak bounds the kernel iff the memory ceiling exceeds peak / AI (AI on minimal bytes).
    No measured ceiling exceeds the level's theoretical figure (profile: such a plateau is an error), so
    a threshold above it makes the level the limiter, with no % (its ceiling is unknown); the level
    delivered at least what the kernel itself moved there (minimal bytes, or its counters' bytes, per
    second), so a threshold below that makes the compute peak the limiter, with its %."""
    level = name.split()[0]
    ai = point.flops / point.minimal_bytes
    theo = next((c.value for c in ceilings if not c.measured and c.name == level), None)
    compute = per.get(point.precision) if point.precision else None
    if compute is None:
        return None
    threshold = compute / ai  # GB/s of the memory ceiling above which the compute peak bounds the kernel
    delivered = max(point.minimal_bytes, point.bytes_by_level.get(level, 0.0)) / point.seconds / 1e9
    if theo is not None and threshold >= theo:
        return Bound(None, name, per, [name], f"{point.precision} would bound it only with a {level} ceiling above "
                     f"{threshold:,.0f} GB/s, beyond the theoretical {theo:,.0f}")
    if delivered >= threshold:
        return Bound(compute, point.precision, per, [], f"no {name} ceiling measured, but {level} delivered "
                     f"{delivered:,.0f} GB/s to this kernel, above the {threshold:,.0f} GB/s that would make it the bound")
    return None


def unmeasured_ceiling_notes(points: List[KernelPoint], ceilings: List[Ceiling]) -> List[str]:
    """One line per kernel family and declared compute ceiling that the profile did not measure: those
    entries get no bound (bound_of)."""
    measured = {c.name for c in ceilings if c.measured}
    counts: Dict[Tuple[str, str], int] = {}
    for p in points:
        if p.precision is not None and p.precision not in measured:
            key = (p.entry.family, p.precision)
            counts[key] = counts.get(key, 0) + 1
    return [f"{family} ({count} entries): no compute bound (ceiling {ceiling} not measured): no bound and no % of "
            f"bound in the optimality table" for (family, ceiling), count in sorted(counts.items())]


# A kernel above its bound by more than this many combined standard deviations (the kernel entry's CV and
# the ceiling's, in quadrature) beats the ceiling beyond noise; within it, the excess is the noise of two
# medians. Two: a chance excess that large happens about once in 40 rows of one sign.
NOISE_SIGMAS = 2.0


def _above_bound(p: KernelPoint, b: Optional[Bound], ceilings: List[Ceiling]) -> Optional[dict]:
    """Why a row is above 100 % of its bound: within the noise of the two medians, or beyond it (the
    ceiling is below what this kernel reached: the ceiling's probe is not the GPU's best there). None at or
    below the bound."""
    if not b or not b.bound_gflops or not b.limiter or p.gflops <= b.bound_gflops:
        return None
    ceiling = next((c for c in ceilings if c.measured and c.name == b.limiter), None)
    if ceiling is None:
        return None
    cv_kernel = p.entry.cv if math.isfinite(p.entry.cv) else 0.0
    noise = NOISE_SIGMAS * math.hypot(cv_kernel, ceiling.cv or 0.0)
    excess = p.gflops / b.bound_gflops - 1
    # The kernel's own figure in the ceiling's unit: GB/s on its minimal bytes for a memory ceiling.
    value = ceiling.value * (1 + excess)
    beyond = excess > noise
    text = (f"{100 * excess:.1f} % above its bound, " + (
        f"beyond the noise ({100 * noise:.2f} %: {NOISE_SIGMAS:g} x the entries' CVs in quadrature): this kernel "
        f"reached {value:,.0f} {ceiling.unit}, the {b.limiter} ceiling is {ceiling.value:,.0f}, so that ceiling is "
        "below what the GPU delivers; it stands as its probe's figure (optimality: ceilings a kernel beats)"
        if beyond else
        f"within the noise ({100 * noise:.2f} %: {NOISE_SIGMAS:g} x the entries' CVs in quadrature)"))
    return {"excess": excess, "noise": noise, "beyond_noise": beyond, "ceiling": b.limiter,
            "ceiling_value": ceiling.value, "ceiling_cv": ceiling.cv, "ceiling_how": ceiling.how, "value": value,
            "unit": ceiling.unit, "why": text}


def ceilings_beaten(opt: List[dict]) -> List[dict]:
    """Per measured ceiling that some kernel row beats beyond noise: the row that beats it most, with both
    figures (the ceiling's and the kernel's, in the ceiling's unit), the excess and the noise."""
    best: Dict[str, dict] = {}
    for r in opt:
        a = r.get("above")
        if a and a["beyond_noise"] and (a["ceiling"] not in best or a["excess"] > best[a["ceiling"]]["excess"]):
            best[a["ceiling"]] = {**a, "kernel": r["kernel"], "impl": r["impl"], "size": r["size"], "entry": r["entry"],
                                  "rows": 0}
    for r in opt:
        a = r.get("above")
        if a and a["beyond_noise"]:
            best[a["ceiling"]]["rows"] += 1
    return [best[k] for k in sorted(best)]


def beaten_sentence(gap: dict) -> str:
    """Which figure is higher and by how much, and why the ceiling stands."""
    more = f" ({gap['rows']} rows in all beyond the noise)" if gap["rows"] > 1 else ""
    return (f"The {gap['ceiling']} ceiling ({gap['ceiling_value']:,.0f} {gap['unit']}, its probe's figure) is not the "
            f"GPU's best: {gap['kernel']} {gap['impl']} {gap['size']} reached {gap['value']:,.0f} {gap['unit']}"
            f"{' on its minimal bytes' if gap['unit'] == 'GB/s' else ''}, higher by {100 * gap['excess']:.1f} %, "
            f"beyond the noise ({100 * gap['noise']:.2f} %){more}. The ceiling stands as the bound: it is the "
            "premise-checked probe figure the Summary and compare report, and a kernel's best row is the maximum "
            "over many implementations and sizes; the rows above it say so.")


def optimality(points: List[KernelPoint], ceilings: List[Ceiling]) -> List[dict]:
    refs: Dict[tuple, KernelPoint] = {}
    for p in points:
        if is_reference(p.impl):
            k = (p.kernel, p.size_key)
            if k not in refs or p.gflops > refs[k].gflops:
                refs[k] = p
    rows = []
    for p in sorted(points, key=lambda p: (p.kernel, p.size_key, p.impl)):
        b = bound_of(p, ceilings)
        above = _above_bound(p, b, ceilings)
        ref = refs.get((p.kernel, p.size_key))
        rows.append({
            "kernel": p.kernel, "impl": p.impl, "size": p.size, "precision": p.precision,
            "gflops": p.gflops, "gbps": p.gbps, "time_us": p.seconds * 1e6,
            "intensity": p.intensity(), "intensity_source": p.ai_source,
            "served_share": {lvl: b / p.minimal_bytes for lvl, b in p.bytes_by_level.items()} if p.minimal_bytes > 0
            else {},
            "bound_gflops": b.bound_gflops if b else None, "limiter": b.limiter if b else None,
            "pct_of_bound": 100.0 * p.gflops / b.bound_gflops if b and b.bound_gflops else None,
            "above": above, "above_bound": above["why"] if above else None, "cv": p.entry.cv,
            "missing_ceilings": b.missing if b else [], "bound_note": b.note if b else "",
            "bound_bytes": "minimal (descriptor)" if p.minimal_bytes > 0 else "counters",
            "minimal_level": p.minimal_level, "excess_traffic": p.excess_traffic, "l2": p.l2,
            "flops": p.flops, "minimal_bytes": p.minimal_bytes,
            "bound_by_ceiling": b.per_ceiling if b else {},
            # The limiter's clock scaling: (its entries' SM clock, the kernel's), MHz; absent where not scaled.
            "bound_clocks_mhz": b.scaled.get(b.limiter) if b and b.limiter else None,
            "vs_cublas": (p.gflops / ref.gflops) if ref and ref is not p else None,
            "cublas_impl": ref.impl if ref else None,
            "counter_flops_over_descriptor": (p.counter_flops / p.flops) if p.counter_flops else None,
            "entry": p.entry.name, "method": p.entry.method, "ran": ran_kernel(p.impl, p.entry.tag("kernel")),
        })
    return rows


def ran_kernel(impl: str, kernel_tag: Optional[str]) -> Optional[str]:
    """The kernel a dispatcher entry ran (its tag "kernel", e.g. SGEMM's ours_auto: "small, split-k 4"); None
    where the entry ran itself (tag = its own name) or names nothing."""
    if not kernel_tag or is_reference(impl) or kernel_tag == re.sub(r"^ours_?", "", impl):
        return None
    return kernel_tag
