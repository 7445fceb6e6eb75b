"""Multi-GPU SYMV and GEMV (families kernels.symv_mgpu, kernels.gemv_mgpu, kernels.symv_mgpu_sytrd,
kernels.symv_mgpu_trailing): each entry against its bound, the scaling from one GPU to G, and the SYTRD
sequence. `analyze` gives the rows (the report's section, templates/sections/mgpu.j2, shows them);
`summary` and `headline` what the report's summary says of them.

The bound of a call on G GPUs (docs/perf/symv_mgpu.md):
    bound = max over the GPUs of (the GPU's minimal bytes / the read ceiling of the level serving them)
            + reduction_time(op, G, nbytes)
The GPUs' minimal bytes, the collective (op: allreduce / allgather, nbytes: the size of its result as
nccl-tests counts it) and G are fields of the entry (the benchmark's descriptors); the ceilings come
from ceilings.py through the profile of the same inputs: the DRAM read ceiling for entries timed with
their L2 flushed, the L2 read ceiling for L2-resident ones (DRAM's where no L2 ceiling was measured).
Every GPU of the run is taken to have the probed GPU's ceilings (one model of GPU per machine).

reduction_time is a callable (op, G, nbytes) -> seconds: the NCCL collectives' α-β fits when the
caller passes them (collectives.reduction_time with its fits bound); otherwise the P2P α-β from the
same inputs' transfer.p2p (SM engine reading from the peer, one direction) and transfer.p2p_latency entries, as the P2P
reduction moves data: each GPU reads the G - 1 peers' partials (allreduce: (G - 1) nbytes) or the
peers' pieces (allgather: (G - 1) / G nbytes) over its link; without either, no reduction term
(bound = the local bytes only). The model used is named in the output.

% of bound = bound / measured time. Scaling efficiency from 1 to G GPUs = time(G = 1) / (G time(G)) at
equal kernel, n, precision and triangle / transpose. The SYTRD sequence's bound sums, over its calls,
the largest GPU share of the calls whose share exceeds the L2 at the DRAM ceiling, the others' at the
L2 ceiling (a trailing matrix that fits stays resident from the previous call), plus the reductions.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import ceilings as C
from .. import families as F
from . import AnalysisInputs, FamilySection, collectives, register
from ..results import Entry, ResultSet, finite

ReductionTime = Callable[[str, int, float], float]

FAMILIES = F.MGPU_KERNEL_FAMILIES


# ------------------------------------------------------------------------------------------ models
def read_ceilings(rs: ResultSet, profile_data: Optional[dict] = None) -> Dict[str, dict]:
    """Level -> {"gbps", "how", "measured"} for the read ceilings of DRAM and L2: the profile's (ceilings.py,
    with the hierarchy's L2 partition) when given, else ceilings.py on the inputs; DRAM falls back to the
    context's theoretical figure, marked as such."""
    out: Dict[str, dict] = {}
    found = ((profile_data or {}).get("bandwidth") or {}).get("ceilings")
    if found:
        for level in ("DRAM", "L2"):
            c = found.get(level)
            if c and finite(c.get("gbps")):
                out[level] = {"gbps": float(c["gbps"]), "how": c.get("how", ""), "measured": True}
    else:
        l2 = finite(rs.context_number("gpu_l2_bytes"))
        for c in C.level_ceilings(rs, None, l2):
            if c.kind == "read" and c.level in ("DRAM", "L2") and c.level not in out:
                out[c.level] = {"gbps": c.gbps, "how": c.how, "measured": True}
    theo = finite(rs.context_number("gpu_theoretical_dram_gbps"))
    if "DRAM" not in out and theo:
        out["DRAM"] = {"gbps": theo, "how": "theoretical (context gpu_theoretical_dram_gbps): no measured DRAM read "
                       "ceiling in the inputs", "measured": False}
    return out


