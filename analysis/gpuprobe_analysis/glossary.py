"""The report's names and codes, defined in one place: GLOSSARY (term -> definition) for the fixed terms, and
the implementation names of the kernel entries (`ours_v3`, `cublas_atomics` ...) defined from the entries'
own tags (which kernel record ran, whether atomics were allowed), so that no fact of the C++ tables is spelled
again here. The report defines the terms its Summary uses beneath it; sections quote their own."""
from __future__ import annotations

import re
from typing import Dict, Iterable

from . import families as F
from .results import Entry
from .roofline import default_impl

GLOSSARY: Dict[str, str] = {
    "L2 hot set": "a read_cg curve's plateau at working sets up to the L1 capacity: ld.global.cg bypasses L1, so "
                  "a set that small is reread from L2 with every line hot; a figure of that curve, never the L2 "
                  "ceiling (a ceiling needs a premise the counters checked)",
    "n½": "the transfer size that reaches half the asymptotic bandwidth β of the α-β model: n½ = α·β (Hockney)",
    "% of bound": "a kernel's achieved rate over its bound: the minimum over the measured ceilings of its minimal "
                  "bytes at the serving level's ceiling and its declared compute peak (docs/analysis.md)",
    "excess traffic": "the bytes the counters saw at the level serving a kernel, over its descriptor's minimal bytes "
                      "(1 = no excess)",
    "of peak, chip": "a tensor entry's rate, the whole chip's FLOPs over the wall time, over the dense per-clock "
                     "peak x SMs x the entry's clock",
    "of peak, per SM busy": "the median SM's FLOPs per clock over its own busy span (clock64) over the dense "
                            "per-clock peak: the pipe while it runs, without the grid's ramp and tail",
    "bracket": "the last measured footprint at or below a capacity and the first above: all a sweep can tell",
    "premise": "what a ceiling's probe declares must hold (the level it names served the bytes it counted), "
               "checked by the counters of the same run",
    "ours": "our default implementation of a kernel: what the library's API runs when no variant is named",
    "cublaslt": "cuBLASLt's matmul (cublasLtMatmul) for the type, its heuristic's first algorithm",
}

# cuBLAS modes by the entries' `atomics` tag (kernels.symv: cublasSetAtomicsMode).
_CUBLAS_ATOMICS = {"allowed": "cuBLAS with atomics allowed (cublasSetAtomicsMode CUBLAS_ATOMICS_ALLOWED): "
                              "its partial sums may be added with atomics",
                   "not_allowed": "cuBLAS in its default mode, atomics not allowed"}


def implementation_terms(entries: Iterable[Entry]) -> Dict[str, str]:
    """Each kernel entry's implementation name, defined from the entries: our variants by the kernel record
    that ran (tag impl_resolved; kernels/include/gpuprobe/kernels/<kernel>.hpp describes each record), our
    default by the records it resolved to, cuBLAS's modes by their atomics tag."""
    runs: Dict[tuple, set] = {}
    modes: Dict[str, set] = {}
    math: Dict[tuple, set] = {}
    seen: Dict[str, str] = {}
    present: Dict[str, set] = {}
    for e in entries:
        if not e.family.startswith(F.KERNEL_PREFIX):
            continue
        impl = e.tag("impl")
        if not impl:
            continue
        kernel = e.family[len(F.KERNEL_PREFIX):]
        if e.tag("impl_resolved"):
            runs.setdefault((impl, kernel), set()).add(e.tag("impl_resolved"))
        if impl.startswith("cublas") and e.tag("atomics"):
            modes.setdefault(impl, set()).add(e.tag("atomics"))
        # Entries that name the record they ran another way (sgemm: tag kernel) or cuBLAS's math mode.
        if e.tag("kernel") and not impl.startswith("cublas"):
            runs.setdefault((impl, kernel), set()).add(e.tag("kernel"))
        if impl.startswith("cublas") and e.tag("math_mode"):
            math.setdefault((impl, kernel), set()).add(e.tag("math_mode"))
        seen.setdefault(impl, kernel)
        present.setdefault(kernel, set()).add(impl)
    out: Dict[str, str] = {}
    for (impl, kernel), records in sorted(runs.items()):
        where = f"kernels/include/gpuprobe/kernels/{kernel}.hpp"
        # SGEMM's dispatcher names a record and its split ("small, split-k 4"): such names are kept apart by "; ".
        names = ("; " if any("," in r for r in records) else ", ").join(sorted(records))
        if impl == "ours" or (len(records) > 1 and impl == default_impl(kernel, present.get(kernel, ()))):
            text = f"{kernel}: our default, which chose the kernel record(s) {names} by shape ({where})"
        elif impl == default_impl(kernel, present.get(kernel, ())):
            text = f"{kernel}: our default, kernel record {names} ({where} describes it)"
        else:
            text = f"{kernel}: our variant kept for comparison, kernel record {names} ({where} describes it)"
        out[impl] = "; ".join(t for t in (out.get(impl), text) if t)
    for impl, states in sorted(modes.items()):
        if len(states) == 1 and next(iter(states)) in _CUBLAS_ATOMICS:
            out[impl] = _CUBLAS_ATOMICS[next(iter(states))]
    for (impl, kernel), mode in sorted(math.items()):
        out.setdefault(impl, f"{kernel}: cuBLAS with math mode {', '.join(sorted(mode))} (cublasSetMathMode)")
    for impl, kernel in sorted(seen.items()):  # the rest, where the entries say no more than their name
        out.setdefault(impl, f"{kernel}: cuBLAS's own implementation" if impl.startswith("cublas") else
                       f"{kernel}: our implementation {impl} (kernels/include/gpuprobe/kernels/{kernel}.hpp)")
    return out


def terms_used(texts: Iterable[str], glossary: Dict[str, str]) -> Dict[str, str]:
    """The glossary's terms that occur in the texts as whole words, in the glossary's order."""
    joined = "\n".join(str(t) for t in texts)
    return {term: text for term, text in glossary.items()
            if re.search(r"(?<![\w-])" + re.escape(term) + r"(?![\w-])", joined)}


def report_terms(data: dict) -> Dict[str, str]:
    """The names the report's tables use, defined from the device profile itself: each memory level the
    latency sweep found, each ceiling (measured and theoretical, with how each was obtained) and each
    pipeline op the throughput probe timed; nothing spelled here that the data do not say."""
    out: Dict[str, str] = {}
    for lv in (data.get("hierarchy") or {}).get("levels") or []:
        out[lv["name"]] = f"a memory level the latency sweep found ({lv.get('model') or 'edge model not recorded'})"
    ceilings: Dict[str, list] = {}
    for c in (data.get("roofline") or {}).get("ceilings") or []:
        kind = "measured" if c.get("measured") else "theoretical"
        text = f"{kind} {c['value']:,.6g} {c.get('unit', '')}: {c.get('how') or 'how not recorded'}"
        if text not in ceilings.setdefault(c["name"], []):
            ceilings[c["name"]].append(text)
    for name, texts in ceilings.items():
        out.setdefault(name, "a ceiling of the roofline; " + "; ".join(texts))
    for key in (data.get("bandwidth_l2") or {}):
        out.setdefault(key, "the L2 read plateau of the bandwidth curves (memory.bandwidth), beside the L2 ceiling")
    for r in (data.get("pipelines") or {}).get("throughput") or []:
        out.setdefault(r["op"], f"the SASS operation {r['op']} timed by the pipeline throughput probe "
                                f"(exec.pipeline); its peak: {r.get('peak_how') or 'how not recorded'}")
    return out
