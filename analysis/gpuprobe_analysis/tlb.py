"""TLB page size, reach, entries and miss penalty from fixed-stride pointer chases (memory.tlb).

One model explains every stride's latency-vs-footprint curve at once (docs/analysis.md#tlb):
a chain of N elements at stride S spans F = N x S bytes and touches T = F / max(S, P) pages of
size P. A TLB level of E entries (reach R = E x P) covers the lap while T <= E; beyond, every page
misses once per lap, and when S < P the P / S - 1 loads that follow on the same page hit, so the
latency a level adds is its penalty times min(1, S / P):

    cycles(S, F) = base(S) + sum_k penalty_k * min(1, S / P) * [T > E_k]

Why a joint fit rather than one knee per curve: below the page a knee sits at the same footprint
for every stride (reach), beyond it at the same element count (entries), and the step shrinks with
S / P; only the curves together tell the page, and they say so only where strides lie on both sides
of it. A page between the same two strides explains the data equally: the fit reports the range of
pages the data cannot tell apart, never a value it did not measure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from .levels import NOISE_FLOOR, estimate_noise

MAX_LEVELS = 3
# Candidate pages are powers of two (every MMU page size is); the grid runs an octave past the
# strides on both sides so that "page <= smallest stride" and "page >= largest stride" are fits too.
# A level must lift latency by this many noise sigmas (relative to the base) at some stride ...
MIN_STEP_SIGMAS = 4.0
# ... and show it at this many points (a single point beyond a knee is a transient, not a level) ...
MIN_POINTS_BEYOND = 2
# ... on this many strides.
MIN_STRIDES = 2
# Pages whose fits differ by less than this in BIC are not told apart by the data (Kass & Raftery:
# a difference below 6 is not strong evidence).
BIC_TIE = 6.0
# A point whose sample spread exceeds both this relative CV and UNSTEADY_FACTOR x its curve's median
# CV is not a steady-state lap (first-touch loads mixed with warm ones): excluded, and listed.
UNSTEADY_CV = 0.005
UNSTEADY_FACTOR = 10.0


@dataclass
class TlbPoint:
    stride: float
    footprint: float
    cycles: float
    cv: float = math.nan
    steady: Optional[bool] = None  # from the entry's warm-up record; None when not recorded


@dataclass
class TlbLevel:
    entries: Optional[float]  # a whole count in entries_bracket (whole_entries); None: the tied pages disagree
    entries_range: tuple  # (fewest, most) whole counts over the pages the data cannot tell apart
    entries_bracket: tuple  # (fewest, most) whole counts the best page's data allow
    penalty_cycles: float  # latency a miss in this level adds (undiluted), at the best page
    reach_bytes: Optional[float]  # entries x page; None where the tied pages disagree on it
    reach_range: tuple  # (last covered, first missed) bytes over the tied pages
    reach_bracket_bytes: tuple  # (last covered, first missed) bytes at the best page


@dataclass
class TlbFit:
    page_bytes: Optional[float]  # the best page (a power of two); None when no level was found
    page_range: tuple  # (smallest, largest) page the data cannot tell apart from the best
    page_status: str  # "measured" | "between" | "at most" | "at least" (a stride bound) | "undetermined"
    levels: List[TlbLevel]
    base_cycles: Dict[float, float]
    noise: float
    bic: float
    strides: List[float]
    excluded: List[TlbPoint] = field(default_factory=list)
    max_footprint: Dict[float, float] = field(default_factory=dict)  # largest steady footprint per stride
    # per stride: (last footprint at base, first footprint above it, its cycles), where the curve rises
    # above its base by MIN_STEP_SIGMAS noise sigmas
    first_rise: Dict[float, tuple] = field(default_factory=dict)
    candidates: list = field(default_factory=list)  # (levels, page, bic, admissible)
    # (stride, footprint, excess) where a curve rises above the fitted model and stays there: a knee no
    # level explains, seen on that curve (not levels, and named as such)
    one_stride_knees: list = field(default_factory=list)
    # pages (page, BIC gain) whose fit beats the reported one but whose levels show on one stride only
    unconfirmed_pages: list = field(default_factory=list)


def _pages(s, f, page):
    return f / np.maximum(s, page)


def _design(s, strides, t, page, entries):
    cols = [(s == v).astype(float) for v in strides]
    dil = np.minimum(1.0, s / page)
    for e in entries:
        cols.append(dil * (t > e * (1 + 1e-9)))
    return np.column_stack(cols)


def _solve(a, y):
    aw = a / y[:, None]
    coef, *_ = np.linalg.lstsq(aw, np.ones(len(y)), rcond=None)
    r = aw @ coef - 1.0
    return coef, float(r @ r)


def _rss_many(s, groups, t, page, y, knee_sets):
    """Residuals of many knee sets (same length) at once. The per-stride bases are projected out
    first (each is a free intercept of its own points), leaving a k x k system per knee set."""
    u = 1.0 / y
    dil = np.minimum(1.0, s / page) * u
    ks = np.asarray(knee_sets, float)  # (m, k)
    x = dil[None, :, None] * (t[None, :, None] > ks[:, None, :] * (1 + 1e-9))  # (m, n, k)
    z = np.ones(len(y))
    for g in groups:  # slices: the points are sorted by stride
        ug = u[g]
        uu = float(ug @ ug)
        z[g] -= ug * (ug.sum() / uu)
        x[:, g, :] -= ug[None, :, None] * (np.einsum("n,mnk->mk", ug, x[:, g, :]) / uu)[:, None, :]
    xtx = np.matmul(x.transpose(0, 2, 1), x)
    xtz = np.einsum("mnk,n->mk", x, z)
    out = np.full(len(ks), np.inf)
    ok = np.abs(np.linalg.det(xtx)) > 1e-300
    if np.any(ok):
        coef = np.linalg.solve(xtx[ok], xtz[ok][..., None])[..., 0]
        out[ok] = float(z @ z) - np.einsum("mk,mk->m", coef, xtz[ok])
    return out


def _strides_showing(s, t, y, coef, entries, page, n_strides, sigma, k):
    """The strides whose own points show level k's step: the median of >= MIN_POINTS_BEYOND points just
    beyond the knee exceeds the median of the points just below it by >= MIN_STEP_SIGMAS noise sigmas
    and by at least half the step the model puts there."""
    base = float(np.median(coef[:n_strides]))
    dil = np.minimum(1.0, s / page)
    edges = [0.0] + list(entries) + [math.inf]
    e, pen = entries[k], coef[n_strides + k]
    out = []
    for st in np.unique(s):
        on = s == st
        below = on & (t > edges[k] * (1 + 1e-9)) & (t <= e * (1 + 1e-9))
        above = on & (t > e * (1 + 1e-9)) & (t <= edges[k + 2] * (1 + 1e-9))
        # As many points on each side: one low point below a knee is as much a transient as one high
        # point beyond it (at 5 % noise a 1-entry "level" passed on two strides' lone first points).
        if below.sum() < MIN_POINTS_BEYOND or above.sum() < MIN_POINTS_BEYOND:
            continue
        step = float(np.median(y[above]) - np.median(y[below]))
        model = pen * float(dil[above][0])
        if step >= MIN_STEP_SIGMAS * sigma * base and step >= 0.5 * model:
            out.append(float(st))
    return out


def _admissible(s, t, y, coef, entries, page, n_strides, sigma):
    """Every level adds a positive penalty that the data show on their own, not only the fit: on
    >= MIN_STRIDES strides (one curve alone cannot tell a TLB level from a cache or first-touch
    effect of that curve; _strides_showing); and every level holds at least one page."""
    for k, e in enumerate(entries):
        pen = coef[n_strides + k]
        # A TLB entry maps at least one page: a "level" of fewer entries (reach below the page) is a
        # cache edge the chase crossed, not a TLB (an H200 run fitted 0.34 entries at 5.5 MiB).
        if not (pen > 0) or e < 1 or (k > 0 and e <= entries[k - 1]):
            return False
        if len(_strides_showing(s, t, y, coef, entries, page, n_strides, sigma, k)) < MIN_STRIDES:
            return False
    return True


def _knee_candidates(t):
    """A knee after each observed page count but the largest; counts within 1 % are one (footprints
    rounded to a granule differ slightly between strides, and a knee between them means nothing)."""
    u = np.unique(t)
    keep = [u[0]]
    for v in u[1:]:
        if v > keep[-1] * 1.01:
            keep.append(v)
        else:
            keep[-1] = v  # the larger: a knee after the whole cluster
    return keep[:-1]


def fit_tlb(points: Sequence[TlbPoint], max_levels: int = MAX_LEVELS) -> Optional[TlbFit]:
    """The joint model's best fit (BIC over 0..max_levels levels and the candidate pages)."""
    pts = [p for p in points if p.stride > 0 and p.footprint > 0 and p.cycles > 0 and math.isfinite(p.cycles)]
    excluded = [p for p in pts if p.steady is False]
    pts = [p for p in pts if p.steady is not False]
    # Unsteady points, by their sample spread against their own curve's.
    by_stride: Dict[float, List[TlbPoint]] = {}
    for p in pts:
        by_stride.setdefault(p.stride, []).append(p)
    kept = []
    for st, grp in by_stride.items():
        cvs = [p.cv for p in grp if math.isfinite(p.cv)]
        typical = float(np.median(cvs)) if cvs else math.nan
        for p in grp:
            if math.isfinite(p.cv) and math.isfinite(typical) and p.cv > max(UNSTEADY_CV, UNSTEADY_FACTOR * typical):
                excluded.append(p)
            else:
                kept.append(p)
    kept.sort(key=lambda p: (p.stride, p.footprint))
    strides = sorted({p.stride for p in kept})
    if not kept or len(strides) < 1:
        return None
    s = np.array([p.stride for p in kept])
    f = np.array([p.footprint for p in kept])
    y = np.array([p.cycles for p in kept])
    n = len(y)
    edges = np.searchsorted(s, strides + [math.inf])
    groups = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
    # Noise: the median over strides of each curve's own (levels.estimate_noise, in footprint order).
    sig = []
    for st in strides:
        m = s == st
        order = np.argsort(f[m])
        sig.append(estimate_noise(y[m][order], [p.cv for p in kept if p.stride == st]))
    sigma = max(float(np.median(sig)), NOISE_FLOOR)
    nst = len(strides)
    lo_exp = int(math.floor(math.log2(min(strides)))) - 1
    hi_exp = int(math.ceil(math.log2(max(strides)))) + 1
    pages = [2.0 ** k for k in range(lo_exp, hi_exp + 1)]

    candidates = []
    flat_coef, flat_rss = _solve(_design(s, strides, f, pages[0], []), y)
    flat_bic = flat_rss / sigma ** 2 + nst * math.log(n)
    candidates.append((0, None, flat_bic, True, [], flat_coef))
    for page in pages:
        t = _pages(s, f, page)
        cand = _knee_candidates(t)
        entries: List[float] = []
        for k in range(1, max_levels + 1):
            # Greedy insertion of one knee, then coordinate refinement of all knees.
            trials = [sorted(entries + [c]) for c in cand if not any(abs(c - e) <= 1e-9 * c for e in entries)]
            if not trials:
                break
            r = _rss_many(s, groups, t, page, y, trials)
            entries = trials[int(np.argmin(r))]
            cur = float(np.min(r))
            for _ in range(3):
                moved = False
                for i in range(len(entries)):
                    lo = entries[i - 1] if i > 0 else -math.inf
                    hi = entries[i + 1] if i + 1 < len(entries) else math.inf
                    trials = [entries[:i] + [c] + entries[i + 1:] for c in cand if lo < c < hi and c != entries[i]]
                    if not trials:
                        continue
                    r = _rss_many(s, groups, t, page, y, trials)
                    j = int(np.argmin(r))
                    if r[j] < cur - 1e-15:
                        entries, cur, moved = trials[j], float(r[j]), True
                if not moved:
                    break
            coef, rss = _solve(_design(s, strides, t, page, entries), y)
            bic = rss / sigma ** 2 + (nst + 2 * k + 1) * math.log(n)
            adm = _admissible(s, t, y, coef, entries, page, nst, sigma)
            candidates.append((k, page, bic, adm, list(entries), coef))

    ok = [c for c in candidates if c[3]]
    best = min(ok, key=lambda c: c[2])
    k, page, bic, _, entries, coef = best
    base = {st: float(coef[i]) for i, st in enumerate(strides)}
    max_fp = {st: float(f[s == st].max()) for st in strides}
    summary = [(c[0], c[1], c[2], c[3]) for c in candidates]
    first_rise = {}
    for st in strides:
        m = s == st
        fs, ys = f[m], y[m]
        # The curve's own start is its base here (not the fitted intercept, which a rise pulls up);
        # a rise is sustained: MIN_POINTS_BEYOND points in a row above it.
        start = float(np.median(ys[:3]))
        high = ys > start * (1 + MIN_STEP_SIGMAS * sigma)
        for i in range(1, len(ys) - MIN_POINTS_BEYOND + 1):
            if high[i:i + MIN_POINTS_BEYOND].all():
                first_rise[st] = (float(fs[i - 1]), float(fs[i]), float(ys[i]))
                break
    if k == 0:
        return TlbFit(None, (None, None), "undetermined", [], base, sigma, bic, strides, excluded, max_fp, first_rise,
                      summary)
    # A curve that rises above the fitted model and stays there (MIN_POINTS_BEYOND points in a row by
    # MIN_STEP_SIGMAS sigmas) carries a knee the fit did not take: named, with the stride, as no level
    # (a level needs its step on MIN_STRIDES strides), not silently dropped.
    t_best = _pages(s, f, page)
    model = _design(s, strides, t_best, page, entries) @ coef
    one_stride = []
    for st in strides:
        m = s == st
        high = y[m] > model[m] * (1 + MIN_STEP_SIGMAS * sigma)
        for i in range(len(high) - MIN_POINTS_BEYOND + 1):
            if high[i:i + MIN_POINTS_BEYOND].all():
                one_stride.append((float(st), float(f[m][i]), float(y[m][i] / model[m][i] - 1)))
                break
    # Rises on several curves are no one-stride knee: cache effects the TLB model does not describe (the
    # H100's curves all rise 0.5-3 % at small footprints, L1 spills), which the evidence rule already weighs.
    if len(one_stride) >= MIN_STRIDES:
        one_stride = []
    # Pages the data cannot tell apart: same number of levels, BIC within BIC_TIE of the best admissible
    # fit, or better than it. A better fit at another page whose level shows on one stride only is no
    # level, but it is no evidence against its page either: the page is uncertain between the two.
    tied = [c for c in candidates if c[0] == k and c[1] is not None and c[2] - bic < BIC_TIE]
    unconfirmed = sorted((c[1], bic - c[2]) for c in tied if not c[3] and c[2] < bic - BIC_TIE)
    tied_pages = sorted(c[1] for c in tied)
    prange = (tied_pages[0], tied_pages[-1])
    if prange[1] <= min(strides):
        status = "at most"  # every stride at or beyond the page: none shows the dilution
    elif prange[0] >= max(strides):
        status = "at least"  # every stride at or below the page: none shows the saturation
    elif prange[0] == prange[1]:
        status = "measured"
    else:
        status = "between"
    levels = []
    for i in range(k):
        brackets = []
        for c in tied:
            tc = _pages(s, f, c[1])
            e = c[4][i]
            above = tc[tc > e * (1 + 1e-9)]
            lo, hi, whole = whole_entries(e, float(above.min()) if len(above) else math.nan)
            brackets.append((c[1], e, float(above.min()) if len(above) else math.nan, float(c[5][nst + i]),
                             lo, hi, whole))
        es = [b[6] for b in brackets]
        rs = [b[0] * b[6] for b in brackets]
        this = next(b for b in brackets if b[0] == page)
        lv = TlbLevel(entries=float(this[6]) if _same(es) else None,
                      entries_range=(min(b[4] for b in brackets), max(b[5] for b in brackets)),
                      entries_bracket=(this[4], this[5]), penalty_cycles=this[3],
                      reach_bytes=float(page * this[6]) if _same(rs) else None,
                      reach_range=(min(b[0] * b[1] for b in brackets), max(b[0] * b[2] for b in brackets)),
                      reach_bracket_bytes=(page * this[1], page * this[2]))
        levels.append(lv)
    return TlbFit(page, prange, status, levels, base, sigma, bic, strides, excluded, max_fp, first_rise, summary,
                  one_stride, unconfirmed)


