"""Figures (PNG + SVG) of the profile, the roofline and the kernels. Agg backend only."""
from __future__ import annotations

import contextlib
import math
import os
import pickle
import re
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, faster SVGs
# The same figure gives the same SVG bytes: element ids from a fixed salt (else random per process),
# and no creation date (_write), so two reports of the same inputs compare equal file by file.
matplotlib.rcParams["svg.hashsalt"] = "gpuprobe"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from . import families as F  # noqa: E402
from .profile import Profile, transfer_point  # noqa: E402
from .roofline import LEVELS, SERVED_SHARE, Ceiling, KernelPoint, is_default, is_reference, kernel_metric  # noqa: E402

LEVEL_MARKERS = {"L1": "^", "L2": "s", "DRAM": "o"}
KERNEL_COLORS = ("black", "tab:pink", "tab:cyan", "tab:brown", "gold")  # none of the ceilings' colours
LEVEL_COLORS = {"L1": "tab:green", "L2": "tab:orange", "DRAM": "tab:blue", "FP32": "tab:red", "FP64": "tab:purple",
                "FP16 half2": "tab:brown", "shared": "tab:olive"}


@dataclass
class Figure:
    id: str
    title: str
    caption: str
    provenance: List[dict]
    files: Dict[str, str] = field(default_factory=dict)  # ext -> path


# Rules every figure follows, so that each one reads at a glance:
#  1. No series is dropped: more than MAX_SERIES in one axes become small multiples (panels of one
#     facet, e.g. one per op or kernel; or consecutive chunks in order), all with the same axes.
#  2. Within a figure every series has its own colour AND marker (style(i)): ten colours alone repeat,
#     and markers tell curves apart where colours are close or printed grey.
#  3. Series and legends come in natural order (numbers as numbers: stride 8 before 16 before 128),
#     and legends sit outside the axes, never over the data.
#  4. Curves that coincide stay visible: hollow markers whose size falls with the series' rank in its
#     panel, so a later curve on top of an earlier one shows inside it.
#  5. Text on lines (ceilings) is spread apart where labels would collide (_label_lines).
MAX_SERIES = 10  # one per colour of COLORS: within a panel no two series share a colour
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
          "tab:olive", "tab:cyan")
MARKERS = ("o", "s", "D", "^", "v", "<", ">", "p", "h", "*")


