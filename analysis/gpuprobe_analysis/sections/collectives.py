"""Collective ceilings from transfer.collective (NCCL; docs/probes.md#collectives).

Per operation and group size G: the algorithm and bus bandwidth against size, the α-β model
time = α + size·β (β kept as its inverse, a bandwidth) and the peak bus bandwidth.

Conventions are nccl-tests': an entry's size is the bytes of the largest buffer of one rank (allgather:
the receive buffer, reduce-scatter: the send buffer); algbw = size / time; busbw = algbw × factor, with
factor 2(G−1)/G for allreduce, (G−1)/G for reduce-scatter and allgather, 1 for reduce and broadcast.

The fit is fits.fit_alpha_beta, the one of the host transfers: least squares on the relative residuals
over every size (so microsecond calls fix α as much as gigabyte calls fix β), made robust by Huber
IRLS. NCCL changes protocol with the size (LL, LL128, Simple), so the model is a summary of a
piecewise curve: its rms relative error says how well it summarises.

`reduction_time(fits, op, G, nbytes)` is the model's time for other modules (the multi-GPU SYMV
bound). `analyze` returns None without entries; `section` is what the report's "Multi-GPU:
collectives" section shows (nothing at all without entries), `summary` and `headline` what its
summary says of them; `to_json` is what device-profile.json holds under "collectives".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from .. import families as F
from . import FamilySection, register
from ..fits import AlphaBeta, fit_alpha_beta
from ..formatting import fmt_bytes
from ..results import Entry, ResultSet

FAMILY = "transfer.collective"
OPS = ("allreduce", "reduce", "reducescatter", "allgather", "broadcast")  # the probe's op names, in its order
# The report section this module writes (report.build_report places it after peer-to-peer, else after
# the host transfers).


def op_name(op: str) -> str:
    """The probe's name of an operation, also from "all_reduce", "reduce-scatter", "AllGather"..."""
    key = op.lower().replace("_", "").replace("-", "").replace(" ", "")
    if key not in OPS:
        raise ValueError(f"unknown collective {op!r} (known: {', '.join(OPS)})")
    return key


def busbw_factor(op: str, ranks: int) -> float:
    """nccl-tests' factor from algorithm to bus bandwidth."""
    op = op_name(op)
    if ranks < 1:
        raise ValueError(f"a group has at least 1 rank, got {ranks}")
    g = float(ranks)
    if op == "allreduce":
        return 2.0 * (g - 1.0) / g
    if op in ("reducescatter", "allgather"):
        return (g - 1.0) / g
    return 1.0


@dataclass
class CollectivePoint:
    """One entry: median time and the two bandwidths at one size."""
    size_bytes: float
    seconds: float  # median sample time
    algbw_gbps: float  # median of the samples' size / time
    busbw_gbps: float
    cv: float
    entry: str


@dataclass
class CollectiveCurve:
    op: str
    ranks: int
    busbw_factor: float
    points: List[CollectivePoint]  # by size
    entries: List[Entry] = field(repr=False)
    fit: Optional[AlphaBeta] = None
    fit_problem: str = ""  # why there is no fit

    @property
    def peak(self) -> CollectivePoint:
        return max(self.points, key=lambda p: p.busbw_gbps)

    @property
    def largest(self) -> CollectivePoint:
        return self.points[-1]

    def model_seconds(self, size_bytes) -> np.ndarray:
        if self.fit is None:
            raise ValueError(f"{self.op} over {self.ranks} GPUs has no α-β fit: {self.fit_problem}")
        return self.fit.predict(size_bytes)

    def measured_seconds(self, size_bytes: float) -> float:
        """Log-log interpolation between the measured medians; the model outside their range."""
        xs = np.array([p.size_bytes for p in self.points])
        ts = np.array([p.seconds for p in self.points])
        if len(xs) >= 2 and xs[0] <= size_bytes <= xs[-1]:
            return float(np.exp(np.interp(math.log(size_bytes), np.log(xs), np.log(ts))))
        return float(self.model_seconds(size_bytes))


