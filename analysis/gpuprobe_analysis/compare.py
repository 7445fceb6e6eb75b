"""Compare two result sets (two runs of one GPU, or two GPUs): a summary first — the ceilings, each
kernel at its headline size, each family's median ratio — then the entries whose figure changed by
more than the recorded noise, per family, the changes that matter first."""
from __future__ import annotations

import math
import re
from typing import Callable, Dict, List, Optional

import numpy as np

from . import families as F
from .results import ResultSet

CONTEXT_KEYS = ("gpu_name", "gpu_pci_bus_id", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz",
                "gpu_mem_clock_max_mhz", "gpu_bus_width_bits", "gpu_l2_bytes", "gpu_ecc", "cuda_driver_version",
                "cuda_runtime_version", "gpuprobe_version", "gpuprobe_sweep")

# Google Benchmark's own name suffixes: how an entry was run, not what it measures. Two runs of one
# entry with other iteration counts (or a --counters run) are the same entry.
GBENCH_SUFFIX = re.compile(r"/(?:iterations|repeats|threads|min_time|min_warmup_time):[^/]*"
                           r"|/(?:manual_time|real_time|process_time)(?=/|$)")

# A change smaller than this (relative) is listed in counts, never among the changes that lead the
# per-family lists: beyond the recorded noise perhaps, but not what a reader compares GPUs or runs for.
MATERIAL_CHANGE = 0.01
# Changes shown per family in the listing (the rest counted).
PER_FAMILY_SHOWN = 10


def entry_key(name: str) -> str:
    """The identity of an entry across runs: its name without Google Benchmark's run suffixes."""
    return GBENCH_SUFFIX.sub("", name)


def _entries(rs: ResultSet) -> Dict[str, object]:
    return {entry_key(e.name): e for e in rs.entries}


def compare(a: ResultSet, b: ResultSet, sigmas: float = 2.0, floor: float = 0.0, summary: bool = True,
            progress: Optional[Callable[[str], None]] = None) -> dict:
    """A change is significant when |B/A - 1| > max(sigmas * sqrt(cv_A^2 + cv_B^2), floor).
    Entries without a recorded CV use `floor` alone (and are flagged). With `summary`, the ceilings
    and kernel headlines of both sets (their device profiles: the report's own figures) lead.
    `progress` is told of each long step (each set's device profile takes a minute on a full run)."""
    ea, eb = _entries(a), _entries(b)
    rows: List[dict] = []
    for key in sorted(set(ea) & set(eb)):
        x, y = ea[key], eb[key]
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
        rows.append({"entry": key, "family": x.family, "unit": x.unit, "a": va, "b": vb, "change_pct": 100 * rel,
                     "noise_pct": 100 * noise, "threshold_pct": 100 * threshold,
                     "significant": abs(rel) > threshold and abs(rel) > 0,
                     "material": abs(rel) >= MATERIAL_CHANGE, "higher_is_better": higher,
                     "verdict": verdict, "cv_missing": cva is None or cvb is None})
    ctx = [(k, a.context.get(k), b.context.get(k)) for k in CONTEXT_KEYS if a.context.get(k) != b.context.get(k)]
    gpus = (a.context.get("gpu_name", "?"), b.context.get("gpu_name", "?"))
    out = {"rows": rows, "significant": [r for r in rows if r["significant"]],
           "only_in_a": sorted(set(ea) - set(eb)), "only_in_b": sorted(set(eb) - set(ea)),
           "context_differences": ctx, "sigmas": sigmas, "floor": floor,
           "gpus": gpus, "same_gpu": gpus[0] == gpus[1], "families": family_summary(rows)}
    if summary:
        # The profile names axes from the family records: files without them (written before records)
        # get no summary, and the output says why, rather than figures built on guessed axes.
        unrecorded = [f.path for f in a.files + b.files if not f.records]
        if unrecorded:
            out["summary_skipped"] = (f"no ceilings or kernels summary: {', '.join(unrecorded)} "
                                      "hold(s) no family records (scripts/dev/migrate_results.py adds them)")
        else:
            figures = []
            for name, rs in (("A", a), ("B", b)):
                if progress:
                    progress(f"analysing {name} ({len(rs.entries):,} entries): its device profile for the ceilings "
                             "and kernels summary (--no-summary leaves it out)")
                figures.append(headline_figures(rs))
            (ca, ka), (cb, kb) = figures
            out["ceilings"], out["kernels"] = (ca, cb), (ka, kb)  # (A's, B's) each
    return out


