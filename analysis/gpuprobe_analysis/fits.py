"""Small model fits: the alpha-beta (latency-bandwidth) transfer model."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np


HUBER_K = 1.345  # Huber's constant (95 % efficiency under Gaussian residuals)
IRLS_ITERATIONS = 20
OUTLIER_SCALES = 3.0


@dataclass
class AlphaBeta:
    alpha_s: float  # fixed cost per transfer, seconds
    beta_bps: float  # asymptotic bandwidth, bytes per second
    alpha_stderr_s: float
    beta_stderr_bps: float
    rms_rel_error: float  # root mean square of (model - measured) / measured
    max_rel_error: float
    n: int
    outliers: int = 0  # points whose relative residual exceeds OUTLIER_SCALES robust scales
    robust_rel_scale: float = math.nan  # 1.4826 x MAD of the relative residuals (robust sigma)
    outlier_sizes: tuple = ()

    @property
    def half_bandwidth_bytes(self) -> float:
        """n_1/2: the size at which half of beta is reached (alpha * beta)."""
        return self.alpha_s * self.beta_bps

    def predict(self, size_bytes) -> np.ndarray:
        return self.alpha_s + np.asarray(size_bytes, float) / self.beta_bps


def fit_alpha_beta(size_bytes: Sequence[float], seconds: Sequence[float]) -> AlphaBeta:
    """time(s) = alpha + s / beta by weighted least squares with weights 1/time^2, i.e. on relative
    residuals, so that microsecond transfers count as much as 100 ms ones."""
    s = np.asarray(size_bytes, float)
    t = np.asarray(seconds, float)
    ok = np.isfinite(s) & np.isfinite(t) & (s > 0) & (t > 0)
    s, t = s[ok], t[ok]
    if len(s) < 2 or len(np.unique(s)) < 2:
        raise ValueError("alpha-beta fit needs at least two distinct sizes")
    a = np.column_stack([np.ones_like(s), s]) / t[:, None]
    # Iteratively reweighted least squares with Huber weights on the relative residuals: a few
    # transfers that hit a slow path (e.g. a bimodal per-call cost) must not drag alpha and beta.
    w = np.ones_like(t)
    for _ in range(IRLS_ITERATIONS):
        coef, *_ = np.linalg.lstsq(a * w[:, None], w, rcond=None)
        rel = (a @ coef) - 1.0
        scale = 1.4826 * float(np.median(np.abs(rel - np.median(rel))))
        if not scale > 0:
            break
        u = np.abs(rel) / (HUBER_K * scale)
        w = np.sqrt(1.0 / np.maximum(u, 1.0))  # Huber: 1 inside k robust sigmas, k sigma / residual beyond
    alpha, gamma = float(coef[0]), float(coef[1])
    rel = (a @ coef) - 1.0
    scale = 1.4826 * float(np.median(np.abs(rel - np.median(rel))))
    out = np.abs(rel) > OUTLIER_SCALES * scale if scale > 0 else np.zeros(len(rel), bool)
    dof = max(len(s) - 2, 1)
    sigma2 = float(rel @ rel) / dof
    try:
        cov = sigma2 * np.linalg.inv(a.T @ a)
        se_alpha, se_gamma = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
    except np.linalg.LinAlgError:
        se_alpha = se_gamma = math.nan
    beta = 1.0 / gamma if gamma > 0 else math.inf
    se_beta = se_gamma / gamma**2 if gamma > 0 else math.nan
    return AlphaBeta(alpha, beta, se_alpha, se_beta, float(math.sqrt(np.mean(rel**2))),
                     float(np.max(np.abs(rel))), int(len(s)), int(out.sum()), scale,
                     tuple(float(v) for v in s[out]))


# The alpha-beta model holds when it predicts the measured times within this rms relative error: one
# verdict, computed here, for the summary, the transfer table and stdout alike.
ALPHA_BETA_RMS_MAX = 0.10
MIN_REGIME_SIZES = 4  # distinct sizes each regime of a two-regime fit needs


def alpha_beta_holds(ab: AlphaBeta) -> bool:
    """The model predicts the times within ALPHA_BETA_RMS_MAX rms, with a fixed cost no less than 0 (a
    negative alpha fits a bend in the curve, not a cost per call)."""
    return ab.rms_rel_error <= ALPHA_BETA_RMS_MAX and ab.alpha_s >= 0


# β is a bandwidth only where bytes take a measurable part of the time. It is quoted only where the
# fitted range's largest transfer spends at least BETA_MIN_TERM_RATIO x α moving its bytes (size / β
# >= α, i.e. the range reaches n½ = α·β, where half the bandwidth is reached): below that the slope is
# a few per cent of times that are all α, and noise on them gives any β (2 B–32 KiB gave 118 GB/s on
# the H100, 0.12 GB/s on another curve). Nor is a β quoted that exceeds the highest rate any size of
# the curve reached by more than the model's own error (ALPHA_BETA_RMS_MAX): the larger sizes show the
# link never carries it.
BETA_MIN_TERM_RATIO = 1.0


def beta_not_quoted(fit: AlphaBeta, hi_bytes: float, curve_peak_bps: float) -> Optional[str]:
    """Why the fit's β is no bandwidth the transfers show (BETA_MIN_TERM_RATIO, the curve's peak), or None
    when it may be quoted. A fit with no time per byte (β infinite) has none to quote either."""
    if not (math.isfinite(fit.beta_bps) and fit.beta_bps > 0):
        return "size-independent: no time per byte"
    term = hi_bytes / fit.beta_bps
    if fit.alpha_s > 0 and term < BETA_MIN_TERM_RATIO * fit.alpha_s:
        return (f"the bytes take {term / fit.alpha_s:.2g} x α at its largest size, {hi_bytes:.4g} B; β needs sizes "
                f"up to n½ = α·β = {fit.half_bandwidth_bytes:.3g} B")
    if math.isfinite(curve_peak_bps) and fit.beta_bps > curve_peak_bps * (1 + ALPHA_BETA_RMS_MAX):
        return (f"{fit.beta_bps / 1e9:.4g} GB/s is above the {curve_peak_bps / 1e9:.4g} GB/s any size reached, "
                f"by more than the model's {100 * ALPHA_BETA_RMS_MAX:.0f} %")
    return None


@dataclass
class Regime:
    """An alpha-beta fit over the sizes from lo_bytes to hi_bytes (both measured, inclusive)."""
    lo_bytes: float
    hi_bytes: float
    fit: AlphaBeta


def fit_two_regimes(size_bytes: Sequence[float], seconds: Sequence[float]):
    """The split of the sizes into a small and a large regime, each with its own alpha and beta, that
    minimises the rms relative error over all points; None when too few distinct sizes (each regime
    needs MIN_REGIME_SIZES)."""
    s = np.asarray(size_bytes, float)
    t = np.asarray(seconds, float)
    ok = np.isfinite(s) & np.isfinite(t) & (s > 0) & (t > 0)
    s, t = s[ok], t[ok]
    sizes = np.unique(s)
    best = None
    for k in range(MIN_REGIME_SIZES, len(sizes) - MIN_REGIME_SIZES + 1):
        lo, hi = s < sizes[k], s >= sizes[k]
        try:
            a, b = fit_alpha_beta(s[lo], t[lo]), fit_alpha_beta(s[hi], t[hi])
        except ValueError:
            continue
        rms = math.sqrt((a.rms_rel_error**2 * a.n + b.rms_rel_error**2 * b.n) / (a.n + b.n))
        if best is None or rms < best[0]:
            best = (rms, Regime(float(sizes[0]), float(sizes[k - 1]), a), Regime(float(sizes[k]), float(sizes[-1]), b))
    return None if best is None else best[1:]