@dataclass
class CollectiveFits:
    curves: Dict[Tuple[str, int], CollectiveCurve]  # by (op, G)
    nccl_versions: List[str]
    nccl_env: List[str]
    issues: List[str]
    method: str

    def curve(self, op: str, ranks: int) -> CollectiveCurve:
        key = (op_name(op), int(ranks))
        if key not in self.curves:
            have = ", ".join(f"{o}/G={g}" for o, g in sorted(self.curves)) or "none"
            raise LookupError(f"no transfer.collective entries for {key[0]} over {key[1]} GPUs (measured: {have})")
        return self.curves[key]

    @property
    def group_sizes(self) -> List[int]:
        return sorted({g for _, g in self.curves})


METHOD = ("time = α + size·β per (op, G), size = bytes of the largest buffer of one rank (nccl-tests); least "
          "squares on relative residuals over every size, made robust by Huber IRLS (the host transfers' fit); "
          "β shown as 1/β in GB/s of algorithm bandwidth; busbw = algbw × nccl-tests' factor (allreduce 2(G−1)/G, "
          "reduce-scatter and allgather (G−1)/G, reduce and broadcast 1)")


def point_of(e: Entry, op: str, ranks: int) -> Optional[CollectivePoint]:
    size = F.num(e, "size")
    t = e.num("time_median_s")
    algbw = e.value
    if not all(math.isfinite(v) and v > 0 for v in (size, t, algbw)):
        return None
    busbw = e.num("busbw_gbps")
    if not math.isfinite(busbw):  # older files, or written by hand: derive it the probe's way
        busbw = algbw * busbw_factor(op, ranks)
    return CollectivePoint(size, t, algbw, busbw, e.cv, e.name)


def fit_collectives(source) -> CollectiveFits:
    """Curves and α-β fits of every (op, G) among the transfer.collective entries of a ResultSet (or of
    a list of entries)."""
    entries = [e for e in (source.entries if isinstance(source, ResultSet) else source) if e.family == FAMILY]
    curves: Dict[Tuple[str, int], CollectiveCurve] = {}
    issues: List[str] = []
    groups: Dict[Tuple[str, int], List[Entry]] = {}
    for e in entries:
        op, ranks = F.text(e, "op"), F.num(e, "ranks")
        try:
            key = (op_name(op or ""), int(ranks))
        except (ValueError, OverflowError):
            issues.append(f"{e.name}: no known op and group size (op={op}, ranks={ranks})")
            continue
        groups.setdefault(key, []).append(e)
    for (op, ranks), grp in groups.items():
        pts = []
        for e in grp:
            p = point_of(e, op, ranks)
            if p is None:
                issues.append(f"{e.name}: no size, time or bandwidth: not used")
            else:
                pts.append(p)
        if not pts:
            continue
        pts.sort(key=lambda p: p.size_bytes)
        factors = {round(e.num("busbw_factor"), 9) for e in grp if math.isfinite(e.num("busbw_factor"))}
        expected = busbw_factor(op, ranks)
        if factors and factors != {round(expected, 9)}:
            issues.append(f"{op} over {ranks} GPUs: the entries' busbw_factor {sorted(factors)} is not nccl-tests' "
                          f"{expected:g}")
        c = CollectiveCurve(op, ranks, expected, pts, grp)
        try:
            c.fit = fit_alpha_beta([p.size_bytes for p in pts], [p.seconds for p in pts])
        except ValueError as exc:
            c.fit_problem = str(exc)
        curves[(op, ranks)] = c
    ordered = dict(sorted(curves.items(), key=lambda kv: (kv[0][1], OPS.index(kv[0][0]))))
    versions = sorted({e.tag("nccl_version") for e in entries if e.tag("nccl_version")})
    env = sorted({e.tag("nccl_env") for e in entries if e.tag("nccl_env") is not None})
    return CollectiveFits(ordered, versions, env, issues, METHOD)


def reduction_time(fits: CollectiveFits, op: str, ranks: int, nbytes: float, how: str = "model") -> float:
    """Seconds one `op` over the first `ranks` GPUs takes at `nbytes` (the nccl-tests size: the largest
    buffer of one rank). how="model": α + nbytes·β of the fit; how="measured": log-log interpolation
    between the measured medians (the model outside their range). LookupError when that op and G were
    not measured."""
    if not nbytes > 0:
        raise ValueError(f"nbytes must be positive, got {nbytes}")
    c = fits.curve(op, ranks)
    if how == "model":
        return float(c.model_seconds(nbytes))
    if how == "measured":
        return c.measured_seconds(nbytes)
    raise ValueError(f"how must be 'model' or 'measured', got {how!r}")


