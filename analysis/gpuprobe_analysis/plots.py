"""Figures (PNG + SVG) of the profile, the roofline and the kernels. Agg backend only."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, faster SVGs
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from . import families as F  # noqa: E402
from .profile import Profile, transfer_point  # noqa: E402
from .roofline import LEVELS, Ceiling, KernelPoint, is_default, is_reference, kernel_metric  # noqa: E402

LEVEL_MARKERS = {"L1": "^", "L2": "s", "DRAM": "o"}
KERNEL_COLORS = ("black", "tab:pink", "tab:cyan", "tab:brown", "gold")  # none of the ceilings' colours
LEVEL_COLORS = {"L1": "tab:green", "L2": "tab:orange", "DRAM": "tab:blue", "FP32": "tab:red", "FP64": "tab:purple",
                "FP16": "tab:brown", "shared": "tab:olive"}


@dataclass
class Figure:
    id: str
    title: str
    caption: str
    provenance: List[dict]
    files: Dict[str, str] = field(default_factory=dict)  # ext -> path


def _bytes_formatter(v, _pos=None):
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= div:
            return f"{v / div:g} {unit}"
    return f"{v:g} B"


def _save(fig, outdir: str, fid: str) -> Dict[str, str]:
    os.makedirs(outdir, exist_ok=True)
    files = {}
    for ext in ("png", "svg"):
        path = os.path.join(outdir, f"{fid}.{ext}")
        fig.savefig(path, dpi=110 if ext == "png" else None, bbox_inches="tight")
        files[ext] = path
    plt.close(fig)
    return files


def _bytes_axis(ax, axis="x"):
    fmt = matplotlib.ticker.FuncFormatter(_bytes_formatter)
    loc = matplotlib.ticker.LogLocator(base=2, numticks=16)
    if axis == "x":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(fmt)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.tick_params(axis="x", labelrotation=45)
    else:
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(fmt)


def _thin_ticks(ax):
    """Log-2 byte axes over many decades: at most ~16 labelled ticks (set by the locator)."""


def latency_figure(curves, fid, title, outdir, caption) -> Optional[Figure]:
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(11, 5.4))
    markers = "osv^D<>ph"
    for i, c in enumerate(curves):
        color = f"C{i % 10}"
        label = ", ".join(f"{k}={_fmt_key(v)}" for k, v in c.key.items() if v is not None)
        # Distinct hollow markers so that curves lying on top of each other (cg / volatile) stay visible.
        ax.plot(c.x, c.y, markers[i % len(markers)], ms=4, color=color, label=label,
                fillstyle="full" if i == 0 else "none", mew=0.8)
        if c.fit is not None and c.fit.model != "flat":
            xs = np.geomspace(c.x.min(), c.x.max(), 400)
            ax.plot(xs, c.fit.predict(xs), "-", lw=1, color=color, alpha=0.7)
            for k, knee in enumerate(c.fit.knees):
                ax.axvline(knee, color=color, ls=":", lw=0.8)
                if i > 0:
                    continue  # capacities are labelled for the first curve only (the others: dotted lines)
                ax.annotate(f"{c.names[k]}: {_bytes_formatter(knee)}", (knee, ax.get_ylim()[0] if False else c.fit.levels[k]),
                            textcoords="offset points", xytext=(3, 4 + 9 * (i % 3)), fontsize=7, color=color)
    _bytes_axis(ax)
    _thin_ticks(ax)
    ax.set_yscale("log")
    ax.set_xlabel("footprint (bytes, log scale)")
    ax.set_ylabel(curves[0].ylabel + " (log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return Figure(fid, title, caption, [F.provenance(c.entries) for c in curves], _save(fig, outdir, fid))


def _fmt_key(v):
    if isinstance(v, float):
        return _bytes_formatter(v) if v >= 1024 else f"{v:g}"
    return str(v)


def simple_xy(series, fid, title, xlabel, ylabel, outdir, caption, logx=True, logy=False, bytes_x=False, kind="-o",
              legend_outside=False):
    """series: list of (label, x, y, entries)."""
    series = [s for s in series if len(s[1])]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(10.5, 4.8) if legend_outside else (8, 4.6))
    for label, x, y, _ in series:
        ax.plot(x, y, kind, ms=4, label=label)
    if bytes_x:
        _bytes_axis(ax)
        _thin_ticks(ax)
    elif logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if len(series) > 1 or series[0][0]:
        if legend_outside:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
            fig.tight_layout()
        else:
            ax.legend(fontsize=7)
    return Figure(fid, title, caption, [F.provenance(s[3]) for s in series], _save(fig, outdir, fid))


def bar_figure(labels, values, fid, title, ylabel, outdir, caption, entries, logy=False):
    if not labels:
        return None
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(labels) + 2), 4.2))
    ax.bar(range(len(labels)), values, color="tab:blue")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    for i, v in enumerate(values):
        ax.annotate(f"{v:.3g}", (i, v), ha="center", va="bottom", fontsize=7)
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    return Figure(fid, title, caption, [F.provenance(entries)], _save(fig, outdir, fid))


def profile_figures(p: Profile, outdir: str) -> List[Figure]:
    figs: List[Figure] = []
    lat = p.curves.get("latency", [])
    random_curves = [c for c in lat if c.key.get("pattern") == "random"]
    stride_curves = [c for c in lat if c.key.get("pattern") != "random"]
    figs.append(latency_figure(random_curves, "latency_random", "Load latency vs footprint (random chains)", outdir,
                               "Points: median cycles per dependent load; line: fitted level model; dotted: detected "
                               "capacities (change-point detection, see docs/analysis.md)."))
    figs.append(latency_figure(stride_curves, "latency_stride", "Load latency vs footprint (fixed-stride chains)", outdir,
                               "Saavedra-style fixed-stride chains, one curve per stride."))
    fitted = {r["footprint_bytes"] for r in (p.data.get("granularity") or {}).get("per_footprint", [])}
    g = [c for c in p.curves.get("granularity", []) if c.key["footprint"] in fitted]
    if len(g) > 8:  # a readable subset, spread over the footprints
        g = [g[int(round(i))] for i in np.linspace(0, len(g) - 1, 8)]
    figs.append(simple_xy([(f"footprint={_bytes_formatter(c.key['footprint'])}", c.x, c.y, c.entries) for c in g],
                          "granularity", "Latency vs stride (line / sector size)", "stride (bytes, log scale)",
                          "cycles per load", outdir, "Latency saturates at the unit a miss brings in.", bytes_x=True))
    figs.append(latency_figure(p.curves.get("tlb", []), "tlb", "TLB: latency vs footprint per stride", outdir,
                               "Knees: TLB reach per level; the stride where latency saturates is the page size."))
    bw = p.curves.get("bandwidth_all") or p.curves.get("bandwidth", [])
    if bw:
        fig, ax = plt.subplots(figsize=(11, 5.6))
        cmap = plt.get_cmap("tab20")
        for i, c in enumerate(bw):
            label = ", ".join(f"{k}={_fmt_key(v)}" for k, v in c.key.items() if v is not None)
            ax.plot(c.x, c.y, "o-", ms=2.5, lw=0.8, color=cmap(i % 20), label=label)
        # Level edges: the capacities detected by the latency hierarchy (what the ceilings use).
        caps = (p.data.get("hierarchy") or {}).get("capacities") or {}
        for key, text in (("l1_bytes", "L1 capacity"), ("l2_near_partition_bytes", "L2 near"), ("l2_bytes", "L2 capacity")):
            if isinstance(caps.get(key), (int, float)):
                ax.axvline(caps[key], color="0.4", ls=":", lw=1.0)
                ax.annotate(text, (caps[key], 1.0), xycoords=("data", "axes fraction"), fontsize=7, rotation=90,
                            ha="right", va="top", color="0.3")
        for name, cl in (p.data.get("bandwidth", {}).get("ceilings") or {}).items():
            ax.axhline(cl["gbps"], color=LEVEL_COLORS.get(name, "k"), ls="--", lw=0.9)
            ax.annotate(f"{name} ceiling {cl['gbps']:.0f} GB/s", (1.0, cl["gbps"]), xycoords=("axes fraction", "data"),
                        fontsize=7, ha="right", va="bottom", color=LEVEL_COLORS.get(name, "k"))
        _bytes_axis(ax)
        _thin_ticks(ax)
        ax.set_yscale("log")
        ax.set_xlabel("working set, all arrays (bytes, log scale)")
        ax.set_ylabel("bandwidth (GB/s, log scale)")
        ax.set_title("Bandwidth vs working set (memory.bandwidth)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
        figs.append(Figure("bandwidth", "Bandwidth vs working set",
                           "Dotted: L1/L2 capacities from the latency hierarchy (points are assigned to levels by "
                           "footprint); dashed: the ceiling of each level used by the roofline.",
                           [F.provenance(c.entries) for c in bw], _save(fig, outdir, "bandwidth")))
    occ = p.rs.by_family("memory.occupancy")
    if occ:
        series = []
        groups = {}
        for e in occ:  # the store hint is a text tag (default|cs)
            groups.setdefault((F.param(e, "kernel"), F.text(e, "store") or "default", F.param(e, "footprint")), []).append(e)
        for key, grp in sorted(groups.items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks_per_sm"))
            k, st, fp = key
            series.append((f"{k}, store={st or 'default'}, working set {_bytes_formatter(fp) if fp else '?'}",
                           [F.num(e, "blocks_per_sm") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series, "occupancy", "Bandwidth vs resident blocks per SM (memory.occupancy)",
                              "resident 256-thread blocks per SM", "bandwidth (GB/s)", outdir,
                              "One curve per kernel, store hint (default or streaming st.global.cs) and working set "
                              "(DRAM-sized, and L2-resident L2/4).", logx=False, logy=True,
                              legend_outside=True))
    sa = p.rs.by_family("memory.stride")
    if sa:
        # Two sweeps share the family: strides at offset 0, offsets at stride 1 (docs/probes-memory.md).
        aligned = sorted([e for e in sa if not F.num(e, "offset") > 0], key=lambda e: F.num(e, "stride_elements"))
        shifted = sorted([e for e in sa if F.num(e, "stride_elements") == 1], key=lambda e: F.num(e, "offset"))
        unit = sa[0].unit or "value"
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
        axes[0].plot([F.num(e, "stride_elements") for e in aligned], [e.value for e in aligned], "o-", ms=4)
        axes[0].set_xscale("log", base=2)
        axes[0].set_yscale("log")
        axes[0].set_xlabel("stride (4-byte elements, log2), offset 0")
        axes[0].set_title("Effective bandwidth vs stride")
        axes[1].plot([max(F.num(e, "offset"), 0) if math.isfinite(F.num(e, "offset")) else 0 for e in shifted],
                     [e.value for e in shifted], "o-", ms=4)
        axes[1].set_xlabel("offset from alignment (bytes), stride 1")
        axes[1].set_title("Effective bandwidth vs misalignment")
        for ax in axes:
            ax.set_ylabel(f"effective bandwidth ({unit}, useful bytes)")
            ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        figs.append(Figure("stride_alignment", "Strided / misaligned access (memory.stride)",
                           "Useful bytes per second; DRAM-resident span. Left: strides at offset 0; right: byte "
                           "offsets at stride 1.", [F.provenance(sa)], _save(fig, outdir, "stride_alignment")))
    bank = (p.data.get("banks") or {}).get("by_word_bytes", [])
    if bank:
        series = [(f"{_fmt_key(b['word_bytes'])}-byte words", [r["word_stride"] for r in b["rows"]],
                   [r["slowdown_vs_stride1"] for r in b["rows"]], p.rs.by_family("memory.bank_conflicts")) for b in bank]
        figs.append(simple_xy(series, "bank_conflicts", "Shared-memory bank conflicts", "word stride (log2)",
                              "slowdown vs stride 1 (x)", outdir, "Slowdown ~ conflict degree gcd(stride, banks).", logy=True))
    pl = p.data.get("pipelines") or {}
    if pl.get("latency"):
        figs.append(bar_figure([r["op"] for r in pl["latency"]], [r["latency"] for r in pl["latency"]],
                               "pipeline_latency", "Pipeline latency per instruction",
                               f"latency ({pl['latency'][0]['unit'] or 'cycles'})", outdir,
                               "Median dependent-issue latency per op.",
                               [e for f in F.PIPELINE_LATENCY_FAMILIES for e in p.rs.by_family(f)]))
    thr = [e for e in p.rs.by_family("exec.throughput") if F.num(e, "ilp") == F.num(e, "ilp")]
    if thr:
        series = []
        for (op, warps), grp in sorted(F.group(thr, ("op", "warps_per_sm")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
            grp = sorted(grp, key=lambda e: F.num(e, "ilp"))
            lab = f"{op}" + (f", {warps:g} warps/SM" if warps else "")
            series.append((lab, [F.num(e, "ilp") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series[:20], "throughput", "Instruction throughput vs ILP", "independent chains per thread (ILP, log2)",
                              f"throughput ({thr[0].unit})", outdir, "Peak per op; the knee is the ILP needed to hide latency."))
    lb = p.data.get("launch_barrier") or {}
    if lb.get("launch"):
        figs.append(bar_figure([f"{r['measure'].replace('exec.', '')}: {r['mode']}"
                                + (f", {r['grid_blocks']:g} blocks" if r.get("grid_blocks") else "") for r in lb["launch"]],
                               [r["value"] for r in lb["launch"]], "launch", "Kernel launch cost",
                               f"per launch ({lb['launch'][0]['unit']})", outdir,
                               "Median per measure (rate, submit, gap, sync) and launch API.",
                               [e for e in p.rs.entries if e.family.startswith(F.LAUNCH_PREFIX)], logy=True))
    bar = p.rs.by_family("exec.barrier")
    if bar:
        series = []
        for (kind,), grp in sorted(F.group(bar, ("kind",)).items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks"))
            series.append((str(kind), [F.num(e, "blocks") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series, "barrier", "Barrier cost", "blocks (log2)", f"per barrier ({bar[0].unit})",
                              outdir, "Median cost of one barrier per kind.", logy=True))
    tr = p.curves.get("transfers", [])
    if tr:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
        cmap = plt.get_cmap("tab20")  # up to 20 (direction, memory, engine) curves without repeating colours
        for i, c in enumerate(tr):
            color = cmap(i % 20)
            label = "/".join(str(v) for v in c.key.values() if v is not None)
            xs = np.geomspace(c.x.min(), c.x.max(), 200)
            axes[0].plot(c.x, c.y * 1e6, "o", ms=3, color=color, label=label)
            axes[0].plot(xs, c.ab.predict(xs) * 1e6, "-", lw=0.8, color=color)
            axes[1].plot(c.x, c.x / c.y / 1e9, "o", ms=3, color=color, label=label)
            axes[1].plot(xs, xs / c.ab.predict(xs) / 1e9, "-", lw=0.8, color=color)
        for ax, yl in ((axes[0], "time per transfer (µs, log scale)"), (axes[1], "bandwidth (GB/s)")):
            _bytes_axis(ax)
            _thin_ticks(ax)
            ax.set_xlabel("transfer size (bytes, log scale)")
            ax.set_ylabel(yl)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_yscale("log")
        axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.suptitle("Host-device transfers: points measured, lines = robust α + s/β fit")
        fig.tight_layout()
        figs.append(Figure("transfers", "Host-device transfers with the α-β model",
                           "Fit per (direction, memory, engine); parameters in the transfer table.",
                           [F.provenance(c.entries) for c in tr], _save(fig, outdir, "transfers")))
    return [f for f in figs if f is not None]


def roofline_figure(points: List[KernelPoint], ceilings: List[Ceiling], outdir: str) -> Optional[Figure]:
    ceilings = [c for c in ceilings if not c.variant]  # one line per level (variants bound kernels only)
    if not points and not ceilings:
        return None
    fig, ax = plt.subplots(figsize=(11.5, 6.2))
    ais = [ai for p in points for ai in p.intensity().values()] or [0.1, 100]
    lo, hi = min(ais + [0.01]) / 4, max(ais + [100.0]) * 4
    xs = np.geomspace(lo, hi, 300)
    compute = [c for c in ceilings if not c.is_memory]
    top = max([c.value for c in compute] + [1.0])
    for c in ceilings:
        style = "-" if c.measured else "--"
        color = LEVEL_COLORS.get(c.name, "k")
        kind = "measured" if c.measured else "theoretical"
        if c.is_memory:
            ys = np.minimum(xs * c.value, top)
            ax.plot(xs, ys, style, color=color, lw=1.4 if c.measured else 1.0,
                    label=f"{c.name} {c.value:,.0f} GB/s ({kind})")
        else:
            ax.axhline(c.value, ls=style, color=color, lw=1.4 if c.measured else 1.0,
                       label=f"{c.name} {c.value:,.0f} GFLOP/s ({kind})")
    # One colour per kernel: our default filled, cuBLAS hollow, our other variants small and grey
    # (they are all in the optimality table; drawing each in its own colour hides the comparison).
    kernels = sorted({p.kernel for p in points})
    present = {k: {p.impl for p in points if p.kernel == k} for k in kernels}
    for i, kernel in enumerate(kernels):
        color = KERNEL_COLORS[i % len(KERNEL_COLORS)]
        for p in points:
            if p.kernel != kernel:
                continue
            ref, default = is_reference(p.impl), is_default(kernel, p.impl, present[kernel])
            for lvl, ai in p.intensity().items():
                if ref or default:
                    ax.plot(ai, p.gflops, LEVEL_MARKERS.get(lvl, "x"), color=color, ms=6, mfc="none" if ref else color)
                else:
                    ax.plot(ai, p.gflops, LEVEL_MARKERS.get(lvl, "x"), color="0.6", ms=3, mfc="0.6", zorder=1)
        defaults = sorted({p.impl for p in points if p.kernel == kernel and is_default(kernel, p.impl, present[kernel])
                           and not is_reference(p.impl)})
        refs = sorted({p.impl for p in points if p.kernel == kernel and is_reference(p.impl)})
        if defaults:
            ax.plot([], [], "o", color=color, label=f"{kernel} {', '.join(defaults)}")
        if refs:
            ax.plot([], [], "o", color=color, mfc="none", label=f"{kernel} {', '.join(refs)}")
    if any(not is_reference(p.impl) and not is_default(p.kernel, p.impl, present[p.kernel]) for p in points):
        ax.plot([], [], "o", color="0.6", ms=3, label="our other variants")
    for lvl, m in LEVEL_MARKERS.items():
        ax.plot([], [], m, color="gray", mfc="none", label=f"AI at {lvl}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log scale)")
    ax.set_ylabel("performance (GFLOP/s, log scale)")
    src = {p.ai_source for p in points}
    ax.set_title("Hierarchical roofline (solid: measured ceilings, dashed: theoretical)"
                 + ("" if src <= {"counters"} else "\nAI from minimal bytes where counters are absent"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    prov = [F.provenance([p.entry for p in points])] + [c.source for c in ceilings if c.source]
    return Figure("roofline", "Hierarchical roofline", "Each kernel × size appears once per memory level at its "
                  "counter-derived arithmetic intensity (triangle L1, square L2, circle DRAM); one colour per kernel, "
                  "filled = our default implementation, hollow = cuBLAS, small grey = our other variants.",
                  prov, _save(fig, outdir, "roofline"))


def _is_square(p: KernelPoint) -> bool:
    dims = {v for k, v in p.size_key if k in ("m", "n", "k") and isinstance(v, float)}
    return len(dims) == 1


def kernel_figures(points: List[KernelPoint], outdir: str, memcpy_gbps: Optional[float] = None,
                   ceilings: Sequence[Ceiling] = ()) -> List[Figure]:
    """Per kernel, a grid of panels (rows: precision; columns: uplo / trans) of the kernel's own figure
    (GB/s on minimal bytes, or GFLOP/s) vs n for the square problems; our default solid black, our
    variants solid thin, cuBLAS modes dashed. Non-square shapes are in the comparison table."""
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
        style = {}
        n_var = n_ref = 0
        for impl in impls:
            if is_reference(impl):
                style[impl] = dict(ls="--", marker="s", color=f"C{n_ref % 10}", lw=1.4, mfc="none")
                n_ref += 1
            elif is_default(kernel, impl, present):
                style[impl] = dict(ls="-", marker="o", color="black", lw=2.0)
            else:
                style[impl] = dict(ls="-", marker=".", color=f"C{(n_var + 4) % 10}", lw=0.9)
                n_var += 1
        panels = [(prec, col) for prec in precisions for col in columns]
        ncols = min(2, len(panels))
        nrows = (len(panels) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.3 * ncols + 2.6, 3.4 * nrows), squeeze=False, sharex=True)
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        fp32 = next((c.value for c in ceilings if c.name == "FP32" and c.measured), None)
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
                    ax.plot([_size_scalar(p) for p in pow2], [value(p) for p in pow2], ms=4, label=impl, **style[impl])
                if odd:
                    st = dict(style[impl], ls="none", marker="x")
                    ax.plot([_size_scalar(p) for p in odd], [value(p) for p in odd], ms=6,
                            label=None if pow2 else impl, **st)
            if metric == "GB/s" and memcpy_gbps:
                ax.axhline(memcpy_gbps, color="gray", ls=":", lw=1.2, label=f"cudaMemcpy D2D {memcpy_gbps:,.0f} GB/s")
            if metric == "GFLOP/s" and fp32:
                ax.axhline(fp32, color=LEVEL_COLORS["FP32"], ls=":", lw=1.2, label=f"FP32 peak {fp32:,.0f} GFLOP/s")
            ax.set_xscale("log", base=2)
            ax.set_ylim(bottom=0)  # ratios read honestly off the picture
            ax.grid(True, which="both", alpha=0.3)
            ax.set_title(" ".join(t for t in (f"precision={prec}" if prec else "", f"{shape_key}={col}" if col else "")
                                  if t) or kernel, fontsize=9)
            if idx + ncols >= len(panels):
                ax.set_xlabel("n (log2; x: sizes that are not powers of two)" if kernel != "sgemm"
                              else "m = n = k (log2; x: not powers of two)")
            if c == 0:
                ax.set_ylabel("GB/s on minimal bytes" if metric == "GB/s" else "GFLOP/s")
        handles, labels = {}, []
        for ax in axes.flat:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in handles:
                    handles[l] = h
                    labels.append(l)
        fig.legend([handles[l] for l in labels], labels, fontsize=8, loc="upper left", bbox_to_anchor=(0.985, 0.95))
        fig.suptitle(f"{kernel}: ours (black: default) vs cuBLAS (dashed), square problems; same run", fontsize=11)
        fig.tight_layout(rect=(0, 0, 0.985, 1))
        figs.append(Figure(f"kernel_{kernel}", f"{kernel} vs cuBLAS",
                           ("GB/s on the descriptor's minimal bytes" if metric == "GB/s" else "GFLOP/s from the descriptor's "
                            "flop count") + " over the median sample time, per precision and " + shape_key +
                           "; the dotted line is the same run's " + ("cudaMemcpy D2D" if metric == "GB/s" else
                                                                     "measured FP32 peak") +
                           ". Non-square shapes: see the table.", [F.provenance([p.entry for p in pts])],
                           _save(fig, outdir, f"kernel_{kernel}")))
    return figs


def _is_pow2(x: float) -> bool:
    return x >= 1 and abs(math.log2(x) - round(math.log2(x))) < 1e-9


def _size_scalar(p: KernelPoint) -> float:
    vals = [v for k, v in p.size_key if k in ("n", "m", "k") and isinstance(v, float)]
    if not vals:
        return 1.0
    return float(np.prod(vals)) ** (1.0 / len(vals))
