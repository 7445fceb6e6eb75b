"""Bandwidth per level (memory.bandwidth, memory.occupancy; the ceilings from the probes that declare a
premise, ceilings.py): each curve's plateau in each level, the read/write/copy ceilings, the premises'
verdict; the bandwidth and occupancy figures."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from .. import ceilings as C
from .. import families as F
from .. import profile_results as R
from ..curves import MIN_CURVE_POINTS, Curve, ctxnum, curve_xy, name_levels
from ..formatting import Link, fmt, pct_of, premise_cell
from ..levels import detect_levels_many
from ..results import Entry, ResultSet
from ..roofline import ceilings_beaten
from . import AnalysisInputs, FamilySection, register

# DRAM-served bandwidth: footprints well beyond the L2 (a few x its capacity) so hits are negligible.
DRAM_FOOTPRINT_FACTOR = 4.0
# L1 hit rate decays gradually past the L1 capacity; L2-only plateau from this multiple on.
L1_CLEAR_FACTOR = 8.0


@dataclass
class BandwidthResult:
    bandwidth: R.Bandwidth
    bandwidth_l2: Dict[str, R.PlateauCandidate]
    premises: Optional[R.PremiseReport]
    curves: List[Curve]      # memory.bandwidth's curves from their fastest point on (the level fits)
    curves_all: List[Curve]  # every point, and memory.occupancy's curves: what the figure draws
    notes: List[str]
    rs: ResultSet
    caps: R.Capacities  # the hierarchy's: the figure marks them


def analyze(inputs: AnalysisInputs) -> BandwidthResult:
    rs, notes = inputs.rs, []
    caps = inputs.results["hierarchy"].capacities()
    group_keys, xkey = F.group_keys(rs, "memory.bandwidth"), F.x_key(rs, "memory.bandwidth")
    if rs.by_family("memory.bandwidth") and (group_keys is None or xkey is None):
        notes.append("memory.bandwidth: no curves (its family record, which names the axes, is missing)")
        group_keys, xkey = None, None
    curves = []
    l2 = caps.l2_bytes or ctxnum(rs, "gpu_l2_bytes")
    todo = []
    ents_all = rs.by_family("memory.bandwidth") if group_keys is not None else []
    for key, ents in sorted(F.group(ents_all, group_keys or ()).items(), key=lambda t: str(t[0])):
        x, y, used = curve_xy(ents, xkey)
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
    # The curves' plateaus per level are reported per curve; the ceilings come only from the
    # probes that declare a premise (ceilings.py), and only where it held.
    rows, errors, curves_all, bandwidth_l2 = _plateaus(rs, caps, curves, notes)
    found = C.level_ceilings(rs, caps.l2_near_partition_bytes, l2)
    gap = C.missing_l2_read_ceiling(rs, caps.l2_near_partition_bytes, l2)
    if gap:
        notes.append("bandwidth: " + gap)
    ceilings: Dict[str, R.BandwidthCeiling] = {}
    theo = ctxnum(rs, "gpu_theoretical_dram_gbps")
    for c in found:
        name = ceiling_name(c.level, c.kind)
        if theo and c.level == "DRAM" and c.gbps > theo:
            errors.append(f"{name} ceiling {c.gbps:.0f} GB/s exceeds the theoretical {theo:.0f} GB/s: not used")
            ceilings.pop(name, None)
            continue
        ceilings[name] = R.BandwidthCeiling(**c.to_json(), name=name)
        if c.level == "DRAM" and theo:
            ceilings[name].theoretical_gbps = theo
            ceilings[name].theoretical_how = "context gpu_theoretical_dram_gbps (2 x memory clock x bus width)"
    for row in rows:  # a curve's plateau above its own kind's ceiling of the level: say why it is no ceiling
        kind = C.KERNEL_KIND.get(str(row.key.get("kernel") or ""), str(row.key.get("kernel") or "?"))
        for lv in row.levels:
            name = ceiling_name(lv.name, kind)
            ceiling = ceilings.get(name)
            if lv.name in ("L2", "DRAM") and ceiling is not None and lv.gbps_plateau > ceiling.gbps and not lv.note:
                lv.note = (f"above the {name} ceiling ({ceiling.gbps:,.0f}) but no ceiling: these working sets "
                           f"declare no premise, so nothing checked that {lv.name} alone served them"
                           + (" (a read kernel still hits L1 for part of them)" if lv.name == "L2" and kind == "read"
                              else ""))
    premises = R.PremiseReport.of(C.premise_report(rs))
    bandwidth = R.Bandwidth(curves=rows, ceilings=ceilings, errors=errors, method=(
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
    return BandwidthResult(bandwidth, bandwidth_l2, premises, curves, curves_all, notes, rs, caps)


def ceiling_name(level: str, kind: str) -> str:
    """A ceiling's report name: the level for reads ("DRAM"), else level and kind ("DRAM write"). A curve is
    judged only against its own kind's ceiling: a write curve against the read ceiling read "above the DRAM
    ceiling" where it matched the DRAM write ceiling."""
    return level if kind == "read" else f"{level} {kind}"