def table_rows(fits: CollectiveFits, at_bytes: float = 2.0**30) -> List[dict]:
    """One row per (op, G): α, β, asymptotic and measured bus bandwidth."""
    rows = []
    for (op, ranks), c in fits.curves.items():
        at = next((p for p in c.points if p.size_bytes == at_bytes), None)
        f = c.fit
        rows.append({
            "op": op, "ranks": ranks, "points": len(c.points), "busbw_factor": c.busbw_factor,
            "alpha_us": f.alpha_s * 1e6 if f else None,
            "beta_gbps": f.beta_bps / 1e9 if f else None,
            "asymptotic_busbw_gbps": f.beta_bps / 1e9 * c.busbw_factor if f else None,
            "rms_rel_error": f.rms_rel_error if f else None,
            "busbw_at_gbps": at.busbw_gbps if at else None,
            "largest_bytes": c.largest.size_bytes, "busbw_largest_gbps": c.largest.busbw_gbps,
            "peak_busbw_gbps": c.peak.busbw_gbps, "peak_at_bytes": c.peak.size_bytes,
            "fit": "" if f else c.fit_problem,
        })
    return rows


def figure(fits: CollectiveFits, outdir: str):
    """busbw vs size, one curve per op (points measured, thin line = the α-β model's busbw), one panel per
    G. None without curves."""
    from .. import plots  # matplotlib only when a figure is drawn
    plt = plots.plt
    if not fits.curves:
        return None
    groups = fits.group_sizes
    fig, axes = plots.grid(len(groups), panel=(5.2, 3.6), sharey=True)
    for ax, g in zip(axes, groups):
        for op in OPS:
            c = fits.curves.get((op, g))
            if c is None:
                continue
            st = plots.style(OPS.index(op))
            x = np.array([p.size_bytes for p in c.points])
            ax.plot(x, [p.busbw_gbps for p in c.points], ls="none", ms=4, fillstyle="none", mew=1.0, label=op, **st)
            if c.fit is not None:
                xs = np.geomspace(x.min(), x.max(), 200)
                ax.plot(xs, xs / c.fit.predict(xs) / 1e9 * c.busbw_factor, "-", lw=0.8, color=st["color"])
        plots._bytes_axis(ax)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"G = {g} GPUs", fontsize=9)
    title = "NCCL collectives: bus bandwidth vs size"
    plots.finish_panels(fig, axes, title, "size (bytes of the largest buffer of one rank)", "busbw (GB/s)")
    caption = ("Points: median busbw per entry (nccl-tests' size and factors); thin lines: the α-β model's busbw, "
               "size / (α + size·β) × factor" + (f"; NCCL {', '.join(fits.nccl_versions)}" if fits.nccl_versions else "")
               + ".")
    prov = [F.provenance(c.entries) for c in fits.curves.values()]
    return plots.Figure("collectives", "NCCL collectives: bus bandwidth vs size", caption, prov,
                        plots._save(fig, outdir, "collectives"))


def analyze(rs: ResultSet) -> Optional[CollectiveFits]:
    """fit_collectives, or None when the inputs hold no transfer.collective entry (a one-GPU result set:
    the report then has no such section)."""
    return fit_collectives(rs) if rs.by_family(FAMILY) else None


# The collective the summary leads with: the reduction of the multi-GPU kernels (mgpu.py), nccl-tests' first.
HEADLINE_OP = "allreduce"


def _lead(fits: CollectiveFits, ranks: int) -> List[CollectiveCurve]:
    """The curves the summary shows for group size `ranks`: the allreduce, else every op measured."""
    curves = [c for (_, g), c in fits.curves.items() if g == ranks]
    return [c for c in curves if c.op == HEADLINE_OP] or curves