def family_summary(rows: List[dict]) -> List[dict]:
    """Per family: matched entries, the median B/A over them, and how many changed beyond the noise
    (and by at least MATERIAL_CHANGE); the families that moved most first."""
    out = []
    for fam in sorted({r["family"] for r in rows}):
        mine = [r for r in rows if r["family"] == fam]
        ratios = [r["b"] / r["a"] for r in mine if r["a"] > 0 and r["b"] > 0]
        if not ratios:
            continue
        median = float(np.median(ratios))
        sig = [r for r in mine if r["significant"]]
        out.append({"family": fam, "entries": len(mine), "median_ratio": median,
                    "higher_is_better": mine[0]["higher_is_better"], "unit": mine[0]["unit"],
                    "beyond_noise": len(sig), "material": sum(1 for r in sig if r["material"]),
                    "better": sum(1 for r in sig if r["material"] and r["verdict"] == "better"),
                    "worse": sum(1 for r in sig if r["material"] and r["verdict"] == "worse")})
    return sorted(out, key=lambda f: -abs(math.log(f["median_ratio"])))


# The report sections whose results headline_figures reads (device-profile.json's device, hierarchy,
# bandwidth, pipelines and tensor keys).
HEADLINE_SECTIONS = ("device", "hierarchy", "bandwidth", "execution", "tensor")


def headline_figures(rs: ResultSet):
    """(ceilings {name: (value, unit)}, kernels {kernel: row}) of a result set: the figures its report
    leads with, computed by the same code (the sections, roofline, sections.optimality.kernel_headlines)."""
    from .roofline import ceilings_from, kernel_points, optimality
    from .sections import device_profile
    from .sections.optimality import kernel_headlines
    # Only the sections these figures come from (the TLB's and the transfers' fits are not among them).
    data = device_profile(rs, only=HEADLINE_SECTIONS)
    ceilings: Dict[str, tuple] = {}
    for name, c in ((data.get("bandwidth") or {}).get("ceilings") or {}).items():
        ceilings[f"{name} bandwidth"] = (c["gbps"], "GB/s")
    for name, c in ((data.get("pipelines") or {}).get("compute_ceilings") or {}).items():
        ceilings[f"{name} peak"] = (c["gflops"], "GFLOP/s")
    for name, c in ((data.get("tensor") or {}).get("ceilings") or {}).items():
        ceilings[f"{name} peak"] = (c["gflops"], c.get("unit", "GFLOP/s"))
    for lv in (data.get("hierarchy") or {}).get("levels", []):
        if lv.get("latency_ns"):
            ceilings[f"{lv['name']} latency"] = (lv["latency_ns"], "ns")
    pts, _ = kernel_points(rs)
    opt = optimality(pts, ceilings_from(data, rs))
    kernels = {}
    for k in kernel_headlines(opt):
        o = k["ours"]
        memory = next((p for p in pts if p.entry.name == o["entry"] and p.entry.unit == "GB/s"), None)
        kernels[k["kernel"]] = {"impl": o["impl"], "size": o["size"], "entry": entry_key(o["entry"]),
                                "value": o["gbps"] if memory else o["gflops"], "unit": "GB/s" if memory else "GFLOP/s"}
    return ceilings, kernels


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    return f"{b / a:.3f}" if a and b and a > 0 else "–"


def _num(v) -> str:
    if v is None or not math.isfinite(v):
        return "–"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def _faster(ratio: Optional[float], higher: Optional[bool]) -> str:
    if ratio is None or higher is None:
        return ""
    if abs(ratio - 1) < MATERIAL_CHANGE:
        return "same"
    return "B better" if (ratio > 1) == higher else "A better"


