"""Device profile from probe results: capacities, latencies, bandwidths, penalties, pipelines,
launch/barrier costs and the transfer model. Every figure carries its provenance."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import ceilings as C
from . import families as F
from . import profile_results as R
from .fits import ALPHA_BETA_RMS_MAX, alpha_beta_holds, fit_alpha_beta, fit_two_regimes
from .levels import (CAPACITY_DEFINITION, LevelFit, _solve, _ways_share, detect_knee_saturation, detect_levels_many,
                     estimate_noise, plateau_values)
from .results import Entry, ResultSet, finite
from .tlb import TLB_METHOD, TlbPoint, fit_tlb, tlb_findings

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
    beyond = k - edge - 2  # levels past DRAM's: no memory level lies there
    for j in range(k):
        if j > edge:
            # Past the L2 every load is DRAM's: what adds latency beyond is address translation,
            # the random chain's TLB misses once its pages exceed the TLB's reach (memory.tlb).
            names.append("DRAM" if j == edge + 1 else
                         "DRAM + TLB misses" + (f" ({j - edge - 1} of {beyond})" if beyond > 1 else ""))
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


# An edge whose accesses go from 90 % to 10 % served by the level within this factor of footprint is
# "sharp": a 4-per-octave sweep spaces its points by 1.19x, so a narrower edge spans at most two of them
# and cannot be told from a step.
SHARP_EDGE_WIDTH = 1.5


def edge_width(shape: str) -> float:
    """Footprint factor over which an edge's share served goes from 90 % to 10 % (1 for a step, inf
    for a gradual edge)."""
    if shape == "step":
        return 1.0
    if not shape.startswith("ways"):
        return math.inf
    w = float(shape[len("ways"):])
    u = np.exp(np.linspace(-2.5, 2.5, 20001))
    served = _ways_share(w, u)
    return float(u[np.argmax(served < 0.1)] / u[np.argmax(served < 0.9)])


def edge_words(shape: Optional[str]) -> str:
    """An edge's shape in words. No associativity is claimed: the hashed-set model's W only sets the
    edge's width, which replacement policy, hashing and sectoring smear the same way."""
    if shape is None:
        return "last level (no edge after it)"
    if shape == "gradual":
        return "gradual (keeps its capacity of a larger footprint)"
    width = edge_width(shape)
    if width <= SHARP_EDGE_WIDTH:
        return "sharp"
    return f"smeared (90 % to 10 % served over {width:.2g}x the footprint)"


def model_words(fit: LevelFit) -> str:
    """A curve's fitted edges in words, one per edge, and the levels merged as one (MERGE_LEVELS_REL)."""
    if not fit.knees:
        return "flat (one level)"
    words = ", ".join(edge_words(s).split(" (")[0] + (f" x{edge_width(s):.2g}" if s.startswith("ways") and
                                                       edge_width(s) > SHARP_EDGE_WIDTH else "")
                      for s in fit.shapes[:len(fit.knees)])
    if fit.model.endswith("(merged)"):
        fitted = len(fit.model[:-len(" (merged)")].split(","))
        words += (f"; {fitted - len(fit.knees)} more edge(s) between levels within "
                  f"{100 * MERGE_LEVELS_REL:.0f} % of each other merged")
    return words


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


def _witnesses(family: str, keys: List[dict], todo: list, i: int) -> tuple:
    """The curves (x, y, recorded_cv) that measure curve i's levels independently (levels.detect_levels'
    witnesses): for a random chain of memory.latency, the random chains of the same stride with another
    global load (L1-allocating, L1-bypassing, volatile): the same L2 and DRAM, measured by other runs."""
    k = keys[i]
    if family != "memory.latency" or k.get("pattern") != "random" or k.get("load") == "shared":
        return ()
    return tuple((tuple(x), tuple(y), tuple(e.cv for e in used)) for j, (_, x, y, used, _) in enumerate(todo)
                 if j != i and keys[j].get("pattern") == "random" and keys[j].get("stride") == k.get("stride")
                 and keys[j].get("load") not in (k.get("load"), "shared"))


