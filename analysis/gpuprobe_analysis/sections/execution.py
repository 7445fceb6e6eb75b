"""Pipelines, launch and barrier costs (exec.latency, exec.throughput[_peak], exec.launch*, exec.barrier):
per op its latency and throughput ceiling, the compute ceilings in GFLOP/s for the roofline, the launch
costs per API and grid, the barriers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from .. import families as F
from .. import profile_results as R
from ..curves import ctxnum
from ..formatting import Link, fmt, pct_of, premise_cell
from ..results import Entry, ResultSet, finite
from . import AnalysisInputs, FamilySection, register


@dataclass
class ExecutionResult:
    pipelines: R.Pipelines
    launch_barrier: Optional[R.LaunchBarrier]
    rs: ResultSet


def _pipelines(rs: ResultSet) -> R.Pipelines:
    lat = []
    lat_entries = [e for f in F.PIPELINE_LATENCY_FAMILIES for e in rs.by_family(f)]
    for (op,), grp in sorted(F.group(lat_entries, ("op",)).items(), key=lambda t: str(t[0])):
        vals = [e.value for e in grp if math.isfinite(e.value)]
        if vals:
            lat.append(R.PipelineLatency(op=op, latency=float(np.median(vals)), unit=grp[0].unit,
                                         cv=finite(np.nanmedian([e.cv for e in grp])), source=F.provenance(grp)))
    thr = []
    compute: Dict[str, R.ComputeCeiling] = {}
    failed_premise: Dict[str, R.FailedComputeCeiling] = {}
    theoretical: Dict[str, R.TheoreticalCompute] = {}
    thr_entries = [e for f in F.THROUGHPUT_FAMILIES for e in rs.by_family(f)]
    for (op,), grp in sorted(F.group(thr_entries, ("op",)).items(), key=lambda t: str(t[0])):
        grp = [e for e in grp if math.isfinite(e.value)]
        if not grp:
            continue
        top = max(grp, key=lambda e: e.value)
        ceiling, ref, how = robust_peak(grp)
        sweep = [e for e in grp if e.family == "exec.throughput"] or grp
        enough = [e for e in sweep if e.value >= 0.95 * ceiling]
        cheapest = min(enough, key=lambda e: (F.num(e, "ilp") if math.isfinite(F.num(e, "ilp")) else 0) *
                       (F.num(e, "warps_per_sm") if math.isfinite(F.num(e, "warps_per_sm")) else 1)) if enough else None
        row = R.ThroughputPeak(
            op=op, peak=ceiling, peak_how=how, best_single_entry=top.value, unit=ref.unit,
            at_ilp=finite(F.num(ref, "ilp")), at_warps_per_sm=finite(F.num(ref, "warps_per_sm")),
            smallest_ilp_reaching_95pct=finite(F.num(cheapest, "ilp")) if cheapest else None,
            warps_per_sm_there=finite(F.num(cheapest, "warps_per_sm")) if cheapest else None,
            fraction_of_theoretical=finite(ref.num("fraction_of_theoretical")) if ref.value == ceiling else None,
            source=F.provenance(grp))
        ref_gflops = _as_gflops(rs, ref, op)
        # The ceiling in GFLOP/s at the reference entry's own clock (the unit may be per clock).
        gflops = ref_gflops * ceiling / ref.value if ref_gflops is not None and ref.value > 0 else None
        kind = F.compute_op(grp[0], op)
        # The premise (the op's SASS instructions ran, as counted) is declared on its peak entry; a
        # failed one keeps the op out of the compute ceilings, another op of its precision may stand.
        peak_entry = next((e for e in grp if e.family == "exec.throughput_peak"), None)
        premise = peak_entry.premise if peak_entry is not None else None
        if gflops is not None:
            row.gflops = gflops
            if premise == "failed":
                failed_premise[op] = R.FailedComputeCeiling(gflops=gflops, why=peak_entry.premise_why)
            elif kind[0] not in compute or gflops > compute[kind[0]].gflops:
                compute[kind[0]] = R.ComputeCeiling(
                    gflops=gflops, how=f"op={op}: {how}", op=op, premise=premise,
                    premise_ratio=finite(peak_entry.num("premise_ratio")) if peak_entry else None,
                    source=F.provenance([ref]), cv=finite(ref.cv))
        for e in grp:
            th = finite(e.num(F.THEORETICAL_COMPUTE_COUNTER))
            if th and kind and (op not in theoretical or th > theoretical[op].gflops):
                theoretical[op] = R.TheoreticalCompute(
                    gflops=th, how=f"{e.family} op={op} counter {F.THEORETICAL_COMPUTE_COUNTER}")
        thr.append(row)
    # A precision's theoretical figure is its ceiling's own op's: another op of the precision runs at
    # other flops per op (fadd 1, ffma 2), so FP32 from ffma held against fadd's figure read 197 %.
    theoretical = {kind: theoretical[c.op] for kind, c in compute.items() if c.op in theoretical}
    return R.Pipelines(latency=lat, throughput=thr, compute_ceilings=compute,
                                 compute_ceilings_failed_premise=failed_premise,
                                 compute_theoretical=theoretical, method=(
        "latency: median over entries per op; throughput ceiling per op: the exec.throughput_peak entry's median "
        "(the sweep's best configuration re-measured, 10 samples: an independent measurement, so not biased up "
        "by picking the largest of ~80 noisy sweep entries, which lands high by about two of their noise sigmas); "
        "without it, the median of the sweep entries within noise of the top (value >= top x (1 - 3 sqrt(2) "
        "sigma), sigma = the entries' median sample CV); the best single entry is listed beside it; the cheapest "
        "ILP x warps reaching 95 % of the ceiling; GFLOP/s = ops/clock/SM x flops/op x SMs x SM clock (the "
        "reference entry's clock) when the unit is per clock"))


def _as_gflops(rs: ResultSet, e: Entry, op: str) -> Optional[float]:
    kind = F.compute_op(e, op)
    if kind is None:
        return None
    unit = (e.unit or "").lower()
    if "flop" in unit:
        scale = {"tflop/s": 1e3, "gflop/s": 1.0, "mflop/s": 1e-3}.get(unit, 1.0)
        return e.value * scale
    if "clock" in unit or "cycle" in unit or "clk" in unit:
        sms = ctxnum(rs, "gpu_sm_count")
        mhz = finite(e.num("sm_clock_kernel_mhz", "sm_clock_mhz")) or ctxnum(rs, "gpu_sm_clock_max_mhz")
        if not sms or not mhz:
            return None
        per_sm = "sm" in unit
        return e.value * kind[1] * (sms if per_sm else 1) * mhz * 1e-3
    return None


def _launch_barrier(rs: ResultSet) -> Optional[R.LaunchBarrier]:
    launch = []
    launch_entries = [e for e in rs.entries if e.family.startswith(F.LAUNCH_PREFIX)]
    for (fam, mode, grid), grp in sorted(F.group(launch_entries, ("family", "api", "grid")).items(),
                                         key=lambda t: str(t[0])):
        vals = [e.value for e in grp if math.isfinite(e.value)]
        if vals:
            launch.append(R.LaunchCost(measure=fam, mode=mode, grid_blocks=grid, value=float(np.median(vals)),
                                       unit=grp[0].unit, min=float(np.min(vals)), max=float(np.max(vals)),
                                       entries=len(grp), method=grp[0].method, source=F.provenance(grp)))
    barrier = []
    for (kind,), grp in sorted(F.group(rs.by_family("exec.barrier"), ("barrier",)).items(), key=lambda t: str(t[0])):
        for e in sorted(grp, key=lambda e: F.num(e, "blocks")):
            barrier.append(R.BarrierCost(kind=kind, blocks=finite(F.num(e, "blocks")), value=e.value, unit=e.unit,
                                         cv=finite(e.cv), entry=e.name))
    if not (launch or barrier):
        return None
    return R.LaunchBarrier(
            launch=launch, barrier=barrier, source=F.provenance(launch_entries + rs.by_family("exec.barrier")))


# Sweep entries within this many (difference) sigmas of the top are at the plateau as far as the noise
# tells: two draws of one value differ by sqrt(2) sigma typically, 3 of those rarely.
PEAK_WINDOW_SIGMAS = 3.0
PEAK_NOISE_FLOOR = 1e-4  # relative; a recorded CV of 0 (one sample) is not a noiseless entry


def robust_peak(grp: List[Entry]):
    """(ceiling, reference entry, how) of one op's throughput entries; see _pipelines' method."""
    peak = [e for e in grp if e.family == "exec.throughput_peak"]
    if peak:
        ref = peak[-1]
        return ref.value, ref, f"{ref.family} median ({ref.name})"
    top = max(grp, key=lambda e: e.value)
    cvs = [e.cv for e in grp if math.isfinite(e.cv)]
    sigma = max(float(np.median(cvs)) if cvs else 0.0, PEAK_NOISE_FLOOR)
    near = [e for e in grp if e.value >= top.value * (1 - PEAK_WINDOW_SIGMAS * math.sqrt(2) * sigma)]
    ceiling = float(np.median([e.value for e in near]))
    ref = min(near, key=lambda e: abs(e.value - ceiling))
    return ceiling, ref, (f"median of the {len(near)} {top.family} entries within {PEAK_WINDOW_SIGMAS:g} x sqrt(2) x "
                          f"{sigma:.2g} of the top {top.value:.6g}")


def analyze(inputs: AnalysisInputs) -> ExecutionResult:
    return ExecutionResult(_pipelines(inputs.rs), _launch_barrier(inputs.rs), inputs.rs)


def launch_table(launch: list):
    """The launch rows pivoted to one row per (measure, API) and one column per grid size, and each
    measure's method once (it is the same for every API and grid of the measure)."""
    grids = sorted({r["grid_blocks"] for r in launch if r.get("grid_blocks") is not None})
    units = sorted({r["unit"] for r in launch if r.get("unit")})
    methods: Dict[str, str] = {}
    by_row: Dict[tuple, dict] = {}
    for r in launch:
        m = r["measure"].replace("exec.", "")
        methods.setdefault(m, r.get("method") or "not recorded")
        by_row.setdefault((m, r["mode"]), {})[r.get("grid_blocks")] = r
    unit = units[0] if len(units) == 1 else "unit per row"
    headers = ["measure", "api / mode"] + [f"{g:g} blocks ({unit})" for g in grids]
    rows = []
    for (m, mode), cells in by_row.items():
        vals = []
        for g in grids:
            r = cells.get(g)
            vals.append("–" if r is None else fmt(r["value"]) + (f" {r['unit']}" if len(units) > 1 else "")
                        + (f" ({fmt(r['min'])}–{fmt(r['max'])})" if r.get("entries", 1) > 1 else ""))
        if None in cells and not grids:
            vals = [fmt(cells[None]["value"])]
        rows.append([m, mode] + vals)
    if not grids:
        headers.append(f"median ({unit})")
    return headers, rows, methods


