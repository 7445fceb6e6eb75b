"""Swept curves and their levels, shared by the sections that read them (hierarchy, granularity, TLB,
bandwidth): a curve's points from its entries, the level detection over many curves, the levels'
names and the words for their edges."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from . import families as F
from .formatting import fmt_bytes
from .levels import LevelFit, _solve, _ways_share, detect_levels_many, plateau_values
from .results import Entry, ResultSet, finite

MIN_CURVE_POINTS = 6

@dataclass
class Curve:
    """One swept curve and its detected levels (kept in memory for the plots)."""
    family: str
    key: dict
    entries: List[Entry]
    x: np.ndarray
    y: np.ndarray
    fit: Optional[LevelFit]
    names: List[str] = field(default_factory=list)
    ylabel: str = ""
    ab: Optional[object] = None  # the alpha-beta fit, for transfer curves


def curve_xy(entries: List[Entry], xkey: str, ykey: Optional[str] = None):
    pts = []
    for e in entries:
        x = F.num(e, xkey)
        y = e.num(ykey) if ykey else e.value
        if math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0:
            pts.append((x, y, e))
    pts.sort(key=lambda p: p[0])
    return (np.array([p[0] for p in pts]), np.array([p[1] for p in pts]), [p[2] for p in pts])


def last_level_reached(max_footprint: float, l2_bytes: float) -> str:
    """The name of a curve's last level when its sweep ended inside the L2 (no load of it came from DRAM)."""
    return f"last level reached (sweep ended at {fmt_bytes(max_footprint)}, inside the {fmt_bytes(l2_bytes)} L2)"


def name_levels(knees: List[float], l2_bytes: Optional[float], first_is_l1: bool,
                max_footprint: Optional[float] = None) -> List[str]:
    """Names of the levels of a curve (len(knees) + 1). The knee nearest the L2 size the device
    reports (within a factor 2.5) is the L2 -> DRAM edge; without it, the order names them. A sweep
    that ends within the L2 the device reports (max_footprint <= l2_bytes) reached no DRAM: its last
    level is named as the last level reached, never DRAM, and the levels before it as on-chip ones."""
    k = len(knees) + 1
    if l2_bytes and l2_bytes > 0 and max_footprint and max_footprint <= l2_bytes:
        names = ["L1" if j == 0 and first_is_l1 else f"L2 sub-level {j}" for j in range(k - 1)]
        return names + [last_level_reached(max_footprint, l2_bytes)]
    if k == 1:
        return ["single level"]
    edge = None
    if l2_bytes and l2_bytes > 0:
        d = [abs(math.log(c / l2_bytes)) for c in knees]
        i = int(np.argmin(d))
        if d[i] <= math.log(2.5):
            edge = i
    if edge is None:
        edge = k - 2  # last knee: the deepest on-chip level -> DRAM
    names = []
    beyond = k - edge - 2  # levels past DRAM's: no memory level lies there
    for j in range(k):
        if j > edge:
            # Past the L2 every load is DRAM's: what adds latency beyond is address translation,
            # the random chain's TLB misses once its pages exceed the TLB's reach (memory.tlb).
            names.append("DRAM" if j == edge + 1 else
                         "DRAM + TLB misses" + (f" ({j - edge - 1} of {beyond})" if beyond > 1 else ""))
        elif j == edge:
            names.append("L2" if (j > 0 or not first_is_l1) else "L1")
        elif j == 0 and first_is_l1:
            names.append("L1")
        elif j == edge - 1:
            names.append("L2 near partition")
        else:
            names.append(f"L2 sub-level {j}")
    return names


# Two adjacent levels of one curve closer than this (relative) are one level split by a drift:
# cache levels differ by far more than that in latency.
MERGE_LEVELS_REL = 0.10


def merge_close_levels(fit: LevelFit, rel: float = MERGE_LEVELS_REL) -> LevelFit:
    """The fit with adjacent levels within `rel` of each other merged (knee dropped); a merged
    level's value is the median of the curve's points between its remaining knees."""
    keep = [i for i in range(1, len(fit.levels)) if abs(fit.levels[i] / fit.levels[i - 1] - 1) >= rel]
    if len(keep) == len(fit.levels) - 1:
        return fit
    knees = [fit.knees[i - 1] for i in keep]
    brackets = [fit.brackets[i - 1] for i in keep]
    shapes = [fit.shapes[i - 1] for i in keep] if fit.shapes else []
    edges = [0.0] + knees + [math.inf]
    levels = []
    for lo, hi in zip(edges, edges[1:]):
        m = (fit.x > lo) & (fit.x <= hi)
        levels.append(float(np.median(fit.y[m])) if m.any() else float(fit.predict([max(lo, fit.x.min())])[0]))
    return LevelFit(fit.x, fit.y, fit.model + " (merged)", knees, levels, brackets, fit.noise, fit.bic,
                    fit.candidates, shapes)


# An edge whose accesses go from 90 % to 10 % served by the level within this factor of footprint is
# "sharp": a 4-per-octave sweep spaces its points by 1.19x, so a narrower edge spans at most two of them
# and cannot be told from a step.
SHARP_EDGE_WIDTH = 1.5