def p2p_alpha_beta(rs: ResultSet) -> Optional[Tuple[float, float, str]]:
    """(alpha seconds, beta bytes/s, how) of a peer copy from transfer.p2p_latency (median) and transfer.p2p
    (the best one-way SM-engine rate, else copy engine), or None when either is missing."""
    lat = [e.value for e in rs.by_family("transfer.p2p_latency") if math.isfinite(e.value) and e.value > 0]
    bw = [e for e in rs.by_family("transfer.p2p") if math.isfinite(e.value) and e.value > 0
          and (F.text(e, "direction") or "uni") == "uni"]
    if not lat or not bw:
        return None
    # As the P2P reduction moves data: a kernel on the reading GPU (engine sm, form read) where measured.
    sm = [e for e in bw if F.text(e, "engine") == "sm"]
    sm_read = [e for e in sm if F.text(e, "form") == "read"]
    best = max(sm_read or sm or bw, key=lambda e: e.value)
    alpha = float(np.median(lat)) * 1e-9
    beta = best.value * 1e9
    how = (f"P2P α-β: α = {alpha * 1e6:.3g} µs (median of {len(lat)} transfer.p2p_latency), β = {best.value:.4g} GB/s "
           f"({best.name}); allreduce = α + (G-1) nbytes/β, allgather = α + (G-1)/G nbytes/β")
    return alpha, beta, how


def p2p_reduction_time(alpha_s: float, beta_bps: float) -> ReductionTime:
    """The P2P reduction's α-β time: every GPU reads its peers' data over its own link."""
    def time(op: str, gpus: int, nbytes: float) -> float:
        if gpus <= 1 or not nbytes > 0:
            return 0.0
        share = (gpus - 1) if op == "allreduce" else (gpus - 1) / gpus
        return alpha_s + share * nbytes / beta_bps
    return time


class ReductionModel:
    """The reduction's time per (op, G, nbytes): the caller's collective fits where they cover the op and G,
    else the P2P α-β of the inputs, else 0 s (the bound then holds the local bytes only). Which one served
    each call is counted, so that the report can say it."""

    def __init__(self, rs: ResultSet, reduction_time: Optional[ReductionTime]):
        self.collective = reduction_time
        ab = p2p_alpha_beta(rs)
        self.p2p = p2p_reduction_time(ab[0], ab[1]) if ab else None
        self.p2p_how = ab[2] if ab else ""
        self.used: Dict[str, int] = {}
        self.uncovered: set = set()  # (op, G) the collective fits lack

    def __call__(self, op: str, gpus: int, nbytes: float) -> float:
        if gpus <= 1 or op == "none" or not nbytes > 0:
            return 0.0
        if self.collective is not None and (op, gpus) not in self.uncovered:
            try:
                t = float(self.collective(op, gpus, nbytes))
                self.used["collectives"] = self.used.get("collectives", 0) + 1
                return t
            except (LookupError, ValueError):  # collectives.reduction_time: that op and G were not measured
                self.uncovered.add((op, gpus))
        source = "p2p" if self.p2p else "none"
        self.used[source] = self.used.get(source, 0) + 1
        return self.p2p(op, gpus, nbytes) if self.p2p else 0.0

    def description(self) -> str:
        parts = []
        if self.collective is not None:
            parts.append("NCCL collectives' α-β fits (collectives.reduction_time)"
                         + (" for " + ", ".join(f"{op} over {g} GPUs" for op, g in sorted(self.uncovered))
                            + " not measured there" if self.uncovered else ""))
        if self.p2p and (self.collective is None or self.uncovered):
            parts.append(self.p2p_how + (" (no collective fits given)" if self.collective is None else
                                         " for the reductions the fits lack"))
        if not self.p2p and (self.collective is None or self.uncovered):
            parts.append("none where no collective fit applies: no transfer.p2p entries in the inputs (the bound "
                         "holds the local bytes only)")
        used = ", ".join(f"{k} {v}" for k, v in sorted(self.used.items()))
        return "; ".join(parts) + (f" [reductions modelled: {used}]" if used else "")


# ------------------------------------------------------------------------------------------ rows
def _kernel(e: Entry) -> str:
    """symv / gemv (kernels.symv_mgpu..., kernels.gemv_mgpu)."""
    return e.family[len(F.KERNEL_PREFIX):].split("_")[0]


def _shape(e: Entry) -> str:
    """The problem's identity apart from G and the reduction: what scaling compares."""
    return " ".join(f"{k}={v}" for k, v in (("n", _int(F.num(e, "n"))), ("precision", F.text(e, "precision")),
                                             ("uplo", F.text(e, "uplo")), ("trans", F.text(e, "trans")),
                                             ("size", _int(e.num("size")))) if v not in (None, "", "nan"))


def _int(v) -> str:
    return str(int(v)) if isinstance(v, float) and math.isfinite(v) else ""


def _level(e: Entry, ceil: Dict[str, dict]) -> Tuple[Optional[str], Optional[float]]:
    level = "L2" if F.text(e, "l2") == "resident" and "L2" in ceil else "DRAM"
    c = ceil.get(level)
    return (level, c["gbps"]) if c else (None, None)


