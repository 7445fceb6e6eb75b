"""Memory hierarchy (family memory.latency): the levels' latencies and capacities, from ONE primary curve
(a random pointer chase with L1-allocating loads at a cache line's stride), the other chains per curve
and as cross-checks; the two latency figures."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from .. import families as F
from .. import profile_results as R
from ..curves import SHARP_EDGE_WIDTH, Curve, ctxnum, edge_width, edge_words, latency_curves, model_words, ns_levels
from ..formatting import Link, fmt, fmt_bytes
from ..levels import CAPACITY_DEFINITION
from ..results import finite
from . import AnalysisInputs, FamilySection, register


@dataclass
class HierarchyResult:
    hierarchy: R.Hierarchy
    curves: List[Curve]   # memory.latency's curves but shared memory's (figures; granularity's reference)
    notes: List[str]

    def capacities(self) -> R.Capacities:
        return self.hierarchy.capacities


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


# The accuracy the analysis claims for a capacity (docs/analysis.md: within 10 % on the probe's default
# grid). A capacity anywhere in a bracket of ratio r is within sqrt(r) - 1 of the bracket's log middle, so
# a grid pins a sharp edge to that accuracy only while r <= (1 + CAPACITY_ACCURACY)^2 = 1.21 (the default
# 4 per octave: 1.19; 3 per octave: 1.26).
CAPACITY_ACCURACY = 0.10
COARSE_FOR_ACCURACY = (1 + CAPACITY_ACCURACY) ** 2
# Footprints further apart than this (fewer than ~1.5 per octave) cannot separate a two-part L2 either: at one
# per octave a device with a 30 MB near partition, a 56 MB L2 and a 515-cycle far level gives random chains
# within 1.5 % of one with 20 MB / 40 MB / 290 cycles at every footprint
# (analysis/tests/test_synth_structure.py, test_one_per_octave_cannot_tell_the_near_partition).
COARSE_SWEEP_RATIO = 1.6


def _note_coarse_sweep(primary: Curve, notes: List[str]) -> None:
    xs = np.unique(primary.x[np.isfinite(primary.x) & (primary.x > 0)])
    if len(xs) < 3:
        return
    ratio = float(np.median(xs[1:] / xs[:-1]))
    if ratio <= COARSE_FOR_ACCURACY:
        return
    per_octave = math.log(2) / math.log(ratio)
    half = (math.sqrt(ratio) - 1) * 100
    note = (f"hierarchy: the latency sweep's footprints are {ratio:.3g}x apart ({per_octave:.2g} per octave): a "
            f"sharp edge between two of them is placed only within that bracket (+-{half:.0f} % of its middle), "
            f"more than the {CAPACITY_ACCURACY * 100:.0f} % claimed for a capacity (which needs footprints at most "
            f"{COARSE_FOR_ACCURACY:.3g}x apart, 4 per octave or more); such capacities are given with their brackets")
    if ratio >= COARSE_SWEEP_RATIO:
        note += (", and an L2 in two parts (a near and a far partition) cannot be told from one level at this spacing "
                 "(two such devices 50 % apart give curves within 1.5 %)")
    notes.append(note + "; sweep at 4 or more footprints per octave (the default)")


def _coarse(bracket) -> bool:
    """Whether a bracket's footprints are further apart than the accuracy claimed allows."""
    lo, hi = bracket
    return (hi / lo if lo > 0 else math.inf) > COARSE_FOR_ACCURACY


def _capacity_within_grid(levels: Dict[str, R.DeviceLevel], primary: Curve, notes: List[str]) -> None:
    """A sharp edge (its 90 %-to-10 % width inside one step of the grid) between two footprints further apart
    than the accuracy allows is placed only in its bracket: the fit's value there is a guess (mid-way, in
    log footprint) up to sqrt(ratio) off, marked as a bracket-only value. The L2's is held to the driver's
    figure instead (reconcile_with_driver), whatever the grid."""
    for i, name in enumerate(primary.names[:len(primary.fit.knees)]):
        lv = levels.get(name)
        if name == "L2" or lv is None or not lv.capacity_bracket_bytes:
            continue
        lo, hi = lv.capacity_bracket_bytes
        ratio = hi / lo if lo > 0 else math.inf
        if not _coarse(lv.capacity_bracket_bytes) or edge_width(primary.fit.shapes[i]) >= ratio:
            continue
        lv.capacity_how = (f"bracket only: a sharp edge between {fmt_bytes(lo)} and {fmt_bytes(hi)} ({ratio:.3g}x "
                           f"apart); {fmt_bytes(lv.capacity_bytes)} is its log middle, not a measurement")
        notes.append(f"hierarchy: {name} capacity: {lv.capacity_how}")


