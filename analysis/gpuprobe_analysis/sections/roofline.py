"""Hierarchical roofline: the kernels' points (roofline.kernel_points) against every measured ceiling, the
bandwidth and execution sections' and those the family sections offer (`ceilings`: the tensor cores'),
then the theoretical ones; the opening's sentences on the ceilings against the datasheet and the premises."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from .. import families as F
from ..formatting import fmt
from ..roofline import (SERVED_SHARE, Ceiling, KernelPoint, ceilings_from, is_default, is_reference, kernel_points,
                        unmeasured_ceiling_notes)
from . import AnalysisInputs, FamilySection, load, register


@dataclass
class RooflineResult:
    points: List[KernelPoint]
    ceilings: List[Ceiling]
    notes: List[str]  # the kernels': entries that could not be placed, ceilings their bounds lack


def measured_ceilings(inputs: AnalysisInputs, all_measured: bool = False) -> List[Ceiling]:
    """The roofline's ceilings from the sections analysed so far (the bandwidth and execution sections'
    device-profile keys, the ceilings the family sections offer): the one path every judgement of a kernel
    takes (the report's kernels, compare, an application's kernels: `all_measured`, see ceilings_from)."""
    offered = [c for s in load() if inputs.results.get(s.id) is not None for c in s.ceilings(inputs.results[s.id])]
    return ceilings_from(inputs.profile, inputs.rs, offered, all_measured)


def analyze(inputs: AnalysisInputs) -> RooflineResult:
    pts, notes = kernel_points(inputs.rs)
    ceilings = measured_ceilings(inputs)
    return RooflineResult(pts, ceilings, notes + unmeasured_ceiling_notes(pts, ceilings))


def _profile_keys(an: RooflineResult) -> dict:
    return {"roofline": {"ceilings": [{"name": c.name, "value": c.value, "unit": c.unit,
                                       "measured": c.measured, "how": c.how} for c in an.ceilings],
                         "notes": an.notes}}


def opening(an: RooflineResult, data: dict) -> List[str]:
    """Where the GPU stands against its datasheet, and whether the counters verified the ceilings."""
    lines = []
    measured = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if c["measured"]}
    theo = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    parts = []
    for name in ("DRAM", "L2", "L1", "FP32", "FP64"):
        m = measured.get(name)
        if not m:
            continue
        t = theo.get(name)
        value = f"{name} {fmt(m['value'])} {m['unit']}"
        parts.append(value + (f" = {100 * m['value'] / t['value']:.0f} % of {fmt(t['value'])}" if t else
                              " (no theoretical figure)"))
    for name in ("DRAM", "L2"):  # a level with a datasheet figure and no measured ceiling: said, not skipped
        if name not in measured and name in theo:
            parts.append(f"{name} not measured (theoretical {fmt(theo[name]['value'])} {theo[name]['unit']})")
    if parts:
        lines.append("Measured ceilings against the datasheet: " + "; ".join(parts) + ".")
    prem = data.get("premises") or {}
    if prem.get("declared"):
        lines.append(f"Premises: {prem['verdict']} ({prem['ok']} of {prem['declared']} held by the counters of the "
                     f"same run, {prem['failed']} failed, {prem['unverified']} unchecked).")
    elif any(n.split()[0] in ("L1", "L2", "DRAM") for n in measured):
        lines.append("Memory ceilings UNVERIFIED: no entry declares a premise the counters could check.")
    elif parts or theo:
        lines.append("No memory ceilings measured: no L1, L2 or DRAM entry declares a premise, so none defines "
                     "a ceiling (results from a gpuprobe before the premise checks?); what needs one says so.")
    return lines


def theoretical_sources(data: dict) -> Dict[str, str]:
    """Where each theoretical figure of the summary comes from: said once under the table rather than
    in every row that divides by it."""
    out = {c["name"]: c["how"] for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    for name, t in ((data.get("pipelines") or {}).get("compute_theoretical") or {}).items():
        out.setdefault(name, t.get("how", "?"))
    return out


# A theoretical ceiling within this factor of the measured one of the same level is not drawn as a
# second, nearly coincident line: the measured line's label gives both.
SAME_LINE = 0.10


def _roof_lines(ceilings: List[Ceiling]) -> List[tuple]:
    """(ceiling, label, linestyle) per line to draw: measured ones solid, a theoretical one dashed only
    when it differs from the measured one by more than SAME_LINE; labels carry the % of theoretical."""
    measured = {c.name: c for c in ceilings if c.measured}
    out = []
    unit = lambda c: c.unit  # noqa: E731
    for c in ceilings:
        if c.measured:
            t = next((t for t in ceilings if not t.measured and t.name == c.name), None)
            extra = f" = {100 * c.value / t.value:.0f} % of {t.value:,.0f} theoretical" if t else ""
            out.append((c, f"{c.name} {c.value:,.0f} {unit(c)} measured{extra}", "-"))
        else:
            m = measured.get(c.name)
            if m is None or abs(c.value / m.value - 1) > SAME_LINE:
                out.append((c, f"{c.name} {c.value:,.0f} {unit(c)} theoretical", "--"))
    return out


def roof_top(ceilings: List[Ceiling]) -> Optional[float]:
    """Where the memory diagonals end: the highest measured compute roof (tensor roofs included), else the
    highest theoretical one. Never a kernel's point: capping at the fastest point drew a roof that does not
    exist."""
    compute = [c for c in ceilings if not c.is_memory]
    measured = [c.value for c in compute if c.measured]
    return max(measured or [c.value for c in compute] or [None], key=lambda v: v or 0.0)


def roofline_figure(points: List[KernelPoint], ceilings: List[Ceiling], outdir: str):
    """One panel per kernel on the same axes (one panel held 946 points between 0.1 and 1 FLOP/B).
    In each: the ceilings, and our default (filled) and cuBLAS (hollow) at every size, coloured and
    shaped by the level whose bytes give the intensity, only at levels that served the data
    (SERVED_SHARE). Our other variants are in the optimality appendix."""
    from .. import plots  # matplotlib only when the report draws
    ceilings = [c for c in ceilings if not c.variant]  # one line per level (variants bound kernels only)
    if not points:  # nothing to place: the ceilings are in the table (a figure of roofs alone drew them flat)
        return None
    kernels = sorted({p.kernel for p in points})
    present = {k: {p.impl for p in points if p.kernel == k} for k in kernels}
    shown = [p for p in points if is_reference(p.impl) or is_default(p.kernel, p.impl, present[p.kernel])]

    def served(p: KernelPoint) -> Dict[str, float]:
        ai = p.intensity()
        if not p.bytes_by_level or not p.minimal_bytes:
            return ai
        return {lvl: v for lvl, v in ai.items() if p.bytes_by_level.get(lvl, 0) >= SERVED_SHARE * p.minimal_bytes}

    ais = [ai for p in shown for ai in served(p).values()] or [0.1, 100]
    lo, hi = min(ais) / 3, max(ais) * 3
    top = roof_top(ceilings) or max([p.gflops for p in shown] or [1.0])
    tensor_names = [c.name for c in ceilings if not c.is_memory and c.name not in plots.LEVEL_COLORS and c.measured]
    xs = np.geomspace(lo, hi, 300)
    fig, axes = plots.grid(max(1, len(kernels)), panel=(5.4, 4.0), ncols=min(2, max(1, len(kernels))), legend_width=3.6,
                     sharey=True, sharex=True)
    lines = _roof_lines(ceilings)
    for ax, kernel in zip(axes, kernels or [""]):
        for c, label, ls in lines:
            color = plots.ceiling_color(c.name, tensor_names)
            if c.is_memory:
                ax.plot(xs, np.minimum(xs * c.value, top), ls, color=color, lw=1.3 if ls == "-" else 0.9, label=label)
            else:
                ax.axhline(c.value, ls=ls, color=color, lw=1.3 if ls == "-" else 0.9, label=label)
        for p in shown:
            if p.kernel != kernel:
                continue
            ref = is_reference(p.impl)
            for lvl, ai in served(p).items():
                color = plots.LEVEL_COLORS.get(lvl, "k")
                ax.plot(ai, p.gflops, plots.LEVEL_MARKERS.get(lvl, "x"), color=color, ms=5.5, mew=1.0,
                        mfc="none" if ref else color, alpha=0.85)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.grid(True, which="both", alpha=0.3)
        impls = sorted({p.impl for p in shown if p.kernel == kernel}, key=lambda i: (is_reference(i), i))
        ax.set_title(f"{kernel}: " + ", ".join(impls), fontsize=9)
    for lvl, m in plots.LEVEL_MARKERS.items():
        axes[0].plot([], [], m, color=plots.LEVEL_COLORS.get(lvl, "k"), label=f"intensity at {lvl}")
    axes[0].plot([], [], "o", color="0.3", label="our default (filled)")
    axes[0].plot([], [], "o", color="0.3", mfc="none", label="cuBLAS (hollow)")
    src = {p.ai_source for p in points}
    plots.finish_panels(fig, axes, "Hierarchical roofline, one panel per kernel (solid: measured ceilings, dashed: theoretical)"
                  + ("" if src <= {"counters"} else "; AI from minimal bytes where counters are absent"),
                  "arithmetic intensity (FLOP/byte, log scale)", "performance (GFLOP/s; INT8: GOP/s; log scale)")
    prov = [F.provenance([p.entry for p in points])] + [c.source for c in ceilings if c.source]
    return plots.Figure("roofline", "Hierarchical roofline", "One panel per kernel: each size of our default "
                  "implementation (filled) and of cuBLAS (hollow) at its counter-derived arithmetic intensity for "
                  f"each level that served at least {SERVED_SHARE:.0%} of its minimal bytes (triangle L1, square L2, "
                  "circle DRAM; colour = the level's ceiling). A theoretical ceiling within "
                  f"{SAME_LINE:.0%} of the measured one is given in the measured line's label instead of a second "
                  "line. Every measured compute ceiling is a roof, each tensor type's included (INT8 in GOP/s); "
                  "the memory diagonals end at the highest measured roof. Our other variants: optimality appendix.",
                  prov, plots._save(fig, outdir, "roofline"))


SECTION = register(FamilySection(
    id="roofline", title="Hierarchical roofline", families=(), after=(), core=True, uses=("bandwidth", "execution"),
    reads_all_ceilings=True, analyze=analyze,
    content=lambda an, figdir: {"roofline_figure": roofline_figure(an.points, an.ceilings, figdir)},
    profile_keys=_profile_keys, opening=opening))