def entry_row(e: Entry, ceil: Dict[str, dict], rtime: ReductionTime) -> dict:
    gpus = int(e.num("gpus", default=1))
    local = finite(e.num("local_min_bytes_max"))
    level, gbps = _level(e, ceil)
    op = F.text(e, "reduction_op") or "none"
    nbytes = finite(e.num("reduction_bytes")) or 0.0
    red = rtime(op, gpus, nbytes)
    local_s = local / (gbps * 1e9) if local and gbps else None
    bound = local_s + red if local_s is not None else None
    secs = finite(e.num("time_median_s"))
    return {"entry": e.name, "kernel": _kernel(e), "gpus": gpus, "shape": _shape(e),
            "reduction": F.text(e, "reduction") or "?", "l2": F.text(e, "l2"), "time_s": secs,
            "value": finite(e.value), "unit": e.unit, "local_min_bytes_max": local, "level": level,
            "ceiling_gbps": gbps, "local_time_s": local_s, "reduction_op": op, "reduction_bytes": nbytes,
            "reduction_time_s": red, "bound_s": bound,
            "pct_of_bound": 100.0 * bound / secs if bound and secs else None}


def add_scaling(rows: List[dict]) -> None:
    """time(G = 1) / (G time(G)) per row, against the one-GPU row of the same kernel and shape."""
    one = {(r["kernel"], r["shape"]): r["time_s"] for r in rows if r["gpus"] == 1 and r["time_s"]}
    for r in rows:
        t1 = one.get((r["kernel"], r["shape"]))
        r["scaling_efficiency"] = t1 / (r["gpus"] * r["time_s"]) if t1 and r["time_s"] else None


def sytrd_row(e: Entry, ceil: Dict[str, dict], rtime: ReductionTime) -> dict:
    gpus = int(e.num("gpus", default=1))
    elem = e.num("element_bytes", default=8.0)
    first, last = int(e.num("size_first", default=0)), int(e.num("size_last", default=1))
    dram = finite(e.num("seq_local_min_bytes_max_sum_dram"))
    l2b = finite(e.num("seq_local_min_bytes_max_sum_l2")) or 0.0
    if dram is None:  # no split recorded: every call at DRAM
        dram, l2b = finite(e.num("seq_local_min_bytes_max_sum")), 0.0
    cd, cl = ceil.get("DRAM"), ceil.get("L2") or ceil.get("DRAM")
    local_s = None
    if dram is not None and cd and cl:
        local_s = dram / (cd["gbps"] * 1e9) + l2b / (cl["gbps"] * 1e9)
    red = sum(rtime("allreduce", gpus, s * elem) for s in range(last, first + 1)) if gpus > 1 else 0.0
    total = finite(e.num("time_median_s"))
    bound = local_s + red if local_s is not None else None
    return {"entry": e.name, "gpus": gpus, "shape": _shape(e), "reduction": F.text(e, "reduction") or "?",
            "calls": int(e.num("calls", default=first - last + 1)), "total_s": total, "local_time_s": local_s,
            "reduction_time_s": red, "bound_s": bound, "pct_of_bound": 100.0 * bound / total if bound and total else None}


def analyze(rs: ResultSet, profile_data: Optional[dict] = None,
            reduction_time: Optional[ReductionTime] = None) -> Optional[dict]:
    """Every multi-GPU kernel entry against its bound: the rows the report shows and device-profile.json
    keeps; None when the inputs have none."""
    if not any(rs.by_family(fam) for fam in FAMILIES):
        return None
    ceil = read_ceilings(rs, profile_data)
    rtime = ReductionModel(rs, reduction_time)
    calls = [entry_row(e, ceil, rtime) for fam in ("kernels.symv_mgpu", "kernels.gemv_mgpu") for e in rs.by_family(fam)]
    add_scaling(calls)
    trailing = [entry_row(e, ceil, rtime) for e in rs.by_family("kernels.symv_mgpu_trailing")]
    for r, e in zip(trailing, rs.by_family("kernels.symv_mgpu_trailing")):
        r["size"] = int(e.num("size", default=0))
    add_scaling(trailing)
    sytrd = [sytrd_row(e, ceil, rtime) for e in rs.by_family("kernels.symv_mgpu_sytrd")]
    one = {r["shape"]: r["total_s"] for r in sytrd if r["gpus"] == 1 and r["total_s"]}
    for r in sytrd:
        t1 = one.get(r["shape"])
        r["scaling_efficiency"] = t1 / (r["gpus"] * r["total_s"]) if t1 and r["total_s"] else None
    notes = []
    if calls + trailing + sytrd and "DRAM" not in ceil:
        notes.append("no DRAM read ceiling (measured or theoretical) in the inputs: no bound computed")
    elif calls + trailing + sytrd and not ceil["DRAM"]["measured"]:
        notes.append("bound on the theoretical DRAM rate: no memory.bandwidth entries with a DRAM premise in the inputs")
    entries = [e for fam in FAMILIES for e in rs.by_family(fam)]
    return {"calls": calls, "trailing": sorted(trailing, key=lambda r: (r["gpus"], r["reduction"], r["size"])),
            "sytrd": sytrd, "ceilings": ceil, "reduction_model": rtime.description(), "notes": notes,
            "source": F.provenance(entries) if entries else None}


