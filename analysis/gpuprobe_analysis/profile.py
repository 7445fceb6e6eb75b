"""Device profile from probe results: capacities, latencies, bandwidths, penalties, pipelines,
launch/barrier costs and the transfer model. Every figure carries its provenance."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import families as F
from .fits import fit_alpha_beta
from .levels import CAPACITY_DEFINITION, LevelFit, _solve, detect_knee_saturation, detect_levels, plateau_values
from .results import Entry, ResultSet

MIN_CURVE_POINTS = 6
# Line/sector sizes are searched among strides below the smallest page size of any CUDA GPU
# (4 KiB), so that page (TLB) effects at larger strides do not masquerade as a line.
LINE_SEARCH_MAX_STRIDE = 4096
# DRAM-served bandwidth: footprints well beyond the L2 (a few x its capacity) so hits are negligible.
DRAM_FOOTPRINT_FACTOR = 4.0
# L1 hit rate decays gradually past the L1 capacity; L2-only plateau from this multiple on.
L1_CLEAR_FACTOR = 8.0


@dataclass
class Curve:
    """One swept curve and its detected levels (kept in memory for the plots)."""
    family: str
    key: dict
    entries: List[Entry]
    x: np.ndarray
    y: np.ndarray
    fit: Optional[LevelFit]
    names: List[str] = field(default_factory=list)
    ylabel: str = ""
    ab: Optional[object] = None  # the alpha-beta fit, for transfer curves


def finite(v) -> Optional[float]:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _curve_xy(entries: List[Entry], xkey: str, ykey: Optional[str] = None):
    pts = []
    for e in entries:
        x = F.num(e, xkey)
        y = e.num(ykey) if ykey else e.value
        if math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0:
            pts.append((x, y, e))
    pts.sort(key=lambda p: p[0])
    return (np.array([p[0] for p in pts]), np.array([p[1] for p in pts]), [p[2] for p in pts])


def name_levels(knees: List[float], l2_bytes: Optional[float], first_is_l1: bool) -> List[str]:
    """Names of the levels of a curve (len(knees) + 1). The knee nearest the L2 size the device
    reports (within a factor 2.5) is the L2 -> DRAM edge; without it, the order names them."""
    k = len(knees) + 1
    if k == 1:
        return ["single level"]
    edge = None
    if l2_bytes and l2_bytes > 0:
        d = [abs(math.log(c / l2_bytes)) for c in knees]
        i = int(np.argmin(d))
        if d[i] <= math.log(2.5):
            edge = i
    if edge is None:
        edge = k - 2  # last knee: the deepest on-chip level -> DRAM
    names = []
    for j in range(k):
        if j > edge:
            names.append("DRAM" if j == edge + 1 else f"DRAM (beyond knee {j})")
        elif j == edge:
            names.append("L2" if (j > 0 or not first_is_l1) else "L1")
        elif j == 0 and first_is_l1:
            names.append("L1")
        elif j == edge - 1:
            names.append("L2 near partition")
        else:
            names.append(f"L2 sub-level {j}")
    return names


# Two adjacent levels of one curve closer than this (relative) are one level split by a drift:
# cache levels differ by far more than that in latency.
MERGE_LEVELS_REL = 0.10


def merge_close_levels(fit: LevelFit, rel: float = MERGE_LEVELS_REL) -> LevelFit:
    """The fit with adjacent levels within `rel` of each other merged (knee dropped); a merged
    level's value is the median of the curve's points between its remaining knees."""
    keep = [i for i in range(1, len(fit.levels)) if abs(fit.levels[i] / fit.levels[i - 1] - 1) >= rel]
    if len(keep) == len(fit.levels) - 1:
        return fit
    knees = [fit.knees[i - 1] for i in keep]
    brackets = [fit.brackets[i - 1] for i in keep]
    shapes = [fit.shapes[i - 1] for i in keep] if fit.shapes else []
    edges = [0.0] + knees + [math.inf]
    levels = []
    for lo, hi in zip(edges, edges[1:]):
        m = (fit.x > lo) & (fit.x <= hi)
        levels.append(float(np.median(fit.y[m])) if m.any() else float(fit.predict([max(lo, fit.x.min())])[0]))
    return LevelFit(fit.x, fit.y, fit.model + " (merged)", knees, levels, brackets, fit.noise, fit.bic,
                    fit.candidates, shapes)


def _line_stride(curves: List[Curve]) -> float:
    """The stride of the random L1-allocating chains that spaces their elements one cache line apart,
    from the chains themselves: up to a line, every stride touches the same lines of a footprint, so
    the first capacity (L1) in footprint bytes is the same; beyond it a line holds one element and the
    capacity in footprint bytes grows with the stride. The largest stride whose first capacity lies
    within the smallest stride's bracket is the line; one stride measured: that stride."""
    chains = sorted((c for c in curves if c.key.get("pattern") == "random" and c.key.get("load") in ("ca", None)
                     and finite(c.key.get("stride")) and c.fit.knees), key=lambda c: finite(c.key.get("stride")))
    if not chains:
        return 0.0
    lo, hi = chains[0].fit.brackets[0]
    same = [c for c in chains if lo <= c.fit.knees[0] <= hi] or chains[:1]
    return finite(same[-1].key.get("stride"))


