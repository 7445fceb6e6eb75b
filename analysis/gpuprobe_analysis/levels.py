"""Change-point detection of memory-hierarchy levels on noisy curves, for any GPU.

A curve is a figure y(x) over a size x (latency vs footprint, inverse bandwidth vs working set,
latency vs stride). Nothing here knows a device: the number of levels, their values, the capacities
and the shape of each edge are chosen by the data and a penalty derived from the curve's own noise.

Method (documented in docs/analysis.md):
1. Noise: sigma of log(y) from the median absolute second difference (robust to knees and to
   ramps), or the entries' recorded CV if larger; floored at 0.1 % (timer resolution).
2. Physical model: the figure is a mixture of level values weighted by the share of accesses each
   level serves. A level holding C bytes serves, with the levels before it, a share of a footprint F
   that depends on its edge shape (_served): "step", "waysW" (W-way hashed sets; W continuous) or
   "gradual". Each knee has its own shape. Given the knees the level values are a weighted linear
   least-squares solution.
3. Search, per number of levels k: seeds from the exact k-segment partition of log(y), from the
   (k-1)-level fit with one knee inserted or one knee split in two; each seed refined by coordinate
   search of each knee's capacity and shape on grids, the best also by moving adjacent knees together;
   then a continuous joint fit of all capacities and associativities (Levenberg-Marquardt).
4. Model choice: BIC, RSS/sigma^2 + p ln n (p: _params); a fit is admissible only if every level serves >= 30 % of the accesses at two measured points or more, each
   level exceeds the one before by more than 3 sigma (deeper levels are slower: y must be latency or
   time per byte), and its gain over the fit with fewer levels survives removing its most helpful point.
5. Level values: the median of the points a level serves alone, else the model's value (plateau_values).
"""
from __future__ import annotations

import hashlib
import math
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

NOISE_FLOOR = 1e-3  # relative; below timer resolution a curve is treated as this noisy

# What a reported capacity is, for every shape (the method text of the profile quotes it).
CAPACITY_DEFINITION = (
    "capacity of a level = C, the bytes it holds, fitted as a continuous parameter of its edge (never a grid "
    "point): a step edge lies at C (placed mid-way, in log footprint, between the measured points on either "
    "side when none lies on the edge); a W-way set-associative edge loses half its accesses at C(1 - 1/(3W)), "
    "within 2 % of C from 16 ways; a gradual edge starts at C (beyond it the level keeps serving C bytes of the "
    "footprint); the bracket is the last measured footprint at or below C and the first above")


@dataclass
class LevelFit:
    x: np.ndarray
    y: np.ndarray
    model: str  # "flat", or the edge shapes, one per knee, comma-separated
    knees: List[float]  # capacity of level i (i < len(levels)-1): the bytes it holds, in x units
    levels: List[float]  # value of each level, in y units
    brackets: List[tuple]  # per knee: (last x <= capacity, first x beyond), from the data
    noise: float  # relative sigma used
    bic: float
    candidates: list = field(default_factory=list)  # (k, model, bic, admissible) tried
    shapes: List[str] = field(default_factory=list)  # edge shape per knee (SHAPES)

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


# Edge shapes of the grid searches: gradual, set-associative at 4, 16, 64 and 256 ways (edges 3.8, 1.9,
# 1.4 and 1.17x wide from 10 % to 90 %: the last one puts a point mid-way up an edge that takes one
# step of a 4-per-octave sweep), and the step (infinitely many ways: a fully associative LRU cache). The
# continuous fit (_polish) then sets each set-associative knee's associativity within WAYS_RANGE.
SHAPES = ("gradual", "ways4", "ways16", "ways64", "ways256", "step")


def _erfc(x):
    """Complementary error function, elementwise (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7):
    numpy has none, and scipy is not a dependency."""
    ax = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * ax)
    e = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    e = e * np.exp(-ax * ax)
    return np.where(x >= 0, e, 2.0 - e)


def _ways_share(w: float, u):
    """P(Poisson(w u) <= w - 1), continuous in w: the upper regularized incomplete gamma Q(w, w u) by the
    Wilson-Hilferty approximation (|error| < 0.002 for w >= 4 against the exact sum)."""
    z = 3.0 * math.sqrt(w) * (np.cbrt(u) - 1.0 + 1.0 / (9.0 * w))
    return 0.5 * _erfc(z / math.sqrt(2.0))