class Profile:
    """The device profile of a result set: one typed result per section (profile_results), None where the
    inputs hold nothing for it; `curves` keeps the curves for the plots, `notes` what a section could not
    compute and why. A step's expected failures (a fit that does not converge, too few points) are
    handled where they arise; anything else is a bug and raises. `claimed_families`: the families that
    report sections of their own read (sections.claimed_families()), left out of the generic table."""

    def __init__(self, rs: ResultSet, claimed_families: Sequence[str] = ()):
        self.rs = rs
        self.claimed_families = tuple(claimed_families)
        self.ctx = rs.context
        self.curves: Dict[str, List[Curve]] = {}
        self.notes: List[str] = []
        self.device: Dict[str, object] = {}
        self.inputs: List[R.InputFile] = []
        self.hierarchy: Optional[R.Hierarchy] = None
        self.granularity: Optional[R.Granularity] = None
        self.tlb: Optional[R.Tlb] = None
        self.bandwidth_l2: Dict[str, R.PlateauCandidate] = {}
        self.premises: Optional[R.PremiseReport] = None
        self.bandwidth: Optional[R.Bandwidth] = None
        self.stride_alignment: Optional[R.StrideAlignment] = None
        self.banks: Optional[R.Banks] = None
        self.pipelines: Optional[R.Pipelines] = None
        self.launch_barrier: Optional[R.LaunchBarrier] = None
        self.transfers: Optional[R.Transfers] = None
        self.baseline: Optional[List[R.D2dBaseline]] = None
        self.paired: Optional[List[R.PairedRow]] = None
        self.other_families: Optional[Dict[str, List[R.OtherEntry]]] = None
        self.issues: List[str] = [str(i) for i in rs.issues]
        self._build()

    # ------------------------------------------------------------------ helpers
    def ctxnum(self, key: str) -> Optional[float]:
        return finite(self.rs.context_number(key))

    def capacities(self) -> R.Capacities:
        return self.hierarchy.capacities if self.hierarchy is not None else R.Capacities()

    def _build(self):
        c = self.ctx
        self.device = {k: c.get(k) for k in (
            "gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz", "gpu_mem_clock_max_mhz",
            "gpu_sm_clock_at_start_mhz", "gpu_bus_width_bits", "gpu_theoretical_dram_gbps", "gpu_l2_bytes",
            "gpu_smem_per_sm_bytes", "gpu_ecc", "cuda_driver_version", "cuda_runtime_version", "gpuprobe_version", "gpuprobe_source_tree",
            "gpuprobe_sweep", "host_name", "date") if c.get(k) not in (None, "")}
        self.inputs = [R.InputFile(file=f.path, partial=f.partial, complete=f.complete,
                                   incomplete_reason=f.incomplete_reason, entries=len(f.entries),
                                   entries_read=f.entries_read, rejected=list(f.rejected))
                       for f in self.rs.files]
        for step in (self._hierarchy, self._granularity, self._tlb, self._bandwidth, self._stride, self._banks,
                     self._pipelines, self._launch_barrier, self._transfers, self._baseline, self._paired, self._generic):
            step()

    # ------------------------------------------------------------------ memory hierarchy
    def _latency_curves(self, family: str) -> List[Curve]:
        group_keys, xkey = F.group_keys(self.rs, family), F.x_key(self.rs, family)
        if self.rs.by_family(family) and (group_keys is None or xkey is None):
            self.notes.append(f"{family}: no curves (its family record, which names the axes, is missing)")
            return []
        curves = []
        todo = []
        for key, ents in sorted(F.group(self.rs.by_family(family), group_keys or ()).items(), key=lambda t: str(t[0])):
            x, y, used = _curve_xy(ents, xkey, "cycles_per_op")
            ylabel = "cycles per load"
            if len(x) < MIN_CURVE_POINTS:
                x, y, used = _curve_xy(ents, xkey)  # value_median (unit in the label)
                ylabel = f"{used[0].unit or 'value'} per load" if used else ylabel
            if len(np.unique(x)) < MIN_CURVE_POINTS:
                continue
            todo.append((key, x, y, used, ylabel))
        keys = [dict(zip(group_keys, key)) for key, *_ in todo]
        fits = detect_levels_many([(x, y, [e.cv for e in used], _witnesses(family, keys, todo, i))
                                   for i, (_, x, y, used, _) in enumerate(todo)])
        for (key, x, y, used, ylabel), fit in zip(todo, fits):
            keyd = dict(zip(group_keys, key))
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
        out = R.Hierarchy(curves=[], levels=[], method=(
            "change-point detection on latency vs footprint (levels.detect_levels: exact segmentation "
            "seeds, level-mixture model with step, set-associative and gradual edges, one shape per edge, "
            "BIC with the curve's own noise); " + CAPACITY_DEFINITION))
        for c in curves:
            f = c.fit
            ns = self._ns_levels(c)
            out.curves.append(R.LatencyCurve(
                key=c.key, model=model_words(f), fit_model=f.model, noise_rel=f.noise, points=len(c.x),
                levels=[R.CurveLevel(name=n, cycles=v, ns=ns[i] if ns else None,
                                     capacity_bytes=f.knees[i] if i < len(f.knees) else None,
                                     capacity_bracket_bytes=list(f.brackets[i]) if i < len(f.brackets) else None)
                        for i, (n, v) in enumerate(zip(c.names, f.levels))],
                source=F.provenance(c.entries)))
        # The device hierarchy comes from ONE primary curve only: a random pointer chase with the
        # default (L1-allocating) load at the smallest stride >= a cache line seen (one access per
        # line, no prefetch help); other curves (cg/volatile, fixed-stride chains) are reported per
        # curve and as cross-checks, never mixed into the level table.
        line = _line_stride(curves)

        def rank(c: Curve):
            stride = finite(c.key.get("stride")) or 0
            return (c.key.get("load") in ("cg", "cv", "volatile"), c.key.get("pattern") != "random",
                    stride < line, stride)

        summary: Dict[str, R.DeviceLevel] = {}
        # Only a random chain names device levels: a fixed-stride chain mixes hits and misses, so its
        # numbered levels ("level 2") are no level of the device, whatever else is missing.
        chains = [c for c in curves if c.key.get("pattern") == "random"]
        primary = min(chains, key=rank) if chains else None
        if primary is None and curves:
            self.notes.append("hierarchy: no random pointer-chase curve (memory.latency pattern=random) with enough "
                              "usable points, so no device level is given; the fixed-stride chains' levels are "
                              "listed per curve only")
        if primary is not None:
            ns = self._ns_levels(primary)
            for i, name in enumerate(primary.names):
                summary[name] = R.DeviceLevel(
                    name=name, latency_cycles=primary.fit.levels[i], latency_ns=ns[i] if ns else None,
                    capacity_bytes=primary.fit.knees[i] if i < len(primary.fit.knees) else None,
                    capacity_bracket_bytes=list(primary.fit.brackets[i]) if i < len(primary.fit.brackets) else None,
                    model=edge_words(primary.fit.shapes[i] if i < len(primary.fit.knees) else None),
                    curve=primary.key, source=F.provenance(primary.entries))
            out.primary_curve = primary.key
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
                out.cross_check_cg = R.CgCrossCheck(
                    curve=c.key, levels_cycles=lv, capacities_bytes=kn,
                    primary_l2_dram_cycles={n: d.latency_cycles for n, d in prim_l2},
                    l1_absent=bool(lv and "L1" in summary and lv[0] > 2 * summary["L1"].latency_cycles),
                    source=F.provenance(c.entries))
        shared = [e for e in self.rs.by_family("memory.latency") if F.text(e, "load") == "shared"]
        if shared:
            cyc = [e.num("cycles_per_op", "value_median") for e in shared]
            nss = [e.num("ns_per_op") for e in shared]
            summary["shared"] = R.DeviceLevel(name="shared", latency_cycles=float(np.nanmedian(cyc)),
                                              latency_ns=finite(np.nanmedian(nss)) if any(map(math.isfinite, nss)) else None,
                                              capacity_bytes=None, capacity_bracket_bytes=None,
                                              model="median over footprints", curve={"load": "shared"},
                                              source=F.provenance(shared))
        order = ["shared", "L1", "L2 near partition", "L2", "DRAM"]
        out.levels = sorted(summary.values(), key=lambda d: (order.index(d.name) if d.name in order else 9, d.name))
        # Capacities as users ask for them.
        caps = out.capacities
        for name, key in (("L1", "l1_bytes"), ("L2 near partition", "l2_near_partition_bytes"), ("L2", "l2_bytes")):
            if name in summary and summary[name].capacity_bytes:
                setattr(caps, key, summary[name].capacity_bytes)
        carve = sorted({F.text(e, "carveout") for e in self.rs.by_family("memory.latency") if F.text(e, "carveout")})
        caps.l1_carveout = ", ".join(carve) if carve else (
            "not recorded: the latency probe uses no shared memory, so the driver's default carveout applies and "
            "L1 gets the unified L1/shared SRAM minus the (small) default shared-memory reservation; the measured "
            "L1 capacity is that carveout's L1 part, not the SRAM size")
        smem = self.ctxnum("gpu_smem_per_sm_bytes")
        if smem:
            caps.shared_per_sm_bytes_reported_by_driver = smem
        if self.ctxnum("gpu_l2_bytes"):
            caps.l2_bytes_reported_by_driver = self.ctxnum("gpu_l2_bytes")
        self.hierarchy = out

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
        curves = self.curves.get("latency", [])
        ref = next((c for c in curves if c.key.get("pattern") == "random" and c.key.get("load") in ("ca", None)), None)
        # The latency of the loads that share a unit already brought in: the L1 hit (ca loads allocate in L1).
        hit = ref.fit.levels[0] if ref is not None and ref.names and ref.names[0] == "L1" else None
        rows, no_miss = [], []
        self.curves["granularity"] = []
        for (load, fp), grp in sorted(F.group(ents, ("load", "footprint")).items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
            grp = [e for e in grp if F.num(e, "stride") <= LINE_SEARCH_MAX_STRIDE]
            x, y, used = _curve_xy(grp, "stride", "cycles_per_op")
            if len(np.unique(x)) < 4:
                continue
            level = None
            if ref is not None and fp:
                idx = int(sum(1 for k in ref.fit.knees if fp > k))
                level = ref.names[idx] if idx < len(ref.names) else None
            self.curves["granularity"].append(Curve("memory.latency", {"load": load, "footprint": fp}, used, x, y, None,
                                                    [], "cycles per load"))
            if level is not None and ref is not None and level == ref.names[0]:
                # The whole footprint fits the first level: every load hits, no miss brings anything in.
                no_miss.append(R.NoMiss(footprint_bytes=fp, load=load, served_by=level))
                continue
            if hit is not None:
                r = fit_miss_unit(x, y, hit, [e.cv for e in used])
            else:
                r = detect_knee_saturation(x, y, [e.cv for e in used])
                if r is not None and (r[1] <= 0 or np.sum(x < r[0]) < 2):  # seen from below, not extrapolated
                    r = None
            if r is None:
                continue
            size, lo, hi, _ = r
            rows.append(R.MissUnit(footprint_bytes=fp, load=load, served_by=level,
                                   miss_unit_bytes=size, miss_unit_pow2_bytes=float(2 ** round(math.log2(size))),
                                   cycles_small_stride=lo, cycles_saturated=hi, source=F.provenance(used)))
        # One figure per serving level: the median over footprints served by that level.
        summary = {}
        for lvl in sorted({r.served_by for r in rows}, key=str):
            sizes = [r.miss_unit_pow2_bytes for r in rows if r.served_by == lvl]
            summary[str(lvl)] = float(np.median(sizes))
        self.granularity = R.Granularity(per_footprint=rows, by_level=summary, no_miss=no_miss, method=(
            "latency vs stride (pattern=stride, strides <= 4 KiB) fitted with hit + (miss - hit) x min(1, stride/B): "
            "below B, B/stride loads share one unit and all but the first hit in L1, so the hit latency is the "
            "hierarchy's L1 latency (fixed: one stride below B then suffices, a free intercept extrapolated "
            "B to half its size where the sweep starts at 16 B); strides past the saturation where latency falls "
            "back (a chain at a large stride touches fewer lines, which a faster level then holds) are cut off; B "
            "is the unit a miss brings in from the level the footprint spills to, rounded to a power of two; a "
            "footprint that fits in L1 has no miss and no unit"))

    def _tlb(self):
        curves = self._latency_curves("memory.tlb")
        self.curves["tlb"] = curves
        ents = self.rs.by_family("memory.tlb")
        if not ents:
            return
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
        self.tlb = R.Tlb(curves=rows, source=F.provenance(ents), method=TLB_METHOD,
                         warm_up_recorded=all(p.steady is not None for p in pts))
        if fit is None:
            return
        measured = fit.page_status == "measured"
        self.tlb.fit = R.TlbFitResult(
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

    def _bandwidth(self):
        group_keys, xkey = F.group_keys(self.rs, "memory.bandwidth"), F.x_key(self.rs, "memory.bandwidth")
        if self.rs.by_family("memory.bandwidth") and (group_keys is None or xkey is None):
            self.notes.append("memory.bandwidth: no curves (its family record, which names the axes, is missing)")
            group_keys, xkey = None, None
        curves = []
        l2 = self.capacities().l2_bytes or self.ctxnum("gpu_l2_bytes")
        todo = []
        ents_all = self.rs.by_family("memory.bandwidth") if group_keys is not None else []
        for key, ents in sorted(F.group(ents_all, group_keys or ()).items(), key=lambda t: str(t[0])):
            x, y, used = _curve_xy(ents, xkey)
            if len(x):
                # Footprints below the fastest point are limited by launch/loop overhead, not by a
                # level: the curve starts at its maximum.
                start = int(np.argmax(y))
                x, y, used = x[start:], y[start:], used[start:]
            if len(np.unique(x)) < MIN_CURVE_POINTS:
                continue
            todo.append((key, x, y, used))
        # Time per byte is the mixture of the levels' times per byte: detect on 1/bandwidth.
        fits = detect_levels_many([(x, 1.0 / y, [e.cv for e in used]) for _, x, y, used in todo])
        for (key, x, y, used), fit in zip(todo, fits):
            names = name_levels(fit.knees, l2, True)
            curves.append(Curve("memory.bandwidth", dict(zip(group_keys, key)), used, x, y, fit, names, "GB/s"))
        self.curves["bandwidth"] = curves
        # The curves' plateaus per level are reported per curve; the ceilings come only from the
        # probes that declare a premise (ceilings.py), and only where it held.
        rows, errors = self._bandwidth_plateaus(curves)
        found = C.level_ceilings(self.rs, self.capacities().l2_near_partition_bytes, l2)
        ceilings: Dict[str, R.BandwidthCeiling] = {}
        theo = self.ctxnum("gpu_theoretical_dram_gbps")
        for c in found:
            name = c.level if c.kind == "read" else f"{c.level} {c.kind}"
            if theo and c.level == "DRAM" and c.gbps > theo:
                errors.append(f"{name} ceiling {c.gbps:.0f} GB/s exceeds the theoretical {theo:.0f} GB/s: not used")
                ceilings.pop(name, None)
                continue
            ceilings[name] = R.BandwidthCeiling(**c.to_json(), name=name)
            if c.level == "DRAM" and theo:
                ceilings[name].theoretical_gbps = theo
                ceilings[name].theoretical_how = "context gpu_theoretical_dram_gbps (2 x memory clock x bus width)"
        for row in rows:  # a curve's plateau above its level's ceiling: say why it is no ceiling
            for lv in row.levels:
                ceiling = ceilings.get(lv.name)
                if lv.name in ("L2", "DRAM") and ceiling is not None and lv.gbps_plateau > ceiling.gbps and not lv.note:
                    lv.note = (f"above the {lv.name} ceiling ({ceiling.gbps:,.0f}) but no ceiling: these working sets "
                               f"declare no premise, so nothing checked that {lv.name} alone served them"
                               + (" (a read kernel still hits L1 for part of them)" if lv.name == "L2" else ""))
        self.premises = R.PremiseReport.of(C.premise_report(self.rs))
        self.bandwidth = R.Bandwidth(curves=rows, ceilings=ceilings, errors=errors, method=(
            "curves: each point is assigned to the level that serves it by its footprint relative to the capacities "
            "detected by the latency hierarchy (L1 = footprint <= L1 capacity, L2 = between %g x L1 and half the L2, "
            "DRAM = footprint >= %g x L2 capacity); a curve's plateau in a level = median of its points there. "
            "Ceilings: only from entries that declare a premise, and only where the counters confirmed it (or, in a "
            "run without counters, marked unverified and only from entries whose premise holds by how the probe "
            "works: no walk=shared reads, which the L2's request coalescer merges; ceilings.by_construction): L1 = memory.l1_peak; L2 = memory.l2_bandwidth, median over the "
            "working sets up to %.0f %% of the near partition (the far partition separately); DRAM = best plateau of "
            "the memory.bandwidth/occupancy curves at working sets beyond 4 x L2, per kernel kind (read, write, "
            "copy, triad); shared = memory.shared_bandwidth"
            % (L1_CLEAR_FACTOR, DRAM_FOOTPRINT_FACTOR, 100 * C.L2_PLATEAU_SHARE)))

    def _bandwidth_plateaus(self, curves: List[Curve]):
        """Per memory.bandwidth curve its plateau in each level (the rows), the best plateau per L2 level
        (bandwidth_l2) and the plateaus above the theoretical figure (errors)."""
        caps = self.capacities()
        l1 = caps.l1_bytes
        l2 = caps.l2_bytes or self.ctxnum("gpu_l2_bytes")
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
        cands: Dict[str, List[R.PlateauCandidate]] = {}
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
                lv.append(R.Plateau(name=name, gbps_plateau=plateau, points=int(m.sum())))
                faster = next((q for q in lv if q.name == "L2"), None) if name == "L1" else None
                if name == "L1" and faster is None and "L2" in regions and regions["L2"].any():
                    faster = R.Plateau("L2", float(np.median(c.y[regions["L2"]])), int(regions["L2"].sum()))
                if faster is not None and plateau < faster.gbps_plateau:
                    # A level cannot deliver less than the slower level behind it: at these working sets
                    # something else limits the kernel (a writing kernel's stores go to L2 whatever the
                    # working set, onto a few lines every SM shares).
                    lv[-1].name = "working sets <= L1 capacity"
                    lv[-1].note = (f"not L1 bandwidth: below this curve's own L2 plateau ({faster.gbps_plateau:,.0f})"
                                   + ("; its stores go to L2" if C.KERNEL_KIND.get(kernel) != "read" else ""))
                    continue
                theo_v = theo.get(name.split()[0])
                if theo_v and plateau > theo_v:
                    errors.append(f"{c.family} {c.key}: {name} plateau {plateau:.0f} GB/s exceeds the theoretical "
                                  f"{theo_v:.0f} GB/s; not used (footprint classification or timing error)")
                    continue
                cands.setdefault(name, []).append(R.PlateauCandidate(
                    gbps=plateau, how=f"plateau of {c.family} {c.key} (median of its {len(pts)} points in the level)",
                    source=F.provenance([e for e, k in zip(c.entries, m) if k])))
            if c.family == "memory.bandwidth":
                rows.append(R.BandwidthCurve(key=c.key, model=c.fit.model if c.fit else None, levels=lv,
                                             source=F.provenance(c.entries)))
        best = {n: max(v, key=lambda d: d.gbps) for n, v in cands.items()}
        self.bandwidth_l2 = {n: best[n] for n in ("L2", "L2 hot set") if n in best}
        return rows, errors

    # ------------------------------------------------------------------ access penalties

    def _stride(self):
        ents = self.rs.by_family("memory.stride")
        if not ents:
            return
        best = max((e.value for e in ents if math.isfinite(e.value)), default=math.nan)
        rows = []
        for e in sorted(ents, key=lambda e: (F.num(e, "offset") if math.isfinite(F.num(e, "offset")) else 0,
                                             F.num(e, "stride"))):
            rows.append(R.StrideRow(stride_elements=finite(F.num(e, "stride")), offset_bytes=finite(F.num(e, "offset")),
                                    value=e.value, unit=e.unit, penalty_vs_best=best / e.value if e.value > 0 else None,
                                    entry=e.name))
        self.stride_alignment = R.StrideAlignment(rows=rows, best=best, source=F.provenance(ents),
                                                  method="penalty = best bandwidth of the family / this entry's bandwidth")

    def _banks(self):
        ents = self.rs.by_family("memory.bank_conflicts")
        if not ents:
            return
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
        self.banks = R.Banks(by_word_bytes=out, method=(
            "slowdown vs word stride 1; the bank count is the power of two B whose conflict degree "
            "gcd(stride x words per access, B) best explains the slowdowns (least squares in log)"))

    # ------------------------------------------------------------------ execution
    def _pipelines(self):
        lat = []
        lat_entries = [e for f in F.PIPELINE_LATENCY_FAMILIES for e in self.rs.by_family(f)]
        for (op,), grp in sorted(F.group(lat_entries, ("op",)).items(), key=lambda t: str(t[0])):
            vals = [e.value for e in grp if math.isfinite(e.value)]
            if vals:
                lat.append(R.PipelineLatency(op=op, latency=float(np.median(vals)), unit=grp[0].unit,
                                             cv=finite(np.nanmedian([e.cv for e in grp])), source=F.provenance(grp)))
        thr = []
        compute: Dict[str, R.ComputeCeiling] = {}
        failed_premise: Dict[str, R.FailedComputeCeiling] = {}
        theoretical: Dict[str, R.TheoreticalCompute] = {}
        thr_entries = [e for f in F.THROUGHPUT_FAMILIES for e in self.rs.by_family(f)]
        for (op,), grp in sorted(F.group(thr_entries, ("op",)).items(), key=lambda t: str(t[0])):
            grp = [e for e in grp if math.isfinite(e.value)]
            if not grp:
                continue
            top = max(grp, key=lambda e: e.value)
            ceiling, ref, how = robust_peak(grp)
            sweep = [e for e in grp if e.family == "exec.throughput"] or grp
            enough = [e for e in sweep if e.value >= 0.95 * ceiling]
            cheapest = min(enough, key=lambda e: (F.num(e, "ilp") if math.isfinite(F.num(e, "ilp")) else 0) *
                           (F.num(e, "warps_per_sm") if math.isfinite(F.num(e, "warps_per_sm")) else 1)) if enough else None
            row = R.ThroughputPeak(
                op=op, peak=ceiling, peak_how=how, best_single_entry=top.value, unit=ref.unit,
                at_ilp=finite(F.num(ref, "ilp")), at_warps_per_sm=finite(F.num(ref, "warps_per_sm")),
                smallest_ilp_reaching_95pct=finite(F.num(cheapest, "ilp")) if cheapest else None,
                warps_per_sm_there=finite(F.num(cheapest, "warps_per_sm")) if cheapest else None,
                fraction_of_theoretical=finite(ref.num("fraction_of_theoretical")) if ref.value == ceiling else None,
                source=F.provenance(grp))
            ref_gflops = self._as_gflops(ref, op)
            # The ceiling in GFLOP/s at the reference entry's own clock (the unit may be per clock).
            gflops = ref_gflops * ceiling / ref.value if ref_gflops is not None and ref.value > 0 else None
            kind = F.compute_op(grp[0], op)
            # The premise (the op's SASS instructions ran, as counted) is declared on its peak entry; a
            # failed one keeps the op out of the compute ceilings, another op of its precision may stand.
            peak_entry = next((e for e in grp if e.family == "exec.throughput_peak"), None)
            premise = peak_entry.premise if peak_entry is not None else None
            if gflops is not None:
                row.gflops = gflops
                if premise == "failed":
                    failed_premise[op] = R.FailedComputeCeiling(gflops=gflops, why=peak_entry.premise_why)
                elif kind[0] not in compute or gflops > compute[kind[0]].gflops:
                    compute[kind[0]] = R.ComputeCeiling(
                        gflops=gflops, how=f"op={op}: {how}", op=op, premise=premise,
                        premise_ratio=finite(peak_entry.num("premise_ratio")) if peak_entry else None,
                        source=F.provenance([ref]))
            for e in grp:
                th = finite(e.num(F.THEORETICAL_COMPUTE_COUNTER))
                if th and kind and (op not in theoretical or th > theoretical[op].gflops):
                    theoretical[op] = R.TheoreticalCompute(
                        gflops=th, how=f"{e.family} op={op} counter {F.THEORETICAL_COMPUTE_COUNTER}")
            thr.append(row)
        # A precision's theoretical figure is its ceiling's own op's: another op of the precision runs at
        # other flops per op (fadd 1, ffma 2), so FP32 from ffma held against fadd's figure read 197 %.
        theoretical = {kind: theoretical[c.op] for kind, c in compute.items() if c.op in theoretical}
        self.pipelines = R.Pipelines(latency=lat, throughput=thr, compute_ceilings=compute,
                                     compute_ceilings_failed_premise=failed_premise,
                                     compute_theoretical=theoretical, method=(
            "latency: median over entries per op; throughput ceiling per op: the exec.throughput_peak entry's median "
            "(the sweep's best configuration re-measured, 10 samples: an independent measurement, so not biased up "
            "by picking the largest of ~80 noisy sweep entries, which lands high by about two of their noise sigmas); "
            "without it, the median of the sweep entries within noise of the top (value >= top x (1 - 3 sqrt(2) "
            "sigma), sigma = the entries' median sample CV); the best single entry is listed beside it; the cheapest "
            "ILP x warps reaching 95 % of the ceiling; GFLOP/s = ops/clock/SM x flops/op x SMs x SM clock (the "
            "reference entry's clock) when the unit is per clock"))

    def _as_gflops(self, e: Entry, op: str) -> Optional[float]:
        kind = F.compute_op(e, op)
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
        for (fam, mode, grid), grp in sorted(F.group(launch_entries, ("family", "api", "grid")).items(),
                                             key=lambda t: str(t[0])):
            vals = [e.value for e in grp if math.isfinite(e.value)]
            if vals:
                launch.append(R.LaunchCost(measure=fam, mode=mode, grid_blocks=grid, value=float(np.median(vals)),
                                           unit=grp[0].unit, min=float(np.min(vals)), max=float(np.max(vals)),
                                           entries=len(grp), method=grp[0].method, source=F.provenance(grp)))
        barrier = []
        for (kind,), grp in sorted(F.group(self.rs.by_family("exec.barrier"), ("barrier",)).items(), key=lambda t: str(t[0])):
            for e in sorted(grp, key=lambda e: F.num(e, "blocks")):
                barrier.append(R.BarrierCost(kind=kind, blocks=finite(F.num(e, "blocks")), value=e.value, unit=e.unit,
                                             cv=finite(e.cv), entry=e.name))
        if launch or barrier:
            self.launch_barrier = R.LaunchBarrier(
                launch=launch, barrier=barrier, source=F.provenance(launch_entries + self.rs.by_family("exec.barrier")))

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
            self.curves["transfers"].append(Curve("transfer.host", keyd, used, np.array(sizes), np.array(secs),
                                                  None, [], "seconds", ab))
        base = [R.TransferBaseline(entry=e.name, direction=F.text(e, "direction"), size_bytes=finite(F.num(e, "size")),
                                   value=e.value, unit=e.unit, cv=finite(e.cv), method=e.method)
                for e in self.rs.by_family("transfer.memcpy_baseline")]
        self.transfers = R.Transfers(fits=rows, baseline=base, method=(
            "time(s) = alpha + s/beta per (direction, memory, engine), least squares on relative residuals "
            "(weights 1/t^2), made robust by IRLS with Huber weights (k = 1.345 robust sigmas); fit error = RMS "
            "and max relative residual over all points, robust sigma = 1.4826 MAD; outliers = points beyond 3 "
            "robust sigmas (listed: a slow path or a bimodal per-call cost, not fitted); the model holds when its rms "
            "error is at most %.0f %%; where it does not, alpha and beta are not quoted as the transfer's figures: "
            "a small-size and a large-size regime are fitted apart (the split with the least rms error) and the "
            "summary quotes the regimes that hold, else the measured curve's best rate" % (100 * ALPHA_BETA_RMS_MAX)))

    def _baseline(self):
        ents = self.rs.by_family("baseline.memcpy_d2d")
        if ents:
            self.baseline = [R.D2dBaseline(entry=e.name, size_bytes=finite(F.num(e, "size")), value=e.value,
                                           unit=e.unit, cv=finite(e.cv)) for e in ents]

    def _paired(self):
        rows = []
        for fam in self.rs.families():
            if not fam.startswith(F.PAIRED_PREFIX):
                continue
            for e in self.rs.by_family(fam):
                problem = "/".join(f"{k}:{v}" for k, v in e.params.items() if k not in ("a", "b"))
                a_us, b_us = e.num("time_median_s") * 1e6, e.num("b_time_median_s") * 1e6
                rows.append(R.PairedRow(
                    entry=e.name, kernel=fam[len(F.PAIRED_PREFIX):], problem=problem,
                    a=e.tag("a_impl") or e.params.get("a"), b=e.tag("b_impl") or e.params.get("b"),
                    a_ran=e.tag("a_impl_resolved"), b_ran=e.tag("b_impl_resolved"),
                    speedup=finite(e.value), a_first=finite(e.num("value_median_a_first")),
                    b_first=finite(e.num("value_median_b_first")), cv=finite(e.cv),
                    a_us=finite(a_us), b_us=finite(b_us), l2=e.tag("l2"),
                    noisy=bool(math.isfinite(e.cv) and e.cv > F.PAIRED_NOISY_CV)))
        if rows:
            self.paired = rows

    def _generic(self):
        # Families with their own section (sections/) are never also raw rows here.
        known = set(F.PROFILE_FAMILIES) | set(self.claimed_families)
        gen = {}
        for fam in self.rs.families():
            if fam in known or fam.startswith(F.KERNEL_PREFIX) or fam.startswith(F.PAIRED_PREFIX):
                continue
            gen[fam] = [R.OtherEntry(entry=e.name, value=e.value, unit=e.unit, cv=finite(e.cv), tags=e.tags)
                        for e in self.rs.by_family(fam)]
        if gen:
            self.other_families = gen

    # ------------------------------------------------------------------ output
    def to_json(self) -> dict:
        """device-profile.json's profile part: the sections in the order of the steps, those the inputs
        have nothing for left out."""
        out = {"device": self.device, "inputs": self.inputs}
        bw = self.bandwidth
        for key, value in (("hierarchy", self.hierarchy), ("granularity", self.granularity), ("tlb", self.tlb),
                           ("bandwidth_l2", self.bandwidth_l2 if bw is not None else None),
                           ("bandwidth_errors", bw.errors if bw is not None else None), ("premises", self.premises),
                           ("bandwidth", bw), ("stride_alignment", self.stride_alignment), ("banks", self.banks),
                           ("pipelines", self.pipelines), ("launch_barrier", self.launch_barrier),
                           ("transfers", self.transfers), ("baseline", self.baseline), ("paired", self.paired),
                           ("other_families", self.other_families)):
            if value is not None:
                out[key] = value
        out["notes"] = self.notes
        out["issues"] = self.issues
        return R.to_json(out)


def fit_miss_unit(x, y, hit: float, recorded_cv=None):
    """Miss unit B of a stride curve at one footprint: y = hit + (miss - hit) x min(1, x / B) with the
    hit latency known. Returns (B, hit, miss, rss) or None when a flat line explains the curve as
    well (BIC), the rise is within the noise, or the unit reported (B to the nearest power of two) is not
    bracketed (a stride below it, two at or above)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    order = np.argsort(x)
    x, y = x[order], y[order]
    # A large stride touches fewer lines: once they fit a faster level, latency falls back. Those
    # strides belong to another level's curve: cut at the first point past the top below mid-way.
    top = int(np.argmax(y))
    cut = next((i for i in range(top, len(y)) if y[i] < (hit + y[top]) / 2), len(y))
    x, y = x[:cut], y[:cut]
    if len(np.unique(x)) < 3 or not (y.max() > hit):
        return None
    sigma = estimate_noise(y, recorded_cv)
    n = len(x)
    flat = float(np.sum(((np.median(y) - y) / y) ** 2))
    best = None
    for lb in np.linspace(math.log(x[0]), math.log(x[-1]), 161):
        b = math.exp(lb)
        d = np.minimum(1.0, x / b) / y
        gain = float(d @ ((y - hit) / y)) / float(d @ d)  # miss - hit, least squares on relative residuals
        r = (hit / y + gain * d) - 1.0
        rss = float(r @ r)
        if best is None or rss < best[3]:
            best = (b, hit, hit + gain, rss)
    b, _, miss, rss = best
    if rss / sigma**2 + 2 * math.log(n) >= flat / sigma**2 + math.log(n):
        return None
    # The bracket is checked on the unit reported, the power of two nearest B: the fitted B moves with the
    # noise (where the sweep starts past the unit, its first stride 3 % low puts B just above that stride,
    # which then passes for a stride below it; a stride at the unit 1 % low puts B just above the unit,
    # which then lacks a second stride at or above it).
    unit = 2.0 ** round(math.log2(b))
    if miss <= hit * (1 + 3 * sigma) or np.sum(x < unit * (1 - 1e-9)) < 1 or np.sum(x >= unit * (1 - 1e-9)) < 2:
        return None
    return best


# Sweep entries within this many (difference) sigmas of the top are at the plateau as far as the noise
# tells: two draws of one value differ by sqrt(2) sigma typically, 3 of those rarely.
PEAK_WINDOW_SIGMAS = 3.0
PEAK_NOISE_FLOOR = 1e-4  # relative; a recorded CV of 0 (one sample) is not a noiseless entry


def robust_peak(grp: List[Entry]):
    """(ceiling, reference entry, how) of one op's throughput entries; see Profile._pipelines' method."""
    peak = [e for e in grp if e.family == "exec.throughput_peak"]
    if peak:
        ref = peak[-1]
        return ref.value, ref, f"{ref.family} median ({ref.name})"
    top = max(grp, key=lambda e: e.value)
    cvs = [e.cv for e in grp if math.isfinite(e.cv)]
    sigma = max(float(np.median(cvs)) if cvs else 0.0, PEAK_NOISE_FLOOR)
    near = [e for e in grp if e.value >= top.value * (1 - PEAK_WINDOW_SIGMAS * math.sqrt(2) * sigma)]
    ceiling = float(np.median([e.value for e in near]))
    ref = min(near, key=lambda e: abs(e.value - ceiling))
    return ceiling, ref, (f"median of the {len(near)} {top.family} entries within {PEAK_WINDOW_SIGMAS:g} x sqrt(2) x "
                          f"{sigma:.2g} of the top {top.value:.6g}")


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
    def ab_text(a_us: float, b_gbps: float) -> str:
        # No time per byte left (slope <= 0): the regime's calls cost alpha whatever their size.
        return f"β {b_gbps:.4g} GB/s, α {a_us:.4g} µs" if math.isfinite(b_gbps) else f"α {a_us:.4g} µs, size-independent"
    if fits:
        out.summary = ab_text(out.alpha_us, out.beta_gbps)
        return out
    s, t = np.asarray(sizes, float), np.asarray(secs, float)
    rates = s / t / 1e9
    i = int(np.argmax(rates))
    out.measured_peak_gbps, out.measured_peak_at_bytes = float(rates[i]), float(s[i])
    pair = fit_two_regimes(s, t)
    parts = []
    if pair is not None:
        out.regimes = [R.TransferRegime(lo_bytes=r.lo_bytes, hi_bytes=r.hi_bytes, alpha_us=r.fit.alpha_s * 1e6,
                                        beta_gbps=r.fit.beta_bps / 1e9, rms_rel_error=r.fit.rms_rel_error,
                                        fits=alpha_beta_holds(r.fit)) for r in pair]
        for r in out.regimes:
            where = f"{fmt_size(r.lo_bytes)}–{fmt_size(r.hi_bytes)}"
            parts.append(f"{where}: {ab_text(r.alpha_us, r.beta_gbps)}" if r.fits else
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