def style(i: int) -> dict:
    """Colour and marker of series i of a figure: (colour, marker) pairs are distinct for i < 100."""
    return {"color": COLORS[i % len(COLORS)], "marker": MARKERS[(i % len(MARKERS) + i // len(COLORS)) % len(MARKERS)]}


def marker_size(rank: int) -> float:
    return max(2.5, 7.0 - 1.2 * rank)


def natural_key(v):
    """Sort key that orders numbers numerically (also inside labels: "stride=8 B" < "stride=16 B";
    byte units understood) and text alphabetically."""
    if isinstance(v, (int, float)):
        return ((0, float(v), ""),)
    if isinstance(v, (tuple, list)):
        return tuple(k for x in v for k in natural_key(x))
    out = []
    for num, unit, text in re.findall(r"(\d+(?:\.\d+)?)\s*(GiB|MiB|KiB|B\b)?|([^\d]+)", str(v)):
        if text:
            out.append((1, 0.0, text))
        else:
            out.append((0, float(num) * {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10}.get(unit, 1), ""))
    return tuple(out)


def _key_order(key: dict):
    return natural_key([v for v in key.values() if v is not None])


def panels_of(items: list, facet=None, max_per: int = MAX_SERIES) -> List[tuple]:
    """(title, items) per panel: one panel per facet value (natural order), any panel holding more than
    max_per items split into consecutive chunks; without a facet, chunks of the items in order."""
    groups: Dict[str, list] = {}
    for it in items:
        groups.setdefault(facet(it) if facet else "", []).append(it)
    out = []
    for title in sorted(groups, key=natural_key):
        grp = groups[title]
        n = max(1, math.ceil(len(grp) / max_per))
        size = math.ceil(len(grp) / n)
        for k in range(n):
            out.append((title + (f" ({k + 1}/{n})" if n > 1 else ""), grp[k * size:(k + 1) * size]))
    return out


def grid(n: int, panel=(4.8, 3.4), ncols: Optional[int] = None, legend_width: float = 2.6, **kw):
    """A figure of n panels (row-major), unused cells hidden; room on the right for one legend."""
    ncols = ncols or (1 if n == 1 else 2 if n <= 4 else 3)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols + legend_width, panel[1] * nrows + 0.6),
                             squeeze=False, **kw)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def finish_panels(fig, axes, title: str, xlabel: str, ylabel: str):
    """Axis labels on the outer panels only, the title above every panel title, one legend outside."""
    for i, ax in enumerate(axes):
        spec = ax.get_subplotspec()
        bottom = i + spec.get_gridspec().ncols >= len(axes)  # no panel below it (hidden cells do not count)
        ax.set_xlabel(xlabel if bottom else "")
        ax.set_ylabel(ylabel if spec.is_first_col() else "")
        if bottom:
            ax.xaxis.set_tick_params(labelbottom=True)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    figure_legend(fig, axes)


def figure_legend(fig, axes, ncol: int = 1, fontsize: float = 7.5):
    """One legend for all panels, outside them on the right, in the order the series were drawn."""
    handles: Dict[str, object] = {}
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l and not l.startswith("_") and l not in handles:
                handles[l] = h
    if handles:
        fig.legend(list(handles.values()), list(handles), fontsize=fontsize, loc="upper left",
                   bbox_to_anchor=(1.0, 0.98), borderaxespad=0, ncol=ncol, frameon=False)


def _label_lines(ax, items, min_gap: float = 0.045, logy: bool = True):
    """Labels for horizontal lines [(y, text, colour)] at the right end inside the axes, moved apart
    vertically (in axes fraction) where two would overlap; a moved label keeps a thin leader line."""
    if not items:
        return
    lo, hi = ax.get_ylim()
    f = (lambda v: (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))) if logy else \
        (lambda v: (v - lo) / (hi - lo))
    placed = sorted(((f(y), y, text, color) for y, text, color in items if y > 0 or not logy), key=lambda t: t[0])
    pos = [t[0] for t in placed]
    for i in range(1, len(pos)):  # push up from the bottom, then back down from the top
        pos[i] = max(pos[i], pos[i - 1] + min_gap)
    if pos and pos[-1] > 0.98:
        pos[-1] = 0.98
        for i in range(len(pos) - 2, -1, -1):
            pos[i] = min(pos[i], pos[i + 1] - min_gap)
    for (fy, _y, text, color), py in zip(placed, pos):
        ax.annotate(text, xy=(1.0, fy), xycoords="axes fraction", xytext=(-4, (py - fy) * ax.bbox.height + 2),
                    textcoords="offset pixels", ha="right", va="bottom", fontsize=7, color=color,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8),
                    arrowprops=dict(arrowstyle="-", color=color, lw=0.5) if abs(py - fy) > 1e-3 else None)


def _bytes_formatter(v, _pos=None):
    """Bytes in binary units with 4 significant figures at most (a label, not a record: 254 KiB, not
    254.038 KiB)."""
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= div:
            return f"{v / div:.4g} {unit}"
    return f"{v:.4g} B"


# Inside parallel_saves(): the pool that writes the figures, and what it has yet to finish.
_saver: Optional[ProcessPoolExecutor] = None
_pending: List[Future] = []


@contextlib.contextmanager
def parallel_saves(workers: Optional[int] = None):
    """Within the block, figures are written (PNG and SVG) by worker processes while the next ones are
    drawn: writing them one after the other was most of a report's time. When the block ends every file
    exists, and a worker's error is raised there. One core: written in place, as outside the block."""
    global _saver, _pending
    n = workers if workers is not None else min(8, os.cpu_count() or 1)
    if n < 2 or _saver is not None:
        yield
        return
    _saver = ProcessPoolExecutor(max_workers=n)
    try:
        yield
        for done in _pending:
            done.result()
    finally:
        pool, _saver, _pending = _saver, None, []
        pool.shutdown(wait=True)


def _save(fig, outdir: str, fid: str) -> Dict[str, str]:
    os.makedirs(outdir, exist_ok=True)
    files = {ext: os.path.join(outdir, f"{fid}.{ext}") for ext in ("png", "svg")}
    blob = None
    if _saver is not None:
        try:
            blob = pickle.dumps(fig)
        except (pickle.PicklingError, AttributeError, TypeError):
            blob = None  # an artist that does not pickle: this figure is written here
    if blob is not None:
        _pending.append(_saver.submit(_write_pickled, blob, files))
    else:
        _write(fig, files)
    plt.close(fig)
    return files


def _write(fig, files: Dict[str, str]) -> None:
    for ext, path in files.items():
        fig.savefig(path, dpi=110 if ext == "png" else None, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else None)
    _palette_png(files["png"])


def _write_pickled(blob: bytes, files: Dict[str, str]) -> None:
    fig = pickle.loads(blob)
    _write(fig, files)
    plt.close(fig)


