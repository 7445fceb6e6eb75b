"""Line and sector sizes (memory.latency, pattern=stride): latency against stride at a fixed footprint
saturates at the unit a miss brings in from the level the footprint spills to."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List

import numpy as np

from .. import families as F
from .. import profile_results as R
from ..curves import Curve, curve_xy
from ..levels import estimate_noise
from . import AnalysisInputs, FamilySection, register

# Line/sector sizes are searched among strides below the smallest page size of any CUDA GPU
# (4 KiB), so that page (TLB) effects at larger strides do not masquerade as a line.
LINE_SEARCH_MAX_STRIDE = 4096


@dataclass
class GranularityResult:
    granularity: R.Granularity
    curves: List[Curve]  # latency against stride, per (load, footprint)


def analyze(inputs: AnalysisInputs) -> GranularityResult:
    """Line/sector size: latency vs stride at a fixed footprint saturates at the miss unit."""
    rs = inputs.rs
    ents = [e for e in rs.by_family("memory.latency")
            if F.text(e, "pattern") == "stride" and F.text(e, "load") not in ("shared",)]
    curves = inputs.results["hierarchy"].curves
    ref = next((c for c in curves if c.key.get("pattern") == "random" and c.key.get("load") in ("ca", None)), None)
    # The latency of the loads that share a unit already brought in: the L1 hit (ca loads allocate in L1).
    hit = ref.fit.levels[0] if ref is not None and ref.names and ref.names[0] == "L1" else None
    rows, no_miss = [], []
    gcurves = []
    for (load, fp), grp in sorted(F.group(ents, ("load", "footprint")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
        grp = [e for e in grp if F.num(e, "stride") <= LINE_SEARCH_MAX_STRIDE]
        x, y, used = curve_xy(grp, "stride", "cycles_per_op")
        if len(np.unique(x)) < 4:
            continue
        level = None
        if ref is not None and fp:
            idx = int(sum(1 for k in ref.fit.knees if fp > k))
            level = ref.names[idx] if idx < len(ref.names) else None
        gcurves.append(Curve("memory.latency", {"load": load, "footprint": fp}, used, x, y, None,
                                                [], "cycles per load"))
        if level is not None and ref is not None and level == ref.names[0]:
            # The whole footprint fits the first level: every load hits, no miss brings anything in.
            no_miss.append(R.NoMiss(footprint_bytes=fp, load=load, served_by=level))
            continue
        if hit is not None:
            r = fit_miss_unit(x, y, hit, [e.cv for e in used])
        else:
            r = detect_knee_saturation(x, y, [e.cv for e in used])
            if r is not None and (r[1] <= 0 or np.sum(x < r[0]) < 2):  # seen from below, not extrapolated
                r = None
        if r is None:
            continue
        size, lo, hi, _ = r
        rows.append(R.MissUnit(footprint_bytes=fp, load=load, served_by=level,
                               miss_unit_bytes=size, miss_unit_pow2_bytes=float(2 ** round(math.log2(size))),
                               cycles_small_stride=lo, cycles_saturated=hi, source=F.provenance(used)))
    # One figure per serving level: the median over footprints served by that level.
    summary = {}
    for lvl in sorted({r.served_by for r in rows}, key=str):
        sizes = [r.miss_unit_pow2_bytes for r in rows if r.served_by == lvl]
        summary[str(lvl)] = float(np.median(sizes))
    granularity = R.Granularity(per_footprint=rows, by_level=summary, no_miss=no_miss, method=(
        "latency vs stride (pattern=stride, strides <= 4 KiB) fitted with hit + (miss - hit) x min(1, stride/B): "
        "below B, B/stride loads share one unit and all but the first hit in L1, so the hit latency is the "
        "hierarchy's L1 latency (fixed: one stride below B then suffices, a free intercept extrapolated "
        "B to half its size where the sweep starts at 16 B); strides past the saturation where latency falls "
        "back (a chain at a large stride touches fewer lines, which a faster level then holds) are cut off; B "
        "is the unit a miss brings in from the level the footprint spills to, rounded to a power of two; a "
        "footprint that fits in L1 has no miss and no unit"))
    return GranularityResult(granularity, gcurves)


def detect_knee_saturation(x, y, recorded_cv=None):
    """Size B where a rising curve saturates: y = a + b * min(1, x / B) (line, sector or page size
    from a stride sweep: below B several accesses share one unit). Returns (B, a, a + b, rss) or
    None when a flat line explains the curve as well (BIC)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    if len(np.unique(x)) < 4:
        return None
    order = np.argsort(x)
    x, y = x[order], y[order]
    sigma = estimate_noise(y, recorded_cv)
    n = len(x)
    w = 1.0 / y
    flat = float(np.sum(((np.median(y) - y) * w) ** 2))
    best = None
    for lb in np.linspace(math.log(x[0]), math.log(x[-1]), 161)[1:]:
        b = math.exp(lb)
        a = np.column_stack([np.ones(n), np.minimum(1.0, x / b)])
        coef, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
        r = (a @ coef - y) * w
        rss = float(r @ r)
        if best is None or rss < best[3]:
            best = (b, float(coef[0]), float(coef[0] + coef[1]), rss)
    if best is None:
        return None
    if best[3] / sigma**2 + 3 * math.log(n) >= flat / sigma**2 + math.log(n):
        return None
    if best[2] <= best[1] * (1 + 3 * sigma):
        return None
    return best