def whole_entries(covered: float, missed: float) -> tuple:
    """(fewest, most, reported) whole entry counts consistent with a level that covers `covered`
    pages and misses at `missed` (page counts of the sweep, fractional where a footprint is not a
    whole number of pages: a chain over 90.5 pages touches 91). Covered: E >= ceil(covered); missed:
    E < ceil(missed). The count reported is the one in that bracket with the most factors of two
    (a power of two where the bracket holds one): a TLB is built of power-of-two arrays, ways and
    sets, and the data put every count of the bracket on an equal footing, so the roundest is the
    one claimed, with the bracket beside it."""
    lo = max(1, math.ceil(covered - 1e-9))
    hi = math.ceil(missed - 1e-9) - 1 if math.isfinite(missed) else lo
    hi = max(hi, lo)
    step = 2 ** int(math.floor(math.log2(hi)))
    while step >= 1:
        c = math.ceil(lo / step) * step
        if c <= hi:
            return lo, hi, c
        step //= 2
    return lo, hi, lo


def _same(v) -> bool:
    return max(v) <= min(v) * (1 + 1e-9)


TLB_METHOD = (
    "one model for all strides: a chain at stride S over footprint F touches T = F / max(S, P) pages of size P; "
    "a TLB level of E entries (reach E x P) covers it while T <= E, beyond it adds its penalty x min(1, S / P) "
    "cycles (below the page, P / S loads share one translation); per-stride base latencies, knees (E) and "
    "penalties by least squares on relative residuals, P over powers of two, the number of levels by BIC with "
    "the curves' own noise; a level must lift latency by >= 4 noise sigmas at >= 2 points on each of >= 2 strides. Pages whose fits "
    "are within 6 BIC of the best are not told apart: the page is measured only when one page remains, which "
    "needs strides on both sides of it. Points whose samples are not a steady lap (no full warm lap recorded, "
    "or a sample CV > 10 x their curve's and > 0.5 %) are excluded and listed")