HATCHES = ("", "//", "..", "xx", "\\\\", "oo")


def launch_figure(rows: list, entries: list, outdir: str):  # rows: profile_results.LaunchCost
    """Launch costs as grouped bars: one panel per measure (gap, rate, submit, sync), one group per
    launch API, one bar per grid size (colour and hatch, in size order), a linear axis per panel with
    each bar's value on it: a row of 72 same-coloured bars named by 72 rotated labels could not be
    compared."""
    from .. import plots  # matplotlib only when the report draws
    measures = sorted({r.measure for r in rows}, key=plots.natural_key)
    grids = sorted({r.grid_blocks for r in rows}, key=lambda g: -1 if g is None else g)
    # Linear, each panel its own y range from 0 (gap, rate, submit and sync differ by 10x and more): on a
    # shared log axis a 30 % difference between two APIs was one bar's width of nothing.
    fig, axes = plots.grid(len(measures), panel=(6.2, 3.4), ncols=2)
    unit = rows[0].unit or ""
    for ax, m in zip(axes, measures):
        mine = [r for r in rows if r.measure == m]
        modes = sorted({r.mode for r in mine}, key=plots.natural_key)
        width = 0.8 / max(1, len(grids))
        for j, g in enumerate(grids):
            xs, ys = [], []
            for k, mode in enumerate(modes):
                r = next((r for r in mine if r.mode == mode and r.grid_blocks == g), None)
                if r is not None:
                    xs.append(k + (j - (len(grids) - 1) / 2) * width)
                    ys.append(r.value)
            label = "grid not recorded" if g is None else f"{g:g} blocks"
            bars = ax.bar(xs, ys, width=width, color=plots.COLORS[j % len(plots.COLORS)], hatch=HATCHES[j % len(HATCHES)],
                          edgecolor="white", lw=0.3, label=label)
            ax.bar_label(bars, labels=[f"{v:,.0f}" if v >= 100 else f"{v:.3g}" for v in ys], fontsize=5.5, rotation=90, padding=1.5)
        ax.set_xticks(range(len(modes)))
        ax.set_xticklabels(modes, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.15)  # room for the values on the bars
        ax.set_title(m.replace("exec.", ""), fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in axes:
        ax.set_ylabel(f"per launch ({unit})" if ax.get_subplotspec().is_first_col() else "")
    fig.suptitle("Kernel launch cost: per measure, launch API and grid size")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    plots.figure_legend(fig, axes)
    return plots.Figure("launch", "Kernel launch cost",
                  "Median per measure (panel), launch API (group) and grid size (bar); each measure's method is in "
                  "the launch table.", [F.provenance(entries)], plots._save(fig, outdir, "launch"))


def figures(an: ExecutionResult, outdir: str) -> list:
    from .. import plots  # matplotlib only when the report draws
    rs, figs = an.rs, []
    lat = an.pipelines.latency if an.pipelines else []
    if lat:
        figs.append(plots.bar_figure([r.op for r in lat], [r.latency for r in lat],
                               "pipeline_latency", "Pipeline latency per instruction",
                               f"latency ({lat[0].unit or 'cycles'})", outdir,
                               "Median dependent-issue latency per op.",
                               [e for f in F.PIPELINE_LATENCY_FAMILIES for e in rs.by_family(f)]))
    thr = [e for e in rs.by_family("exec.throughput") if F.num(e, "ilp") == F.num(e, "ilp")]
    if thr:
        series = []
        for (op, warps), grp in sorted(F.group(thr, ("op", "warps_per_sm")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
            grp = sorted(grp, key=lambda e: F.num(e, "ilp"))
            lab = f"op={op}: " + (f"{warps:g} warps/SM" if warps else "warps/SM not recorded")
            series.append((lab, [F.num(e, "ilp") for e in grp], [e.value for e in grp], grp))
        figs.append(plots.simple_xy(series, "throughput", "Instruction throughput vs ILP",
                              "independent chains per thread (ILP, log2)", f"throughput ({thr[0].unit})", outdir,
                              "One panel per op, one curve per warps/SM; the knee is the ILP needed to hide latency.",
                              facet=lambda label: label.split(": ")[0]))
    if an.launch_barrier and an.launch_barrier.launch:
        figs.append(launch_figure(an.launch_barrier.launch, [e for e in rs.entries if e.family.startswith(F.LAUNCH_PREFIX)],
                                  outdir))
    bar = rs.by_family("exec.barrier")
    if bar:
        series = []
        for (kind,), grp in sorted(F.group(bar, ("barrier",)).items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks"))
            series.append((str(kind), [F.num(e, "blocks") for e in grp], [e.value for e in grp], grp))
        figs.append(plots.simple_xy(series, "barrier", F.title(rs, "exec.barrier", "Barrier cost"), "blocks (log2)", f"per barrier ({bar[0].unit})",
                              outdir, "Median cost of one barrier per kind.", logy=True))
    return [f for f in figs if f is not None]


def content(an: ExecutionResult, figdir: str) -> dict:
    lb = R.to_json(an.launch_barrier) if an.launch_barrier is not None else {}
    return {"figures": figures(an, figdir),
            "launch": dict(zip(("headers", "rows", "methods"), launch_table(lb["launch"]))) if lb.get("launch") else None}


PIPE = {"FP32": "CUDA cores, FFMA", "FP64": "FP64 units, DFMA",
        "FP16 half2": "CUDA cores, HFMA2 (half2 FMA; not the tensor cores)",
        "BF16 bf16x2": "CUDA cores, HFMA2.BF16 (bf16x2 FMA; not the tensor cores)"}


def summary_rows(an: ExecutionResult, data: dict) -> List[list]:
    rows = []
    pipes = data.get("pipelines") or {}
    for name, c in (pipes.get("compute_ceilings") or {}).items():
        t = (pipes.get("compute_theoretical") or {}).get(name)
        rows.append([f"{name} peak", f"{fmt(c['gflops'])} GFLOP/s", PIPE.get(name, c.get("how", "")),
                     pct_of(c["gflops"], t["gflops"] if t else None),
                     premise_cell(c.get("premise"), c.get("premise_ratio")), Link("pipelines", "execution")])
    return rows


def _profile_keys(an: ExecutionResult) -> dict:
    return {"pipelines": R.to_json(an.pipelines),
            **({"launch_barrier": R.to_json(an.launch_barrier)} if an.launch_barrier is not None else {})}


SECTION = register(FamilySection(
    id="execution", title="Pipelines, launch and barrier costs", families=(), after=(), core=True, analyze=analyze,
    content=content, profile_keys=_profile_keys, summary_rows=summary_rows, link_text="pipelines"))
