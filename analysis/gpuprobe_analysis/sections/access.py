"""Stride, alignment and bank behaviour (memory.stride, memory.bank_conflicts): each entry's penalty
against the family's best, the slowdown per word stride and the bank count that explains it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .. import families as F
from .. import profile_results as R
from ..results import ResultSet, finite
from . import AnalysisInputs, FamilySection, register


@dataclass
class AccessResult:
    stride_alignment: Optional[R.StrideAlignment]
    banks: Optional[R.Banks]
    rs: ResultSet


def _stride(rs: ResultSet) -> Optional[R.StrideAlignment]:
    ents = rs.by_family("memory.stride")
    if not ents:
        return None
    best = max((e.value for e in ents if math.isfinite(e.value)), default=math.nan)
    rows = []
    for e in sorted(ents, key=lambda e: (F.num(e, "offset") if math.isfinite(F.num(e, "offset")) else 0,
                                         F.num(e, "stride"))):
        rows.append(R.StrideRow(stride_elements=finite(F.num(e, "stride")), offset_bytes=finite(F.num(e, "offset")),
                                value=e.value, unit=e.unit, penalty_vs_best=best / e.value if e.value > 0 else None,
                                entry=e.name))
    return R.StrideAlignment(rows=rows, best=best, source=F.provenance(ents),
                                              method="penalty = best bandwidth of the family / this entry's bandwidth")


def _banks(rs: ResultSet) -> Optional[R.Banks]:
    ents = rs.by_family("memory.bank_conflicts")
    if not ents:
        return None
    out = []
    for (wb,), grp in sorted(F.group(ents, ("word",)).items(), key=lambda t: t[0][0] or 0):
        grp = sorted(grp, key=lambda e: F.num(e, "stride"))
        base = next((e for e in grp if F.num(e, "stride") == 1), grp[0])
        higher = bool(F.higher_is_better(base))
        rows = []
        for e in grp:
            slow = (base.value / e.value) if higher else (e.value / base.value)
            rows.append(R.BankRow(word_stride=finite(F.num(e, "stride")), value=e.value, unit=e.unit,
                                  slowdown_vs_stride1=slow, entry=e.name))
        banks = _fit_banks([r.word_stride for r in rows], [r.slowdown_vs_stride1 for r in rows], (wb or 4) / 4)
        out.append(R.BankWords(word_bytes=wb, rows=rows, banks=banks, source=F.provenance(grp)))
    return R.Banks(by_word_bytes=out, method=(
        "slowdown vs word stride 1; the bank count is the power of two B whose conflict degree "
        "gcd(stride x words per access, B) best explains the slowdowns (least squares in log)"))


def _fit_banks(strides, slowdowns, words_per_access):
    pts = [(s, d) for s, d in zip(strides, slowdowns) if s and d and s > 0 and d > 0]
    if len(pts) < 3:
        return None
    best = None
    for b in (4, 8, 16, 32, 64, 128):
        err = 0.0
        for s, d in pts:
            words = max(1, int(round(s * words_per_access)))
            degree = math.gcd(words, b) / min(b, max(1, int(round(words_per_access))) or 1)
            degree = max(degree, 1.0)
            err += (math.log(d) - math.log(degree)) ** 2
        if best is None or err < best[1]:
            best = (b, err)
    return R.BankFit(banks=best[0], rms_log_error=math.sqrt(best[1] / len(pts)))


def analyze(inputs: AnalysisInputs) -> AccessResult:
    return AccessResult(_stride(inputs.rs), _banks(inputs.rs), inputs.rs)


def figures(an: AccessResult, outdir: str) -> list:
    from .. import plots  # matplotlib only when the report draws
    rs, figs = an.rs, []
    sa = rs.by_family("memory.stride")
    if sa:
        # Two sweeps share the family: strides at offset 0, offsets at stride 1 (docs/probes-memory.md).
        aligned = sorted([e for e in sa if not F.num(e, "offset") > 0], key=lambda e: F.num(e, "stride"))
        shifted = sorted([e for e in sa if F.num(e, "stride") == 1], key=lambda e: F.num(e, "offset"))
        unit = sa[0].unit or "value"
        fig, axes = plots.plt.subplots(1, 2, figsize=(11, 4.4))
        axes[0].plot([F.num(e, "stride") for e in aligned], [e.value for e in aligned], "o-", ms=4)
        axes[0].set_xscale("log", base=2)
        axes[0].set_yscale("log")
        axes[0].set_xlabel("stride (4-byte elements, log2), offset 0")
        axes[0].set_title("Effective bandwidth vs stride")
        axes[1].plot([max(F.num(e, "offset"), 0) if math.isfinite(F.num(e, "offset")) else 0 for e in shifted],
                     [e.value for e in shifted], "o-", ms=4)
        axes[1].set_xlabel("offset from alignment (bytes), stride 1")
        axes[1].set_title("Effective bandwidth vs misalignment")
        for ax in axes:
            ax.set_ylabel(f"effective bandwidth ({unit}, useful bytes)")
            ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        figs.append(plots.Figure("stride_alignment", "Strided / misaligned access (memory.stride)",
                           "Useful bytes per second; DRAM-resident span. Left: strides at offset 0; right: byte "
                           "offsets at stride 1.", [F.provenance(sa)], plots._save(fig, outdir, "stride_alignment")))
    bank = an.banks.by_word_bytes if an.banks else []
    if bank:
        series = [(f"{plots._fmt_key(b.word_bytes)}-byte words", [r.word_stride for r in b.rows],
                   [r.slowdown_vs_stride1 for r in b.rows], rs.by_family("memory.bank_conflicts")) for b in bank]
        figs.append(plots.simple_xy(series, "bank_conflicts", F.title(rs, "memory.bank_conflicts", "Shared-memory bank conflicts"),
                              "word stride (log2)",
                              "slowdown vs stride 1 (x)", outdir, "Slowdown ~ conflict degree gcd(stride, banks).", logy=True))
    return figs


def _profile_keys(an: AccessResult) -> dict:
    return {k: R.to_json(v) for k, v in (("stride_alignment", an.stride_alignment), ("banks", an.banks)) if v is not None}


SECTION = register(FamilySection(
    id="access", title="Stride, alignment and bank behaviour", families=(), after=(), core=True, analyze=analyze,
    content=lambda an, figdir: {"figures": figures(an, figdir)}, profile_keys=_profile_keys))
