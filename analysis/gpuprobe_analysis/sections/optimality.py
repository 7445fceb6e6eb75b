"""Optimality per kernel and size: every kernel entry against the bound of the ceilings it needs
(roofline.optimality), the rows the report body shows, the summary's row and opening sentence per kernel."""
from __future__ import annotations

from typing import Dict, List, Optional

from .. import profile_results as R
from ..formatting import Link, fmt, fmt_pct, fmt_ratio
from ..roofline import (NOISE_SIGMAS, READ_DOMINATED, SERVED_SHARE, beaten_sentence, ceilings_beaten, is_default,
                        is_reference, optimality)
from . import AnalysisInputs, FamilySection, register


def analyze(inputs: AnalysisInputs) -> List[dict]:
    roof = inputs.results["roofline"]
    return optimality(roof.points, roof.ceilings)


def headline_rows(opt: list) -> list:
    """The optimality rows the report body shows: per kernel and size, our default implementation
    and the cuBLAS references (roofline.is_default / is_reference); the variants stay in the appendix."""
    impls: Dict[str, set] = {}
    for r in opt:
        impls.setdefault(r["kernel"], set()).add(r["impl"])
    return [r for r in opt if is_reference(r["impl"]) or is_default(r["kernel"], r["impl"], impls[r["kernel"]])]


def kernel_verdict(row: dict, theo: Dict[str, dict]) -> str:
    """What limits a kernel's row and how close it gets, in words; where a ceiling its bound needs was
    not measured, that is said, with the achieved rate against the level's theoretical figure when there
    is one (never the bound of the ceilings that remain: it would name another limiter)."""
    if row.get("missing_ceilings"):
        what = " and ".join(row["missing_ceilings"])
        level = next((m for m in row["missing_ceilings"] if m.split()[0] in ("L1", "L2", "DRAM")), None)
        rate = ""
        if level and row.get("gbps"):
            t = theo.get(level.split()[0])
            rate = f"; {fmt(row['gbps'])} GB/s on its minimal bytes" + (
                f" = {100 * row['gbps'] / t['value']:.0f} % of the theoretical {level.split()[0]} {fmt(t['value'])}"
                if t else "")
        elif row.get("gflops"):
            rate = f"; {fmt(row['gflops'])} GFLOP/s"
        if row.get("limiter"):  # known without the ceiling (roofline._limiter_without_memory_ceiling)
            return f"{row['limiter']}-bound ({row['bound_note']}), no % of bound: no {what} ceiling measured{rate}"
        return f"no bound: no {what} ceiling measured{rate}"
    note = f" ({row['bound_note']})" if row.get("bound_note") else ""
    above = f" ({above_words(row)})" if row.get("above") else ""
    return f"{row['limiter']}-bound, {fmt_pct(row['pct_of_bound'])} % of its bound{above}{note}"


def above_words(row: dict) -> str:
    """Why a row is above 100 % of its bound, briefly (roofline._above_bound has the full reason)."""
    a = row["above"]
    where = (f"beyond the noise of {100 * a['noise']:.2f} %: the {a['ceiling']} ceiling is below this kernel"
             if a["beyond_noise"] else f"within the noise of {100 * a['noise']:.2f} %")
    return f"above it by {100 * a['excess']:.1f} %, {where}"


def versus_cublas(row: dict) -> str:
    """Our row against the fastest cuBLAS mode of the same problem, named (cublas, cublas_atomics ...): "1x
    cuBLAS" hid which mode it was, and 0.9998 read as 1."""
    if not row.get("vs_cublas"):
        return ""
    return f"{fmt_ratio(row['vs_cublas'])}x {row.get('cublas_impl') or 'cuBLAS'}"