# ------------------------------------------------------------------------------------------ summary
def _best(rows: List[dict]) -> Optional[dict]:
    """The row with the best scaling efficiency (a larger % of bound breaks a tie); without any scaling
    efficiency (no one-GPU time of the same shape), the row with the best % of bound."""
    scaled = [r for r in rows if r.get("scaling_efficiency")]
    if scaled:
        return max(scaled, key=lambda r: (r["scaling_efficiency"], r.get("pct_of_bound") or 0.0))
    bounded = [r for r in rows if r.get("pct_of_bound")]
    return max(bounded, key=lambda r: r["pct_of_bound"]) if bounded else None


def _facts(r: dict) -> str:
    pct = f"{r['pct_of_bound']:.1f} % of its bound" if r.get("pct_of_bound") else "no bound"
    where = f"({r['shape']}, reduction {r['reduction']})"
    if r.get("scaling_efficiency"):
        return f"scaling efficiency {r['scaling_efficiency']:.3f}, {pct} {where}"
    return f"{pct} {where}, no one-GPU time to scale from"


def highlights(res: Optional[dict]) -> List[dict]:
    """Per kernel (symv, gemv; then the SYTRD sequence) and number of GPUs G > 1, the best scaling row:
    {"what", "gpus", "row", "count"} (count: the rows it was chosen from)."""
    if res is None:
        return []
    out = []
    groups = [(f"{kernel} (one call)", [r for r in res["calls"] if r["kernel"] == kernel])
              for kernel in sorted({r["kernel"] for r in res["calls"]})]
    groups.append(("SYTRD sequence", res["sytrd"]))
    for what, rows in groups:
        for gpus in sorted({r["gpus"] for r in rows if r["gpus"] > 1}):
            mine = [r for r in rows if r["gpus"] == gpus]
            best = _best(mine)
            if best is not None:
                out.append({"what": what, "gpus": gpus, "row": best, "count": len(mine)})
    return out


def summary(res: Optional[dict]) -> List[dict]:
    """Facts for the report's summary table: highlights() as {"figure", "value", "how"}."""
    return [{"figure": f"{h['what']} on {h['gpus']} GPUs",
             "value": "best " + _facts(h["row"]),
             "how": (f"1-GPU time / ({h['gpus']} x {h['gpus']}-GPU time), best of {h['count']} problems and "
                     "reductions; bound: minimal bytes at the read ceiling + the reduction's model")}
            for h in highlights(res)]


def headline(res: Optional[dict]) -> Optional[str]:
    """The summary's sentence: on the most GPUs measured, each kernel's best scaling and its % of bound."""
    hs = highlights(res)
    if not hs:
        return None
    top = max(h["gpus"] for h in hs)
    return (f"Multi-GPU kernels on {top} GPUs, the problem that scales best per kernel: "
            + "; ".join(f"{h['what']} {_facts(h['row'])}" for h in hs if h["gpus"] == top)
            + " (section Multi-GPU: SYMV and GEMV).")


def _analyze(inputs: AnalysisInputs) -> Optional[dict]:
    """analyze() with the device profile of the same inputs and the NCCL collectives' fits, if any."""
    fits = inputs.results.get("collectives")
    reduction = (lambda op, ranks, nbytes: collectives.reduction_time(fits, op, ranks, nbytes)) if fits else None
    return analyze(inputs.rs, inputs.profile, reduction)


SECTION = register(FamilySection(
    id="mgpu", title="Multi-GPU: SYMV and GEMV", families=FAMILIES, after=("kernels",), analyze=_analyze,
    content=lambda res, figdir: res, to_json=lambda res: res, summary=summary, headline=headline,
    link_text="multi-GPU kernels", uses=("collectives", "bandwidth")))