def _served(x, c, shape: str):
    """Share of the accesses served by the levels up to a level holding c bytes, at footprint x
    (broadcasts). Every shape is parameterized by the same c: the bytes the level holds.
    - "step": a cyclic chain over a fully associative LRU cache: all accesses hit while x <= c.
    - "waysW": a cyclic chain over a W-way set-associative LRU cache with hashed sets: a line hits while
      its set receives at most W lines; the other lines of its set are Poisson(W x / c), so the share is
      P(Poisson(W x / c) <= W - 1). Half the accesses leave at x = c (1 - 1/(3W)).
    - "gradual": a level that keeps c bytes of a larger footprint (random replacement, thrash-resistant
      insertion): min(1, c / x)."""
    if shape == "step":
        return (x <= c * (1 + 1e-12)).astype(float)
    if shape == "gradual":
        return np.minimum(1.0, c / x)
    if shape.startswith("ways"):
        return _ways_share(float(shape[len("ways"):]), x / c)
    raise ValueError(f"unknown edge shape {shape!r}")


def _running_max(a: np.ndarray) -> np.ndarray:
    """np.maximum.accumulate(a, axis=-1), in place: one np.maximum per column. The last axis is short
    (a column per level) and the leading ones long, where numpy's accumulate runs a loop per row; the
    maximum is exact, so the values are the same."""
    for j in range(1, a.shape[-1]):
        np.maximum(a[..., j - 1], a[..., j], out=a[..., j])
    return a


def _diff_last(a: np.ndarray) -> np.ndarray:
    """np.diff(a, axis=-1) (the same subtraction, without np.diff's per-call overhead)."""
    return a[..., 1:] - a[..., :-1]


def _cum(x: np.ndarray, knees: Sequence[float], shapes: Sequence[str]) -> np.ndarray:
    """cum[:, j] = share of the accesses served by levels < j (nested: a level serves what the
    levels before it serve, and more)."""
    cum = np.ones((len(x), len(knees) + 2))
    cum[:, 0] = 0.0
    for j, (c, shape) in enumerate(zip(knees, shapes), start=1):
        cum[:, j] = _served(x, c, shape)
    return _running_max(cum)


def _basis(x: np.ndarray, knees: Sequence[float], shapes: Sequence[str]) -> np.ndarray:
    """Share of the accesses served by each level (columns) at each x (rows)."""
    return _diff_last(_cum(x, knees, shapes))


def _solve(x, y, knees, shapes):
    """Level values by least squares on relative residuals; returns (levels, rss_rel, basis)."""
    a = _basis(x, knees, shapes)
    aw = a / y[:, None]
    # Normal equations (k x k, k <= 8); lstsq only when they are singular (an empty level).
    try:
        levels = np.linalg.solve(aw.T @ aw, aw.sum(axis=0))
    except np.linalg.LinAlgError:
        levels = np.linalg.lstsq(aw, np.ones(len(y)), rcond=None)[0]
    r = aw @ levels - 1.0
    return levels, float(r @ r), a


def _rss_columns(y, cum_batch):
    """Residuals for a batch of cum matrices (m, n, k+1); inf where the levels are not determined."""
    cum_batch = _running_max(np.array(cum_batch, float))
    a = _diff_last(cum_batch) / y[None, :, None]
    ata = np.matmul(a.transpose(0, 2, 1), a)
    atb = a.sum(axis=1)
    out = np.full(len(a), np.inf)
    # Nearly singular systems (a level that serves almost nothing) give huge or infinite residuals:
    # such candidates lose, which is the intent.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ok = np.abs(np.linalg.det(ata)) > 1e-300
        if np.any(ok):
            lv = np.linalg.solve(ata[ok], atb[ok][..., None])[..., 0]
            r = np.matmul(a[ok], lv[..., None])[..., 0] - 1.0
            out[ok] = (r * r).sum(axis=1)
    return np.where(np.isfinite(out), out, np.inf)