def _b(v) -> str:
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= div:
            return f"{v / div:.4g} {unit}"
    return f"{v:.4g} B"


def tlb_findings(fit: TlbFit) -> List[str]:
    """The conclusions, one sentence each, with the evidence they rest on."""
    out = []
    smin, smax = min(fit.strides), max(fit.strides)
    if not fit.levels:
        out.append(f"No TLB level found: no knee lifts latency by {MIN_STEP_SIGMAS:g} noise sigmas (sigma = "
                   f"{fit.noise * 100:.2g} % of latency) at {MIN_POINTS_BEYOND}+ steady points on {MIN_STRIDES}+ strides "
                   "where the model puts it, so no page size can be measured either (the page is where a TLB "
                   "penalty stops growing with the stride).")
        for st in fit.strides:
            f = fit.max_footprint[st]
            rise = fit.first_rise.get(st)
            if rise is None:
                out.append(f"The {_b(st)}-stride curve has no knee below its largest steady footprint {_b(f)} "
                           f"({f / st:.0f} elements): its reach is >= {_b(f)} or the probe's sweep is too short.")
            else:
                out.append(f"The {_b(st)}-stride curve stays at its base up to {_b(rise[0])} and rises from {_b(rise[1])} "
                           f"({rise[1] / st:.0f} elements, {rise[2]:.4g} cycles), but no other stride shows that knee: "
                           "one curve alone is not a TLB level (an L2 spill or first-touch loads of that curve would "
                           f"look the same), so its reach is only known to be >= {_b(rise[0])}.")
    else:
        if fit.page_status == "measured":
            lv = max(fit.levels, key=lambda l: l.penalty_cycles)
            below = [s for s in fit.strides if s < fit.page_bytes]
            out.append(f"Page size {_b(fit.page_bytes)}: the latency a TLB miss adds grows with the stride up to "
                       f"{_b(fit.page_bytes)} and no further (at stride {_b(min(below))} a load pays "
                       f"{lv.penalty_cycles * min(below) / fit.page_bytes:.3g} of the {lv.penalty_cycles:.3g} cycles a "
                       f"miss costs, shared by the {fit.page_bytes / min(below):.0f} loads one entry translates), and "
                       "knees sit at one footprint below that stride and at one element count above it; every other "
                       "page fits worse by >= 6 BIC.")
            out.append("A chase measures the address range one TLB entry translates. That range can be larger than "
                       "the page the driver maps, when one entry covers several pages; only a mapping experiment "
                       "tells the two apart (lab/experiments/tlb_16mib.md: on an H200, one entry covers 16 MiB made "
                       "of eight 2 MiB pages, physically contiguous or not).")
        elif fit.page_status == "at most":
            out.append(f"Page size not determined, at most {_b(smin)}: every stride, the smallest ({_b(smin)}) "
                       "included, shows the full penalty with knees at the same element count, so no stride lies below "
                       "the page; smaller strides would tell it.")
        elif fit.page_status == "at least":
            out.append(f"Page size not determined, at least {_b(smax)}: every stride, the largest ({_b(smax)}) "
                       "included, has its knees at the same footprint and a penalty that still grows with the stride, "
                       "so no stride lies beyond the page; larger strides would tell it.")
        else:
            out.append(f"Page size between {_b(fit.page_range[0])} and {_b(fit.page_range[1])}: fits at these pages "
                       "are within 6 BIC of each other (the strides around them do not separate them).")
        for pg, gain in fit.unconfirmed_pages:
            out.append(f"At a page of {_b(pg)} the model fits better (by {gain:.0f} BIC), but its level's step "
                       f"shows on fewer than {MIN_STRIDES} strides by the evidence rule, so it is not taken; nor is "
                       "that page ruled out, hence the page is given as a range.")
        for i, lv in enumerate(fit.levels):
            lo, hi = lv.entries_bracket
            counts = f"{lo:.0f}" if lo == hi else f"{lo:.0f} .. {hi:.0f}"
            why = "" if lo == hi else (f" (the data allow {counts} entries; {lv.entries:.0f} is the one with the most "
                                       "factors of two)") if lv.entries is not None else ""
            if lv.reach_bytes is not None and lv.entries is not None:
                what = (f"reach {_b(lv.reach_bytes)} = {lv.entries:.0f} entries x {_b(fit.page_bytes)}{why}; "
                        f"{_b(lv.reach_bracket_bytes[0])} is covered, {_b(lv.reach_bracket_bytes[1])} is not")
            elif lv.entries is not None:
                what = (f"{lv.entries:.0f} entries{why}, reach {_b(lv.reach_range[0])} .. {_b(lv.reach_range[1])} "
                        "as the page is not determined")
            elif lv.reach_bytes is not None:
                what = (f"reach {_b(lv.reach_bytes)}, entries {lv.entries_range[0]:.0f} .. {lv.entries_range[1]:.0f} "
                        "as the page is not determined")
            else:
                what = (f"reach {_b(lv.reach_range[0])} .. {_b(lv.reach_range[1])}, entries "
                        f"{lv.entries_range[0]:.0f} .. {lv.entries_range[1]:.0f}")
            out.append(f"TLB level {i + 1}: {what}; a miss adds {lv.penalty_cycles:.3g} cycles.")
        for st, fp, excess in fit.one_stride_knees:
            out.append(f"The {_b(st)}-stride curve rises {excess * 100:.2g} % above the model from {_b(fp)} on: a "
                       f"knee on that curve only, not taken as a TLB level (a level needs its step on {MIN_STRIDES}+ "
                       "strides by the evidence rule above; one curve's rise may be an L2 spill or first-touch loads).")
        if fit.page_bytes:
            # What lies beyond the last level found: nothing the sweep could see, up to the most pages
            # any stride's steady laps touched.
            pages = {st: fit.max_footprint[st] / max(st, fit.page_bytes) for st in fit.strides}
            far = max(pages, key=lambda st: pages[st])
            if pages[far] > fit.levels[-1].entries_bracket[0]:
                out.append(f"No further TLB level up to {_b(fit.max_footprint[far])} ({pages[far]:.0f} pages of "
                           f"{_b(fit.page_bytes)}, stride {_b(far)}): no second knee lifts latency there.")
            last = fit.levels[-1].entries_bracket[0]
            for st in fit.strides:
                f = fit.max_footprint[st]
                t = f / max(st, fit.page_bytes)
                if t <= last:
                    out.append(f"The {_b(st)}-stride curve does not reach the last level's knee: its largest steady "
                               f"footprint {_b(f)} touches {t:.0f} pages at {_b(fit.page_bytes)}.")
    if fit.excluded:
        cvs = [p.cv for p in fit.excluded if math.isfinite(p.cv)]
        by = {}
        for p in fit.excluded:
            by.setdefault(p.stride, []).append(p.footprint)
        where = "; ".join(f"stride {_b(s)}: {len(v)} from {_b(min(v))}" for s, v in sorted(by.items()))
        spread = f" (sample CV {min(cvs) * 100:.2g} .. {max(cvs) * 100:.2g} %)" if cvs else ""
        out.append(f"{len(fit.excluded)} points are not steady-state laps and were left out{spread}: {where}.")
    return out