def _palette_png(path: str):
    """Line plots use a few dozen colours: a 256-colour palette PNG looks the same at about a third of
    the bytes, and the report embeds every PNG."""
    from PIL import Image  # matplotlib's own dependency
    with Image.open(path) as im:
        pal = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    pal.save(path, optimize=True)


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


def latency_figure(curves, fid, title, outdir, caption, chunk_label=None) -> Optional[Figure]:
    """Latency vs footprint, one series per curve (natural order of its parameters); more than
    MAX_SERIES curves become panels of consecutive curves on the same axes. Capacities are labelled
    for the first curve only (the others: dotted lines in their colour)."""
    if not curves:
        return None
    curves = sorted(curves, key=lambda c: _key_order(c.key))
    panels = panels_of(list(enumerate(curves)))
    # Parameters every curve shares go to the title, not into each legend label.
    same = {k: v for k, v in curves[0].key.items() if all(c.key.get(k) == v for c in curves)} if len(curves) > 1 else {}
    plot_title = title
    if same:
        plot_title = f"{title}: " + ", ".join(f"{k}={_fmt_key(v)}" for k, v in same.items() if v is not None)
    if len(panels) == 1:
        fig, axes = plt.subplots(figsize=(11, 5.4))
        axes = [axes]
    else:
        fig, axes = grid(len(panels), panel=(5.2, 3.6), ncols=min(3, len(panels)), sharey=True, sharex=True)
    for ax, (_, items) in zip(axes, panels):
        for rank, (i, c) in enumerate(items):
            st = style(i)
            label = ", ".join(f"{k}={_fmt_key(v)}" for k, v in c.key.items() if v is not None and k not in same)
            ax.plot(c.x, c.y, ls="none", ms=marker_size(rank), label=label, fillstyle="full" if i == 0 else "none",
                    mew=0.8, **st)
            if c.fit is not None and c.fit.model != "flat":
                xs = np.geomspace(c.x.min(), c.x.max(), 400)
                ax.plot(xs, c.fit.predict(xs), "-", lw=1, color=st["color"], alpha=0.7)
                for k, knee in enumerate(c.fit.knees):
                    ax.axvline(knee, color=st["color"], ls=":", lw=0.8)
                    if i == 0:
                        ax.annotate(f"{c.names[k]}: {_bytes_formatter(knee)}", (knee, c.fit.levels[k]),
                                    textcoords="offset points", xytext=(3, 4), fontsize=7, color=st["color"])
        if len(panels) > 1 and chunk_label:
            ax.set_title(f"{chunk_label} {_fmt_key(items[0][1].key.get(chunk_label))} – "
                         f"{_fmt_key(items[-1][1].key.get(chunk_label))}", fontsize=9)
        _bytes_axis(ax)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    if len(panels) > 1:
        finish_panels(fig, axes, plot_title, "footprint (bytes, log scale)", curves[0].ylabel + " (log scale)")
    else:
        axes[0].set_xlabel("footprint (bytes, log scale)")
        axes[0].set_ylabel(curves[0].ylabel + " (log scale)")
        axes[0].set_title(plot_title)
        axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
    return Figure(fid, title, caption, [F.provenance(c.entries) for c in curves], _save(fig, outdir, fid))


def _fmt_key(v):
    if isinstance(v, float):
        return _bytes_formatter(v) if v >= 1024 else f"{v:.4g}"
    return str(v)


def simple_xy(series, fid, title, xlabel, ylabel, outdir, caption, logx=True, logy=False, bytes_x=False, kind="-o",
              legend_outside=False, facet=None):
    """series: list of (label, x, y, entries), drawn in natural order of their labels. facet(label) ->
    panel title puts each series in its facet's panel (labels then read "facet: legend text"); more than MAX_SERIES series in one panel (with
    or without facets) become panels of consecutive series (figure rule 1)."""
    series = sorted([s for s in series if len(s[1])], key=lambda s: natural_key(s[0]))
    if not series:
        return None
    facet_of = (lambda it: facet(it[1][0])) if facet else None
    panels = panels_of(list(enumerate(series)), facet_of)
    ls = "-" if "-" in kind else "none"
    if len(panels) == 1:
        fig, ax = plt.subplots(figsize=(10.5, 4.8) if legend_outside or len(series) > 3 else (8, 4.6))
        axes = [ax]
    else:
        fig, axes = grid(len(panels), panel=(4.6, 3.3), sharex=True, sharey=True)
    # With facets a legend label ("8 warps/SM") recurs in several panels: it keeps one style throughout.
    shown = (lambda label: label.split(": ", 1)[1] if ": " in label else label) if facet else (lambda label: label)
    legend_order = list(dict.fromkeys(shown(s[0]) for s in series))
    for ax, (ptitle, items) in zip(axes, panels):
        for rank, (_, (label, x, y, _e)) in enumerate(items):
            ax.plot(x, y, ls=ls, lw=1.0, ms=marker_size(rank), fillstyle="none", mew=1.0, label=shown(label),
                    **style(legend_order.index(shown(label))))
        if bytes_x:
            _bytes_axis(ax)
        elif logx:
            ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        if len(panels) > 1:
            ax.set_title(ptitle, fontsize=9)
    if len(panels) > 1:
        finish_panels(fig, axes, title, xlabel, ylabel)
    else:
        axes[0].set_xlabel(xlabel)
        axes[0].set_ylabel(ylabel)
        axes[0].set_title(title)
        if len(series) > 1 or series[0][0]:
            axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
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