def _note_short_sweep(primary: Curve, l2_bytes, notes: List[str]) -> None:
    """A sweep that ends within the L2 the driver reports reached no DRAM: its last level is that of some
    part of the L2 (curves.name_levels names it so), and the DRAM latency and the L2 capacity are missing."""
    reached = float(np.max(primary.x))
    if l2_bytes and reached <= l2_bytes:
        notes.append(f"hierarchy: the latency sweep ended at {fmt_bytes(reached)}, inside the {fmt_bytes(l2_bytes)} L2 "
                     "the driver reports (a run cut short, or a sweep limit below the L2): no level is DRAM and "
                     "the L2 capacity is not measured; the last level is named by what it is, the last level "
                     "reached, whose latency is that of the part of the L2 the sweep ended in")


def reconcile_with_driver(fit_bytes: float, bracket: Optional[List[float]], driver_bytes: Optional[float]):
    """The L2 capacity to report and how it was decided. A sweep places a capacity only within its bracket
    (the last footprint at or below the edge, the first above); the fit's figure inside it is an estimate.
    Where the driver's figure (gpu_l2_bytes) lies inside the bracket, the two agree and the driver's exact
    figure is the capacity; outside it, the sweep's figure stands and the disagreement is said."""
    if not driver_bytes:
        return fit_bytes, "the sweep's estimate (no driver figure to check it against)"
    drv = fmt_bytes(driver_bytes)
    if not bracket:
        return fit_bytes, f"the sweep's estimate (no bracket); the driver reports {drv}"
    lo, hi = bracket
    span = f"{fmt_bytes(lo)} – {fmt_bytes(hi)}"
    if lo <= driver_bytes <= hi:
        return driver_bytes, (f"the driver's {drv}; the sweep's bracket {span} agrees, its fit's estimate "
                              f"{fmt_bytes(fit_bytes)} lying in the same bracket, all a sweep can tell")
    side = "above" if lo > driver_bytes else "below"
    return fit_bytes, (f"the sweep's estimate; the driver's {drv} lies outside the sweep's bracket {span} ({side} "
                       "it): the chain's edge is not where the driver puts the L2's size")