def edge_width(shape: str) -> float:
    """Footprint factor over which an edge's share served goes from 90 % to 10 % (1 for a step, inf
    for a gradual edge)."""
    if shape == "step":
        return 1.0
    if not shape.startswith("ways"):
        return math.inf
    w = float(shape[len("ways"):])
    u = np.exp(np.linspace(-2.5, 2.5, 20001))
    served = _ways_share(w, u)
    return float(u[np.argmax(served < 0.1)] / u[np.argmax(served < 0.9)])


def edge_words(shape: Optional[str]) -> str:
    """An edge's shape in words. No associativity is claimed: the hashed-set model's W only sets the
    edge's width, which replacement policy, hashing and sectoring smear the same way."""
    if shape is None:
        return "last level (no edge after it)"
    if shape == "gradual":
        return "gradual (keeps its capacity of a larger footprint)"
    width = edge_width(shape)
    if width <= SHARP_EDGE_WIDTH:
        return "sharp"
    return f"smeared (90 % to 10 % served over {width:.2g}x the footprint)"


def model_words(fit: LevelFit) -> str:
    """A curve's fitted edges in words, one per edge, and the levels merged as one (MERGE_LEVELS_REL)."""
    if not fit.knees:
        return "flat (one level)"
    words = ", ".join(edge_words(s).split(" (")[0] + (f" x{edge_width(s):.2g}" if s.startswith("ways") and
                                                       edge_width(s) > SHARP_EDGE_WIDTH else "")
                      for s in fit.shapes[:len(fit.knees)])
    if fit.model.endswith("(merged)"):
        fitted = len(fit.model[:-len(" (merged)")].split(","))
        words += (f"; {fitted - len(fit.knees)} more edge(s) between levels within "
                  f"{100 * MERGE_LEVELS_REL:.0f} % of each other merged")
    return words


def ctxnum(rs: ResultSet, key: str) -> Optional[float]:
    """A number of the inputs' context (None where absent or not finite)."""
    return finite(rs.context_number(key))


def _witnesses(family: str, keys: List[dict], todo: list, i: int) -> tuple:
    """The curves (x, y, recorded_cv) that measure curve i's levels independently (levels.detect_levels'
    witnesses): for a random chain of memory.latency, the random chains of the same stride with another
    global load (L1-allocating, L1-bypassing, volatile): the same L2 and DRAM, measured by other runs."""
    k = keys[i]
    if family != "memory.latency" or k.get("pattern") != "random" or k.get("load") == "shared":
        return ()
    return tuple((tuple(x), tuple(y), tuple(e.cv for e in used)) for j, (_, x, y, used, _) in enumerate(todo)
                 if j != i and keys[j].get("pattern") == "random" and keys[j].get("stride") == k.get("stride")
                 and keys[j].get("load") not in (k.get("load"), "shared"))


def latency_curves(rs: ResultSet, family: str, notes: List[str]) -> List[Curve]:
    """The latency curves of a family (memory.latency, memory.tlb) with their levels, one per group of
    the family record's axes; a problem met is added to `notes`."""
    group_keys, xkey = F.group_keys(rs, family), F.x_key(rs, family)
    if rs.by_family(family) and (group_keys is None or xkey is None):
        notes.append(f"{family}: no curves (its family record, which names the axes, is missing)")
        return []
    curves = []
    todo = []
    for key, ents in sorted(F.group(rs.by_family(family), group_keys or ()).items(), key=lambda t: str(t[0])):
        x, y, used = curve_xy(ents, xkey, "cycles_per_op")
        ylabel = "cycles per load"
        if len(x) < MIN_CURVE_POINTS:
            x, y, used = curve_xy(ents, xkey)  # value_median (unit in the label)
            ylabel = f"{used[0].unit or 'value'} per load" if used else ylabel
        if len(np.unique(x)) < MIN_CURVE_POINTS:
            continue
        todo.append((key, x, y, used, ylabel))
    keys = [dict(zip(group_keys, key)) for key, *_ in todo]
    fits = detect_levels_many([(x, y, [e.cv for e in used], _witnesses(family, keys, todo, i))
                               for i, (_, x, y, used, _) in enumerate(todo)])
    for (key, x, y, used, ylabel), fit in zip(todo, fits):
        keyd = dict(zip(group_keys, key))
        load = keyd.get("load") or ""
        if family == "memory.latency":
            # A slow drift (DRAM latency rising with the TLB misses) or the tail of an edge split
            # into sub-levels is one level.
            fit = merge_close_levels(fit)
        first_l1 = load not in ("cg", "cv", "volatile", "shared") and family == "memory.latency"
        if family == "memory.latency" and keyd.get("pattern") == "random":
            names = name_levels(fit.knees, ctxnum(rs, "gpu_l2_bytes"), first_l1, float(np.max(x)))
        else:
            # Fixed-stride chains mix hits and misses (several loads per line, or one per page):
            # their levels are not device levels; numbered, not named.
            names = [f"level {i + 1}" for i in range(len(fit.levels))]
        curves.append(Curve(family, keyd, used, x, y, fit, names, ylabel))
    return curves

def ns_levels(c: Curve):
    """Level latencies in ns: the same knees, shapes and plateau rule applied to ns_per_op."""
    ns = np.array([e.num("ns_per_op") for e in c.entries])
    if not np.all(np.isfinite(ns)) or np.any(ns <= 0):
        return None
    if not c.fit.knees:
        levels, _, _ = _solve(c.x, ns, c.fit.knees, c.fit.shapes)
        return [float(v) for v in levels]
    return plateau_values(c.fit, ns, c.x)