def _positions(lx, lo, hi, shape, grid):
    """Candidate log-capacities of one knee strictly between lo and hi. A step between two measured
    footprints fits them all alike: its candidates are the centres of the brackets (log scale), so a
    sharp edge is placed mid-way between the last point below it and the first above."""
    if shape == "step":
        mids = (lx[1:] + lx[:-1]) / 2
        return mids[(mids > lo) & (mids < hi)]
    return np.linspace(lo, hi, grid + 2)[1:-1]


def _batch(x, cum, moves):
    """cum matrices with columns replaced: moves = [(column, log capacities (m,), shape), ...] applied
    to m candidates at once (one move per knee changed); returns (m, n, k+1)."""
    m = len(moves[0][1])
    batch = np.repeat(cum[None], m, axis=0)
    for col, lc, shape in moves:
        batch[:, :, col] = _served(x[None, :], np.exp(lc)[:, None], shape)
    return batch


def _search_knee(x, y, knees, shapes, i, shape_set, grid):
    """Best (rss, capacity, shape) of knee i with the others fixed, on a grid of positions between its
    neighbours for every shape (the continuous fit, _polish, refines the winner)."""
    lx = np.log(x)
    lo = math.log(knees[i - 1]) if i > 0 else lx[0]
    hi = math.log(knees[i + 1]) if i + 1 < len(knees) else lx[-1]
    if hi - lo <= 1e-9:
        return None
    cand = [(shape, v) for shape in shape_set for v in _positions(lx, lo, hi, shape, grid)]
    if not cand:
        return None
    r = _rss_per_shape(x, y, _cum(x, knees, shapes), i + 1, cand)
    j = int(np.argmin(r))
    return float(r[j]), math.exp(cand[j][1]), cand[j][0]


def _rss_per_shape(x, y, cum, col, cand):
    """Residuals of candidates [(shape, log capacity)] for one column of cum, batched by shape."""
    r = np.empty(len(cand))
    order = {}
    for j, (shape, _) in enumerate(cand):
        order.setdefault(shape, []).append(j)
    batch = np.repeat(cum[None], len(cand), axis=0)
    for shape, idx in order.items():
        lc = np.array([cand[j][1] for j in idx])
        batch[idx, :, col] = _served(x[None, :], np.exp(lc)[:, None], shape)
    r[:] = _rss_columns(y, batch)
    return r


def _search_pair(x, y, knees, shapes, i, shape_set, grid=17, reach=1.2, keep=2):
    """Up to `keep` candidates (rss, knees, shapes) moving knees i and i+1 together: for every pair of
    shapes the best positions on a grid within a factor e^reach of where they are; the best pairs of
    shapes first. Coordinate search alone stalls where two edges interact (two smeared edges close
    together, or a sharp edge followed by a gradual one that reaches over it): each knee moved alone
    raises the residual."""
    lx = np.log(x)
    lo = math.log(knees[i - 1]) if i > 0 else lx[0]
    hi = math.log(knees[i + 2]) if i + 2 < len(knees) else lx[-1]
    p1 = np.linspace(math.log(knees[i]) - reach, math.log(knees[i]) + reach, grid)
    p2 = np.linspace(math.log(knees[i + 1]) - reach, math.log(knees[i + 1]) + reach, grid)
    a, b = np.meshgrid(p1, p2, indexing="ij")
    ok = (a > lo) & (a < b) & (b < hi)
    a, b = a[ok], b[ok]
    if len(a) == 0:
        return []
    cum = _cum(x, knees, shapes)
    found = []
    for s1 in shape_set:
        for s2 in shape_set:
            r = _rss_columns(y, _batch(x, cum, [(i + 1, a, s1), (i + 2, b, s2)]))
            j = int(np.argmin(r))
            if np.isfinite(r[j]):
                k2, sh = list(knees), list(shapes)
                k2[i], k2[i + 1], sh[i], sh[i + 1] = math.exp(a[j]), math.exp(b[j]), s1, s2
                found.append((float(r[j]), k2, sh))
    return sorted(found, key=lambda t: t[0])[:keep]


