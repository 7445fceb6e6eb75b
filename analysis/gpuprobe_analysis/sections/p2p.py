"""Peer-to-peer between GPUs (families transfer.p2p, transfer.p2p_latency, transfer.p2p_chase;
docs/probes.md#peer-to-peer): the src x dst matrix per engine, form and direction, the pairs below a
fraction of the best pair of their matrix, the latency matrices, their heatmaps and the report
section. Pure functions over the result entries; nothing here knows one machine."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import families as F
from . import AnalysisInputs, FamilySection, register
from ..plots import Figure, _save  # plots selects the Agg backend before pyplot is imported
from ..results import Entry, ResultSet

import matplotlib.pyplot as plt  # noqa: E402  (after plots: Agg)

FAMILIES = ("transfer.p2p", "transfer.p2p_latency", "transfer.p2p_chase")
BANDWIDTH_FAMILY, COPY_LATENCY_FAMILY, CHASE_FAMILY = FAMILIES

# A pair below this fraction of the best pair of its matrix is flagged: on a uniform fabric
# (NVSwitch, or equal links between every pair) pairs agree within a few percent, so a pair 10 %
# down is a slower or narrower link, traffic through a host bridge, or a degraded link.
WEAK_FRACTION = 0.90


ENGINE_WORDS = {"ce": "copy engine", "sm": "SM copy kernel"}
FORM_WORDS = {"write": "write (issued by the source)", "read": "read (issued by the destination)"}
DIRECTION_WORDS = {"uni": "one way", "bidir": "both ways at once"}
# Order of the matrices in tables and panels.
_ORDER = {"ce": 0, "sm": 1, "write": 0, "read": 1, "uni": 0, "bidir": 1, None: 2}


@dataclass
class Cell:
    """One ordered pair of one matrix: the median over its entries (one per result file, usually)."""
    src: int
    dst: int
    value: float
    cv: Optional[float]
    entries: List[str]
    cycles: Optional[float] = None  # latency matrices: clock64 cycles per op, where recorded


@dataclass
class Matrix:
    """src x dst values of one kind of measurement. Bandwidth matrices (kind "bandwidth") carry the
    best pair and the pairs below WEAK_FRACTION of it."""
    kind: str  # "bandwidth" or "latency"
    name: str  # what it holds, in words
    key: Dict[str, Optional[str]]  # engine, form, direction (bandwidth); measure (latency)
    unit: str
    method: str
    devices: List[int]
    cells: Dict[Tuple[int, int], Cell]
    source: dict  # families.provenance of its entries
    best: Optional[Cell] = None
    weak: List[Cell] = field(default_factory=list)

    def value(self, src: int, dst: int) -> Optional[float]:
        c = self.cells.get((src, dst))
        return c.value if c else None

    def fraction_of_best(self, cell: Cell) -> Optional[float]:
        return cell.value / self.best.value if self.best and self.best.value > 0 else None


@dataclass
class P2pAnalysis:
    devices: List[int]
    bandwidth: List[Matrix]
    latency: List[Matrix]
    weak_fraction: float = WEAK_FRACTION

    @property
    def weak(self) -> List[Tuple[Matrix, Cell]]:
        return [(m, c) for m in self.bandwidth for c in m.weak]


def _device(e: Entry, which: str) -> Optional[int]:
    v = e.num(which)  # the axis src or dst: the counter of that name, else the entry name's
    return int(v) if math.isfinite(v) and v >= 0 and v == int(v) else None


def _cells(entries: Sequence[Entry], with_cycles: bool = False) -> Dict[Tuple[int, int], Cell]:
    by_pair: Dict[Tuple[int, int], List[Entry]] = {}
    for e in entries:
        src, dst = _device(e, "src"), _device(e, "dst")
        if src is None or dst is None or src == dst or not (math.isfinite(e.value) and e.value > 0):
            continue
        by_pair.setdefault((src, dst), []).append(e)
    cells = {}
    for pair, grp in sorted(by_pair.items()):
        cvs = [e.cv for e in grp if math.isfinite(e.cv)]
        cycles = [e.num("cycles_per_op") for e in grp]
        cycles = [c for c in cycles if math.isfinite(c) and c > 0]
        cells[pair] = Cell(pair[0], pair[1], float(np.median([e.value for e in grp])),
                           float(np.median(cvs)) if cvs else None, [e.name for e in grp],
                           float(np.median(cycles)) if with_cycles and cycles else None)
    return cells


def weak_pairs(cells: Dict[Tuple[int, int], Cell], fraction: float = WEAK_FRACTION):
    """(best cell, cells below `fraction` x best, weakest first) of a bandwidth matrix."""
    if not cells:
        return None, []
    best = max(cells.values(), key=lambda c: c.value)
    weak = sorted((c for c in cells.values() if c.value < fraction * best.value), key=lambda c: c.value)
    return best, weak


def _name(key: Dict[str, Optional[str]]) -> str:
    parts = [ENGINE_WORDS.get(key.get("engine"), key.get("engine") or "engine not recorded")]
    if key.get("form"):
        parts.append(FORM_WORDS.get(key["form"], key["form"]))
    parts.append(DIRECTION_WORDS.get(key.get("direction"), key.get("direction") or "direction not recorded"))
    return ", ".join(parts)


def bandwidth_matrices(entries: Sequence[Entry], devices: List[int],
                       fraction: float = WEAK_FRACTION) -> List[Matrix]:
    """One matrix per (engine, form, direction) of transfer.p2p entries."""
    out = []
    groups = F.group(entries, ("engine", "form", "direction"))
    for key_t in sorted(groups, key=lambda k: tuple(_ORDER.get(v, 3) for v in k)):
        grp = groups[key_t]
        key = dict(zip(("engine", "form", "direction"), key_t))
        cells = _cells(grp)
        if not cells:
            continue
        best, weak = weak_pairs(cells, fraction)
        out.append(Matrix("bandwidth", _name(key), key, grp[0].unit or "GB/s", grp[0].method, devices, cells,
                          F.provenance(grp), best, weak))
    return out


def latency_matrices(rs_entries: Sequence[Entry], devices: List[int]) -> List[Matrix]:
    """The pointer chase (ns per dependent load) and the 4-byte copy (time per copy) matrices."""
    out = []
    for family, measure, name in (
            (CHASE_FAMILY, "chase", "dependent load across the link (pointer chase, kernel on dst, chain in src)"),
            (COPY_LATENCY_FAMILY, "memcpy", "4-byte cudaMemcpyPeerAsync, src to dst")):
        grp = [e for e in rs_entries if e.family == family]
        cells = _cells(grp, with_cycles=True)
        if cells:
            out.append(Matrix("latency", name, {"measure": measure}, grp[0].unit or "ns", grp[0].method, devices,
                              cells, F.provenance(grp)))
    return out


def analyze(rs: ResultSet, fraction: float = WEAK_FRACTION) -> Optional[P2pAnalysis]:
    """The peer-to-peer matrices of a result set; None when it holds no pair of two GPUs (one GPU:
    the probe registered nothing)."""
    entries = [e for e in rs.entries if e.family in FAMILIES]
    devices = sorted({d for e in entries for d in (_device(e, "src"), _device(e, "dst")) if d is not None})
    if len(devices) < 2:
        return None
    bw = bandwidth_matrices([e for e in entries if e.family == BANDWIDTH_FAMILY], devices, fraction)
    lat = latency_matrices(entries, devices)
    if not bw and not lat:
        return None
    return P2pAnalysis(devices, bw, lat, fraction)


def to_json(an: Optional[P2pAnalysis]) -> Optional[dict]:
    if an is None:
        return None

    def cell(c: Cell, m: Matrix) -> dict:
        d = {"src": c.src, "dst": c.dst, "value": c.value, "cv": c.cv, "entries": c.entries}
        if m.kind == "bandwidth":
            d["fraction_of_best"] = m.fraction_of_best(c)
        if c.cycles is not None:
            d["cycles_per_op"] = c.cycles
        return d

    def matrix(m: Matrix) -> dict:
        d = {"name": m.name, "key": m.key, "unit": m.unit, "method": m.method,
             "cells": [cell(c, m) for c in m.cells.values()], "source": m.source}
        if m.kind == "bandwidth":
            d["best"] = cell(m.best, m) if m.best else None
            d["weak"] = [cell(c, m) for c in m.weak]
        return d

    return {"devices": an.devices, "weak_fraction": an.weak_fraction,
            "bandwidth": [matrix(m) for m in an.bandwidth], "latency": [matrix(m) for m in an.latency]}


def summary(an: Optional[P2pAnalysis]) -> List[dict]:
    """Facts for the report's summary table: per direction, the copy engine issued by the source
    (what cuda-samples' p2pBandwidthLatencyTest reports) and the fastest matrix, each with its best
    and lowest pair; the chase latency. Each: {"figure", "value", "how"}."""
    if an is None:
        return []
    rows = []
    for direction in ("uni", "bidir"):
        mats = [m for m in an.bandwidth if m.key.get("direction") == direction]
        if not mats:
            continue
        ce = next((m for m in mats if m.key.get("engine") == "ce" and m.key.get("form") in ("write", None)), None)
        fastest = max(mats, key=lambda m: m.best.value if m.best else 0)
        shown = [ce] if ce is not None else []
        if all(fastest is not m for m in shown):
            shown.append(fastest)
        for m in shown:
            low = min(m.cells.values(), key=lambda c: c.value)
            rows.append({"figure": f"peer-to-peer {DIRECTION_WORDS.get(direction, direction)}: {m.name}",
                         "value": f"best {m.best.value:,.0f} {m.unit} ({_pair(m.best)}), lowest {low.value:,.0f} "
                                  f"({_pair(low)}), {len(m.weak)} of {len(m.cells)} pairs below "
                                  f"{an.weak_fraction:.0%} of the best",
                         "how": f"{BANDWIDTH_FAMILY}, {len(m.cells)} ordered pairs"})
    for m in an.latency:
        vals = [c.value for c in m.cells.values()]
        rows.append({"figure": f"peer-to-peer latency: {m.key['measure']}",
                     "value": f"{np.median(vals):,.4g} {m.unit} median over {len(vals)} pairs "
                              f"({min(vals):,.4g} – {max(vals):,.4g})",
                     "how": m.source["probe"][0] if m.source.get("probe") else ""})
    return rows


def _pair(c: Cell) -> str:
    return f"GPU {c.src} → GPU {c.dst}"


# ---------------------------------------------------------------------------------------------- figures

def _heatmap(ax, m: Matrix, digits: int, weak: Sequence[Cell] = (), ylabel: str = "source (src)",
             xlabel: str = "destination (dst)"):
    """src rows x dst columns, each measured cell annotated; unmeasured cells (the diagonal) blank;
    weak cells outlined in red and marked."""
    idx = {d: i for i, d in enumerate(m.devices)}
    n = len(m.devices)
    grid = np.full((n, n), np.nan)
    for (s, d), c in m.cells.items():
        grid[idx[s], idx[d]] = c.value
    vmax = np.nanmax(grid)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#eeeeee")
    # Bandwidth from 0: colour differences between near-equal pairs are then as small as they are.
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0 if m.kind == "bandwidth" else np.nanmin(grid) * 0.9,
                   vmax=vmax)
    fs = max(4.5, 9.0 - 0.5 * n)
    weak_pairs_set = {(c.src, c.dst) for c in weak}
    for (s, d), c in m.cells.items():
        i, j = idx[s], idx[d]
        frac = (c.value - im.norm.vmin) / (im.norm.vmax - im.norm.vmin) if im.norm.vmax > im.norm.vmin else 1.0
        text = f"{c.value:,.{digits}f}" if c.value < 1e4 else f"{c.value:,.0f}"
        if (s, d) in weak_pairs_set:
            text += "\nweak"
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2.0))
        ax.text(j, i, text, ha="center", va="center", fontsize=fs, color="black" if frac > 0.6 else "white")
    for d in m.devices:
        if (d, d) not in m.cells:
            ax.text(idx[d], idx[d], "–", ha="center", va="center", fontsize=fs, color="#888888")
    labels = [f"GPU {d}" for d in m.devices]
    ax.set_xticks(range(n))
    ax.set_xticklabels(labels, fontsize=fs, rotation=45 if n > 4 else 0)
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=fs)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return im


def _panels(n_panels: int, n_devices: int):
    ncols = 1 if n_panels == 1 else 2
    nrows = math.ceil(n_panels / ncols)
    side = max(3.2, 0.55 * n_devices + 1.6)
    fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols + 1.2 * ncols, side * nrows + 0.8), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def bandwidth_figure(an: P2pAnalysis, direction: str, outdir: str) -> Optional[Figure]:
    """One heatmap per (engine, form) of one direction, GB/s annotated, weak pairs outlined."""
    mats = [m for m in an.bandwidth if m.key.get("direction") == direction]
    if not mats:
        return None
    fig, axes = _panels(len(mats), len(an.devices))
    for ax, m in zip(axes, mats):
        im = _heatmap(ax, m, 0, m.weak)
        title = ENGINE_WORDS.get(m.key.get("engine"), str(m.key.get("engine")))
        if m.key.get("form"):
            title += f", {m.key['form']}"
        ax.set_title(f"{title} (best {m.best.value:,.0f} {m.unit})", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=m.unit)
    words = DIRECTION_WORDS.get(direction, direction)
    fig.suptitle(f"Peer-to-peer bandwidth, {words} ({mats[0].unit})")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fid = f"p2p_bandwidth_{direction}"
    both = " A both-ways cell counts the bytes of both copies; the matrix is symmetric up to noise." \
        if direction == "bidir" else ""
    caption = (f"Rows: source GPU, columns: destination GPU; one panel per engine and form (write: the copy is "
               f"issued by the source, read: by the destination).{both} Outlined in red and marked 'weak': pairs "
               f"below {an.weak_fraction:.0%} of the best pair of their panel.")
    return Figure(fid, f"Peer-to-peer bandwidth, {words}", caption, [m.source for m in mats], _save(fig, outdir, fid))


def latency_figure(an: P2pAnalysis, outdir: str) -> Optional[Figure]:
    if not an.latency:
        return None
    fig, axes = _panels(len(an.latency), len(an.devices))
    for ax, m in zip(axes, an.latency):
        chase = m.key["measure"] == "chase"
        im = _heatmap(ax, m, 0, ylabel="src (holds the chain)" if chase else "source (src)",
                      xlabel="dst (runs the chase)" if chase else "destination (dst)")
        ax.set_title(("pointer chase" if m.key["measure"] == "chase" else "4-byte cudaMemcpyPeerAsync")
                     + f" ({m.unit} per " + ("load" if m.key["measure"] == "chase" else "copy") + ")", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=m.unit)
    fig.suptitle("Peer-to-peer latency")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    caption = ("Pointer chase: a kernel on the destination GPU follows dependent pointers through a chain in the "
               "source GPU's memory (ns per load, CUDA events over thousands of loads). 4-byte copy: time per copy "
               "of 100 back-to-back cudaMemcpyPeerAsync issued by the source.")
    return Figure("p2p_latency", "Peer-to-peer latency", caption, [m.source for m in an.latency],
                  _save(fig, outdir, "p2p_latency"))


# ---------------------------------------------------------------------------------------------- report

def _matrix_rows(m: Matrix, digits: int = 0) -> List[list]:
    rows = []
    for s in m.devices:
        row = [f"GPU {s}"]
        for d in m.devices:
            c = m.cells.get((s, d))
            if c is None:
                row.append("–")
            else:
                row.append(f"{c.value:,.{digits}f}" + (" (weak)" if c in m.weak else ""))
        rows.append(row)
    return rows


def section(an: Optional[P2pAnalysis], figdir: str) -> Optional[dict]:
    """What the report section (templates/sections/p2p.j2) shows: its tables' rows and its figures (drawn
    here). None for a result set without peer-to-peer entries: a one-GPU machine has no such section."""
    if an is None:
        return None
    out = {"devices": [f"GPU {d}" for d in an.devices], "weak_fraction": f"{an.weak_fraction:.0%}",
           "bandwidth": None, "latency": None}
    if an.bandwidth:
        unit = an.bandwidth[0].unit
        out["bandwidth"] = {
            "method": an.bandwidth[0].method, "unit": unit,
            "rows": [[m.key.get("engine") or "–", m.key.get("form") or "–", m.key.get("direction") or "–", len(m.cells),
                      m.best.value, _pair(m.best), float(np.median([c.value for c in m.cells.values()])),
                      min(c.value for c in m.cells.values()), _pair(min(m.cells.values(), key=lambda c: c.value)),
                      len(m.weak)] for m in an.bandwidth],
            "weak": [f"{_pair(c)}: {c.value:,.0f} {m.unit} = {m.fraction_of_best(c):.0%} of the best "
                     f"{m.best.value:,.0f} ({_pair(m.best)}); {m.name}" for m, c in an.weak],
            "figures": [bandwidth_figure(an, direction, figdir) for direction in ("uni", "bidir")],
            "matrices": [{"title": f"{m.name} ({m.unit})", "headers": ["src \\ dst"] + [f"GPU {d}" for d in m.devices],
                          "rows": _matrix_rows(m)} for m in an.bandwidth]}
    if an.latency:
        pairs = sorted({p for m in an.latency for p in m.cells})
        cols = []
        for m in an.latency:
            cols.append((f"{m.key['measure']} ({m.unit})", m, False))
            if any(c.cycles is not None for c in m.cells.values()):
                cols.append((f"{m.key['measure']} (cycles)", m, True))

        def value(c: Optional[Cell], cycles: bool):
            return None if c is None else c.cycles if cycles else c.value
        out["latency"] = {
            "methods": [f"{m.key['measure']}: {m.method}" for m in an.latency],
            "headers": ["pair"] + [c[0] for c in cols],
            "rows": [[f"GPU {s} → GPU {d}"] + [value(m.cells.get((s, d)), cyc) for _, m, cyc in cols] for s, d in pairs],
            "figure": latency_figure(an, figdir)}
    return out


def headline(an: Optional[P2pAnalysis]) -> Optional[str]:
    """The report's sentence: how many GPUs, and the pairs below the weak fraction of their matrix."""
    if an is None or not an.bandwidth:
        return None
    weak = [c for m in an.bandwidth for c in m.weak]
    return (f"Peer-to-peer over {len(an.devices)} GPUs: "
            + (f"{len(weak)} pair results below {an.weak_fraction:.0%} of the best pair of their matrix "
               "(section Multi-GPU: peer-to-peer)." if weak else
               f"every pair within {an.weak_fraction:.0%} of the best pair of its matrix."))


SECTION = register(FamilySection(
    id="p2p", title="Multi-GPU: peer-to-peer", families=FAMILIES, after=("transfers",),
    analyze=lambda inputs: analyze(inputs.rs), content=section, to_json=to_json, summary=summary,
    headline=headline, link_text="peer-to-peer"))
