"""Figure primitives (PNG + SVG, Agg backend only): the Figure record, the style rules every figure follows,
panel grids and legends, byte axes, the latency and x-y figures most sections draw, and the writing of the
files (in worker processes within parallel_saves). Each section draws its own figures with these."""
from __future__ import annotations

import contextlib
import math
import os
import pickle
import re
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, faster SVGs
# The same figure gives the same SVG bytes: element ids from a fixed salt (else random per process),
# and no creation date (_write), so two reports of the same inputs compare equal file by file.
matplotlib.rcParams["svg.hashsalt"] = "gpuprobe"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from . import families as F  # noqa: E402

LEVEL_MARKERS = {"L1": "^", "L2": "s", "DRAM": "o"}
KERNEL_COLORS = ("black", "tab:pink", "tab:cyan", "tab:brown", "gold")  # none of the ceilings' colours
LEVEL_COLORS = {"L1": "tab:green", "L2": "tab:orange", "DRAM": "tab:blue", "FP32": "tab:red", "FP64": "tab:purple",
                "FP16 half2": "tab:brown", "shared": "tab:olive"}
# The tensor roofs (one per measured type, in the order of the ceilings): colours far from the levels' and
# FP32/FP64's above (a green INT8 roof read as L1's).
TENSOR_COLORS = ("#e377c2", "#17becf", "#8c564b", "#bcbd22", "#7f7f7f", "#000000", "#9edae5", "#f7b6d2")


def ceiling_color(name: str, tensor_names=()) -> str:
    """A ceiling's colour: its level's or compute unit's, a tensor type's by its place among `tensor_names`."""
    if name in LEVEL_COLORS:
        return LEVEL_COLORS[name]
    if name in tensor_names:
        return TENSOR_COLORS[list(tensor_names).index(name) % len(TENSOR_COLORS)]
    return LEVEL_COLORS.get(name.split()[0], "k")


@dataclass
class Figure:
    id: str
    title: str
    caption: str
    provenance: List[dict]
    files: Dict[str, str] = field(default_factory=dict)  # ext -> path
    # The reference lines it drew (reference_lines), recorded when it was saved: the report audit checks
    # each against the ceilings the tables use (gpuprobe_analysis.audit).
    references: List[dict] = field(default_factory=list)

    def __post_init__(self):
        if not self.references:
            self.references = _drawn_references.pop(self.id, [])


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
# Figure id -> the reference lines _save found in it, until the Figure record of that id takes them.
_drawn_references: Dict[str, List[dict]] = {}
# False within drawn_only(): figures are drawn and their reference lines recorded, no file is written.
_writing = True


@contextlib.contextmanager
def drawn_only():
    """Within the block a figure is drawn and closed without writing its files (their paths are still
    given): the report audit reads what each figure drew, not its pixels, in a fraction of the time."""
    global _writing
    before, _writing = _writing, False
    try:
        yield
    finally:
        _writing = before


def _no_marker(line) -> bool:
    return line.get_marker() in (None, "None", "none", "", " ")


def _constant(v) -> bool:
    return len(v) >= 2 and bool(np.all(v == v[0]))


def reference_lines(fig) -> List[dict]:
    """The reference lines drawn in a figure, per panel (its title, else the figure's): lines without
    markers that are horizontal (axhline: value = y), vertical (axvline: value = x) or rise in proportion to
    x (a roofline's memory roof: value = y / x, capped at `cap` where it turns flat), each with its legend
    label, colour and style, and the panel's text annotations (the labels _label_lines writes beside a
    line instead of a legend entry)."""
    out = []
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        panel = ax.get_title() or suptitle
        texts = [{"text": t.get_text(), "color": matplotlib.colors.to_hex(t.get_color())} for t in ax.texts]
        for line in ax.lines:
            if not _no_marker(line):
                continue
            x = np.asarray(line.get_xdata(), float)
            y = np.asarray(line.get_ydata(), float)
            ref = {"panel": panel, "label": "" if line.get_label().startswith("_") else line.get_label(),
                   "color": matplotlib.colors.to_hex(line.get_color()), "linestyle": line.get_linestyle(),
                   "texts": texts}
            if _constant(y) and not _constant(x):
                out.append(dict(ref, orientation="horizontal", value=float(y[0])))
            elif _constant(x) and not _constant(y):
                out.append(dict(ref, orientation="vertical", value=float(x[0])))
            elif len(x) >= 2 and np.all(x > 0):
                ratio = y / x
                rising = np.isclose(ratio, ratio[0], rtol=1e-9)
                if rising[:2].all():
                    flat = y[~rising]
                    out.append(dict(ref, orientation="diagonal", value=float(ratio[0]),
                                    cap=float(flat.max()) if flat.size else None))
    return out


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
    files = {ext: os.path.join(outdir, f"{fid}.{ext}") for ext in ("png", "svg")}
    _drawn_references[fid] = reference_lines(fig)
    if not _writing:
        plt.close(fig)
        return files
    os.makedirs(outdir, exist_ok=True)
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