class Profile:
    def __init__(self, rs: ResultSet):
        self.rs = rs
        self.ctx = rs.context
        self.data: Dict[str, object] = {}
        self.curves: Dict[str, List[Curve]] = {}
        self.notes: List[str] = []
        self._build()

    # ------------------------------------------------------------------ helpers
    def ctxnum(self, key: str) -> Optional[float]:
        return finite(self.rs.context_number(key))

    def _build(self):
        c = self.ctx
        self.data["device"] = {k: c.get(k) for k in (
            "gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz", "gpu_mem_clock_max_mhz",
            "gpu_sm_clock_at_start_mhz", "gpu_bus_width_bits", "gpu_theoretical_dram_gbps", "gpu_l2_bytes",
            "gpu_smem_per_sm_bytes", "gpu_ecc", "cuda_driver_version", "cuda_runtime_version", "gpuprobe_version", "gpuprobe_source_tree",
            "gpuprobe_sweep", "host_name", "date") if c.get(k) not in (None, "")}
        self.data["inputs"] = [{"file": f.path, "partial": f.partial, "entries": len(f.entries)} for f in self.rs.files]
        for step in (self._hierarchy, self._granularity, self._tlb, self._bandwidth, self._stride, self._banks,
                     self._pipelines, self._launch_barrier, self._transfers, self._baseline, self._paired, self._generic):
            try:
                step()
            except Exception as exc:  # one bad section must not lose the others
                self.notes.append(f"{step.__name__.strip('_')}: not computed ({type(exc).__name__}: {exc})")
        self.data["notes"] = self.notes
        self.data["issues"] = [str(i) for i in self.rs.issues]

    # ------------------------------------------------------------------ memory hierarchy
    def _latency_curves(self, family: str) -> List[Curve]:
        spec = F.FAMILY[family]
        curves = []
        for key, ents in sorted(F.group(self.rs.by_family(family), spec["group"]).items(), key=lambda t: str(t[0])):
            x, y, used = _curve_xy(ents, spec["x"], "cycles_per_op")
            ylabel = "cycles per load"
            if len(x) < MIN_CURVE_POINTS:
                x, y, used = _curve_xy(ents, spec["x"])  # value_median (unit in the label)
                ylabel = f"{used[0].unit or 'value'} per load" if used else ylabel
            if len(np.unique(x)) < MIN_CURVE_POINTS:
                continue
            fit = detect_levels(x, y, [e.cv for e in used])
            keyd = dict(zip(spec["group"], key))
            load = keyd.get("load") or ""
            if family == "memory.latency":
                # A slow drift (DRAM latency rising with the TLB misses) or the tail of an edge split
                # into sub-levels is one level.
                fit = merge_close_levels(fit)
            first_l1 = load not in ("cg", "cv", "volatile", "shared") and family == "memory.latency"
            if family == "memory.latency" and keyd.get("pattern") == "random":
                names = name_levels(fit.knees, self.ctxnum("gpu_l2_bytes"), first_l1)
            else:
                # Fixed-stride chains mix hits and misses (several loads per line, or one per page):
                # their levels are not device levels; numbered, not named.
                names = [f"level {i + 1}" for i in range(len(fit.levels))]
            curves.append(Curve(family, keyd, used, x, y, fit, names, ylabel))
        return curves

    def _hierarchy(self):
        curves = [c for c in self._latency_curves("memory.latency") if c.key.get("load") != "shared"]
        self.curves["latency"] = curves
        out = {"curves": [], "levels": [], "method": (
            "change-point detection on latency vs footprint (levels.detect_levels: exact segmentation "
            "seeds, level-mixture model with step, set-associative and gradual edges, one shape per edge, "
            "BIC with the curve's own noise); " + CAPACITY_DEFINITION)}
        for c in curves:
            f = c.fit
            ns = self._ns_levels(c)
            out["curves"].append({
                "key": c.key, "model": f.model, "noise_rel": f.noise, "points": len(c.x),
                "levels": [{"name": n, "cycles": v, "ns": ns[i] if ns else None,
                            "capacity_bytes": f.knees[i] if i < len(f.knees) else None,
                            "capacity_bracket_bytes": list(f.brackets[i]) if i < len(f.brackets) else None}
                           for i, (n, v) in enumerate(zip(c.names, f.levels))],
                "source": F.provenance(c.entries)})
        # The device hierarchy comes from ONE primary curve only: a random pointer chase with the
        # default (L1-allocating) load at the smallest stride >= a cache line seen (one access per
        # line, no prefetch help); other curves (cg/volatile, fixed-stride chains) are reported per
        # curve and as cross-checks, never mixed into the level table.
        line = _line_stride(curves)

        def rank(c: Curve):
            stride = finite(c.key.get("stride")) or 0
            return (c.key.get("load") in ("cg", "cv", "volatile"), c.key.get("pattern") != "random",
                    stride < line, stride)

        summary: Dict[str, dict] = {}
        primary = min(curves, key=rank) if curves else None
        if primary is not None:
            ns = self._ns_levels(primary)
            for i, name in enumerate(primary.names):
                summary[name] = {
                    "name": name, "latency_cycles": primary.fit.levels[i], "latency_ns": ns[i] if ns else None,
                    "capacity_bytes": primary.fit.knees[i] if i < len(primary.fit.knees) else None,
                    "capacity_bracket_bytes": list(primary.fit.brackets[i]) if i < len(primary.fit.brackets) else None,
                    "model": primary.fit.model, "curve": primary.key, "source": F.provenance(primary.entries)}
            out["primary_curve"] = primary.key
            # Cross-check with the L1-bypassing chain of the same pattern/stride: its on-chip levels
            # must match the primary's L2 levels (L1 absent).
            cg = [c for c in curves if c.key.get("load") == "cg" and c.key.get("pattern") == primary.key.get("pattern")
                  and c.key.get("stride") == primary.key.get("stride")]
            if cg:
                c = cg[0]
                # Levels of the cg curve that differ by < 10 % from their neighbour are one level
                # split by noise (e.g. a tiny-footprint knee): merge them for the comparison.
                lv, kn = [c.fit.levels[0]], []
                for i in range(1, len(c.fit.levels)):
                    if abs(c.fit.levels[i] / lv[-1] - 1) < 0.10:
                        continue
                    kn.append(c.fit.knees[i - 1]); lv.append(c.fit.levels[i])
                prim_l2 = [(n, d) for n, d in summary.items() if n.startswith("L2") or n == "DRAM"]
                out["cross_check_cg"] = {
                    "curve": c.key, "levels_cycles": lv, "capacities_bytes": kn,
                    "primary_l2_dram_cycles": {n: d["latency_cycles"] for n, d in prim_l2},
                    "l1_absent": bool(lv and "L1" in summary and lv[0] > 2 * summary["L1"]["latency_cycles"]),
                    "source": F.provenance(c.entries)}
        shared = [e for e in self.rs.by_family("memory.latency") if F.text(e, "load") == "shared"]
        if shared:
            cyc = [e.num("cycles_per_op", "value_median") for e in shared]
            nss = [e.num("ns_per_op") for e in shared]
            summary["shared"] = {"name": "shared", "latency_cycles": float(np.nanmedian(cyc)),
                                 "latency_ns": finite(np.nanmedian(nss)) if any(map(math.isfinite, nss)) else None,
                                 "capacity_bytes": None, "capacity_bracket_bytes": None, "model": "median over footprints",
                                 "curve": {"load": "shared"}, "source": F.provenance(shared)}
        order = ["shared", "L1", "L2 near partition", "L2", "DRAM"]
        out["levels"] = sorted(summary.values(), key=lambda d: (order.index(d["name"]) if d["name"] in order else 9, d["name"]))
        # Capacities as users ask for them.
        caps = {}
        for name, key in (("L1", "l1_bytes"), ("L2 near partition", "l2_near_partition_bytes"), ("L2", "l2_bytes")):
            if name in summary and summary[name]["capacity_bytes"]:
                caps[key] = summary[name]["capacity_bytes"]
        carve = sorted({F.text(e, "carveout") for e in self.rs.by_family("memory.latency") if F.text(e, "carveout")})
        caps["l1_carveout"] = ", ".join(carve) if carve else (
            "not recorded: the latency probe uses no shared memory, so the driver's default carveout applies and "
            "L1 gets the unified L1/shared SRAM minus the (small) default shared-memory reservation; the measured "
            "L1 capacity is that carveout's L1 part, not the SRAM size")
        smem = self.ctxnum("gpu_smem_per_sm_bytes")
        if smem:
            caps["shared_per_sm_bytes_reported_by_driver"] = smem
        if self.ctxnum("gpu_l2_bytes"):
            caps["l2_bytes_reported_by_driver"] = self.ctxnum("gpu_l2_bytes")
        out["capacities"] = caps
        self.data["hierarchy"] = out

    def _ns_levels(self, c: Curve):
        """Level latencies in ns: the same knees, shapes and plateau rule applied to ns_per_op."""
        ns = np.array([e.num("ns_per_op") for e in c.entries])
        if not np.all(np.isfinite(ns)) or np.any(ns <= 0):
            return None
        if not c.fit.knees:
            levels, _, _ = _solve(c.x, ns, c.fit.knees, c.fit.shapes)
            return [float(v) for v in levels]
        return plateau_values(c.fit, ns, c.x)

    def _granularity(self):
        """Line/sector size: latency vs stride at a fixed footprint saturates at the miss unit."""
        ents = [e for e in self.rs.by_family("memory.latency")
                if F.text(e, "pattern") == "stride" and F.text(e, "load") not in ("shared",)]
        knees = []
        hier = self.data.get("hierarchy", {})
        curves = self.curves.get("latency", [])
        ref = next((c for c in curves if c.key.get("pattern") == "random" and c.key.get("load") in ("ca", None)), None)
        rows = []
        self.curves["granularity"] = []
        for (load, fp), grp in sorted(F.group(ents, ("load", "footprint")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
            grp = [e for e in grp if F.num(e, "stride") <= LINE_SEARCH_MAX_STRIDE]
            x, y, used = _curve_xy(grp, "stride", "cycles_per_op")
            if len(np.unique(x)) < 4:
                continue
            r = detect_knee_saturation(x, y, [e.cv for e in used])
            level = None
            if ref is not None and fp:
                idx = int(sum(1 for k in ref.fit.knees if fp > k))
                level = ref.names[idx] if idx < len(ref.names) else None
            self.curves["granularity"].append(Curve("memory.latency", {"load": load, "footprint": fp}, used, x, y, None,
                                                    [], "cycles per load"))
            if r is None:
                continue
            size, lo, hi, _ = r
            if lo <= 0 or np.sum(x < size) < 2:  # the knee must be seen from below, not extrapolated
                continue
            rows.append({"footprint_bytes": fp, "load": load, "served_by": level,
                         "miss_unit_bytes": size, "miss_unit_pow2_bytes": float(2 ** round(math.log2(size))),
                         "cycles_small_stride": lo, "cycles_saturated": hi, "source": F.provenance(used)})
        # One figure per serving level: the median over footprints served by that level.
        summary = {}
        for lvl in sorted({r["served_by"] for r in rows}, key=str):
            sizes = [r["miss_unit_pow2_bytes"] for r in rows if r["served_by"] == lvl]
            summary[str(lvl)] = float(np.median(sizes))
        self.data["granularity"] = {"per_footprint": rows, "by_level": summary, "method": (
            "latency vs stride (pattern=stride, strides <= 4 KiB) fitted with a + b*min(1, stride/B); B is the "
            "unit a miss brings in (sector or line) of the level the footprint spills to; rounded to a power of two")}

    def _tlb(self):
        curves = self._latency_curves("memory.tlb")
        self.curves["tlb"] = curves
        if not curves:
            return
        rows = []
        for c in curves:
            rows.append({"key": c.key, "model": c.fit.model, "reach_bytes": c.fit.knees,
                         "levels_cycles": c.fit.levels, "source": F.provenance(c.entries)})
        # Page size: at the largest footprint common to the strides, latency vs stride saturates at a page.
        ents = self.rs.by_family("memory.tlb")
        page = None
        by_fp = F.group(ents, ("footprint",))
        candidates = sorted((k[0] for k, v in by_fp.items() if k[0] and len({F.num(e, 'stride') for e in v}) >= 4), reverse=True)
        if candidates:
            grp = by_fp[(candidates[0],)]
            x, y, used = _curve_xy(grp, "stride", "cycles_per_op")
            r = detect_knee_saturation(x, y, [e.cv for e in used])
            if r:
                page = {"page_bytes": float(2 ** round(math.log2(r[0]))), "fitted_bytes": r[0],
                        "footprint_bytes": candidates[0], "source": F.provenance(used)}
        # TLB reach: knees of the curve whose stride is the page size (or the smallest stride >= it).
        reach = None
        if page:
            above = [c for c in curves if (finite(c.key.get("stride")) or 0) >= page["page_bytes"]]
            if above:
                c = min(above, key=lambda c: c.key.get("stride") or 0)
                reach = [{"reach_bytes": k, "entries": k / page["page_bytes"], "bracket_bytes": list(b)}
                         for k, b in zip(c.fit.knees, c.fit.brackets)]
        self.data["tlb"] = {"curves": rows, "page": page, "reach": reach, "method": (
            "knees of latency vs footprint per stride (same detector as the caches); page size from latency vs "
            "stride at the largest footprint (saturation fit); entries = reach / page")}

    def _bandwidth(self):
        spec = F.FAMILY["memory.bandwidth"]
        curves = []
        l2 = (self.data.get("hierarchy", {}).get("capacities", {}).get("l2_bytes") or self.ctxnum("gpu_l2_bytes"))
        for key, ents in sorted(F.group(self.rs.by_family("memory.bandwidth"), spec["group"]).items(), key=lambda t: str(t[0])):
            x, y, used = _curve_xy(ents, "footprint")
            if len(x):
                # Footprints below the fastest point are limited by launch/loop overhead, not by a
                # level: the curve starts at its maximum.
                start = int(np.argmax(y))
                x, y, used = x[start:], y[start:], used[start:]
            if len(np.unique(x)) < MIN_CURVE_POINTS:
                continue
            # Time per byte is the mixture of the levels' times per byte: detect on 1/bandwidth.
            fit = detect_levels(x, 1.0 / y, [e.cv for e in used])
            names = name_levels(fit.knees, l2, True)
            curves.append(Curve("memory.bandwidth", dict(zip(spec["group"], key)), used, x, y, fit, names, "GB/s"))
        self.curves["bandwidth"] = curves
        ceilings, rows, errors = self._bandwidth_ceilings(curves)
        self.data["bandwidth_errors"] = errors
        # The L1 ceiling: the better of the sweep's L1 plateau and the dedicated peak probe (each block
        # re-reading its own L1-resident array: no index arithmetic, long samples).
        peak = [e for e in self.rs.by_family("memory.l1_peak") if math.isfinite(e.value)]
        if peak:
            top = max(peak, key=lambda e: e.value)
            plateau = ceilings.get("L1")
            if plateau is None or top.value > plateau["gbps"]:
                ceilings["L1"] = {"gbps": top.value, "how": "largest memory.l1_peak entry (each block re-reads its own "
                                  "L1-resident array)" + (f"; the memory.bandwidth L1 plateau is {plateau['gbps']:,.0f} GB/s"
                                                          if plateau else ""),
                                  "source": F.provenance([top])}
        sh = self.rs.by_family("memory.shared_bandwidth")
        if sh:
            best = max(sh, key=lambda e: e.value if math.isfinite(e.value) else -1)
            if math.isfinite(best.value):
                ceilings["shared"] = {"gbps": best.value, "how": "largest memory.shared_bandwidth entry",
                                      "source": F.provenance([best])}
                if "L1" not in ceilings:
                    ceilings["L1"] = dict(ceilings["shared"], how="shared-memory bandwidth (same SRAM as L1; no L1 "
                                          "plateau found in memory.bandwidth)")
        self.data["bandwidth"] = {"curves": rows, "ceilings": ceilings, "errors": errors, "method": (
            "each point is assigned to the level that serves it by its footprint relative to the capacities "
            "detected by the latency hierarchy: L1 = footprint <= L1 capacity (L1-allocating kernels), L2 = "
            "between L1 and L2 capacity (full-capacity plateau) or read_cg/read_nc-bypassing kernels at <= L1 "
            "capacity (hot set), DRAM = footprint >= %g x L2 capacity; plateau of a curve (kernel, vector, blocks "
            "per SM, store hint; memory.bandwidth and memory.occupancy) in a level = median of "
            "its points there; ceiling = best plateau over curves (L1: or the largest memory.l1_peak entry if higher); a plateau above the theoretical value is an error "
            "and is not used; full-capacity L2 starts at %g x L1 capacity" % (DRAM_FOOTPRINT_FACTOR, L1_CLEAR_FACTOR))}

    # ------------------------------------------------------------------ access penalties
    def _bandwidth_ceilings(self, curves: List[Curve]):
        caps = self.data.get("hierarchy", {}).get("capacities", {})
        l1 = caps.get("l1_bytes")
        l2 = caps.get("l2_bytes") or self.ctxnum("gpu_l2_bytes")
        theo = {"DRAM": self.ctxnum("gpu_theoretical_dram_gbps")}
        errors: List[str] = []
        if l1 and l2 and L1_CLEAR_FACTOR * l1 >= 0.5 * l2:
            self.notes.append(f"bandwidth: no full-capacity L2 plateau: no footprint lies clear of both edges (above "
                              f"{L1_CLEAR_FACTOR:g} x the L1 capacity, {l1:.4g} B, and at most half the L2, {l2:.4g} B); "
                              "the L2 ceiling can only come from the L2 hot set (read_cg)")
        # memory.bandwidth curves plus memory.occupancy curves (store hint, blocks per SM).
        allc = []
        for c in curves:  # untruncated: small footprints count here (the L2 hot set of read_cg)
            x, y, used = _curve_xy(self.rs.by_family("memory.bandwidth"), "footprint")
            keep = [i for i, e in enumerate(used) if all(F.param(e, k) == v for k, v in c.key.items())]
            allc.append(Curve(c.family, c.key, [used[i] for i in keep], x[keep], y[keep], c.fit, c.names, c.ylabel))
        self.curves["bandwidth_all"] = list(allc)
        occ_groups: Dict[tuple, List[Entry]] = {}
        for e in self.rs.by_family("memory.occupancy"):  # the store hint is a text tag (default|cs)
            occ_groups.setdefault(tuple(F.param(e, k) for k in ("kernel", "vector", "blocks_per_sm"))
                                  + (F.text(e, "store") or "default",), []).append(e)
        for key, ents in occ_groups.items():
            x, y, used = _curve_xy(ents, "footprint")
            if len(x):
                allc.append(Curve("memory.occupancy", dict(zip(("kernel", "vector", "blocks_per_sm", "store"), key)),
                                  used, x, y, None, [], "GB/s"))
        cands: Dict[str, List[dict]] = {}
        rows = []
        for c in allc:
            kernel = str(c.key.get("kernel") or "")
            bypass = kernel.endswith("_cg")  # ld.global.cg caches in L2 only (read_nc goes through L1 tex)
            regions = {}
            if l2:
                regions["DRAM"] = c.x >= DRAM_FOOTPRINT_FACTOR * l2
            if l1 and l2:
                # Past L1 the rate falls gradually (misses mix in); full-capacity L2 = clear of both edges.
                regions["L2"] = (c.x > L1_CLEAR_FACTOR * l1) & (c.x <= 0.5 * l2)
                if bypass:
                    regions["L2 hot set"] = c.x <= l1
                else:
                    regions["L1"] = c.x <= l1
            lv = []
            for name, m in regions.items():
                pts = c.y[m]
                if len(pts) == 0:
                    continue
                plateau = float(np.median(pts))
                lv.append({"name": name, "gbps_plateau": plateau, "points": int(m.sum())})
                theo_v = theo.get(name.split()[0])
                if theo_v and plateau > theo_v:
                    errors.append(f"{c.family} {c.key}: {name} plateau {plateau:.0f} GB/s exceeds the theoretical "
                                  f"{theo_v:.0f} GB/s; not used (footprint classification or timing error)")
                    continue
                cands.setdefault(name, []).append({"gbps": plateau, "how": f"plateau of {c.family} {c.key} "
                                                   f"(median of its {len(pts)} points in the level)",
                                                   "source": F.provenance([e for e, k in zip(c.entries, m) if k])})
            if c.family == "memory.bandwidth":
                rows.append({"key": c.key, "model": c.fit.model if c.fit else None, "levels": lv,
                             "source": F.provenance(c.entries)})
        best = {n: max(v, key=lambda d: d["gbps"]) for n, v in cands.items()}
        ceilings: Dict[str, dict] = {}
        for n in ("L1", "DRAM"):
            if n in best:
                ceilings[n] = best[n]
        l2c = [best[n] for n in ("L2", "L2 hot set") if n in best]
        if l2c:
            top = max(l2c, key=lambda d: d["gbps"])
            ceilings["L2"] = dict(top, how=top["how"] + "; the roofline L2 ceiling is the best L2-served plateau of: "
                                  + ", ".join(f"{n} {best[n]['gbps']:.0f} GB/s" for n in ("L2", "L2 hot set") if n in best))
        self.data["bandwidth_l2"] = {n: best[n] for n in ("L2", "L2 hot set") if n in best}
        return ceilings, rows, errors

    def _stride(self):
        ents = self.rs.by_family("memory.stride")
        if not ents:
            return
        best = max((e.value for e in ents if math.isfinite(e.value)), default=math.nan)
        rows = []
        for e in sorted(ents, key=lambda e: (F.num(e, "offset") if math.isfinite(F.num(e, "offset")) else 0,
                                             F.num(e, "stride_elements"))):
            rows.append({"stride_elements": finite(F.num(e, "stride_elements")), "offset_bytes": finite(F.num(e, "offset")),
                         "value": e.value, "unit": e.unit, "penalty_vs_best": best / e.value if e.value > 0 else None,
                         "entry": e.name})
        self.data["stride_alignment"] = {"rows": rows, "best": best, "source": F.provenance(ents),
                                         "method": "penalty = best bandwidth of the family / this entry's bandwidth"}

    def _banks(self):
        ents = self.rs.by_family("memory.bank_conflicts")
        if not ents:
            return
        out = []
        for (wb,), grp in sorted(F.group(ents, ("word_bytes",)).items(), key=lambda t: t[0][0] or 0):
            grp = sorted(grp, key=lambda e: F.num(e, "word_stride"))
            base = next((e for e in grp if F.num(e, "word_stride") == 1), grp[0])
            higher = bool(F.HIGHER_IS_BETTER.search(base.unit or ""))
            rows = []
            for e in grp:
                slow = (base.value / e.value) if higher else (e.value / base.value)
                rows.append({"word_stride": finite(F.num(e, "word_stride")), "value": e.value, "unit": e.unit,
                             "slowdown_vs_stride1": slow, "entry": e.name})
            banks = _fit_banks([r["word_stride"] for r in rows], [r["slowdown_vs_stride1"] for r in rows],
                               (wb or 4) / 4)
            out.append({"word_bytes": wb, "rows": rows, "banks": banks, "source": F.provenance(grp)})
        self.data["banks"] = {"by_word_bytes": out, "method": (
            "slowdown vs word stride 1; the bank count is the power of two B whose conflict degree "
            "gcd(stride x words per access, B) best explains the slowdowns (least squares in log)")}

    # ------------------------------------------------------------------ execution
    def _pipelines(self):
        lat = []
        lat_entries = [e for f in F.PIPELINE_LATENCY_FAMILIES for e in self.rs.by_family(f)]
        for (op,), grp in sorted(F.group(lat_entries, ("op",)).items(), key=lambda t: str(t[0])):
            vals = [e.value for e in grp if math.isfinite(e.value)]
            if vals:
                lat.append({"op": op, "latency": float(np.median(vals)), "unit": grp[0].unit,
                            "cv": finite(np.nanmedian([e.cv for e in grp])), "source": F.provenance(grp)})
        thr = []
        compute: Dict[str, dict] = {}
        theoretical: Dict[str, dict] = {}
        thr_entries = [e for f in F.THROUGHPUT_FAMILIES for e in self.rs.by_family(f)]
        for (op,), grp in sorted(F.group(thr_entries, ("op",)).items(), key=lambda t: str(t[0])):
            grp = [e for e in grp if math.isfinite(e.value)]
            if not grp:
                continue
            best = max(grp, key=lambda e: e.value)
            sweep = [e for e in grp if e.family == "exec.throughput"] or grp
            enough = [e for e in sweep if e.value >= 0.95 * best.value]
            cheapest = min(enough, key=lambda e: (F.num(e, "ilp") if math.isfinite(F.num(e, "ilp")) else 0) *
                           (F.num(e, "warps_per_sm") if math.isfinite(F.num(e, "warps_per_sm")) else 1)) if enough else None
            row = {"op": op, "peak": best.value, "unit": best.unit, "at_ilp": finite(F.num(best, "ilp")),
                   "at_warps_per_sm": finite(F.num(best, "warps_per_sm")),
                   "smallest_ilp_reaching_95pct": finite(F.num(cheapest, "ilp")) if cheapest else None,
                   "warps_per_sm_there": finite(F.num(cheapest, "warps_per_sm")) if cheapest else None,
                   "fraction_of_theoretical": finite(best.num("fraction_of_theoretical")),
                   "source": F.provenance(grp)}
            gflops = self._as_gflops(best, op)
            kind = F.compute_op(op)
            if gflops is not None:
                row["gflops"] = gflops
                if kind[0] not in compute or gflops > compute[kind[0]]["gflops"]:
                    compute[kind[0]] = {"gflops": gflops, "how": f"{best.family} op={op}", "source": F.provenance([best])}
            for e in grp:
                th = finite(e.num(F.THEORETICAL_COMPUTE_COUNTER))
                if th and kind and (kind[0] not in theoretical or th > theoretical[kind[0]]["gflops"]):
                    theoretical[kind[0]] = {"gflops": th, "how": f"{e.family} op={op} counter {F.THEORETICAL_COMPUTE_COUNTER}"}
            thr.append(row)
        self.data["pipelines"] = {"latency": lat, "throughput": thr, "compute_ceilings": compute,
                                  "compute_theoretical": theoretical, "method": (
            "latency: median over entries per op; throughput: best entry per op, and the cheapest ILP x warps reaching "
            "95 % of it; GFLOP/s = ops/clock/SM x flops/op x SMs x SM clock (the entry's clock) when the unit is per clock")}

    def _as_gflops(self, e: Entry, op: str) -> Optional[float]:
        kind = F.compute_op(op)
        if kind is None:
            return None
        unit = (e.unit or "").lower()
        if "flop" in unit:
            scale = {"tflop/s": 1e3, "gflop/s": 1.0, "mflop/s": 1e-3}.get(unit, 1.0)
            return e.value * scale
        if "clock" in unit or "cycle" in unit or "clk" in unit:
            sms = self.ctxnum("gpu_sm_count")
            mhz = finite(e.num("sm_clock_kernel_mhz", "sm_clock_mhz")) or self.ctxnum("gpu_sm_clock_max_mhz")
            if not sms or not mhz:
                return None
            per_sm = "sm" in unit
            return e.value * kind[1] * (sms if per_sm else 1) * mhz * 1e-3
        return None

    def _launch_barrier(self):
        launch = []
        launch_entries = [e for e in self.rs.entries if e.family.startswith(F.LAUNCH_PREFIX)]
        for (fam, mode, grid), grp in sorted(F.group(launch_entries, ("family", "mode", "grid")).items(),
                                             key=lambda t: str(t[0])):
            vals = [e.value for e in grp if math.isfinite(e.value)]
            if vals:
                launch.append({"measure": fam, "mode": mode, "grid_blocks": grid, "value": float(np.median(vals)),
                               "unit": grp[0].unit,
                               "min": float(np.min(vals)), "max": float(np.max(vals)), "entries": len(grp),
                               "method": grp[0].method, "source": F.provenance(grp)})
        barrier = []
        for (kind,), grp in sorted(F.group(self.rs.by_family("exec.barrier"), ("kind",)).items(), key=lambda t: str(t[0])):
            for e in sorted(grp, key=lambda e: F.num(e, "blocks")):
                barrier.append({"kind": kind, "blocks": finite(F.num(e, "blocks")), "value": e.value, "unit": e.unit,
                                "cv": finite(e.cv), "entry": e.name})
        if launch or barrier:
            self.data["launch_barrier"] = {"launch": launch, "barrier": barrier,
                                           "source": F.provenance(launch_entries + self.rs.by_family("exec.barrier"))}

    # ------------------------------------------------------------------ transfers
    def _transfers(self):
        ents = self.rs.by_family("transfer.host")
        if not ents and not self.rs.by_family("transfer.memcpy_baseline"):
            return
        rows = []
        self.curves["transfers"] = []
        for key, grp in sorted(F.group(ents, ("direction", "memory", "engine")).items(), key=lambda t: str(t[0])):
            sizes, secs, used = [], [], []
            for e in grp:
                s, t = transfer_point(e)
                if s and t:
                    sizes.append(s), secs.append(t), used.append(e)
            keyd = dict(zip(("direction", "memory", "engine"), key))
            row = {"key": keyd, "points": len(used), "source": F.provenance(grp)}
            try:
                ab = fit_alpha_beta(sizes, secs)
                row.update({"alpha_us": ab.alpha_s * 1e6, "alpha_stderr_us": ab.alpha_stderr_s * 1e6,
                            "beta_gbps": ab.beta_bps / 1e9, "beta_stderr_gbps": ab.beta_stderr_bps / 1e9,
                            "half_bandwidth_bytes": ab.half_bandwidth_bytes, "rms_rel_error": ab.rms_rel_error,
                            "max_rel_error": ab.max_rel_error, "robust_rel_scale": ab.robust_rel_scale,
                            "outliers": ab.outliers, "outlier_sizes_bytes": list(ab.outlier_sizes)})
                cvs = [e.cv for e in used if math.isfinite(e.cv)]
                med_cv = float(np.median(cvs)) if cvs else None
                row["median_point_cv"] = med_cv
                # Residuals are judged against the points' own sample spread: a fit cannot be better
                # than the data; far worse means the model (one alpha, one beta) does not hold.
                if med_cv is not None and ab.robust_rel_scale > 2.0 * max(med_cv, 0.01):
                    row["verdict"] = "model does not fit: residuals well above the points' own spread (two regimes?)"
                elif med_cv is not None and ab.rms_rel_error > 2.0 * max(med_cv, 0.01):
                    row["verdict"] = "fits the bulk; a few points far off (see outliers)"
                else:
                    row["verdict"] = "residuals at the level of the measurement noise (points' CV)"
                self.curves["transfers"].append(Curve("transfer.host", keyd, used, np.array(sizes), np.array(secs),
                                                      None, [], "seconds", ab))
            except ValueError as exc:
                row["fit"] = f"not fitted: {exc}"
            rows.append(row)
        base = [{"entry": e.name, "direction": F.text(e, "direction"), "size_bytes": finite(F.num(e, "size")),
                 "value": e.value, "unit": e.unit, "cv": finite(e.cv), "method": e.method}
                for e in self.rs.by_family("transfer.memcpy_baseline")]
        self.data["transfers"] = {"fits": rows, "baseline": base, "method": (
            "time(s) = alpha + s/beta per (direction, memory, engine), least squares on relative residuals "
            "(weights 1/t^2), made robust by IRLS with Huber weights (k = 1.345 robust sigmas); fit error = RMS "
            "and max relative residual over all points, robust sigma = 1.4826 MAD; outliers = points beyond 3 "
            "robust sigmas (listed: a slow path or a bimodal per-call cost, not fitted)")}

    def _baseline(self):
        ents = self.rs.by_family("baseline.memcpy_d2d")
        if ents:
            self.data["baseline"] = [{"entry": e.name, "size_bytes": finite(F.num(e, "size")), "value": e.value,
                                      "unit": e.unit, "cv": finite(e.cv)} for e in ents]

    def _paired(self):
        rows = []
        for fam in self.rs.families():
            if not fam.startswith(F.PAIRED_PREFIX):
                continue
            for e in self.rs.by_family(fam):
                problem = "/".join(f"{k}:{v}" for k, v in e.params.items() if k not in ("a", "b"))
                a_us, b_us = e.num("time_median_s") * 1e6, e.num("b_time_median_s") * 1e6
                rows.append({
                    "entry": e.name, "kernel": fam[len(F.PAIRED_PREFIX):], "problem": problem,
                    "a": e.tag("a_impl") or e.params.get("a"), "b": e.tag("b_impl") or e.params.get("b"),
                    "a_ran": e.tag("a_impl_resolved"), "b_ran": e.tag("b_impl_resolved"),
                    "speedup": finite(e.value), "a_first": finite(e.num("value_median_a_first")),
                    "b_first": finite(e.num("value_median_b_first")), "cv": finite(e.cv),
                    "a_us": finite(a_us), "b_us": finite(b_us), "l2": e.tag("l2"),
                    "noisy": bool(math.isfinite(e.cv) and e.cv > F.PAIRED_NOISY_CV)})
        if rows:
            self.data["paired"] = rows

    def _generic(self):
        known = set(F.FAMILY)
        gen = {}
        for fam in self.rs.families():
            if fam in known or fam.startswith(F.KERNEL_PREFIX) or fam.startswith(F.PAIRED_PREFIX):
                continue
            gen[fam] = [{"entry": e.name, "value": e.value, "unit": e.unit, "cv": finite(e.cv),
                         "tags": e.tags} for e in self.rs.by_family(fam)]
        if gen:
            self.data["other_families"] = gen

    # ------------------------------------------------------------------ output
    def to_json(self) -> dict:
        return _jsonable(self.data)


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
    return {"banks": best[0], "rms_log_error": math.sqrt(best[1] / len(pts))}


def _jsonable(o):
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (np.floating, float)):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, np.integer):
        return int(o)
    return o
