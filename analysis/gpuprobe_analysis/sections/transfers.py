"""Host-device transfers (transfer.host, transfer.memcpy_baseline; baseline.memcpy_d2d): the α-β model
per (direction, memory, engine), where it does not hold two regimes or the measured best rate."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from .. import families as F
from .. import profile_results as R
from ..curves import Curve
from ..fits import ALPHA_BETA_RMS_MAX, BETA_MIN_TERM_RATIO, alpha_beta_holds, beta_not_quoted, fit_alpha_beta, fit_two_regimes
from ..formatting import Link, fmt
from ..results import Entry, ResultSet, finite
from . import AnalysisInputs, FamilySection, register


@dataclass
class TransfersResult:
    transfers: Optional[R.Transfers]
    baseline: Optional[List[R.D2dBaseline]]
    curves: List[Curve]  # the fitted curves (figure)


def _transfers(rs: ResultSet, curves: List[Curve]) -> Optional[R.Transfers]:
    ents = rs.by_family("transfer.host")
    if not ents and not rs.by_family("transfer.memcpy_baseline"):
        return None
    rows = []
    for key, grp in sorted(F.group(ents, ("direction", "memory", "engine")).items(), key=lambda t: str(t[0])):
        sizes, secs, used = [], [], []
        for e in grp:
            s, t = transfer_point(e)
            if s and t:
                sizes.append(s), secs.append(t), used.append(e)
        keyd = dict(zip(("direction", "memory", "engine"), key))
        row = R.TransferFit(key=keyd, points=len(used), source=F.provenance(grp))
        rows.append(row)
        try:
            ab = fit_alpha_beta(sizes, secs)
        except ValueError as exc:  # too few sizes, or no positive time: no model for this key
            row.fit = f"not fitted: {exc}"
            continue
        cvs = [e.cv for e in used if math.isfinite(e.cv)]
        med_cv = float(np.median(cvs)) if cvs else None
        row.model = transfer_model(ab, sizes, secs, med_cv)
        curves.append(Curve("transfer.host", keyd, used, np.array(sizes), np.array(secs),
                                              None, [], "seconds", ab))
    base = [R.TransferBaseline(entry=e.name, direction=F.text(e, "direction"), size_bytes=finite(F.num(e, "size")),
                               value=e.value, unit=e.unit, cv=finite(e.cv), method=e.method)
            for e in rs.by_family("transfer.memcpy_baseline")]
    return R.Transfers(fits=rows, baseline=base, method=(
        "time(s) = alpha + s/beta per (direction, memory, engine), least squares on relative residuals "
        "(weights 1/t^2), made robust by IRLS with Huber weights (k = 1.345 robust sigmas); fit error = RMS "
        "and max relative residual over all points, robust sigma = 1.4826 MAD; outliers = points beyond 3 "
        "robust sigmas (listed: a slow path or a bimodal per-call cost, not fitted); the model holds when its rms "
        "error is at most %.0f %%; where it does not, alpha and beta are not quoted as the transfer's figures: "
        "a small-size and a large-size regime are fitted apart (the split with the least rms error) and the "
        "summary quotes the regimes that hold, else the measured curve's best rate. A fit's beta is quoted only "
        "where its sizes carry bandwidth: its largest transfer spends at least %g x alpha moving bytes (the range "
        "reaches n½ = alpha x beta, the size at half the bandwidth), and beta is at most the curve's highest "
        "measured rate plus the model's error; otherwise alpha alone (the regime's beta column is empty and its "
        "note says why)" % (100 * ALPHA_BETA_RMS_MAX, BETA_MIN_TERM_RATIO)))


def _baseline(rs: ResultSet) -> Optional[List[R.D2dBaseline]]:
    ents = rs.by_family("baseline.memcpy_d2d")
    if ents:
        return [R.D2dBaseline(entry=e.name, size_bytes=finite(F.num(e, "size")), value=e.value,
                                       unit=e.unit, cv=finite(e.cv)) for e in ents]
    return None


def transfer_model(ab, sizes, secs, med_cv) -> R.AlphaBetaFigures:
    """The alpha-beta figures of one transfer curve with the verdict (computed here only, from
    fits.alpha_beta_holds) and, where the model does not hold, what does: two regimes, or the
    measured curve's best rate."""
    fits = alpha_beta_holds(ab)
    rms = f"rms error {100 * ab.rms_rel_error:.0f} %"
    noisy = med_cv is not None and ab.rms_rel_error <= 2.0 * max(med_cv, 0.01)
    if fits:
        verdict = (f"model fits ({rms}, at most {100 * ALPHA_BETA_RMS_MAX:.0f} %)" +
                   ("; residuals at the level of the points' own spread" if noisy else ""))
    elif ab.alpha_s < 0:
        verdict = f"model does not fit: a negative fixed cost (α {ab.alpha_s * 1e6:.3g} µs) bends it to the points"
    elif ab.outliers and ab.robust_rel_scale <= ALPHA_BETA_RMS_MAX:
        verdict = (f"model does not fit ({rms} > {100 * ALPHA_BETA_RMS_MAX:.0f} %): the bulk fits, "
                   f"{ab.outliers} points far off (a slow path or a bimodal per-call cost)")
    elif noisy:
        verdict = (f"model does not fit ({rms} > {100 * ALPHA_BETA_RMS_MAX:.0f} %): the points themselves "
                   f"spread by {100 * med_cv:.0f} % (median CV), so the times vary from call to call")
    else:
        verdict = (f"model does not fit ({rms} > {100 * ALPHA_BETA_RMS_MAX:.0f} %, well above the points' own "
                   "spread): two regimes")
    out = R.AlphaBetaFigures(
        alpha_us=ab.alpha_s * 1e6, alpha_stderr_us=ab.alpha_stderr_s * 1e6,
        beta_gbps=ab.beta_bps / 1e9, beta_stderr_gbps=ab.beta_stderr_bps / 1e9,
        half_bandwidth_bytes=ab.half_bandwidth_bytes, rms_rel_error=ab.rms_rel_error,
        max_rel_error=ab.max_rel_error, robust_rel_scale=ab.robust_rel_scale,
        outliers=ab.outliers, outlier_sizes_bytes=list(ab.outlier_sizes), median_point_cv=med_cv,
        verdict=verdict, fits=fits, rms_threshold=ALPHA_BETA_RMS_MAX)
    def ab_text(a_us: float, b_gbps: Optional[float], note: str) -> str:
        # β only where the sizes carry bandwidth (fits.beta_not_quoted); with no time per byte left
        # (slope <= 0) the calls cost alpha whatever their size.
        if b_gbps is not None:
            return f"β {b_gbps:.4g} GB/s, α {a_us:.4g} µs"
        if note.startswith("size-independent"):
            return f"α {a_us:.4g} µs, size-independent"
        return f"α {a_us:.4g} µs, no β (" + ("sizes below n½" if "n½" in note else "above the measured peak") + ")"
    s, t = np.asarray(sizes, float), np.asarray(secs, float)
    rates = s / t
    i = int(np.argmax(rates))
    peak_bps = float(rates[i])
    if fits:
        out.beta_note = beta_not_quoted(ab, float(np.max(s)), peak_bps) or ""
        if out.beta_note:
            out.beta_gbps = out.beta_stderr_gbps = None
        out.summary = ab_text(out.alpha_us, out.beta_gbps, out.beta_note)
        return out
    out.measured_peak_gbps, out.measured_peak_at_bytes = peak_bps / 1e9, float(s[i])
    pair = fit_two_regimes(s, t)
    parts = []
    if pair is not None:
        out.regimes = []
        for r in pair:
            note = beta_not_quoted(r.fit, r.hi_bytes, peak_bps) or ""
            out.regimes.append(R.TransferRegime(
                lo_bytes=r.lo_bytes, hi_bytes=r.hi_bytes, alpha_us=r.fit.alpha_s * 1e6,
                beta_gbps=None if note else r.fit.beta_bps / 1e9, rms_rel_error=r.fit.rms_rel_error,
                fits=alpha_beta_holds(r.fit), beta_note=note))
        for r in out.regimes:
            where = f"{fmt_size(r.lo_bytes)}–{fmt_size(r.hi_bytes)}"
            parts.append(f"{where}: {ab_text(r.alpha_us, r.beta_gbps, r.beta_note)}" if r.fits else
                         f"{where}: no α-β model (" + (f"rms error {100 * r.rms_rel_error:.0f} %)" if
                                                       r.rms_rel_error > ALPHA_BETA_RMS_MAX else "negative α)"))
    out.summary = (f"α-β model does not fit (rms error {100 * ab.rms_rel_error:.0f} %); "
                   + ("; ".join(parts) + "; " if parts and any(r.fits for r in out.regimes) else "")
                   + f"measured up to {out.measured_peak_gbps:.4g} GB/s (at {fmt_size(out.measured_peak_at_bytes)})")
    return out


