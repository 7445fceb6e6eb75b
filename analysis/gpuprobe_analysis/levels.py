"""Change-point detection of memory-hierarchy levels on noisy curves, for any GPU.

A curve is a figure y(x) over a size x (latency vs footprint, inverse bandwidth vs working set,
latency vs stride). Nothing here knows a device: the number of levels, their values and the
knees are chosen by the data and a penalty derived from the curve's own noise.

Method (documented in docs/analysis.md):
1. Noise: sigma of log(y) from the median absolute second difference (robust to knees and to
   ramps), or the entries' recorded CV if larger; floored at 0.1 % (timer resolution).
2. Segmentation: optimal partition of log(y) into k piecewise-constant segments (dynamic
   programming, exact) for k = 1..K_max: it seeds the knees.
3. Physical model, fitted per k: the figure is a mixture of level values weighted by the fraction
   of accesses each level serves. For a level of capacity C and footprint F,
   - "gradual" (random access, LRU-like): the levels up to C serve min(1, C/F) of the accesses;
   - "step" (cyclic access, fully associative LRU): all or nothing, F <= C;
   - "smoothB" (cyclic access over a set-associative, hashed cache: the sets overflow one by one):
     1 / (1 + (F/C)^B), C is where half the accesses hit; B = 10 by default (2.5 ... 20 available);
   - "mixed" (optional): one shape per knee (one more parameter per knee in the criterion).
   Given the knees the level values are a (weighted) linear least-squares solution; the knees
   are refined by coordinate search in log x.
4. Model choice: BIC, RSS/sigma^2 + (parameters) * ln(n), over k and both shapes; a fit is
   admissible only if every level serves >= 30 % of the accesses at two measured points or more and each level exceeds
   the one before by more than 3 sigma (deeper levels are slower: y must be latency or time per byte).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np

NOISE_FLOOR = 1e-3  # relative; below timer resolution a curve is treated as this noisy


@dataclass
class LevelFit:
    x: np.ndarray
    y: np.ndarray
    model: str  # "gradual" | "step" | "smoothB" | "flat"
    knees: List[float]  # capacity of level i (i < len(levels)-1), in x units
    levels: List[float]  # value of each level, in y units
    brackets: List[tuple]  # per knee: (last x on the lower side, first x beyond), from the data
    noise: float  # relative sigma used
    bic: float
    candidates: list = field(default_factory=list)  # (k, model, bic, admissible) tried
    shapes: List[str] = field(default_factory=list)  # transition shape per knee

    def predict(self, x) -> np.ndarray:
        return _basis(np.asarray(x, float), self.knees, self.shapes) @ np.asarray(self.levels)

    @property
    def n_levels(self) -> int:
        return len(self.levels)


def estimate_noise(y: Sequence[float], recorded_cv: Optional[Sequence[float]] = None) -> float:
    """Relative noise of a curve: robust scale of second differences of log(y)."""
    z = np.log(np.asarray(y, float))
    sigma = 0.0
    if len(z) >= 4:
        d2 = z[2:] - 2 * z[1:-1] + z[:-2]
        sigma = float(np.median(np.abs(d2)) / 0.6745 / math.sqrt(6.0))
    if recorded_cv is not None:
        cv = np.asarray([c for c in recorded_cv if c is not None and np.isfinite(c)], float)
        if cv.size:
            sigma = max(sigma, float(np.median(cv)))
    return max(sigma, NOISE_FLOOR)


def _segment_dp(z: np.ndarray, k_max: int):
    """Exact optimal partition of z into k = 1..k_max constant segments (least squares).
    Returns {k: [start index of each segment]}."""
    n = len(z)
    s1 = np.concatenate([[0.0], np.cumsum(z)])
    s2 = np.concatenate([[0.0], np.cumsum(z * z)])

    inf = float("inf")
    best = np.full((k_max + 1, n + 1), inf)
    arg = np.zeros((k_max + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, k_max + 1):
        for j in range(k, n + 1):
            i = np.arange(k - 1, j)
            m = j - i
            c = best[k - 1, i] + (s2[j] - s2[i] - (s1[j] - s1[i]) ** 2 / m)
            a = int(np.argmin(c))
            best[k, j], arg[k, j] = c[a], i[a]
    out = {}
    for k in range(1, min(k_max, n) + 1):
        starts, j = [], n
        for kk in range(k, 0, -1):
            i = arg[kk, j]
            starts.append(i)
            j = i
        out[k] = sorted(starts)
    return out


def _served(x, c, model: str):
    """Fraction of the accesses served by the levels up to capacity c, at footprint x (broadcasts)."""
    if model == "step":
        return (x <= c * (1 + 1e-12)).astype(float)
    if model.startswith("smooth"):
        steep = float(model[len("smooth"):])
        return 1.0 / (1.0 + (x / c) ** steep)
    return np.minimum(1.0, c / x)


def _shapes(model, n_knees: int) -> List[str]:
    """One transition shape per knee: `model` is one shape for all, or a list (mixed)."""
    return [model] * n_knees if isinstance(model, str) else list(model)


def _cum(x: np.ndarray, knees: Sequence[float], model) -> np.ndarray:
    """cum[:, j] = fraction of accesses served by levels < j (nested)."""
    k = len(knees) + 1
    cum = np.ones((len(x), k + 1))
    cum[:, 0] = 0.0
    for j, (c, shape) in enumerate(zip(knees, _shapes(model, len(knees))), start=1):
        cum[:, j] = _served(x, c, shape)
    return np.maximum.accumulate(cum, axis=1)


def _basis(x: np.ndarray, knees: Sequence[float], model) -> np.ndarray:
    """Fraction of accesses served by each level (columns) at each x (rows)."""
    k = len(knees) + 1
    cum = np.ones((len(x), k + 1))  # cum[:, j] = fraction served by levels < j
    cum[:, 0] = 0.0
    for j, (c, shape) in enumerate(zip(knees, _shapes(model, len(knees))), start=1):
        cum[:, j] = _served(x, c, shape)
    cum[:, k] = 1.0
    # Nested levels: what is served by levels < j includes levels < j-1.
    cum = np.maximum.accumulate(cum, axis=1)
    return np.diff(cum, axis=1)


def _solve(x, y, knees, model):
    """Level values by least squares on relative residuals; returns (levels, rss_rel)."""
    a = _basis(x, knees, model)
    aw = a / y[:, None]
    # Normal equations (k x k, k <= 8); lstsq only when they are singular (an empty level).
    try:
        levels = np.linalg.solve(aw.T @ aw, aw.sum(axis=0))
    except np.linalg.LinAlgError:
        levels = np.linalg.lstsq(aw, np.ones(len(y)), rcond=None)[0]
    r = aw @ levels - 1.0
    return levels, float(r @ r), a


def _rss_many(x, y, knee_sets, model):
    """Residuals of many knee sets at once (batched normal equations); inf where singular."""
    ks = np.asarray(knee_sets, float)  # (m, k-1)
    m, kk = ks.shape
    cum = np.ones((m, len(x), kk + 2))
    cum[:, :, 0] = 0.0
    cum[:, :, 1:kk + 1] = _served(x[None, :, None], ks[:, None, :], model)
    # Knee sets are sorted (callers keep them ordered), so cum is already nested.
    a = np.diff(cum, axis=2) / y[None, :, None]  # (m, n, k)
    ata = np.matmul(a.transpose(0, 2, 1), a)
    atb = a.sum(axis=1)
    out = np.full(m, np.inf)
    det_ok = np.abs(np.linalg.det(ata)) > 1e-300
    if np.any(det_ok):
        lv = np.linalg.solve(ata[det_ok], atb[det_ok][..., None])[..., 0]
        r = np.matmul(a[det_ok], lv[..., None])[..., 0] - 1.0
        out[det_ok] = (r * r).sum(axis=1)
    return out


def _rss_columns(y, cum_batch):
    """Residuals for a batch of cum matrices (m, n, k+1)."""
    cum_batch = np.maximum.accumulate(cum_batch, axis=2)
    a = np.diff(cum_batch, axis=2) / y[None, :, None]
    ata = np.matmul(a.transpose(0, 2, 1), a)
    atb = a.sum(axis=1)
    out = np.full(len(a), np.inf)
    ok = np.abs(np.linalg.det(ata)) > 1e-300
    if np.any(ok):
        lv = np.linalg.solve(ata[ok], atb[ok][..., None])[..., 0]
        r = np.matmul(a[ok], lv[..., None])[..., 0] - 1.0
        out[ok] = (r * r).sum(axis=1)
    return out


def _refine_mixed(x, y, knees, shapes, sweeps=3, grid=24):
    """Coordinate search of each knee's position *and* transition shape (levels of one curve may
    differ: a sharp L1 edge beside a smeared, set-associative L2 edge)."""
    knees, shapes = list(knees), list(shapes)
    lx = np.log(x)
    _, rss, _ = _solve(x, y, knees, shapes)
    for _ in range(sweeps):
        moved = False
        for i in range(len(knees)):
            lo = math.log(knees[i - 1]) if i > 0 else lx[0]
            hi = math.log(knees[i + 1]) if i + 1 < len(knees) else lx[-1]
            if hi - lo <= 1e-9:
                continue
            cum = _cum(x, knees, shapes)
            cands = []
            for shape in SHAPES:
                if shape == "step":
                    pos = [v for v in lx if lo <= v < hi] or [lo]
                else:
                    pos = list(np.linspace(lo, hi, grid + 2)[1:-1]) + [math.log(knees[i])]
                cands += [(v, shape) for v in pos]
            batch = np.repeat(cum[None], len(cands), axis=0)
            for m, (v, shape) in enumerate(cands):
                batch[m, :, i + 1] = _served(x, math.exp(v), shape)
            r = _rss_columns(y, batch)
            j = int(np.argmin(r))
            if r[j] < rss - 1e-15:
                v, shape = cands[j]
                if shape != "step":  # finer pass around the best coarse position
                    step = (hi - lo) / (grid + 1)
                    fine = [u for u in np.linspace(v - step, v + step, 13) if lo < u < hi]
                    if fine:
                        fb = np.repeat(cum[None], len(fine), axis=0)
                        for m, u in enumerate(fine):
                            fb[m, :, i + 1] = _served(x, math.exp(u), shape)
                        fr = _rss_columns(y, fb)
                        fj = int(np.argmin(fr))
                        if fr[fj] < r[j]:
                            v = fine[fj]
                knees[i], shapes[i] = math.exp(v), shape
                _, rss, _ = _solve(x, y, knees, shapes)
                moved = True
        if not moved:
            break
    return knees, shapes, rss


def _refine(x, y, knees, model, sweeps=4, grid=24):
    """Coordinate search of each knee in log x between its neighbours."""
    knees = list(knees)
    lx = np.log(x)
    lo_all, hi_all = lx[0], lx[-1]
    _, rss, _ = _solve(x, y, knees, model)
    for _ in range(sweeps):
        moved = False
        for i in range(len(knees)):
            lo = math.log(knees[i - 1]) if i > 0 else lo_all
            hi = math.log(knees[i + 1]) if i + 1 < len(knees) else hi_all
            if hi - lo <= 1e-9:
                continue
            if model == "step":
                # Any knee between two data points fits alike: try the data points themselves.
                # Local search: the seeds are already near a knee.
                here = int(np.searchsorted(lx, math.log(knees[i])))
                cands = [v for v in lx[max(0, here - 12):here + 12] if lo <= v < hi] or [lo]
            else:
                cands = list(np.linspace(lo, hi, grid + 2)[1:-1])
                # then a finer pass around the best coarse candidate
            best_v, best_rss = math.log(knees[i]), rss
            cands = np.asarray(cands, float)
            r = _rss_many(x, y, [knees[:i] + [math.exp(v)] + knees[i + 1:] for v in cands], model)
            j = int(np.argmin(r))
            if r[j] < best_rss - 1e-15:
                best_v, best_rss = float(cands[j]), float(r[j])
            if model != "step":
                step = (hi - lo) / (grid + 1)
                fine = np.linspace(best_v - step, best_v + step, 13)
                fine = fine[(fine > lo) & (fine < hi)]
                if len(fine):
                    r = _rss_many(x, y, [knees[:i] + [math.exp(v)] + knees[i + 1:] for v in fine], model)
                    j = int(np.argmin(r))
                    if r[j] < best_rss - 1e-15:
                        best_v, best_rss = float(fine[j]), float(r[j])
            if abs(best_v - math.log(knees[i])) > 1e-12:
                moved = True
            knees[i] = math.exp(best_v)
            rss = best_rss
        if not moved:
            break
    return knees, rss


def _admissible(x, levels, a, sigma):
    if np.any(~np.isfinite(levels)) or np.any(np.asarray(levels) <= 0):
        return False
    # Every level must serve a good share of the accesses somewhere (a gradual level of capacity
    # r x the previous one serves at most 1 - 1/r of them; r = 1.5 -> 0.33).
    # ... at two measured footprints at least: a level seen at one point only cannot be told
    # from a point on a transition.
    if np.any((a >= 0.3).sum(axis=0) < 2):
        return False
    # Deeper levels are slower (latency, time per byte): each step up must exceed 3 sigma.
    rel = np.diff(np.log(levels))
    return bool(np.all(rel > 3 * sigma))


SHAPES = ("gradual", "step", "smooth2.5", "smooth5", "smooth10", "smooth20")
# Default candidates. On synthetic curves (exact mixtures, and set-associative caches simulated
# with Poisson-distributed set loads) this set scored best; "mixed" (a shape per knee, searched over
# SHAPES) and the other smooth shapes did not detect more levels correctly and cost 2-5x the time.
MODELS = ("gradual", "step", "smooth10")


def detect_levels(x, y, recorded_cv=None, max_levels: int = 6, models=MODELS) -> LevelFit:
    """Levels of a curve y(x) (x > 0, y > 0). Duplicated x are merged by the median."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    if len(x) == 0:
        raise ValueError("no positive finite points")
    order = np.argsort(x)
    x, y = x[order], y[order]
    ux = np.unique(x)
    if len(ux) < len(x):
        y = np.array([np.median(y[x == u]) for u in ux])
        x = ux
    n = len(x)
    sigma = estimate_noise(y, recorded_cv)
    z = np.log(y)
    flat_level = float(np.exp(np.mean(z)))
    flat_rss = float(np.sum(((flat_level - y) / y) ** 2))
    best = LevelFit(x, y, "flat", [], [flat_level], [], sigma, flat_rss / sigma**2 + math.log(max(n, 2)))
    best.candidates.append((1, "flat", best.bic, True))
    k_max = min(max_levels, max(1, n // 2))
    if n < 4 or k_max < 2:
        return best
    seeds = _segment_dp(z, k_max)
    previous = {m: [] for m in models}  # best knees found with one level fewer, per model
    worse_in_a_row = 0
    for k in range(2, k_max + 1):
        bic_before = best.bic
        uniform_fits = []
        for model in models:
            if model == "mixed":
                continue
            # Seeds: the exact k-segment partition, and the (k-1)-level fit with one knee inserted
            # at the data point that lowers the residual most (greedy; catches short plateaus
            # that a piecewise-constant partition spends on ramps).
            inits = []
            starts = seeds.get(k)
            if starts:
                inits.append(sorted(set(float(x[s - 1]) for s in starts[1:])))
            trials = [sorted(previous[model] + [float(v)]) for v in x[:-1]
                      if not any(abs(v - c) <= 1e-9 * v for c in previous[model])]
            if trials:
                r = _rss_many(x, y, trials, model)
                inits += [trials[j] for j in np.argsort(r)[:2] if np.isfinite(r[j])]
            fits = []
            for init in inits:
                if len(init) != k - 1:
                    continue
                knees, _ = _refine(x, y, init, model)
                levels, rss, a = _solve(x, y, knees, model)
                fits.append((rss, knees, levels, a))
            if not fits:
                continue
            rss, knees, levels, a = min(fits, key=lambda t: t[0])
            previous[model] = list(knees)
            uniform_fits.append((rss, model, knees))
            best = _consider(best, x, y, k, model, knees, _shapes(model, k - 1), 2 * k - 1, sigma, n)
        if "mixed" in models and uniform_fits:
            # Per-knee shapes, seeded by each uniform fit: one more parameter per knee.
            mixed = [_refine_mixed(x, y, knees, _shapes(model, k - 1)) for _, model, knees in uniform_fits]
            knees, shapes, _ = min(mixed, key=lambda t: t[2])
            if len(set(shapes)) > 1:
                best = _consider(best, x, y, k, "mixed", knees, shapes, 3 * k - 2, sigma, n)
        # Stop once two more levels in a row did not improve the criterion.
        worse_in_a_row = 0 if best.bic < bic_before else worse_in_a_row + 1
        if worse_in_a_row >= 2:
            break
    if best.knees:
        best.levels = plateau_values(best, y)
    return best


# A level's value is read off the points it serves alone: at least this share in the fitted model ...
PLATEAU_SHARE = 0.95
# ... at this many points or more (a median of fewer is not robust to a point on a transition).
PLATEAU_MIN_POINTS = 3


def plateau_values(fit: LevelFit, y, x=None) -> List[float]:
    """Per level of `fit`: the median of y(x) (x defaults to fit.x; y: the fitted curve, or another
    figure of the same points such as ns) over the points the level serves alone, when there are
    PLATEAU_MIN_POINTS of them; otherwise the least-squares level value of the mixture model.

    Why: the least-squares values are pulled by points on a transition that the chosen shape does
    not follow (a step fitted to an edge that takes two points: one mid-way point at 0.6 x the plateau
    moved an H100 L2 level by 3 %). A median over the level's own plateau is what the curve shows.
    Levels that are never served alone (a gradual mixture) keep the model's value, which is then
    the only estimate of the pure level."""
    x = fit.x if x is None else np.asarray(x, float)
    y = np.asarray(y, float)
    a = _basis(x, fit.knees, fit.shapes)
    model_levels, _, _ = _solve(x, y, fit.knees, fit.shapes)
    out = []
    for j in range(a.shape[1]):
        alone = a[:, j] >= PLATEAU_SHARE
        out.append(float(np.median(y[alone])) if alone.sum() >= PLATEAU_MIN_POINTS else float(model_levels[j]))
    return out


def _consider(best: LevelFit, x, y, k, model, knees, shapes, params, sigma, n) -> LevelFit:
    """BIC of one candidate; returns the better of it and `best` (admissible candidates only)."""
    levels, rss, a = _solve(x, y, knees, shapes)
    bic = rss / sigma**2 + params * math.log(n)
    adm = _admissible(x, levels, a, sigma)
    name = model if model != "mixed" else "mixed(" + ",".join(shapes) + ")"
    best.candidates.append((k, name, bic, adm))
    if not (adm and bic < best.bic):
        return best
    brackets = []
    for c in knees:
        below = x[x <= c * (1 + 1e-9)]
        above = x[x > c * (1 + 1e-9)]
        brackets.append((float(below[-1]) if len(below) else math.nan, float(above[0]) if len(above) else math.nan))
    return LevelFit(x, y, name, [float(c) for c in knees], [float(v) for v in levels], brackets, sigma, bic,
                    best.candidates, list(shapes))


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
