"""Application kernels: an Nsight Compute profile's launches (ncu.py) judged against this GPU's measured
ceilings (app_verdict.py), for the "Application kernels" page (report.build_app_report) and app-kernels.json.

The ceilings are the report's own: the roofline section's path (sections/roofline.py `measured_ceilings`,
after the sections it depends on, sections.inputs_for), with the shared-memory ceiling and every measured
pipe added (`all_measured`). Premise-failed figures never become ceilings there, so never here. This module
adds each ceiling's SM clock, read from the entry it was measured with.

Not a section of the device report (it is not registered): the device's result files hold no application.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List

import numpy as np

from .. import app_verdict as V
from .. import ncu_metrics as M
from ..results import ResultSet
from . import inputs_for
from .roofline import measured_ceilings

def device_ceilings(rs: ResultSet) -> List[V.AppCeiling]:
    """Every measured ceiling of the device results, as the report's roofline obtains them, with its clock."""
    inputs = inputs_for(rs, "roofline")
    out = []
    for c in measured_ceilings(inputs, all_measured=True):
        if c.measured:
            out.append(V.AppCeiling.of(c, c.clock_mhz, c.clock_how))
    return out


def device_name(rs: ResultSet) -> str:
    return rs.context.get("gpu_name", "unknown GPU")


@dataclass
class DeviceCeilings:
    """The device results' GPU model and measured ceilings: computed once, judged against many profiles."""
    device: str
    ceilings: List[V.AppCeiling]

    @classmethod
    def of(cls, rs: ResultSet) -> "DeviceCeilings":
        return cls(device_name(rs), device_ceilings(rs))

    def judge(self, profile) -> V.AppVerdict:
        return V.judge(profile, self.device, self.ceilings)


# ---- the figure and the page -----------------------------------------------------------------------------

LEVEL_ORDER = ("L1", "shared", "L2", "DRAM")
FLAG_COLOR = "red"