def fmt_size(b: float) -> str:
    """A transfer size in the largest binary unit that keeps it whole-ish (256 MiB, 4 KiB, 12 B)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def transfer_point(e: Entry):
    """(bytes moved, seconds) of one transfer: per op when the sample holds several; bytes moved
    (bidir: both ways) so that beta is the bandwidth the entries report."""
    ops = e.num("ops_per_sample")
    per = ops if math.isfinite(ops) and ops > 0 else 1.0
    size = e.num("bytes_per_sample") / per
    if not math.isfinite(size):
        size = F.num(e, "size")
    t = e.num("ns_per_op") * 1e-9 if math.isfinite(ops) and ops > 0 else math.nan
    if not math.isfinite(t):
        t = e.num("time_median_s") / per
    if not (math.isfinite(size) and math.isfinite(t) and size > 0 and t > 0):
        return None, None
    return size, t


def analyze(inputs: AnalysisInputs) -> TransfersResult:
    curves: List[Curve] = []
    return TransfersResult(_transfers(inputs.rs, curves), _baseline(inputs.rs), curves)


def transfers_figure(tr: list, outdir: str):
    """Small multiples: one column per direction, time per transfer above and bandwidth below; within
    a column one colour and marker per (memory, engine), the same in every column: 15 curves in one
    axes in near-identical colours could not be told apart."""
    from .. import plots  # matplotlib only when the report draws
    directions = sorted({str(c.key.get("direction")) for c in tr}, key=lambda d: ("h2d", "d2h", "bidir").index(d)
                        if d in ("h2d", "d2h", "bidir") else 9)
    label = lambda c: "/".join(str(v) for k, v in c.key.items() if v is not None and k != "direction")  # noqa: E731
    labels = sorted({label(c) for c in tr}, key=plots.natural_key)
    fig, axes = plots.plt.subplots(2, len(directions), figsize=(4.6 * len(directions) + 2.6, 7.4), squeeze=False,
                             sharex=True, sharey="row")
    for j, d in enumerate(directions):
        top, bottom = axes[0][j], axes[1][j]
        for c in sorted((c for c in tr if str(c.key.get("direction")) == d), key=lambda c: labels.index(label(c))):
            st = plots.style(labels.index(label(c)))
            xs = np.geomspace(c.x.min(), c.x.max(), 200)
            top.plot(c.x, c.y * 1e6, ls="none", ms=4, fillstyle="none", label=label(c), **st)
            top.plot(xs, c.ab.predict(xs) * 1e6, "-", lw=0.8, color=st["color"])
            bottom.plot(c.x, c.x / c.y / 1e9, ls="none", ms=4, fillstyle="none", label=label(c), **st)
            bottom.plot(xs, xs / c.ab.predict(xs) / 1e9, "-", lw=0.8, color=st["color"])
        top.set_title(d.upper() if d in ("h2d", "d2h") else d, fontsize=10)
        top.set_yscale("log")
        for ax in (top, bottom):
            plots._bytes_axis(ax)
            plots._thin_ticks(ax)
            ax.grid(True, which="both", alpha=0.3)
        bottom.set_xlabel("transfer size (bytes, log scale)")
    axes[0][0].set_ylabel("time per transfer (µs, log scale)")
    axes[1][0].set_ylabel("bandwidth (GB/s)")
    fig.suptitle("Host-device transfers: points measured, lines = robust α + s/β fit; one column per direction")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    plots.figure_legend(fig, list(axes.flat))
    return plots.Figure("transfers", "Host-device transfers with the α-β model",
                  "One column per direction; colour and marker = host memory / engine, the same in every column. "
                  "Fit per (direction, memory, engine); parameters in the transfer table.",
                  [F.provenance(c.entries) for c in tr], plots._save(fig, outdir, "transfers"))


def summary_transfers(data: dict) -> list:
    """The transfer fits the summary shows: pinned host memory, copy engine, one per direction (what
    an application that cares about transfer speed uses). The other memories and engines (a dozen
    fits on a GPU that has them all) stay in the transfers section."""
    fits = (data.get("transfers") or {}).get("fits") or []
    out = []
    for direction in ("h2d", "d2h"):
        f = next((f for f in fits if f["key"].get("direction") == direction and f["key"].get("memory") == "pinned"
                  and f["key"].get("engine") in ("ce", None)), None)
        if f is not None:
            out.append(f)
    return out


def summary_rows(an: TransfersResult, data: dict) -> List[list]:
    rows = []
    for f in summary_transfers(data):
        k = f["key"]
        rows.append([f"{k['direction'].upper()} {k['memory']} transfer",
                     f.get("summary") or f"β {fmt(f.get('beta_gbps'))} GB/s, α {fmt(f.get('alpha_us'))} µs",
                     f"α + size/β fit over {f['points']} sizes ({k.get('engine') or '?'})" if f.get("fits", True) else
                     f"{f['points']} sizes measured ({k.get('engine') or '?'}); the transfer table has the fits",
                     "–", "–",
                     Link("transfers", "transfers")])
    return rows


def _profile_keys(an: TransfersResult) -> dict:
    return {k: R.to_json(v) for k, v in (("transfers", an.transfers), ("baseline", an.baseline)) if v is not None}


SECTION = register(FamilySection(
    id="transfers", title="Host-device transfers (α-β model)", families=(), after=(), core=True, analyze=analyze,
    content=lambda an, figdir: {"figures": [transfers_figure(an.curves, figdir)] if an.curves else []},
    profile_keys=_profile_keys, summary_rows=summary_rows, link_text="transfers"))