def fit_miss_unit(x, y, hit: float, recorded_cv=None):
    """Miss unit B of a stride curve at one footprint: y = hit + (miss - hit) x min(1, x / B) with the
    hit latency known. Returns (B, hit, miss, rss) or None when a flat line explains the curve as
    well (BIC), the rise is within the noise, or the unit reported (B to the nearest power of two) is not
    bracketed (a stride below it, two at or above)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    order = np.argsort(x)
    x, y = x[order], y[order]
    # A large stride touches fewer lines: once they fit a faster level, latency falls back. Those
    # strides belong to another level's curve: cut at the first point past the top below mid-way.
    top = int(np.argmax(y))
    cut = next((i for i in range(top, len(y)) if y[i] < (hit + y[top]) / 2), len(y))
    x, y = x[:cut], y[:cut]
    if len(np.unique(x)) < 3 or not (y.max() > hit):
        return None
    sigma = estimate_noise(y, recorded_cv)
    n = len(x)
    flat = float(np.sum(((np.median(y) - y) / y) ** 2))
    best = None
    for lb in np.linspace(math.log(x[0]), math.log(x[-1]), 161):
        b = math.exp(lb)
        d = np.minimum(1.0, x / b) / y
        gain = float(d @ ((y - hit) / y)) / float(d @ d)  # miss - hit, least squares on relative residuals
        r = (hit / y + gain * d) - 1.0
        rss = float(r @ r)
        if best is None or rss < best[3]:
            best = (b, hit, hit + gain, rss)
    b, _, miss, rss = best
    if rss / sigma**2 + 2 * math.log(n) >= flat / sigma**2 + math.log(n):
        return None
    # The bracket is checked on the unit reported, the power of two nearest B: the fitted B moves with the
    # noise (where the sweep starts past the unit, its first stride 3 % low puts B just above that stride,
    # which then passes for a stride below it; a stride at the unit 1 % low puts B just above the unit,
    # which then lacks a second stride at or above it).
    unit = 2.0 ** round(math.log2(b))
    if miss <= hit * (1 + 3 * sigma) or np.sum(x < unit * (1 - 1e-9)) < 1 or np.sum(x >= unit * (1 - 1e-9)) < 2:
        return None
    return best


def figure(an: GranularityResult, outdir: str):
    from .. import plots  # matplotlib only when the report draws
    fitted = {r.footprint_bytes for r in an.granularity.per_footprint} if an.granularity else set()
    g = [c for c in an.curves if c.key["footprint"] in fitted]
    if len(g) > 8:  # a readable subset, spread over the footprints
        g = [g[int(round(i))] for i in np.linspace(0, len(g) - 1, 8)]
    return plots.simple_xy([(f"footprint={plots._bytes_formatter(c.key['footprint'])}", c.x, c.y, c.entries) for c in g],
                          "granularity", "Latency vs stride (line / sector size)", "stride (bytes, log scale)",
                          "cycles per load", outdir, "Latency saturates at the unit a miss brings in.", bytes_x=True)


SECTION = register(FamilySection(
    id="granularity", title="Line and sector sizes", families=(), after=(), core=True, uses=("hierarchy",),
    analyze=analyze, content=lambda an, figdir: {"figures": [figure(an, figdir)]},
    profile_keys=lambda an: {"granularity": R.to_json(an.granularity)}))