def roofline_figure(v: V.AppVerdict, outdir: str, top: int = 10):
    """The hierarchical roofline with every measured roof (the levels' diagonals up to the highest measured
    compute roof, the compute and tensor roofs flat, each with its value at its own clock in the legend) and
    the application's top kernels (by saving) at their intensity at each level, numbered as in the table;
    a kernel above a roof drawn hollow in red."""
    from .. import plots  # matplotlib only when the page draws
    memory = [c for c in v.ceilings if c.is_memory and c.name in LEVEL_ORDER]
    compute = [c for c in v.ceilings if not c.is_memory]
    # numbered as in the table (a kernel without operations, a copy, has no intensity: not drawn, number kept)
    numbered = [(n, g) for n, g in enumerate(v.kernels[:top], 1) if g.time_s > 0 and g.flops > 0]
    groups = [g for _, g in numbered]
    top_roof = max([c.value for c in compute] + [g.flops / g.time_s / 1e9 for g in groups] + [1.0])
    ais = [ai for g in groups for ai in g.intensity.values()]
    knees = [top_roof / c.value for c in memory]
    lo = min(ais + knees + [1.0]) / 4
    hi = max(ais + knees + [10.0]) * 4
    xs = np.geomspace(lo, hi, 300)
    fig, axes = plots.grid(1, panel=(8.0, 5.6), legend_width=4.4)
    ax = axes[0]
    # a roof without a colour of its own takes one no level or pipe has (the tensor roofs: dash-dot as well)
    free = [c for c in plots.COLORS + plots.KERNEL_COLORS if c not in plots.LEVEL_COLORS.values()]
    free = list(dict.fromkeys(free))
    color = lambda name, i: plots.LEVEL_COLORS.get(name, free[i % len(free)])  # noqa: E731
    for c in sorted(memory, key=lambda c: LEVEL_ORDER.index(c.name)):
        # shared memory dashed: on Hopper its ceiling is within 1 % of the L1's, and the lines coincide
        ax.plot(xs, np.minimum(xs * c.value, top_roof), "--" if c.name == "shared" else "-", color=color(c.name, 0), lw=1.3,
                label=f"{c.name} {c.value:,.0f} GB/s"
                      + (f" at {c.clock_mhz:,.0f} MHz (measured)" if c.per_clock and c.clock_mhz else
                         " (measured)" if c.per_clock else " (measured; not clock-scaled)"))
    unnamed = [c.name for c in sorted(compute, key=lambda c: -c.value) if c.name not in plots.LEVEL_COLORS]
    for c in sorted(compute, key=lambda c: -c.value):
        at = f" at {c.clock_mhz:,.0f} MHz" if c.clock_mhz else ""
        i = unnamed.index(c.name) if c.name in unnamed else 0
        ax.axhline(c.value, ls="-" if "tensor" not in c.name else "-.", color=color(c.name, i), lw=1.1,
                   label=f"{c.name} {c.value:,.0f} GFLOP/s{at} (measured)")
    markers = {"L1": "^", "shared": "D", "L2": "s", "DRAM": "o"}
    for n, g in numbered:
        y = g.flops / g.time_s / 1e9
        flagged = bool(g.flagged)
        for lvl, ai in g.intensity.items():
            ax.plot(ai, y, markers.get(lvl, "x"), ms=7, mew=1.4, color=FLAG_COLOR if flagged else color(lvl, 0),
                    mfc="none" if flagged else color(lvl, 0), alpha=0.9)
        x = g.intensity.get("DRAM") or next(iter(g.intensity.values()), None)
        if x:
            ax.annotate(f"{n}" + ("!" if flagged else ""), (x, y), textcoords="offset points", xytext=(5, 4),
                        fontsize=8, color=FLAG_COLOR if flagged else "black")
    for lvl, m in markers.items():
        ax.plot([], [], m, color=color(lvl, 0), label=f"kernel's intensity at {lvl}")
    ax.plot([], [], "o", color=FLAG_COLOR, mfc="none", label="above a measured roof (flagged, '!')")
    for n, g in numbered:
        ax.plot([], [], " ", label=f"{n}: {_short(g.label)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.grid(True, which="both", alpha=0.3)
    plots.finish_panels(fig, axes, f"Application kernels on the measured roofline: {v.device}",
                        "arithmetic intensity (FLOP/byte: all precisions and tensor types, log scale)",
                        "performance (GFLOP/s, log scale)")
    prov = [c.source for c in v.ceilings if c.source]
    return plots.Figure(
        "app_roofline", "Application kernels on the measured roofline",
        f"The top {len(groups)} kernels by saving with operations (numbered as in the table) at their achieved rate (every precision "
        "and tensor type's operations over the kernel's time) and their arithmetic intensity at each level (ncu "
        "bytes: " + ", ".join(f"{lvl} {'+'.join(V._metrics_of(lvl, M.BYTES))}" for lvl in LEVEL_ORDER) + "). "
        "Roofs: the device results' measured ceilings at their own clocks (the verdict scales the per-clock ones "
        "to each launch's clock; the table says how); the diagonals end at the highest measured roof. A kernel "
        "above a measured roof is drawn hollow in red with '!' and its cause is in the table.",
        prov, plots._save(fig, outdir, "app_roofline"))


def _short(label: str, width: int = 70) -> str:
    return label if len(label) <= width else label[:width - 1] + "…"


def content(v: V.AppVerdict, figdir: str, top: int) -> dict:
    """What templates/sections/app_kernels.j2 reads."""
    ceilings = {c.name: c for c in v.ceilings}
    kernels = v.kernels[:top]
    detail = []
    for n, g in enumerate(kernels, 1):
        row = V.group_row(g, ceilings)
        detail.append({"n": n, "label": g.label, "row": row,
                       "rates": ", ".join(f"{k} {x:,.1f}" for k, x in row["rates_gflops"].items()) or "–",
                       "levels": ", ".join(f"{lvl} {row['bytes'][lvl]:,.0f} B (AI {row['intensity'].get(lvl, math.nan):.3g})"
                                           for lvl in row["bytes"]) or "–",
                       "metrics": ", ".join(row["binding_metrics"]) or "–"})
    return {
        "device": v.device, "profile": v.profile.path, "source": v.profile.source, "launches": len(v.launches),
        "total": V._fmt_s(v.total_s), "saving": V._fmt_s(v.saving_s), "headroom": V._pct(100 * v.headroom),
        "method": V.METHOD, "headers": ["#"] + V.TABLE_HEADERS,
        "rows": [[str(n)] + r for n, r in enumerate(V.table_rows(v, kernels), 1)],
        "left_out": max(0, len(v.kernels) - top), "top": top,
        "range_headers": ["NVTX range"] + V.TABLE_HEADERS[1:], "range_rows": V.table_rows(v, v.ranges),
        "detail": detail, "notes": v.notes,
        "ceiling_rows": [[c.name, f"{c.value:,.0f} {c.unit}", f"{c.clock_mhz:,.0f}" if c.clock_mhz else "–",
                          "per SM clock" if c.per_clock else "not scaled", c.clock_how, c.how] for c in v.ceilings],
        "figure": roofline_figure(v, figdir, top),
    }