def _ceilings_for(kernel: str, ceilings: dict) -> dict:
    """The bandwidth ceilings a memory.bandwidth kernel's panel shows: those of its own kind ("L2 copy"
    for copy; the plain level names for the read kernels). Shared memory is not on these curves."""
    kind = kernel if kernel in ("copy", "write", "triad") else None
    out = {}
    for name, c in ceilings.items():
        words = name.split()
        if words[0] == "shared":
            continue
        if (len(words) > 1 and words[-1] == kind) or (len(words) == 1 and kind is None):
            out[name] = c
    return out


def bandwidth_figure(bw, p: Profile, outdir: str) -> Figure:
    """One panel per kernel (its vector widths as curves) with that kernel's ceilings and the level
    capacities: 17 curves and 9 ceiling labels in one axes hid each other."""
    panels = panels_of(list(bw), facet=lambda c: f"kernel={c.key.get('kernel')}")
    fig, axes = grid(len(panels), panel=(4.8, 3.5), sharex=True, sharey=True)
    caps = p.capacities()
    ceilings = p.bandwidth.ceilings if p.bandwidth else {}
    legend_order = []
    for c in sorted(bw, key=lambda c: _key_order(c.key)):
        lab = ", ".join(f"{k}={_fmt_key(v)}" for k, v in c.key.items() if v is not None and k != "kernel")
        if lab not in legend_order:
            legend_order.append(lab)
    for ax, (title, items) in zip(axes, panels):
        items = sorted(items, key=lambda c: _key_order(c.key))
        for rank, c in enumerate(items):
            lab = ", ".join(f"{k}={_fmt_key(v)}" for k, v in c.key.items() if v is not None and k != "kernel")
            ax.plot(c.x, c.y, "-", lw=0.9, ms=marker_size(rank), fillstyle="none", label=lab,
                    **style(legend_order.index(lab)))
        # Level edges: the capacities detected by the latency hierarchy (what the ceilings use).
        for key, text in (("l1_bytes", "L1"), ("l2_near_partition_bytes", "L2 near"), ("l2_bytes", "L2")):
            edge = getattr(caps, key)
            if isinstance(edge, (int, float)):
                ax.axvline(edge, color="0.4", ls=":", lw=1.0)
                ax.annotate(text, (edge, 0.02), xycoords=("data", "axes fraction"), fontsize=7, rotation=90,
                            ha="right", va="bottom", color="0.3")
        ax.set_yscale("log")
        _bytes_axis(ax)
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    for ax, (title, items) in zip(axes, panels):  # after every panel is drawn: the shared y range is final
        mine = _ceilings_for(str(items[0].key.get("kernel")), ceilings)
        for name, cl in mine.items():
            ax.axhline(cl.gbps, color=LEVEL_COLORS.get(name.split()[0], "k"), ls="--", lw=0.9)
        _label_lines(ax, [(cl.gbps, f"{name} {cl.gbps:,.0f}", LEVEL_COLORS.get(name.split()[0], "k"))
                          for name, cl in mine.items()])
    finish_panels(fig, axes, "Bandwidth vs working set (memory.bandwidth), one panel per kernel",
                  "working set, all arrays (bytes, log scale)", "bandwidth (GB/s, log scale)")
    return Figure("bandwidth", "Bandwidth vs working set",
                  "One panel per kernel. Dotted: L1/L2 capacities from the latency hierarchy (points are assigned "
                  "to levels by footprint); dashed: the ceilings of that kernel's kind used by the roofline (GB/s).",
                  [F.provenance(c.entries) for c in bw], _save(fig, outdir, "bandwidth"))


