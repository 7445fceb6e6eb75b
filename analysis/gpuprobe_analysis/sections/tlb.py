"""TLB reach and page size (memory.tlb): latency against footprint per stride, fitted by tlb.fit_tlb."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional

from .. import families as F
from .. import profile_results as R
from ..curves import Curve, latency_curves, model_words
from ..formatting import Link, fmt_bytes
from ..tlb import TLB_METHOD, TlbPoint, fit_tlb, tlb_findings
from . import AnalysisInputs, FamilySection, register


@dataclass
class TlbResult:
    tlb: Optional[R.Tlb]  # None: no memory.tlb entries
    curves: List[Curve]
    notes: List[str]


def analyze(inputs: AnalysisInputs) -> TlbResult:
    rs, notes = inputs.rs, []
    curves = latency_curves(rs, "memory.tlb", notes)
    ents = rs.by_family("memory.tlb")
    if not ents:
        return TlbResult(None, curves, notes)
    rows = []
    for c in curves:
        rows.append(R.TlbCurve(key=c.key, model=model_words(c.fit), reach_bytes=c.fit.knees,
                               levels_cycles=c.fit.levels, source=F.provenance(c.entries)))
    pts = []
    for e in ents:
        warm, n = e.num("warm_loads"), e.num("elements")
        steady = bool(warm >= n) if math.isfinite(warm) and math.isfinite(n) else None
        pts.append(TlbPoint(F.num(e, "stride"), F.num(e, "footprint"), e.num("cycles_per_op", "value_median"),
                            e.cv, steady))
    fit = fit_tlb(pts)
    tlb = R.Tlb(curves=rows, source=F.provenance(ents), method=TLB_METHOD,
                     warm_up_recorded=all(p.steady is not None for p in pts))
    if fit is None:
        return TlbResult(tlb, curves, notes)
    measured = fit.page_status == "measured"
    tlb.fit = R.TlbFitResult(
        page_bytes=fit.page_bytes if measured else None,
        page_status=fit.page_status, page_range_bytes=list(fit.page_range),
        strides_bytes=fit.strides, noise_rel=fit.noise,
        base_cycles_by_stride={str(int(k)): v for k, v in fit.base_cycles.items()},
        levels=[R.TlbLevelResult(entries=lv.entries, entries_range=list(lv.entries_range),
                                 entries_bracket=list(lv.entries_bracket), penalty_cycles=lv.penalty_cycles,
                                 reach_bytes=lv.reach_bytes, reach_range_bytes=list(lv.reach_range),
                                 reach_bracket_bytes=list(lv.reach_bracket_bytes)) for lv in fit.levels],
        excluded=[R.TlbExcludedPoint(stride_bytes=p.stride, footprint_bytes=p.footprint, cycles=p.cycles, cv=p.cv,
                                     why="no full warm lap recorded" if p.steady is False else "unsteady samples")
                  for p in sorted(fit.excluded, key=lambda p: (p.stride, p.footprint))],
        max_footprint_by_stride={str(int(k)): v for k, v in fit.max_footprint.items()},
        findings=tlb_findings(fit),
        # Kept for readers of the profile (summary, older consumers): the measured page only.
        page=R.TlbPage(page_bytes=fit.page_bytes) if measured else None,
        reach=[R.TlbReach(reach_bytes=lv.reach_bytes, entries=lv.entries, penalty_cycles=lv.penalty_cycles,
                          bracket_bytes=list(lv.reach_bracket_bytes)) for lv in fit.levels] or None)
    return TlbResult(tlb, curves, notes)


def figure(an: TlbResult, outdir: str):
    from .. import plots  # matplotlib only when the report draws
    return plots.latency_figure(an.curves, "tlb", "TLB: latency vs footprint per stride", outdir,
                                "Knees: TLB reach per level; the stride where latency saturates is the page size.",
                                chunk_label="stride")


def summary_rows(an: TlbResult, data: dict) -> List[list]:
    rows = []
    t = data.get("tlb") or {}
    if t.get("page"):
        rows.append(["page size", fmt_bytes(t["page"]["page_bytes"]), "TLB chase", "–", "–", Link("TLB", "tlb")])
    return rows


SECTION = register(FamilySection(
    id="tlb", title="TLB reach and page size", families=(), after=(), core=True, analyze=analyze,
    content=lambda an, figdir: {"figures": [figure(an, figdir)]},
    profile_keys=lambda an: {"tlb": R.to_json(an.tlb)} if an.tlb is not None else {}, notes=lambda an: an.notes,
    summary_rows=summary_rows, link_text="TLB"))
