"""Compare two result files: the entries whose figure changed by more than the recorded noise."""
from __future__ import annotations

import math
from typing import List, Optional

from . import families as F
from .results import ResultSet

CONTEXT_KEYS = ("gpu_name", "gpu_pci_bus_id", "gpu_compute_capability", "gpu_sm_clock_max_mhz", "gpu_ecc",
                "cuda_driver_version", "cuda_runtime_version", "gpuprobe_version", "gpuprobe_sweep")


def compare(a: ResultSet, b: ResultSet, sigmas: float = 2.0, floor: float = 0.0) -> dict:
    """A change is significant when |B/A - 1| > max(sigmas * sqrt(cv_A^2 + cv_B^2), floor).
    Entries without a recorded CV use `floor` alone (and are flagged)."""
    ea = {e.name: e for e in a.entries}
    eb = {e.name: e for e in b.entries}
    rows: List[dict] = []
    for name in sorted(set(ea) & set(eb)):
        x, y = ea[name], eb[name]
        va, vb = x.value, y.value
        if not (math.isfinite(va) and math.isfinite(vb)) or va == 0:
            continue
        cva = x.cv if math.isfinite(x.cv) else None
        cvb = y.cv if math.isfinite(y.cv) else None
        noise = math.sqrt((cva or 0) ** 2 + (cvb or 0) ** 2)
        threshold = max(sigmas * noise, floor)
        rel = vb / va - 1.0
        higher = F.higher_is_better(x)  # the family record's; None for a file without records
        if abs(rel) <= threshold:
            verdict = "within noise"
        elif higher is None:
            verdict = "changed (no family record says which way is better)"
        else:
            verdict = "better" if (rel > 0) == higher else "worse"
        rows.append({"entry": name, "unit": x.unit, "a": va, "b": vb, "change_pct": 100 * rel,
                     "noise_pct": 100 * noise, "threshold_pct": 100 * threshold,
                     "significant": abs(rel) > threshold and abs(rel) > 0,
                     "verdict": verdict,
                     "cv_missing": cva is None or cvb is None})
    ctx = [(k, a.context.get(k), b.context.get(k)) for k in CONTEXT_KEYS if a.context.get(k) != b.context.get(k)]
    return {"rows": rows, "significant": [r for r in rows if r["significant"]],
            "only_in_a": sorted(set(ea) - set(eb)), "only_in_b": sorted(set(eb) - set(ea)),
            "context_differences": ctx, "sigmas": sigmas, "floor": floor}


def to_markdown(res: dict, name_a: str, name_b: str, limit: Optional[int] = None) -> str:
    out = [f"# gpuprobe compare: A = {name_a}, B = {name_b}\n",
           f"A change is listed when |B/A − 1| exceeds {res['sigmas']:g} × sqrt(cv_A² + cv_B²)"
           + (f" (and at least {100 * res['floor']:g} %)" if res["floor"] else "") + "; cv = the entries' recorded value_cv.\n"]
    if res["context_differences"]:
        out.append("## Context differences\n\n| key | A | B |\n|---|---|---|")
        out += [f"| {k} | {va} | {vb} |" for k, va, vb in res["context_differences"]]
        out.append("")
    sig = sorted(res["significant"], key=lambda r: -abs(r["change_pct"]))
    out.append(f"## Changes beyond noise: {len(sig)} of {len(res['rows'])} common entries\n")
    if sig:
        out.append("| entry | unit | A | B | change | noise (2σ basis) | verdict |\n|---|---|---|---|---|---|---|")
        for r in sig[:limit] if limit else sig:
            out.append(f"| {r['entry']} | {r['unit']} | {r['a']:.4g} | {r['b']:.4g} | {r['change_pct']:+.1f} % | "
                       f"{r['noise_pct']:.1f} %{' (cv missing)' if r['cv_missing'] else ''} | {r['verdict']} |")
    for key, label in (("only_in_a", "Only in A"), ("only_in_b", "Only in B")):
        if res[key]:
            out.append(f"\n## {label}: {len(res[key])} entries\n")
            out += [f"- {n}" for n in res[key][:50]]
            if len(res[key]) > 50:
                out.append(f"- … {len(res[key]) - 50} more")
    return "\n".join(out) + "\n"