def transfers_figure(tr: list, outdir: str) -> Figure:
    """Small multiples: one column per direction, time per transfer above and bandwidth below; within
    a column one colour and marker per (memory, engine), the same in every column: 15 curves in one
    axes in near-identical colours could not be told apart."""
    directions = sorted({str(c.key.get("direction")) for c in tr}, key=lambda d: ("h2d", "d2h", "bidir").index(d)
                        if d in ("h2d", "d2h", "bidir") else 9)
    label = lambda c: "/".join(str(v) for k, v in c.key.items() if v is not None and k != "direction")  # noqa: E731
    labels = sorted({label(c) for c in tr}, key=natural_key)
    fig, axes = plt.subplots(2, len(directions), figsize=(4.6 * len(directions) + 2.6, 7.4), squeeze=False,
                             sharex=True, sharey="row")
    for j, d in enumerate(directions):
        top, bottom = axes[0][j], axes[1][j]
        for c in sorted((c for c in tr if str(c.key.get("direction")) == d), key=lambda c: labels.index(label(c))):
            st = style(labels.index(label(c)))
            xs = np.geomspace(c.x.min(), c.x.max(), 200)
            top.plot(c.x, c.y * 1e6, ls="none", ms=4, fillstyle="none", label=label(c), **st)
            top.plot(xs, c.ab.predict(xs) * 1e6, "-", lw=0.8, color=st["color"])
            bottom.plot(c.x, c.x / c.y / 1e9, ls="none", ms=4, fillstyle="none", label=label(c), **st)
            bottom.plot(xs, xs / c.ab.predict(xs) / 1e9, "-", lw=0.8, color=st["color"])
        top.set_title(d.upper() if d in ("h2d", "d2h") else d, fontsize=10)
        top.set_yscale("log")
        for ax in (top, bottom):
            _bytes_axis(ax)
            _thin_ticks(ax)
            ax.grid(True, which="both", alpha=0.3)
        bottom.set_xlabel("transfer size (bytes, log scale)")
    axes[0][0].set_ylabel("time per transfer (µs, log scale)")
    axes[1][0].set_ylabel("bandwidth (GB/s)")
    fig.suptitle("Host-device transfers: points measured, lines = robust α + s/β fit; one column per direction")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    figure_legend(fig, list(axes.flat))
    return Figure("transfers", "Host-device transfers with the α-β model",
                  "One column per direction; colour and marker = host memory / engine, the same in every column. "
                  "Fit per (direction, memory, engine); parameters in the transfer table.",
                  [F.provenance(c.entries) for c in tr], _save(fig, outdir, "transfers"))


HATCHES = ("", "//", "..", "xx", "\\\\", "oo")


