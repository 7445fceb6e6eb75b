"""Kernels vs cuBLAS: per kernel the comparison table and figure against cuBLAS and the run's cudaMemcpy
D2D, the paired A/B comparisons, the entries whose operands did not settle, how the event-timed entries
were timed (the launch gate)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import families as F
from .. import profile_results as R
from ..results import ResultSet, finite
from ..roofline import Ceiling, KernelPoint, bound_of, is_default, is_reference, kernel_comparison, kernel_metric, memcpy_reference
from . import AnalysisInputs, FamilySection, register


@dataclass
class KernelsResult:
    memcpy: Optional[Tuple[float, str]]
    comparison: Dict[str, dict]
    paired: Optional[List[R.PairedRow]]
    unsettled: List[dict]
    unsteady: List[dict]
    gate: dict
    points: List[KernelPoint]
    ceilings: List[Ceiling]


def _paired(rs: ResultSet) -> Optional[List[R.PairedRow]]:
    rows = []
    for fam in rs.families():
        if not fam.startswith(F.PAIRED_PREFIX):
            continue
        for e in rs.by_family(fam):
            problem = "/".join(f"{k}:{v}" for k, v in e.params.items() if k not in ("a", "b"))
            a_us, b_us = e.num("time_median_s") * 1e6, e.num("b_time_median_s") * 1e6
            rows.append(R.PairedRow(
                entry=e.name, kernel=fam[len(F.PAIRED_PREFIX):], problem=problem,
                a=e.tag("a_impl") or e.params.get("a"), b=e.tag("b_impl") or e.params.get("b"),
                a_ran=e.tag("a_impl_resolved"), b_ran=e.tag("b_impl_resolved"),
                speedup=finite(e.value), a_first=finite(e.num("value_median_a_first")),
                b_first=finite(e.num("value_median_b_first")), cv=finite(e.cv),
                a_us=finite(a_us), b_us=finite(b_us), l2=e.tag("l2"),
                noisy=bool(math.isfinite(e.cv) and e.cv > F.PAIRED_NOISY_CV)))
    return rows or None


def unsettled_operands(rs: ResultSet) -> List[dict]:
    """Entries timed on fresh operands whose settle did not end stable: a tag `<what>_settled` other
    than "yes" (microbench/harness/settle.hpp: "capped", still improving after its time limit;
    "slowed", the settled read rate more than 5 % below the first pass). Their figures may be off."""
    rows = []
    for e in rs.entries:
        for key, state in sorted(e.tags.items()):
            if not key.endswith("_settled") or state == "yes":
                continue
            what = key[: -len("_settled")]
            rows.append({"entry": e.name, "operand": what, "state": state,
                         "first_gbps": e.counters.get(f"{what}_read_gbps_first"),
                         "settled_gbps": e.counters.get(f"{what}_read_gbps_settled"),
                         "passes": e.counters.get(f"{what}_settle_passes")})
    return rows


def unsteady_warmups(rs: ResultSet) -> List[dict]:
    """Entries of families that warm up until steady (kernels.gemm_lt: the clock falls as the board power
    reaches the limit) whose warm-up stopped at its time cap still drifting (tag `warmup_steady` other
    than "yes"; docs/results-schema.md): their samples may hold part of the transient after idle."""
    return [{"entry": e.name, "state": e.tag("warmup_steady"), "warmup_seconds": e.counters.get("warmup_seconds"),
             "warmup_samples": e.counters.get("warmup_samples")}
            for e in rs.entries if e.tag("warmup_steady") not in (None, "yes")]


def launch_gate_summary(rs: ResultSet) -> dict:
    """How the event-timed entries were timed (field `launch_gated`, docs/probes.md): counts behind the
    launch gate and ungated, and the entries whose gate timed out (`launch_gate_timeouts` > 0: some of
    their samples hold host time). Entries without the field (other timers, older files) are not counted."""
    gated = ungated = 0
    timed_out = []
    for e in rs.entries:
        flag = e.num("launch_gated")
        if not math.isfinite(flag):
            continue
        if flag == 1:
            gated += 1
        else:
            ungated += 1
        n = e.num("launch_gate_timeouts")
        if math.isfinite(n) and n > 0:
            timed_out.append({"entry": e.name, "timeouts": int(n)})
    return {"gated": gated, "ungated": ungated, "timed_out": timed_out}


def analyze(inputs: AnalysisInputs) -> KernelsResult:
    rs, roof = inputs.rs, inputs.results["roofline"]
    memcpy = memcpy_reference(rs)
    return KernelsResult(memcpy, kernel_comparison(roof.points, memcpy[0] if memcpy else None), _paired(rs),
                         unsettled_operands(rs), unsteady_warmups(rs), launch_gate_summary(rs), roof.points,
                         roof.ceilings)


def _profile_keys(an: KernelsResult) -> dict:
    return {**({"paired": R.to_json(an.paired)} if an.paired is not None else {}),
            "kernels_vs_cublas": {"memcpy_d2d_gbps": an.memcpy[0] if an.memcpy else None, "kernels": an.comparison},
            "unsettled_operands": an.unsettled, "launch_gate": an.gate,
            **({"unsteady_warmups": an.unsteady} if an.unsteady else {})}


def content(an: KernelsResult, figdir: str) -> dict:
    return {"comparison": an.comparison, "memcpy": an.memcpy, "unsettled": an.unsettled, "unsteady": an.unsteady,
            "gate": an.gate,
            "paired_noisy_cv": F.PAIRED_NOISY_CV,
            "kernel_figures": kernel_figures(an.points, figdir, an.memcpy[0] if an.memcpy else None, an.ceilings)}


def _is_square(p: KernelPoint) -> bool:
    dims = {v for k, v in p.size_key if k in ("m", "n", "k") and isinstance(v, float)}
    return len(dims) == 1


def figure_heading(kernel: str, impls) -> str:
    """The figure's title: "ours (black: default)" only where one of our implementations is drawn (the
    cuBLASLt GEMMs have none)."""
    ours = [i for i in impls if not is_reference(i)]
    if not ours:
        return f"{kernel}: cuBLAS ({', '.join(sorted(impls))}), square problems; same run"
    return f"{kernel}: ours (black: default) vs cuBLAS (dashed), square problems; same run"


def _panel_ceiling(pts: List[KernelPoint], ceilings: Sequence[Ceiling]) -> Optional[Ceiling]:
    """The measured compute ceiling the panel's problems are held to (their record's, by precision: FP32 for
    SGEMM, BF16 tensor for a BF16 cuBLASLt GEMM): the one the optimality table bounds them by."""
    names = {p.precision for p in pts if p.precision}
    if len(names) != 1:
        return None
    name = names.pop()
    # Only where that peak is what bounds them: a GFLOP/s panel of a memory-bound kernel (its bound is bytes
    # at a level, which no flat line on this axis shows) draws no compute peak the table never uses.
    bounds = [bound_of(p, list(ceilings)) for p in pts]
    if not any(b is not None and b.limiter == name for b in bounds):
        return None
    return next((c for c in ceilings if c.name == name and c.measured), None)


def kernel_figures(points: List[KernelPoint], outdir: str, memcpy_gbps: Optional[float] = None,
                   ceilings: Sequence[Ceiling] = ()) -> list:
    """Per kernel, a grid of panels (rows: precision; columns: uplo / trans) of the kernel's own figure
    (GB/s on minimal bytes, or GFLOP/s) vs n for the square problems; our default solid black, our
    variants solid thin, cuBLAS modes dashed. Non-square shapes are in the comparison table."""
    from .. import plots  # matplotlib only when the report draws
    figs = []
    for kernel in sorted({p.kernel for p in points}):
        pts = [p for p in points if p.kernel == kernel and _is_square(p)]
        if not pts:
            continue
        metric = kernel_metric(pts)
        def facet(p, key):
            return dict((k, v) for k, v in p.size_key).get(key, "")
        precisions = sorted({facet(p, "precision") for p in pts})
        shape_key = "uplo" if any(facet(p, "uplo") for p in pts) else "trans"
        columns = sorted({facet(p, shape_key) for p in pts})
        present = {p.impl for p in pts}
        impls = sorted(present, key=lambda i: (is_reference(i), not is_default(kernel, i, present), i))
        impl_style = {}
        n_var = n_ref = 0
        for impl in impls:
            # figure rule 2: every implementation its own colour and marker (ours black, cuBLAS dashed hollow)
            if is_reference(impl):
                impl_style[impl] = dict(ls="--", lw=1.4, mfc="none", **plots.style(n_ref + n_var))
                n_ref += 1
            elif is_default(kernel, impl, present):
                impl_style[impl] = dict(ls="-", marker="o", color="black", lw=2.0)
            else:
                impl_style[impl] = dict(ls="-", lw=0.9, mfc="none", **plots.style(n_ref + n_var))
                n_var += 1
        panels = [(prec, col) for prec in precisions for col in columns]
        ncols = min(2, len(panels))
        nrows = (len(panels) + ncols - 1) // ncols
        fig, axes = plots.plt.subplots(nrows, ncols, figsize=(4.3 * ncols + 2.6, 3.4 * nrows), squeeze=False, sharex=True)
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        # The level a DRAM-sized problem is held to: the measured ceiling the optimality table bounds it by,
        # else (none measured) the theoretical peak. The theoretical one first drew points at 101.5 % of
        # their bound below the line.
        dram_peak = next((c for c in sorted(ceilings, key=lambda c: not c.measured) if c.name == "DRAM"), None)
        value = (lambda p: p.gbps) if metric == "GB/s" else (lambda p: p.gflops)
        for idx, (prec, col) in enumerate(panels):
            r, c = divmod(idx, ncols)
            ax = axes[r][c]
            for impl in impls:
                ps = sorted([p for p in pts if p.impl == impl and facet(p, "precision") == prec
                             and facet(p, shape_key) == col], key=_size_scalar)
                # Powers of two make the curve; irregular sizes (1000, 4097) are unconnected markers
                # beside it, so that n = 4096 and 4097 do not draw a vertical jump.
                pow2 = [p for p in ps if _is_pow2(_size_scalar(p))]
                odd = [p for p in ps if not _is_pow2(_size_scalar(p))]
                if pow2:
                    ax.plot([_size_scalar(p) for p in pow2], [value(p) for p in pow2], ms=4, label=impl, **impl_style[impl])
                if odd:
                    st = dict(impl_style[impl], ls="none", marker="x")
                    ax.plot([_size_scalar(p) for p in odd], [value(p) for p in odd], ms=6,
                            label=None if pow2 else impl, **st)
            title = " ".join(t for t in (f"precision={prec}" if prec else "", f"{shape_key}={col}" if col else "")
                             if t) or kernel
            here = [p for p in pts if facet(p, "precision") == prec and facet(p, shape_key) == col]
            if metric == "GB/s" and memcpy_gbps:
                ax.axhline(memcpy_gbps, color="gray", ls=":", lw=1.2, label=f"cudaMemcpy D2D {memcpy_gbps:,.0f} GB/s")
            if metric == "GB/s" and dram_peak:
                _mark_served_above(ax, here, dram_peak, value)
            peak = _panel_ceiling(here, ceilings) if metric == "GFLOP/s" else None
            if peak is not None:
                at = f" at {peak.clock_mhz:,.0f} MHz" if peak.per_clock and peak.clock_mhz else ""
                ax.axhline(peak.value, color=plots.ceiling_color(peak.name, [peak.name]), ls=":", lw=1.2,
                           label=f"{peak.name} {peak.value:,.0f} {peak.unit}{at} (measured)")
            ax.set_xscale("log", base=2)
            ax.set_ylim(bottom=0)  # ratios read honestly off the picture
            ax.grid(True, which="both", alpha=0.3)
            ax.set_title(title, fontsize=9)
            if idx + ncols >= len(panels):
                ax.set_xlabel("n (log2; x: sizes that are not powers of two)" if kernel != "sgemm"
                              else "m = n = k (log2; x: not powers of two)")
            if metric == "GFLOP/s":  # an integer type's rate counts operations (INT8: GOP/s)
                ax.set_ylabel("GOP/s" if peak is not None and peak.unit == "GOP/s" else "GFLOP/s")
            elif c == 0:
                ax.set_ylabel("GB/s on minimal bytes")
        handles, labels = {}, []
        for ax in axes.flat:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in handles:
                    handles[l] = h
                    labels.append(l)
        fig.legend([handles[l] for l in labels], labels, fontsize=8, loc="upper left", bbox_to_anchor=(0.985, 0.95),
                   frameon=False)
        fig.suptitle(figure_heading(kernel, present), fontsize=11)
        fig.tight_layout(rect=(0, 0, 0.985, 1))
        figs.append(plots.Figure(f"kernel_{kernel}", f"{kernel} vs cuBLAS",
                           ("GB/s on the descriptor's minimal bytes" if metric == "GB/s" else "GFLOP/s from the descriptor's "
                            "flop count") + " over the median sample time, per precision and " + shape_key +
                           "; the dotted line is the same run's " + ("cudaMemcpy D2D" if metric == "GB/s" else
                                                                     "measured compute ceiling of the panel's type "
                                                                     "(FP32 for SGEMM, each type's tensor ceiling for "
                                                                     "the cuBLASLt GEMMs; integer types in GOP/s) at "
                                                                     "the clock its probe ran at, named in the legend; "
                                                                     "the optimality table bounds each kernel by it "
                                                                     "scaled to that kernel's own SM clock, so a point "
                                                                     "run at a lower clock is nearer its bound than "
                                                                     "the line shows") +
                           ". Non-square shapes: see the table.", [F.provenance([p.entry for p in pts])],
                           plots._save(fig, outdir, f"kernel_{kernel}")))
    return figs


def _mark_served_above(ax, pts: List[KernelPoint], ceiling: Ceiling, value):
    """Points above a level's ceiling were served by a closer level: the DRAM peak is drawn, every
    problem timed L2-resident gets a ring in L2's colour, and those above the DRAM line are labelled
    with the level that served them (a reader would otherwise see GB/s beyond the DRAM peak)."""
    from .. import plots  # matplotlib only when the report draws
    kind = "theoretical" if not ceiling.measured else "measured"
    ax.axhline(ceiling.value, color=plots.LEVEL_COLORS["DRAM"], ls="--", lw=1.0,
               label=f"DRAM peak {ceiling.value:,.0f} GB/s ({kind})")
    res = [p for p in pts if p.l2 == "resident"]
    if not res:
        return
    ax.plot([_size_scalar(p) for p in res], [value(p) for p in res], "o", ms=11, mfc="none",
            mec=plots.LEVEL_COLORS["L2"], mew=1.2, alpha=0.6, zorder=1, label="timed L2-resident (ring)")
    above = {}
    for p in res:
        if value(p) > ceiling.value:
            x = _size_scalar(p)
            above[x] = max(above.get(x, 0.0), value(p))
    if above:  # headroom so the labels stay inside the axes
        ax.set_ylim(top=max(ax.get_ylim()[1], 1.12 * max(above.values())))
    for x, y in above.items():  # one label per size, at its highest point
        ax.annotate("L2", (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7,
                    color=plots.LEVEL_COLORS["L2"], fontweight="bold")


def _is_pow2(x: float) -> bool:
    return x >= 1 and abs(math.log2(x) - round(math.log2(x))) < 1e-9


def _size_scalar(p: KernelPoint) -> float:
    vals = [v for k, v in p.size_key if k in ("n", "m", "k") and isinstance(v, float)]
    if not vals:
        return 1.0
    return float(np.prod(vals)) ** (1.0 / len(vals))


SECTION = register(FamilySection(
    id="kernels", title="Kernels vs cuBLAS", families=(), after=(), core=True, uses=("roofline",), analyze=analyze,
    content=content, profile_keys=_profile_keys))