def _refine(x, y, knees, shapes, shape_set=SHAPES, sweeps=3, grid=20, pairs=False):
    """Coordinate search of each knee's capacity (log x, between its neighbours) and edge shape; with
    `pairs`, then of adjacent knees together (each candidate pair polished by coordinate search),
    repeated while that lowers the residual. Levels of one curve may differ in shape: a sharp L1 edge
    beside a smeared set-associative L2 edge and a gradual L2 -> DRAM edge."""
    knees, shapes = list(knees), list(shapes)
    _, rss, _ = _solve(x, y, knees, shapes)
    for _ in range(sweeps):
        moved = False
        for i in range(len(knees)):
            got = _search_knee(x, y, knees, shapes, i, shape_set, grid)
            if got and got[0] < rss - 1e-15:
                rss, knees[i], shapes[i] = got
                moved = True
        if not moved:
            break
    for _ in range(2 if pairs else 0):
        jumped = False
        for i in range(len(knees) - 1):
            for _, k2, s2 in _search_pair(x, y, knees, shapes, i, shape_set):
                k2, s2, r2 = _refine(x, y, k2, s2, shape_set, sweeps, grid)
                if r2 < rss - 1e-15:
                    rss, knees, shapes = r2, k2, s2
                    jumped = True
        if not jumped:
            break
    return knees, shapes, rss


# Bounds of the associativity in the continuous fit: 2 ways is the smoothest edge a cache gives; at
# 4096 ways an edge is sharper than any sweep resolves.
WAYS_RANGE = (2.0, 4096.0)


def _polish(x, y, knees, shapes, iters=25):
    """Joint least-squares refinement (Levenberg-Marquardt, levels solved inside) of every knee's log
    capacity and every set-associative knee's log associativity, continuous. The searches above move
    on grids, one or two knees at a time; two smeared edges close together trade width against
    position, which only a joint move resolves. Step knees stay where they are (bracket centres:
    nothing in the data moves them) and gradual knees keep their shape."""
    knees, shapes = list(knees), list(shapes)
    free = [(i, "c") for i, sh in enumerate(shapes) if sh != "step"]
    free += [(i, "w") for i, sh in enumerate(shapes) if sh.startswith("ways")]
    if not free:
        return knees, shapes, _solve(x, y, knees, shapes)[1]
    lx0, lx1 = math.log(x[0]), math.log(x[-1])
    lw0, lw1 = (math.log(v) for v in WAYS_RANGE)

    def build(th):
        kn, sh = list(knees), list(shapes)
        for (i, kind), v in zip(free, th):
            if kind == "c":
                kn[i] = math.exp(v)
            else:
                sh[i] = f"ways{math.exp(v):.6g}"
        return kn, sh

    def residual(th):
        kn, sh = build(th)
        if any(b <= a for a, b in zip(kn, kn[1:])):
            return None
        lv, _, a = _solve(x, y, kn, sh)
        return (a @ lv) / y - 1.0

    def clip(th):
        return np.array([min(max(v, lx0), lx1) if kind == "c" else min(max(v, lw0), lw1)
                         for (_, kind), v in zip(free, th)])

    th = np.array([math.log(knees[i]) if kind == "c" else math.log(float(shapes[i][len("ways"):]))
                   for i, kind in free])
    r = residual(th)
    if r is None:
        return knees, shapes, _solve(x, y, knees, shapes)[1]
    damp, h = 1e-3, 1e-5
    for _ in range(iters):
        jac = np.empty((len(r), len(th)))
        for j in range(len(th)):
            t2 = th.copy()
            t2[j] += h
            r2 = residual(t2)
            jac[:, j] = 0.0 if r2 is None else (r2 - r) / h
        g, hess = jac.T @ r, jac.T @ jac
        improved = False
        while damp < 1e8:
            try:
                step = np.linalg.solve(hess + damp * np.diag(np.diag(hess) + 1e-12), -g)
            except np.linalg.LinAlgError:
                damp *= 10
                continue
            t2 = clip(th + step)
            r2 = residual(t2)
            if r2 is not None and r2 @ r2 < r @ r:
                gain = r @ r - r2 @ r2
                th, r, damp, improved = t2, r2, damp / 3, True
                break
            damp *= 4
        if not improved or gain < 1e-10 * (r @ r + 1e-30):
            break
    kn, sh = build(th)
    return kn, sh, float(r @ r)


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


