"""Small model fits: the alpha-beta (latency-bandwidth) transfer model."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

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