def analyze(inputs: AnalysisInputs) -> HierarchyResult:
    rs, notes = inputs.rs, []
    curves = [c for c in latency_curves(rs, "memory.latency", notes) if c.key.get("load") != "shared"]
    out = R.Hierarchy(curves=[], levels=[], method=(
        "change-point detection on latency vs footprint (levels.detect_levels: exact segmentation "
        "seeds, level-mixture model with step, set-associative and gradual edges, one shape per edge, "
        "BIC with the curve's own noise); " + CAPACITY_DEFINITION))
    for c in curves:
        f = c.fit
        ns = ns_levels(c)
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
        notes.append("hierarchy: no random pointer-chase curve (memory.latency pattern=random) with enough "
                          "usable points, so no device level is given; the fixed-stride chains' levels are "
                          "listed per curve only")
    if primary is not None:
        _note_coarse_sweep(primary, notes)
        _note_short_sweep(primary, ctxnum(rs, "gpu_l2_bytes"), notes)
        ns = ns_levels(primary)
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
    shared = [e for e in rs.by_family("memory.latency") if F.text(e, "load") == "shared"]
    if shared:
        cyc = [e.num("cycles_per_op", "value_median") for e in shared]
        nss = [e.num("ns_per_op") for e in shared]
        summary["shared"] = R.DeviceLevel(name="shared", latency_cycles=float(np.nanmedian(cyc)),
                                          latency_ns=finite(np.nanmedian(nss)) if any(map(math.isfinite, nss)) else None,
                                          capacity_bytes=None, capacity_bracket_bytes=None,
                                          model="median over footprints", curve={"load": "shared"},
                                          source=F.provenance(shared))
    if primary is not None:
        _capacity_within_grid(summary, primary, notes)
    l2 = summary.get("L2")
    if l2 is not None and l2.capacity_bytes:
        cap, how = reconcile_with_driver(l2.capacity_bytes, l2.capacity_bracket_bytes, ctxnum(rs, "gpu_l2_bytes"))
        if cap != l2.capacity_bytes:
            l2.capacity_fit_bytes = l2.capacity_bytes
        l2.capacity_bytes, l2.capacity_how = cap, how
        if l2.capacity_bracket_bytes and _coarse(l2.capacity_bracket_bytes):
            notes.append(f"hierarchy: L2 capacity on a grid too coarse for the accuracy claimed: {how}")
    order = ["shared", "L1", "L2 near partition", "L2", "DRAM"]
    out.levels = sorted(summary.values(), key=lambda d: (order.index(d.name) if d.name in order else 9, d.name))
    # Capacities as users ask for them.
    caps = out.capacities
    for name, key in (("L1", "l1_bytes"), ("L2 near partition", "l2_near_partition_bytes"), ("L2", "l2_bytes")):
        if name in summary and summary[name].capacity_bytes:
            setattr(caps, key, summary[name].capacity_bytes)
    if l2 is not None and l2.capacity_fit_bytes:
        caps.l2_bytes_fit = l2.capacity_fit_bytes
    carve = sorted({F.text(e, "carveout") for e in rs.by_family("memory.latency") if F.text(e, "carveout")})
    caps.l1_carveout = ", ".join(carve) if carve else (
        "not recorded: the latency probe uses no shared memory, so the driver's default carveout applies and "
        "L1 gets the unified L1/shared SRAM minus the (small) default shared-memory reservation; the measured "
        "L1 capacity is that carveout's L1 part, not the SRAM size")
    smem = ctxnum(rs, "gpu_smem_per_sm_bytes")
    if smem:
        caps.shared_per_sm_bytes_reported_by_driver = smem
    if ctxnum(rs, "gpu_l2_bytes"):
        caps.l2_bytes_reported_by_driver = ctxnum(rs, "gpu_l2_bytes")
    return HierarchyResult(out, curves, notes)


def figures(an: HierarchyResult, outdir: str) -> list:
    from .. import plots  # matplotlib only when the report draws
    lat = an.curves
    figs = []
    random_curves = [c for c in lat if c.key.get("pattern") == "random"]
    stride_curves = [c for c in lat if c.key.get("pattern") != "random"]
    figs.append(plots.latency_figure(random_curves, "latency_random", "Load latency vs footprint (random chains)", outdir,
                               "Points: median cycles per dependent load; line: fitted level model; dotted: detected "
                               "capacities (change-point detection, see docs/analysis.md)."))
    figs.append(plots.latency_figure(stride_curves, "latency_stride", "Load latency vs footprint (fixed-stride chains)", outdir,
                               "Saavedra-style fixed-stride chains, one curve per stride, panels in stride order.",
                               chunk_label="stride"))
    return [f for f in figs if f is not None]


def summary_rows(an: HierarchyResult, data: dict) -> List[list]:
    rows = []
    h = data.get("hierarchy") or {}
    for lv in h.get("levels", []):
        cap = f", capacity {fmt_bytes(lv['capacity_bytes'])}" if lv.get("capacity_bytes") else ""
        if lv.get("capacity_how"):
            cap += f" ({lv['capacity_how']})"
        ns = f" ({fmt(lv['latency_ns'])} ns)" if lv.get("latency_ns") else ""
        rows.append([f"{lv['name']} latency", f"{fmt(lv['latency_cycles'])} cycles{ns}{cap}", "pointer chase", "–",
                     "–", Link("memory hierarchy", "hierarchy")])
    return rows


SECTION = register(FamilySection(
    id="hierarchy", title="Memory hierarchy: capacities and latencies", families=(), after=(), core=True,
    analyze=analyze, content=lambda an, figdir: {"figures": figures(an, figdir), "sharp_edge_width": SHARP_EDGE_WIDTH},
    profile_keys=lambda an: {"hierarchy": R.to_json(an.hierarchy)}, notes=lambda an: an.notes,
    summary_rows=summary_rows, link_text="memory hierarchy"))