# Shapes tried for a newly inserted knee before its shape is searched: one of each family; the knees
# of the exact segmentation start with a middling one.
SEED_SHAPES = ("step", "ways16", "gradual")
DP_SEED_SHAPE = "ways16"
SPLIT = math.sqrt(2.0)


def _detect_levels_job(job):
    """job: (x, y, recorded_cv) or (x, y, recorded_cv, witnesses)."""
    x, y, cv, *rest = job
    return detect_levels(x, y, cv, witnesses=rest[0] if rest else ())


# A directory where fits are kept between runs (scripts/main_job.sh fits the timing run's curves
# while the GPU runs the counter passes, and the report then finds them there). A fit is stored
# under the hash of its inputs and of this module's source, so a changed curve or a changed method
# is never served an old fit.
FIT_CACHE_ENV = "GPUPROBE_FIT_CACHE"


def _fit_cache_key(job: Tuple) -> str:
    h = hashlib.sha256()
    with open(__file__, "rb") as f:
        h.update(f.read())
    h.update(pickle.dumps(tuple(np.asarray(a, float).tobytes() if isinstance(a, (list, np.ndarray)) else a
                                for a in job)))
    return h.hexdigest()


def _fit_cache_get(cache: str, key: str) -> Optional[LevelFit]:
    try:
        with open(os.path.join(cache, key + ".pickle"), "rb") as f:
            fit = pickle.load(f)
    except FileNotFoundError:
        return None
    return fit if isinstance(fit, LevelFit) else None


def _fit_cache_put(cache: str, key: str, fit: LevelFit) -> None:
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, key + ".pickle")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(fit, f)
    os.replace(tmp, path)  # a reader never sees half a file


def detect_levels_many(jobs: Sequence[Tuple]) -> List[LevelFit]:
    """detect_levels(x, y, recorded_cv[, witnesses]) for each job, in order. The fits are independent and each
    takes up to seconds (a full H100 run has about 50 curves): they run in worker processes, one per
    core, when there are several cores and jobs; the results are those of the sequential calls.
    With $GPUPROBE_FIT_CACHE set, fits found there are reused and new ones stored."""
    jobs = list(jobs)
    cache = os.environ.get(FIT_CACHE_ENV)
    keys = [_fit_cache_key(j) for j in jobs] if cache else []
    out: List[Optional[LevelFit]] = [_fit_cache_get(cache, k) for k in keys] if cache else [None] * len(jobs)
    todo = [i for i, fit in enumerate(out) if fit is None]
    workers = min(len(todo), os.cpu_count() or 1)
    if workers < 2:
        fits = [_detect_levels_job(jobs[i]) for i in todo]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            fits = list(pool.map(_detect_levels_job, [jobs[i] for i in todo]))
    for i, fit in zip(todo, fits):
        out[i] = fit
        if cache:
            _fit_cache_put(cache, keys[i], fit)
    return out