def kernel_summary_rows(opt: list, theo: Optional[Dict[str, dict]] = None) -> list:
    """Per kernel, at its largest problem timed out of DRAM (else its largest): our default's % of
    its bound (minimal bytes), and the fastest implementation there."""
    rows = []
    for k in kernel_headlines(opt):
        kernel, ours, fastest = k["kernel"], k["ours"], k["fastest"]
        vs = f", {versus_cublas(ours)}" if ours.get("vs_cublas") else ""
        excess = f"; excess traffic {fmt_ratio(ours['excess_traffic'])}x" if ours.get("excess_traffic") else ""
        if ours.get("missing_ceilings"):
            value = f"{kernel_verdict(ours, theo or {})} ({ours['impl']}{vs}{excess})"
        elif ours.get("bound_note"):
            value = (f"{pct_cell(ours)} ({ours['impl']}, {ours['limiter']}-bound: "
                     f"{ours['bound_note']}{vs}{excess})")
        else:
            value = (f"{pct_cell(ours)} ({ours['impl']}, {ours['limiter']}-bound{vs}"
                     f"{excess})")
        rows.append([f"{kernel} at {ours['size']}", value, f"fastest here: {fastest['impl']}", "–",
                     "bound from minimal bytes", Link("optimality", "optimality")])
    return rows


def pct_cell(row: dict) -> str:
    """"N % of bound", and above 100 % the reason with it."""
    return f"{fmt_pct(row['pct_of_bound'])} % of bound" + (f" ({above_words(row)})" if row.get("above") else "")


def kernel_headlines(opt: list) -> List[dict]:
    """Per kernel, at its largest problem timed out of DRAM (else its largest): our default
    implementation's row and the fastest implementation's row there."""
    out = []
    for kernel in sorted({r["kernel"] for r in opt}):
        ks = [r for r in opt if r["kernel"] == kernel and r.get("flops")]
        if not ks:
            continue
        dram = [r for r in ks if r.get("l2") != "resident"] or ks
        top = max(r["flops"] for r in dram)
        at = [r for r in dram if r["flops"] == top]
        impls = {r["impl"] for r in at}
        ours = next((r for r in at if is_default(kernel, r["impl"], impls) and not is_reference(r["impl"])), None)
        if ours is None or (ours.get("pct_of_bound") is None and not ours.get("missing_ceilings")):
            continue
        # The same problem only: problems of equal flops may differ in precision or transposition.
        fastest = max((r for r in at if r["size"] == ours["size"]), key=lambda r: r["gflops"])
        out.append({"kernel": kernel, "ours": ours, "fastest": fastest})
    return out


def _theoretical(data: dict) -> Dict[str, dict]:
    return {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}


def summary_rows(opt: List[dict], data: dict) -> List[list]:
    return kernel_summary_rows(opt, _theoretical(data))


def opening(opt: List[dict], data: dict) -> List[str]:
    """What limits each kernel."""
    lines, theo = [], _theoretical(data)
    for k in kernel_headlines(opt):
        o = k["ours"]
        vs = f", {versus_cublas(o)}" if o.get("vs_cublas") else ", no cuBLAS figure"
        lines.append(f"{k['kernel']} ({o['impl']}, {o['size']}): {kernel_verdict(o, theo)}{vs}; "
                     f"fastest there: {k['fastest']['impl']}.")
    return lines + [beaten_sentence(g) for g in ceilings_beaten(opt)]


SECTION = register(FamilySection(
    id="optimality", title="Optimality per kernel and size", families=(), after=(), core=True, uses=("roofline",),
    analyze=analyze, profile_keys=lambda opt: {"optimality": R.to_json(opt)}, summary_rows=summary_rows,
    opening=opening, link_text="optimality",
    content=lambda opt, figdir: {"opt": opt, "opt_main": headline_rows(opt), "read_dominated": READ_DOMINATED,
                                 "served_share": SERVED_SHARE, "noise_sigmas": NOISE_SIGMAS,
                                 "beaten": [beaten_sentence(g) for g in ceilings_beaten(opt)],
                                 "above_words": above_words}))