def launch_figure(rows: list, entries: list, outdir: str) -> Figure:  # rows: profile_results.LaunchCost
    """Launch costs as grouped bars: one panel per measure (gap, rate, submit, sync), one group per
    launch API, one bar per grid size (colour and hatch, in size order), a linear axis per panel with
    each bar's value on it: a row of 72 same-coloured bars named by 72 rotated labels could not be
    compared."""
    measures = sorted({r.measure for r in rows}, key=natural_key)
    grids = sorted({r.grid_blocks for r in rows}, key=lambda g: -1 if g is None else g)
    # Linear, each panel its own y range from 0 (gap, rate, submit and sync differ by 10x and more): on a
    # shared log axis a 30 % difference between two APIs was one bar's width of nothing.
    fig, axes = grid(len(measures), panel=(6.2, 3.4), ncols=2)
    unit = rows[0].unit or ""
    for ax, m in zip(axes, measures):
        mine = [r for r in rows if r.measure == m]
        modes = sorted({r.mode for r in mine}, key=natural_key)
        width = 0.8 / max(1, len(grids))
        for j, g in enumerate(grids):
            xs, ys = [], []
            for k, mode in enumerate(modes):
                r = next((r for r in mine if r.mode == mode and r.grid_blocks == g), None)
                if r is not None:
                    xs.append(k + (j - (len(grids) - 1) / 2) * width)
                    ys.append(r.value)
            label = "grid not recorded" if g is None else f"{g:g} blocks"
            bars = ax.bar(xs, ys, width=width, color=COLORS[j % len(COLORS)], hatch=HATCHES[j % len(HATCHES)],
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
    figure_legend(fig, axes)
    return Figure("launch", "Kernel launch cost",
                  "Median per measure (panel), launch API (group) and grid size (bar); each measure's method is in "
                  "the launch table.", [F.provenance(entries)], _save(fig, outdir, "launch"))


def profile_figures(p: Profile, outdir: str) -> List[Figure]:
    figs: List[Figure] = []
    lat = p.curves.get("latency", [])
    random_curves = [c for c in lat if c.key.get("pattern") == "random"]
    stride_curves = [c for c in lat if c.key.get("pattern") != "random"]
    figs.append(latency_figure(random_curves, "latency_random", "Load latency vs footprint (random chains)", outdir,
                               "Points: median cycles per dependent load; line: fitted level model; dotted: detected "
                               "capacities (change-point detection, see docs/analysis.md)."))
    figs.append(latency_figure(stride_curves, "latency_stride", "Load latency vs footprint (fixed-stride chains)", outdir,
                               "Saavedra-style fixed-stride chains, one curve per stride, panels in stride order.",
                               chunk_label="stride"))
    fitted = {r.footprint_bytes for r in p.granularity.per_footprint} if p.granularity else set()
    g = [c for c in p.curves.get("granularity", []) if c.key["footprint"] in fitted]
    if len(g) > 8:  # a readable subset, spread over the footprints
        g = [g[int(round(i))] for i in np.linspace(0, len(g) - 1, 8)]
    figs.append(simple_xy([(f"footprint={_bytes_formatter(c.key['footprint'])}", c.x, c.y, c.entries) for c in g],
                          "granularity", "Latency vs stride (line / sector size)", "stride (bytes, log scale)",
                          "cycles per load", outdir, "Latency saturates at the unit a miss brings in.", bytes_x=True))
    figs.append(latency_figure(p.curves.get("tlb", []), "tlb", "TLB: latency vs footprint per stride", outdir,
                               "Knees: TLB reach per level; the stride where latency saturates is the page size.",
                               chunk_label="stride"))
    bw = p.curves.get("bandwidth_all") or p.curves.get("bandwidth", [])
    if bw:
        figs.append(bandwidth_figure(bw, p, outdir))
    occ = p.rs.by_family("memory.occupancy")
    if occ:
        series = []
        groups = {}
        for e in occ:  # the store hint is a text tag (default|cs)
            groups.setdefault((F.param(e, "kernel"), F.text(e, "store") or "default", F.param(e, "footprint")), []).append(e)
        for key, grp in sorted(groups.items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks_per_sm"))
            k, st, fp = key
            series.append((f"kernel={k}: store={st or 'default'}, working set {_bytes_formatter(fp) if fp else '?'}",
                           [F.num(e, "blocks_per_sm") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series, "occupancy", "Bandwidth vs resident blocks per SM (memory.occupancy)",
                              "resident 256-thread blocks per SM", "bandwidth (GB/s)", outdir,
                              "One panel per kernel; one curve per store hint (default or streaming st.global.cs) "
                              "and working set (DRAM-sized, and L2-resident L2/4).", logx=False, logy=True,
                              legend_outside=True, facet=lambda label: label.split(": ")[0]))
    sa = p.rs.by_family("memory.stride")
    if sa:
        # Two sweeps share the family: strides at offset 0, offsets at stride 1 (docs/probes-memory.md).
        aligned = sorted([e for e in sa if not F.num(e, "offset") > 0], key=lambda e: F.num(e, "stride"))
        shifted = sorted([e for e in sa if F.num(e, "stride") == 1], key=lambda e: F.num(e, "offset"))
        unit = sa[0].unit or "value"
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
        axes[0].plot([F.num(e, "stride") for e in aligned], [e.value for e in aligned], "o-", ms=4)
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
    bank = p.banks.by_word_bytes if p.banks else []
    if bank:
        series = [(f"{_fmt_key(b.word_bytes)}-byte words", [r.word_stride for r in b.rows],
                   [r.slowdown_vs_stride1 for r in b.rows], p.rs.by_family("memory.bank_conflicts")) for b in bank]
        figs.append(simple_xy(series, "bank_conflicts", F.title(p.rs, "memory.bank_conflicts", "Shared-memory bank conflicts"),
                              "word stride (log2)",
                              "slowdown vs stride 1 (x)", outdir, "Slowdown ~ conflict degree gcd(stride, banks).", logy=True))
    lat = p.pipelines.latency if p.pipelines else []
    if lat:
        figs.append(bar_figure([r.op for r in lat], [r.latency for r in lat],
                               "pipeline_latency", "Pipeline latency per instruction",
                               f"latency ({lat[0].unit or 'cycles'})", outdir,
                               "Median dependent-issue latency per op.",
                               [e for f in F.PIPELINE_LATENCY_FAMILIES for e in p.rs.by_family(f)]))
    thr = [e for e in p.rs.by_family("exec.throughput") if F.num(e, "ilp") == F.num(e, "ilp")]
    if thr:
        series = []
        for (op, warps), grp in sorted(F.group(thr, ("op", "warps_per_sm")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
            grp = sorted(grp, key=lambda e: F.num(e, "ilp"))
            lab = f"op={op}: " + (f"{warps:g} warps/SM" if warps else "warps/SM not recorded")
            series.append((lab, [F.num(e, "ilp") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series, "throughput", "Instruction throughput vs ILP",
                              "independent chains per thread (ILP, log2)", f"throughput ({thr[0].unit})", outdir,
                              "One panel per op, one curve per warps/SM; the knee is the ILP needed to hide latency.",
                              facet=lambda label: label.split(": ")[0]))
    if p.launch_barrier and p.launch_barrier.launch:
        figs.append(launch_figure(p.launch_barrier.launch, [e for e in p.rs.entries if e.family.startswith(F.LAUNCH_PREFIX)],
                                  outdir))
    bar = p.rs.by_family("exec.barrier")
    if bar:
        series = []
        for (kind,), grp in sorted(F.group(bar, ("barrier",)).items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks"))
            series.append((str(kind), [F.num(e, "blocks") for e in grp], [e.value for e in grp], grp))
        figs.append(simple_xy(series, "barrier", F.title(p.rs, "exec.barrier", "Barrier cost"), "blocks (log2)", f"per barrier ({bar[0].unit})",
                              outdir, "Median cost of one barrier per kind.", logy=True))
    tr = p.curves.get("transfers", [])
    if tr:
        figs.append(transfers_figure(tr, outdir))
    return [f for f in figs if f is not None]


# A theoretical ceiling within this factor of the measured one of the same level is not drawn as a
# second, nearly coincident line: the measured line's label gives both.
SAME_LINE = 0.10


def _roof_lines(ceilings: List[Ceiling]) -> List[tuple]:
    """(ceiling, label, linestyle) per line to draw: measured ones solid, a theoretical one dashed only
    when it differs from the measured one by more than SAME_LINE; labels carry the % of theoretical."""
    measured = {c.name: c for c in ceilings if c.measured}
    out = []
    unit = lambda c: "GB/s" if c.is_memory else "GFLOP/s"  # noqa: E731
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


def roofline_figure(points: List[KernelPoint], ceilings: List[Ceiling], outdir: str) -> Optional[Figure]:
    """One panel per kernel on the same axes (one panel held 946 points between 0.1 and 1 FLOP/B).
    In each: the ceilings, and our default (filled) and cuBLAS (hollow) at every size, coloured and
    shaped by the level whose bytes give the intensity, only at levels that served the data
    (SERVED_SHARE). Our other variants are in the optimality appendix."""
    ceilings = [c for c in ceilings if not c.variant]  # one line per level (variants bound kernels only)
    if not points and not ceilings:
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
    compute = [c for c in ceilings if not c.is_memory]
    top = max([c.value for c in compute] + [max([p.gflops for p in shown] or [1.0])])
    xs = np.geomspace(lo, hi, 300)
    fig, axes = grid(max(1, len(kernels)), panel=(5.4, 4.0), ncols=min(2, max(1, len(kernels))), legend_width=3.6,
                     sharey=True, sharex=True)
    lines = _roof_lines(ceilings)
    for ax, kernel in zip(axes, kernels or [""]):
        for c, label, ls in lines:
            color = LEVEL_COLORS.get(c.name, "k")
            if c.is_memory:
                ax.plot(xs, np.minimum(xs * c.value, top), ls, color=color, lw=1.3 if ls == "-" else 0.9, label=label)
            else:
                ax.axhline(c.value, ls=ls, color=color, lw=1.3 if ls == "-" else 0.9, label=label)
        for p in shown:
            if p.kernel != kernel:
                continue
            ref = is_reference(p.impl)
            for lvl, ai in served(p).items():
                color = LEVEL_COLORS.get(lvl, "k")
                ax.plot(ai, p.gflops, LEVEL_MARKERS.get(lvl, "x"), color=color, ms=5.5, mew=1.0,
                        mfc="none" if ref else color, alpha=0.85)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.grid(True, which="both", alpha=0.3)
        impls = sorted({p.impl for p in shown if p.kernel == kernel}, key=lambda i: (is_reference(i), i))
        ax.set_title(f"{kernel}: " + ", ".join(impls), fontsize=9)
    for lvl, m in LEVEL_MARKERS.items():
        axes[0].plot([], [], m, color=LEVEL_COLORS.get(lvl, "k"), label=f"intensity at {lvl}")
    axes[0].plot([], [], "o", color="0.3", label="our default (filled)")
    axes[0].plot([], [], "o", color="0.3", mfc="none", label="cuBLAS (hollow)")
    src = {p.ai_source for p in points}
    finish_panels(fig, axes, "Hierarchical roofline, one panel per kernel (solid: measured ceilings, dashed: theoretical)"
                  + ("" if src <= {"counters"} else "; AI from minimal bytes where counters are absent"),
                  "arithmetic intensity (FLOP/byte, log scale)", "performance (GFLOP/s, log scale)")
    prov = [F.provenance([p.entry for p in points])] + [c.source for c in ceilings if c.source]
    return Figure("roofline", "Hierarchical roofline", "One panel per kernel: each size of our default "
                  "implementation (filled) and of cuBLAS (hollow) at its counter-derived arithmetic intensity for "
                  f"each level that served at least {SERVED_SHARE:.0%} of its minimal bytes (triangle L1, square L2, "
                  "circle DRAM; colour = the level's ceiling). A theoretical ceiling within "
                  f"{SAME_LINE:.0%} of the measured one is given in the measured line's label instead of a second "
                  "line. Our other variants: optimality appendix.", prov, _save(fig, outdir, "roofline"))


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
        impl_style = {}
        n_var = n_ref = 0
        for impl in impls:
            # figure rule 2: every implementation its own colour and marker (ours black, cuBLAS dashed hollow)
            if is_reference(impl):
                impl_style[impl] = dict(ls="--", lw=1.4, mfc="none", **style(n_ref + n_var))
                n_ref += 1
            elif is_default(kernel, impl, present):
                impl_style[impl] = dict(ls="-", marker="o", color="black", lw=2.0)
            else:
                impl_style[impl] = dict(ls="-", lw=0.9, mfc="none", **style(n_ref + n_var))
                n_var += 1
        panels = [(prec, col) for prec in precisions for col in columns]
        ncols = min(2, len(panels))
        nrows = (len(panels) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.3 * ncols + 2.6, 3.4 * nrows), squeeze=False, sharex=True)
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        fp32 = next((c.value for c in ceilings if c.name == "FP32" and c.measured), None)
        # The level a DRAM-sized problem is held to: its theoretical peak where known, else the measured one.
        dram_peak = next((c for c in sorted(ceilings, key=lambda c: c.measured) if c.name == "DRAM"), None)
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
            if metric == "GB/s" and memcpy_gbps:
                ax.axhline(memcpy_gbps, color="gray", ls=":", lw=1.2, label=f"cudaMemcpy D2D {memcpy_gbps:,.0f} GB/s")
            if metric == "GB/s" and dram_peak:
                _mark_served_above(ax, [p for p in pts if facet(p, "precision") == prec and facet(p, shape_key) == col],
                                   dram_peak, value)
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
        fig.legend([handles[l] for l in labels], labels, fontsize=8, loc="upper left", bbox_to_anchor=(0.985, 0.95),
                   frameon=False)
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


def _mark_served_above(ax, pts: List[KernelPoint], ceiling: Ceiling, value):
    """Points above a level's ceiling were served by a closer level: the DRAM peak is drawn, every
    problem timed L2-resident gets a ring in L2's colour, and those above the DRAM line are labelled
    with the level that served them (a reader would otherwise see GB/s beyond the DRAM peak)."""
    kind = "theoretical" if not ceiling.measured else "measured"
    ax.axhline(ceiling.value, color=LEVEL_COLORS["DRAM"], ls="--", lw=1.0,
               label=f"DRAM peak {ceiling.value:,.0f} GB/s ({kind})")
    res = [p for p in pts if p.l2 == "resident"]
    if not res:
        return
    ax.plot([_size_scalar(p) for p in res], [value(p) for p in res], "o", ms=11, mfc="none",
            mec=LEVEL_COLORS["L2"], mew=1.2, alpha=0.6, zorder=1, label="timed L2-resident (ring)")
    above = {}
    for p in res:
        if value(p) > ceiling.value:
            x = _size_scalar(p)
            above[x] = max(above.get(x, 0.0), value(p))
    if above:  # headroom so the labels stay inside the axes
        ax.set_ylim(top=max(ax.get_ylim()[1], 1.12 * max(above.values())))
    for x, y in above.items():  # one label per size, at its highest point
        ax.annotate("L2", (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7,
                    color=LEVEL_COLORS["L2"], fontweight="bold")


def _is_pow2(x: float) -> bool:
    return x >= 1 and abs(math.log2(x) - round(math.log2(x))) < 1e-9


def _size_scalar(p: KernelPoint) -> float:
    vals = [v for k, v in p.size_key if k in ("n", "m", "k") and isinstance(v, float)]
    if not vals:
        return 1.0
    return float(np.prod(vals)) ** (1.0 / len(vals))