def detect_levels(x, y, recorded_cv=None, max_levels: int = 6, shapes=SHAPES, witnesses=()) -> LevelFit:
    """Levels of a curve y(x) (x > 0, y > 0). Duplicated x are merged by the median. `witnesses`:
    other curves (x, y, recorded_cv) measured independently over the same levels (the L1-bypassing chain
    beside the L1-allocating one): a level whose gain rests on one point of this curve is kept when a
    witness prefers it too (_witnessed)."""
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
    flat_level, flat_rss = _flat_rss(y)
    best = LevelFit(x, y, "flat", [], [flat_level], [], sigma, flat_rss / sigma**2 + _params([]) * math.log(max(n, 2)))
    best.candidates.append((1, "flat", best.bic, True))
    k_max = min(max_levels, max(1, n // 2))
    if n < 4 or k_max < 2:
        return best
    seeds = _segment_dp(z, k_max)
    uniform = "gradual" in shapes and any(_family(sh) == "ending" for sh in shapes)
    mids = np.exp((np.log(x[1:]) + np.log(x[:-1])) / 2)
    seed_shapes = [s for s in SEED_SHAPES if s in shapes] or list(shapes[:1])
    previous = ([], [])  # knees and shapes of the best fit with one level fewer
    worse_in_a_row = 0
    for k in range(2, k_max + 1):
        bic_before = best.bic
        # Seeds: the exact k-segment partition (knees between the segments), and the (k-1)-level fit
        # with one knee inserted where it lowers the residual most (greedy; catches short plateaus
        # that a piecewise-constant partition spends on ramps).
        inits = []
        starts = seeds.get(k)
        if starts:
            knees = [float(mids[s - 1]) for s in starts[1:]]
            inits.append((knees, [DP_SEED_SHAPE] * len(knees)))
        pk, ps = previous
        trials = []
        for v in mids:
            if any(abs(math.log(v / c)) < 1e-9 for c in pk):
                continue
            j = int(np.searchsorted(pk, v))
            for sh in seed_shapes:
                trials.append((pk[:j] + [float(v)] + pk[j:], ps[:j] + [sh] + ps[j:]))
        if trials:
            r = _rss_columns(y, np.stack([_cum(x, kn, sh) for kn, sh in trials]))
            inits += [trials[j] for j in np.argsort(r)[:2] if np.isfinite(r[j])]
        # ... and each knee of the (k-1)-level fit split in two, an octave apart: a wide edge fitted
        # with one level too few is often two edges close together (a near and a far L2 partition).
        for j, c in enumerate(pk):
            for sh in sorted({ps[j], DP_SEED_SHAPE}):
                inits.append((pk[:j] + [c / SPLIT, c * SPLIT] + pk[j + 1:], ps[:j] + [sh] * 2 + ps[j + 1:]))
        fits = []
        for knees, shp in inits:
            if len(knees) != k - 1:
                continue
            fits.append(_refine(x, y, knees, shp, shapes))
            # The search above minimizes the residual over every shape; a fit whose edges are all of
            # one family costs fewer parameters (_params) and must be a candidate of its own: gradual
            # from every seed (one shape: cheap), ending edges from the best seed below.
            if uniform:
                fits.append(_refine(x, y, knees, ["gradual"] * len(knees), ("gradual",)))
        if not fits:
            break
        fits = sorted((_polish(x, y, kn, sh) for kn, sh, _ in fits), key=lambda t: t[2])
        if uniform:
            ending = [sh for sh in shapes if _family(sh) == "ending"]
            fits.append(_polish(x, y, *_refine(x, y, fits[0][0], [DP_SEED_SHAPE] * (k - 1), ending)[:2]))
        fits.insert(0, _polish(x, y, *_refine(x, y, fits[0][0], fits[0][1], shapes, pairs=True)[:2]))
        previous = fits[0][:2]
        # Every seed's fit is a candidate: two smeared edges close together have near-equal fits, of
        # which the best may leave a level too few points to be admissible while another does not.
        for knees, shp, _ in sorted(fits, key=lambda t: t[2]):
            best = _consider(best, x, y, k, knees, shp, sigma, shapes, witnesses)
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


def _flat_rss(y):
    """One level: its value (geometric mean) and the relative residual."""
    v = float(np.exp(np.mean(np.log(y))))
    return v, float(np.sum(((v - y) / y) ** 2))


def _family(shape: str) -> str:
    """Edges that end (a step is the limit of a set-associative edge of many ways) or do not."""
    return "gradual" if shape == "gradual" else "ending"


def _params(shapes: Sequence[str]) -> int:
    """Free parameters of a fit with these edge shapes: the level values, each knee's capacity, each
    set-associative knee's associativity (continuous), and, when the edges are not all of one family
    (ending or gradual), one per knee for its family. A curve cannot always tell the families apart
    (a gradual sub-level only 2x its predecessor never serves more than half of the accesses, and a
    step fits it about as well): mixing them must buy more than the choice it adds per knee."""
    mixed = len({_family(sh) for sh in shapes}) > 1
    return 2 * len(shapes) + 1 + sum(1 for sh in shapes if sh.startswith("ways")) + (len(shapes) if mixed else 0)


def _consider(best: LevelFit, x, y, k, knees, shapes, sigma, shape_set, witnesses=()) -> LevelFit:
    """BIC of one candidate; returns the better of it and `best` (admissible candidates only).
    The candidate must also win without the one point it improves most, both fits re-fitted without
    that point: a level whose gain rests on a single point is that point's error (an outlier beside
    an edge), not a level; unless an independent curve of the same levels prefers it as well
    (_witnessed): an error of one point does not repeat in another measurement, a level does (on a
    coarse sweep one point may be all that lies past an edge)."""
    n = len(x)
    levels, rss, a = _solve(x, y, knees, shapes)
    bic = rss / sigma**2 + _params(shapes) * math.log(n)
    adm = _admissible(x, levels, a, sigma)
    name = ",".join(shapes)
    best.candidates.append((k, name, bic, adm))
    if not (adm and bic < best.bic):
        return best
    gain = ((best.predict(x) - y) / y) ** 2 - ((a @ levels - y) / y) ** 2
    keep = np.arange(n) != int(np.argmax(gain))
    xs, ys = x[keep], y[keep]

    def bic_without(kn, sh):
        if not kn:
            return _flat_rss(ys)[1] / sigma**2 + _params([]) * math.log(n - 1)
        kn, sh, r = _polish(xs, ys, *_refine(xs, ys, kn, sh, shape_set)[:2])
        lv, r, aa = _solve(xs, ys, kn, sh)
        # Not _admissible: a level seen at two points is one point short of it here, yet its gain
        # does not rest on one point.
        if np.any(~np.isfinite(lv)) or np.any(lv <= 0):
            return math.inf
        return r / sigma**2 + _params(sh) * math.log(n - 1)

    if bic_without(list(knees), list(shapes)) >= bic_without(list(best.knees), list(best.shapes)):
        if not _witnessed(witnesses, knees, shapes, best.knees, best.shapes):
            best.candidates[-1] = (k, name, bic, "rests on one point")
            return best
        best.candidates[-1] = (k, name, bic, "rests on one point, witnessed")
    return LevelFit(x, y, name, [float(c) for c in knees], [float(v) for v in levels], brackets(x, knees), sigma,
                    bic, best.candidates, list(shapes))


def _witnessed(witnesses, knees, shapes, best_knees, best_shapes) -> bool:
    """Whether every witness curve (x, y, recorded_cv) prefers the candidate's edges to the best fit's
    by the same criterion (BIC with the witness's own noise): the edges stay where this curve put them
    (refitted on the witness they would drift to its own best, and a witness lacking a level, the L1 for
    the L1-bypassing chain, would move that level's edge onto another); only the level values are solved
    on the witness. A level the witness lacks then costs both fits alike."""
    seen = False
    for wx, wy, wcv in witnesses:
        wx, wy = np.asarray(wx, float), np.asarray(wy, float)
        ok = np.isfinite(wx) & np.isfinite(wy) & (wx > 0) & (wy > 0)
        wx, wy = wx[ok], wy[ok]
        order = np.argsort(wx)
        wx, wy = wx[order], wy[order]
        if len(np.unique(wx)) < len(wx) or len(wx) < 4:
            continue
        wsigma = estimate_noise(wy, wcv)

        def bic(kn, sh):
            kn, sh = list(kn), list(sh)
            if not kn:
                return _flat_rss(wy)[1] / wsigma**2 + _params([]) * math.log(len(wx))
            lv, r, _ = _solve(wx, wy, kn, sh)
            if np.any(~np.isfinite(lv)) or np.any(lv <= 0):
                return math.inf
            return r / wsigma**2 + _params(sh) * math.log(len(wx))

        b_best = bic(best_knees, best_shapes)
        if not bic(knees, shapes) < b_best - 1e-9 * max(1.0, abs(b_best)):
            return False
        seen = True
    return seen


def brackets(x, knees) -> List[tuple]:
    """Per capacity: (last measured footprint <= it, first one beyond), nan where there is none."""
    out = []
    for c in knees:
        below = x[x <= c * (1 + 1e-9)]
        above = x[x > c * (1 + 1e-9)]
        out.append((float(below[-1]) if len(below) else math.nan, float(above[0]) if len(above) else math.nan))
    return out