def to_markdown(res: dict, name_a: str, name_b: str, limit: Optional[int] = None) -> str:
    ga, gb = res["gpus"]
    out = [f"# gpuprobe compare: A = {name_a}, B = {name_b}\n"]
    if not res["same_gpu"]:
        out.append(f"**A and B are different GPUs: A = {ga}, B = {gb}.** Every difference below is between the "
                   "two GPUs (and their runs), not a change of one GPU.\n")
    else:
        out.append(f"Both on {ga}.\n")
    out.append(f"B/A = B's figure over A's; a change is beyond noise when |B/A − 1| exceeds {res['sigmas']:g} × "
               f"sqrt(cv_A² + cv_B²)" + (f" (and at least {100 * res['floor']:g} %)" if res["floor"] else "")
               + "; cv = the entries' recorded value_cv. Entries are matched by name without Google Benchmark's "
               "run suffixes (iterations:N, manual_time, ...).\n")
    if res.get("summary_skipped"):
        out.append(res["summary_skipped"] + ".\n")
    if "ceilings" in res:
        (ca, cb), (ka, kb) = res["ceilings"], res["kernels"]
        names = list(ca) + [n for n in cb if n not in ca]
        if names:
            out.append("## Ceilings and latencies (each report's own figures; –: none in that set)\n\n"
                       "| figure | A | B | unit | B/A | better |\n|---|---|---|---|---|---|")
            for n in names:
                va, vb = (ca.get(n) or (None, None)), (cb.get(n) or (None, None))
                unit = va[1] or vb[1]
                ratio = vb[0] / va[0] if va[0] and vb[0] else None
                out.append(f"| {n} | {_num(va[0])} | {_num(vb[0])} | {unit} | {_ratio(va[0], vb[0])} | "
                           f"{_faster(ratio, unit != 'ns')} |")
            out.append("")
        kernels = sorted(set(ka) | set(kb))
        if kernels:
            out.append("## Kernels at their headline size (our default implementation)\n\n"
                       "| kernel | size | A | B | unit | B/A | better |\n|---|---|---|---|---|---|---|")
            for k in kernels:
                x, y = ka.get(k), kb.get(k)
                size = (x or y)["size"] + ("" if not (x and y) or x["size"] == y["size"] else f" (B: {y['size']})")
                va, vb = x["value"] if x else None, y["value"] if y else None
                ratio = vb / va if va and vb else None
                out.append(f"| {k} | {size} | {_num(va)} | {_num(vb)} | {(x or y)['unit']} | {_ratio(va, vb)} | "
                           f"{_faster(ratio, True)} |")
            out.append("")
    fams = res["families"]
    if fams:
        out.append(f"## Per family: median B/A over the matched entries (largest moves first)\n\n"
                   f"| family | matched | median B/A | unit | better | beyond noise | of them ≥ {100 * MATERIAL_CHANGE:g} %: "
                   "B better / A better |\n|---|---|---|---|---|---|---|")
        for f in fams:
            out.append(f"| {f['family']} | {f['entries']} | {f['median_ratio']:.3f} | {f['unit']} | "
                       f"{_faster(f['median_ratio'], f['higher_is_better'])} | {f['beyond_noise']} | "
                       f"{f['better']} / {f['worse']} |")
        out.append("")
    if res["context_differences"]:
        out.append("## Context differences\n\n| key | A | B |\n|---|---|---|")
        out += [f"| {k} | {va} | {vb} |" for k, va, vb in res["context_differences"]]
        out.append("")
    sig = res["significant"]
    material = [r for r in sig if r["material"]]
    out.append(f"## Changes beyond noise: {len(sig)} of {len(res['rows'])} common entries "
               f"({len(sig) - len(material)} of them under {100 * MATERIAL_CHANGE:g} %, counted only)\n")
    order = [f["family"] for f in fams]
    for fam in order:
        mine = sorted((r for r in material if r["family"] == fam), key=lambda r: -abs(r["change_pct"]))
        if not mine:
            continue
        cap = PER_FAMILY_SHOWN if limit is None else limit
        out.append(f"### {fam}: {len(mine)} changes of {100 * MATERIAL_CHANGE:g} % or more\n\n"
                   "| entry | unit | A | B | change | noise (2σ basis) | verdict |\n|---|---|---|---|---|---|---|")
        for r in mine[:cap]:
            out.append(f"| {r['entry']} | {r['unit']} | {r['a']:.4g} | {r['b']:.4g} | {r['change_pct']:+.1f} % | "
                       f"{r['noise_pct']:.1f} %{' (cv missing)' if r['cv_missing'] else ''} | {r['verdict']} |")
        if len(mine) > cap:
            out.append(f"\n… {len(mine) - cap} more in {fam}")
        out.append("")
    for key, label in (("only_in_a", "Only in A"), ("only_in_b", "Only in B")):
        if res[key]:
            out.append(f"\n## {label}: {len(res[key])} entries\n")
            out += [f"- {n}" for n in res[key][:50]]
            if len(res[key]) > 50:
                out.append(f"- … {len(res[key]) - 50} more")
    return "\n".join(out) + "\n"