def _alpha_beta(c: CollectiveCurve) -> str:
    if c.fit is None:
        return f"no α-β fit: {c.fit_problem}"
    return f"α {c.fit.alpha_s * 1e6:.3g} µs, β {c.fit.beta_bps / 1e9:,.0f} GB/s algbw, fit rms {100 * c.fit.rms_rel_error:.0f} %"


def summary(fits: Optional[CollectiveFits]) -> List[dict]:
    """Facts for the report's summary table, per group size G: the allreduce (else every op measured
    there), its bus bandwidth at the largest size and its α-β fit. Each: {"figure", "value", "how"}."""
    if fits is None:
        return []
    rows = []
    for ranks in fits.group_sizes:
        for c in _lead(fits, ranks):
            rows.append({"figure": f"NCCL {c.op} over {ranks} GPUs",
                         "value": f"busbw {c.largest.busbw_gbps:,.0f} GB/s at {fmt_bytes(c.largest.size_bytes)}; "
                                  + _alpha_beta(c),
                         "how": f"{FAMILY}, α + size·β fit over {len(c.points)} sizes"})
    return rows


def headline(fits: Optional[CollectiveFits]) -> Optional[str]:
    """The summary's sentence: the allreduce over the most GPUs (busbw at its largest size, α-β), the
    other ops' range there, the allreduce over fewer GPUs."""
    if fits is None or not fits.curves:
        return None
    top = max(fits.group_sizes)
    lead = _lead(fits, top)[0]
    parts = [f"{lead.op} over {top} GPUs {lead.largest.busbw_gbps:,.0f} GB/s busbw at "
             f"{fmt_bytes(lead.largest.size_bytes)} ({_alpha_beta(lead)})"]
    others = [c for (op, g), c in fits.curves.items() if g == top and op != lead.op]
    if len(others) == 1:
        parts.append(f"{others[0].op} {others[0].largest.busbw_gbps:,.0f} GB/s at its largest size")
    elif others:
        busbw = [c.largest.busbw_gbps for c in others]
        parts.append(f"the other {len(others)} ops {min(busbw):,.0f} – {max(busbw):,.0f} GB/s at their largest size")
    fewer = [c for g in fits.group_sizes if g != top for c in _lead(fits, g) if c.op == lead.op]
    if fewer:
        parts.append("over " + ", ".join(f"{c.ranks} GPUs {c.largest.busbw_gbps:,.0f} GB/s" for c in fewer))
    versions = f" (NCCL {', '.join(fits.nccl_versions)})" if fits.nccl_versions else ""
    return f"Collectives{versions}: " + "; ".join(parts) + " (section Multi-GPU: collectives)."


def section(fits: Optional[CollectiveFits], figdir: str) -> Optional[dict]:
    """What the report section (templates/sections/collectives.j2) shows: method, NCCL version and environment,
    the table's rows and the figure (drawn here). None without fits."""
    if fits is None:
        return None
    return {"method": fits.method, "nccl_versions": fits.nccl_versions, "nccl_env": fits.nccl_env,
            "entry_methods": sorted({e.method for c in fits.curves.values() for e in c.entries if e.method}),
            "issues": fits.issues, "rows": table_rows(fits), "figure": figure(fits, figdir)}


def to_json(fits: Optional[CollectiveFits]) -> Optional[dict]:
    """The section's numbers as plain values, for device-profile.json ("collectives")."""
    if fits is None:
        return None
    from ..profile_results import to_json as _jsonable  # NaN (e.g. an entry without a CV) becomes null
    return _jsonable({"method": fits.method, "nccl_versions": fits.nccl_versions, "nccl_env": fits.nccl_env,
            "issues": fits.issues, "fits": table_rows(fits),
            "curves": [{"op": c.op, "ranks": c.ranks, "busbw_factor": c.busbw_factor,
                        "points": [vars(p) for p in c.points], "source": F.provenance(c.entries)}
                       for c in fits.curves.values()]})


SECTION = register(FamilySection(
    id="collectives", title="Multi-GPU: collectives (NCCL)", families=(FAMILY,), after=("p2p", "transfers"),
    analyze=lambda inputs: analyze(inputs.rs), content=section, to_json=to_json, summary=summary,
    headline=headline, link_text="collectives"))