def _plateaus(rs: ResultSet, caps: R.Capacities, curves: List[Curve], notes: List[str]):
    """Per memory.bandwidth curve its plateau in each level (the rows), the best plateau per L2 level
    (bandwidth_l2), the plateaus above the theoretical figure (errors) and every curve drawn (with the
    small footprints and memory.occupancy's)."""
    l1 = caps.l1_bytes
    l2 = caps.l2_bytes or ctxnum(rs, "gpu_l2_bytes")
    theo = {"DRAM": ctxnum(rs, "gpu_theoretical_dram_gbps")}
    errors: List[str] = []
    if l1 and l2 and L1_CLEAR_FACTOR * l1 >= 0.5 * l2:
        notes.append(f"bandwidth: no full-capacity L2 plateau: no footprint lies clear of both edges (above "
                          f"{L1_CLEAR_FACTOR:g} x the L1 capacity, {l1:.4g} B, and at most half the L2, {l2:.4g} B); "
                          "the L2 ceiling can only come from the L2 hot set (read_cg)")
    # memory.bandwidth curves plus memory.occupancy curves (store hint, blocks per SM).
    allc = []
    for c in curves:  # untruncated: small footprints count here (the L2 hot set of read_cg)
        x, y, used = curve_xy(rs.by_family("memory.bandwidth"), "footprint")
        keep = [i for i, e in enumerate(used) if all(F.param(e, k) == v for k, v in c.key.items())]
        allc.append(Curve(c.family, c.key, [used[i] for i in keep], x[keep], y[keep], c.fit, c.names, c.ylabel))
    drawn = list(allc)
    occ_groups: Dict[tuple, List[Entry]] = {}
    for e in rs.by_family("memory.occupancy"):  # the store hint is a text tag (default|cs)
        occ_groups.setdefault(tuple(F.param(e, k) for k in ("kernel", "vector", "blocks_per_sm"))
                              + (F.text(e, "store") or "default",), []).append(e)
    for key, ents in occ_groups.items():
        x, y, used = curve_xy(ents, "footprint")
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
    return rows, errors, drawn, {n: best[n] for n in ("L2", "L2 hot set") if n in best}


def _ceilings_for(kernel: str, ceilings: dict) -> dict:
    """The bandwidth ceilings a memory.bandwidth kernel's panel shows: those of its own kind ("L2 copy"
    for copy; the plain level names for the read kernels). Shared memory is not on these curves."""
    kind = kernel if kernel in ("copy", "write", "triad") else None
    out = {}
    for name, c in ceilings.items():
        words = name.split()
        if words[0] == "shared":
            continue
        if (len(words) > 1 and words[-1] == kind) or (len(words) == 1 and kind is None):
            out[name] = c
    return out


def bandwidth_figure(bw, an: BandwidthResult, caps: R.Capacities, outdir: str):
    """One panel per kernel (its vector widths as curves) with that kernel's ceilings and the level
    capacities: 17 curves and 9 ceiling labels in one axes hid each other."""
    from .. import plots  # matplotlib only when the report draws
    panels = plots.panels_of(list(bw), facet=lambda c: f"kernel={c.key.get('kernel')}")
    fig, axes = plots.grid(len(panels), panel=(4.8, 3.5), sharex=True, sharey=True)
    ceilings = an.bandwidth.ceilings
    legend_order = []
    for c in sorted(bw, key=lambda c: plots._key_order(c.key)):
        lab = ", ".join(f"{k}={plots._fmt_key(v)}" for k, v in c.key.items() if v is not None and k != "kernel")
        if lab not in legend_order:
            legend_order.append(lab)
    for ax, (title, items) in zip(axes, panels):
        items = sorted(items, key=lambda c: plots._key_order(c.key))
        for rank, c in enumerate(items):
            lab = ", ".join(f"{k}={plots._fmt_key(v)}" for k, v in c.key.items() if v is not None and k != "kernel")
            ax.plot(c.x, c.y, "-", lw=0.9, ms=plots.marker_size(rank), fillstyle="none", label=lab,
                    **plots.style(legend_order.index(lab)))
        # Level edges: the capacities detected by the latency hierarchy (what the ceilings use).
        for key, text in (("l1_bytes", "L1"), ("l2_near_partition_bytes", "L2 near"), ("l2_bytes", "L2")):
            edge = getattr(caps, key)
            if isinstance(edge, (int, float)):
                ax.axvline(edge, color="0.4", ls=":", lw=1.0)
                ax.annotate(text, (edge, 0.02), xycoords=("data", "axes fraction"), fontsize=7, rotation=90,
                            ha="right", va="bottom", color="0.3")
        ax.set_yscale("log")
        plots._bytes_axis(ax)
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    for ax, (title, items) in zip(axes, panels):  # after every panel is drawn: the shared y range is final
        mine = _ceilings_for(str(items[0].key.get("kernel")), ceilings)
        for name, cl in mine.items():
            ax.axhline(cl.gbps, color=plots.LEVEL_COLORS.get(name.split()[0], "k"), ls="--", lw=0.9)
        plots._label_lines(ax, [(cl.gbps, f"{name} {cl.gbps:,.0f}", plots.LEVEL_COLORS.get(name.split()[0], "k"))
                          for name, cl in mine.items()])
    plots.finish_panels(fig, axes, "Bandwidth vs working set (memory.bandwidth), one panel per kernel",
                  "working set, all arrays (bytes, log scale)", "bandwidth (GB/s, log scale)")
    return plots.Figure("bandwidth", "Bandwidth vs working set",
                  "One panel per kernel. Dotted: L1/L2 capacities from the latency hierarchy (points are assigned "
                  "to levels by footprint); dashed: the ceilings of that kernel's kind used by the roofline (GB/s).",
                  [F.provenance(c.entries) for c in bw], plots._save(fig, outdir, "bandwidth"))


def occupancy_figure(rs: ResultSet, outdir: str):
    from .. import plots  # matplotlib only when the report draws
    occ = rs.by_family("memory.occupancy")
    if occ:
        series = []
        groups = {}
        for e in occ:  # the store hint is a text tag (default|cs)
            groups.setdefault((F.param(e, "kernel"), F.text(e, "store") or "default", F.param(e, "footprint")), []).append(e)
        for key, grp in sorted(groups.items(), key=lambda t: str(t[0])):
            grp = sorted(grp, key=lambda e: F.num(e, "blocks_per_sm"))
            k, st, fp = key
            series.append((f"kernel={k}: store={st or 'default'}, working set {plots._bytes_formatter(fp) if fp else '?'}",
                           [F.num(e, "blocks_per_sm") for e in grp], [e.value for e in grp], grp))
        return plots.simple_xy(series, "occupancy", "Bandwidth vs resident blocks per SM (memory.occupancy)",
                              "resident 256-thread blocks per SM", "bandwidth (GB/s)", outdir,
                              "One panel per kernel; one curve per store hint (default or streaming st.global.cs) "
                              "and working set (DRAM-sized, and L2-resident L2/4).", logx=False, logy=True,
                              legend_outside=True, facet=lambda label: label.split(": ")[0])


def figures(an: BandwidthResult, outdir: str) -> list:
    bw = an.curves_all or an.curves
    return [f for f in (bandwidth_figure(bw, an, an.caps, outdir) if bw else None, occupancy_figure(an.rs, outdir))
            if f is not None]


def _probe(c: dict) -> str:
    probes = (c.get("source") or {}).get("probe") or []
    return ", ".join(probes) or "?"


def summary_rows(an: BandwidthResult, data: dict) -> List[list]:
    rows = []
    theo = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    beaten = {g["ceiling"]: g for g in ceilings_beaten(data.get("optimality") or [])}
    for name, c in ((data.get("bandwidth") or {}).get("ceilings") or {}).items():
        level = c.get("level", name.split()[0])
        t = theo.get(level)
        g = beaten.get(name)
        # A kernel above this ceiling beyond noise: the Summary says which figure is higher and by how much.
        gap = (f"; below {g['kernel']} {g['impl']} {g['size']}: {fmt(g['value'])} GB/s on its minimal bytes, "
               f"{100 * g['excess']:.1f} % higher, beyond the noise ({100 * g['noise']:.2f} %)" if g else "")
        rows.append([f"{name} bandwidth", f"{fmt(c['gbps'])} GB/s{gap}", f"{c.get('kind', '?')} ({_probe(c)})",
                     pct_of(c["gbps"], t["value"] if t else None),
                     premise_cell(c.get("premise"), c.get("premise_ratio")), Link("bandwidth per level", "bandwidth")])
    return rows


def _profile_keys(an: BandwidthResult) -> dict:
    return {"bandwidth_l2": R.to_json(an.bandwidth_l2), "bandwidth_errors": R.to_json(an.bandwidth.errors),
            **({"premises": R.to_json(an.premises)} if an.premises is not None else {}),
            "bandwidth": R.to_json(an.bandwidth)}


SECTION = register(FamilySection(
    id="bandwidth", title="Bandwidth per level", families=(), after=(), core=True, uses=("hierarchy",),
    analyze=analyze, content=lambda an, figdir: {"figures": figures(an, figdir)}, profile_keys=_profile_keys, notes=lambda an: an.notes, summary_rows=summary_rows,
    link_text="bandwidth per level"))
