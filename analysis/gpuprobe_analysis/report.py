"""The report: one self-contained HTML file (figures embedded as data URIs, no external resource)
and a Markdown version, plus device-profile.json and the figures as PNG/SVG files.

build_report computes every number (device-profile.json holds them all) and draws the figures; the
jinja2 templates under templates/ write both documents from them: report.html.j2 and report.md.j2 are
the pages, body.j2 and sections/<id>.j2 the sections' text (one text for both outputs), blocks.html.j2
and blocks.md.j2 how a heading, paragraph, table, fold or figure is written in each format.
"""
from __future__ import annotations

import base64
import functools
import json
import math
import os
import re
from typing import Dict, List, Optional, Sequence

import jinja2
from markupsafe import Markup

from . import families as F
from . import plots
from . import sections as family_sections
from .formatting import fmt, fmt_bytes
from .profile import SHARP_EDGE_WIDTH, Profile
from .results import ResultSet
from .roofline import (READ_DOMINATED, SERVED_SHARE, ceilings_from, is_default, is_reference, kernel_comparison,
                       kernel_points, memcpy_reference, optimality, unmeasured_ceiling_notes)

SECTIONS = [
    ("summary", "Summary"),
    ("inputs", "Inputs and data quality"),
    ("device", "Device"),
    ("hierarchy", "Memory hierarchy: capacities and latencies"),
    ("granularity", "Line and sector sizes"),
    ("tlb", "TLB reach and page size"),
    ("bandwidth", "Bandwidth per level"),
    ("access", "Stride, alignment and bank behaviour"),
    ("execution", "Pipelines, launch and barrier costs"),
    ("transfers", "Host-device transfers (α-β model)"),
    ("roofline", "Hierarchical roofline"),
    ("optimality", "Optimality per kernel and size"),
    ("kernels", "Kernels vs cuBLAS"),
    ("other", "Other probe families"),
    ("provenance", "Where each figure comes from"),
]


class Link:
    """A table cell that points to a section: an anchor in the HTML, a link in the Markdown."""

    def __init__(self, text: str, target: str):
        self.text, self.target = text, target

    def __str__(self):
        return self.text


def _cell_html(c) -> str:
    if isinstance(c, Link):
        return Markup('<a href="#{}">{}</a>').format(c.target, c.text)
    return c if isinstance(c, str) else fmt(c)


def _cell_md(c) -> str:
    if isinstance(c, Link):
        return f"[{c.text}](#{c.target})"
    return (c if isinstance(c, str) else fmt(c)).replace("|", "\\|")


_LINE_BREAK = re.compile(r"\s*\n\s*")


def _squash(text):
    """A paragraph written over several template lines, as one line (Markup stays Markup)."""
    out = _LINE_BREAK.sub(" ", str(text)).strip()
    return Markup(out) if isinstance(text, Markup) else out


def _us(seconds) -> Optional[float]:
    return seconds * 1e6 if isinstance(seconds, (int, float)) and math.isfinite(seconds) else None


class PlacedFigure:
    """A figure where the report shows it: its number (order of appearance) and its files as the page
    links or embeds them."""

    def __init__(self, fig: "plots.Figure", number: int, outdir: str):
        self.fig, self.number, self.outdir = fig, number, outdir
        self.id, self.title, self.caption, self.provenance, self.files = (fig.id, fig.title, fig.caption,
                                                                          fig.provenance, fig.files)

    @property
    def data_uri(self) -> str:
        with open(self.files["png"], "rb") as fh:
            return "data:image/png;base64," + base64.b64encode(fh.read()).decode("ascii")

    @property
    def png(self) -> str:
        return os.path.relpath(self.files["png"], self.outdir)

    @property
    def svg(self) -> str:
        return os.path.relpath(self.files["svg"], self.outdir)

    @property
    def probes(self) -> List[str]:
        return sorted({q for p in self.provenance if p for q in p.get("probe", [])})


class FigureRegistry:
    """Numbers the figures in the order a rendering places them (templates: figs.place(fig)); the
    provenance section lists them in that order."""

    def __init__(self, outdir: str):
        self.outdir = outdir
        self.placed: List[PlacedFigure] = []

    def place(self, fig: Optional["plots.Figure"]) -> Optional[PlacedFigure]:
        if fig is None:
            return None
        self.placed.append(PlacedFigure(fig, len(self.placed) + 1, self.outdir))
        return self.placed[-1]

    def showing(self, probe: str) -> Optional[PlacedFigure]:
        """The first figure placed so far that draws entries of `probe`."""
        return next((f for f in self.placed if any(probe in (p or {}).get("probe", []) for p in f.provenance)), None)


@functools.lru_cache(maxsize=None)
def _environment(markup: str) -> jinja2.Environment:
    """The templates' environment for markup "html" (autoescape on) or "md"."""
    html = markup == "html"
    # A family section's own template (sections/) before the package's files.
    loader = jinja2.ChoiceLoader([jinja2.FunctionLoader(family_sections.template_source),
                                  jinja2.PackageLoader("gpuprobe_analysis", "templates")])
    env = jinja2.Environment(loader=loader, autoescape=html,
                             undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    env.filters.update(fmt=fmt, bytes=fmt_bytes, key=_key, fraction=_fraction, us=_us, squash=_squash,
                       cell=_cell_html if html else _cell_md)
    env.globals.update(fmt=fmt, fmt_bytes=fmt_bytes, or_range=_or_range)
    return env


def render(markup: str, context: dict):
    """(text, FigureRegistry) of report.<markup>.j2 with `context` (build_report's)."""
    env = _environment(markup)
    figs = FigureRegistry(context["outdir"])
    blocks = env.get_template(f"blocks.{markup}.j2").module
    return env.get_template(f"report.{markup}.j2").render(context, d=blocks, figs=figs), figs


def tool_time(rs: ResultSet) -> Dict[str, dict]:
    """Per family (in the order first seen): entries with `entry_wall_seconds` and their sum."""
    out: Dict[str, dict] = {}
    for e in rs.entries:
        sec = e.num("entry_wall_seconds")
        if math.isfinite(sec):
            t = out.setdefault(e.family, {"entries": 0, "seconds": 0.0})
            t["entries"] += 1
            t["seconds"] += sec
    return out


def unsettled_operands(rs: ResultSet) -> List[dict]:
    """Entries timed on fresh operands whose settle did not end stable: a tag `<what>_settled` other
    than "yes" (microbench/harness/settle.hpp: "capped", still improving after its time limit;
    "slowed", the settled read rate more than 5 % below the first pass). Their figures may be off."""
    rows = []
    for e in rs.entries:
        for key, state in sorted(e.tags.items()):
            if not key.endswith("_settled") or state == "yes":
                continue
            what = key[: -len("_settled")]
            rows.append({"entry": e.name, "operand": what, "state": state,
                         "first_gbps": e.counters.get(f"{what}_read_gbps_first"),
                         "settled_gbps": e.counters.get(f"{what}_read_gbps_settled"),
                         "passes": e.counters.get(f"{what}_settle_passes")})
    return rows


def launch_gate_summary(rs: ResultSet) -> dict:
    """How the event-timed entries were timed (field `launch_gated`, docs/probes.md): counts behind the
    launch gate and ungated, and the entries whose gate timed out (`launch_gate_timeouts` > 0: some of
    their samples hold host time). Entries without the field (other timers, older files) are not counted."""
    gated = ungated = 0
    timed_out = []
    for e in rs.entries:
        flag = e.num("launch_gated")
        if not math.isfinite(flag):
            continue
        if flag == 1:
            gated += 1
        else:
            ungated += 1
        n = e.num("launch_gate_timeouts")
        if math.isfinite(n) and n > 0:
            timed_out.append({"entry": e.name, "timeouts": int(n)})
    return {"gated": gated, "ungated": ungated, "timed_out": timed_out}


def build_report(rs: ResultSet, outdir: str, title: Optional[str] = None) -> dict:
    """Writes report.html, report.md, device-profile.json and figures/ into outdir."""
    os.makedirs(outdir, exist_ok=True)
    figdir = os.path.join(outdir, "figures")
    prof = Profile(rs, family_sections.claimed_families())
    pts, kernel_notes = kernel_points(rs)
    data = prof.to_json()
    # The families' own sections (sections/: tensor cores, peer-to-peer, collectives, multi-GPU kernels,
    # ...), each only where the inputs have its entries; the ceilings some measure join the roofline's.
    present = family_sections.analyze_all(rs, data)
    ceilings = ceilings_from(data, rs, [c for p in present for c in p.section.ceilings(p.result)])
    kernel_notes += unmeasured_ceiling_notes(pts, ceilings)
    opt = optimality(pts, ceilings)
    data["roofline"] = {"ceilings": [{"name": c.name, "value": c.value, "unit": "GB/s" if c.is_memory else "GFLOP/s",
                                      "measured": c.measured, "how": c.how} for c in ceilings],
                        "notes": kernel_notes}
    data["optimality"] = optimality_json(opt)
    memcpy = memcpy_reference(rs)
    comparison = kernel_comparison(pts, memcpy[0] if memcpy else None)
    data["kernels_vs_cublas"] = {"memcpy_d2d_gbps": memcpy[0] if memcpy else None, "kernels": comparison}
    data["tool_time"] = tool_time(rs)
    unsettled = unsettled_operands(rs)
    data["unsettled_operands"] = unsettled
    gate = launch_gate_summary(rs)
    data["launch_gate"] = gate
    for p in present:
        if p.section.to_json is not None:
            data[p.section.id] = p.section.to_json(p.result)
    sections = family_sections.place(SECTIONS, present)
    with open(os.path.join(outdir, "device-profile.json"), "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=False)

    gpu = rs.context.get("gpu_name", "unknown GPU")
    # The problems found while reading (the "note: " issues only say how the inputs were combined).
    problems = [i for i in data["issues"] if not i.startswith("note: ")] + data.get("notes", []) + kernel_notes
    lb = data.get("launch_barrier") or {}
    context = {
        "outdir": outdir, "title": title or f"gpuprobe report: {gpu}", "sections": sections, "data": data,
        "premises": data.get("premises") or {}, "problems": problems,
        "input_notes": [i for i in data["issues"] if i.startswith("note: ")],
        "headline": headline(data, opt, problems, [p.section.headline(p.result) for p in present]),
        "summary_rows": summary_rows(data, opt) + [
            [r["figure"], r["value"], r["how"], "–", "–", Link(p.section.link_text or p.section.title, p.section.id)]
            for p in present for r in p.section.summary(p.result)],
        "theoretical_sources": theoretical_sources(data),
        "launch": dict(zip(("headers", "rows", "methods"), launch_table(lb["launch"]))) if lb.get("launch") else None,
        "opt": opt, "opt_main": headline_rows(opt), "read_dominated": READ_DOMINATED,
        "comparison": comparison, "memcpy": memcpy, "unsettled": unsettled, "gate": gate,
        "paired_noisy_cv": F.PAIRED_NOISY_CV, "long_table": LONG_TABLE, "sharp_edge_width": SHARP_EDGE_WIDTH,
        "served_share": SERVED_SHARE,
    }
    # The figures, drawn here (and written by worker processes meanwhile); the templates place (and so
    # number) them.
    with plots.parallel_saves():
        context.update({
            "pf": {f.id: f for f in plots.profile_figures(prof, figdir)},
            "roofline_figure": plots.roofline_figure(pts, ceilings, figdir),
            "kernel_figures": plots.kernel_figures(pts, figdir, memcpy[0] if memcpy else None, ceilings),
            "family_sections": {p.section.id: p.section.content(p.result, figdir) for p in present},
        })
    html_doc, figs = render("html", context)
    md_doc, _ = render("md", context)
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(html_doc)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as fh:
        fh.write(md_doc)
    return {"html": os.path.join(outdir, "report.html"), "markdown": os.path.join(outdir, "report.md"),
            "profile": os.path.join(outdir, "device-profile.json"), "figures": [f.files for f in figs.placed],
            "profile_obj": prof, "optimality": opt, "ceilings": ceilings}


# Tables longer than this fold into a <details> block where they are reference material.
LONG_TABLE = 30


def _fraction(v) -> str:
    return f"{100 * v:.1f} %" if isinstance(v, (int, float)) and math.isfinite(v) else "–"


def headline_rows(opt: list) -> list:
    """The optimality rows the report body shows: per kernel and size, our default implementation
    and the cuBLAS references (roofline.is_default / is_reference); the variants stay in the appendix."""
    impls: Dict[str, set] = {}
    for r in opt:
        impls.setdefault(r["kernel"], set()).add(r["impl"])
    return [r for r in opt if is_reference(r["impl"]) or is_default(r["kernel"], r["impl"], impls[r["kernel"]])]


def launch_table(launch: list):
    """The launch rows pivoted to one row per (measure, API) and one column per grid size, and each
    measure's method once (it is the same for every API and grid of the measure)."""
    grids = sorted({r["grid_blocks"] for r in launch if r.get("grid_blocks") is not None})
    units = sorted({r["unit"] for r in launch if r.get("unit")})
    methods: Dict[str, str] = {}
    by_row: Dict[tuple, dict] = {}
    for r in launch:
        m = r["measure"].replace("exec.", "")
        methods.setdefault(m, r.get("method") or "not recorded")
        by_row.setdefault((m, r["mode"]), {})[r.get("grid_blocks")] = r
    unit = units[0] if len(units) == 1 else "unit per row"
    headers = ["measure", "api / mode"] + [f"{g:g} blocks ({unit})" for g in grids]
    rows = []
    for (m, mode), cells in by_row.items():
        vals = []
        for g in grids:
            r = cells.get(g)
            vals.append("–" if r is None else fmt(r["value"]) + (f" {r['unit']}" if len(units) > 1 else "")
                        + (f" ({fmt(r['min'])}–{fmt(r['max'])})" if r.get("entries", 1) > 1 else ""))
        if None in cells and not grids:
            vals = [fmt(cells[None]["value"])]
        rows.append([m, mode] + vals)
    if not grids:
        headers.append(f"median ({unit})")
    return headers, rows, methods


# What produced each compute ceiling: the pipe, in words a reader checks against the datasheet.
PIPE = {"FP32": "CUDA cores, FFMA", "FP64": "FP64 units, DFMA",
        "FP16 half2": "CUDA cores, HFMA2 (half2 FMA; not the tensor cores)",
        "BF16 bf16x2": "CUDA cores, HFMA2.BF16 (bf16x2 FMA; not the tensor cores)"}


def _pct(value, theoretical) -> str:
    return f"{100 * value / theoretical:.0f} % of {fmt(theoretical)}" if value and theoretical else "–"


def _premise_cell(status, ratio) -> str:
    if not status:
        return "none declared"
    return status + (f", {ratio:.3f}x counted" if isinstance(ratio, (int, float)) else "")


def summary_rows(data: dict, opt: list) -> list:
    """figure, value, produced by, % of theoretical, premise, section (the summary table's columns)."""
    rows = []
    theo = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    h = data.get("hierarchy") or {}
    for lv in h.get("levels", []):
        cap = f", capacity {fmt_bytes(lv['capacity_bytes'])}" if lv.get("capacity_bytes") else ""
        ns = f" ({fmt(lv['latency_ns'])} ns)" if lv.get("latency_ns") else ""
        rows.append([f"{lv['name']} latency", f"{fmt(lv['latency_cycles'])} cycles{ns}{cap}", "pointer chase", "–",
                     "–", Link("memory hierarchy", "hierarchy")])
    for name, c in ((data.get("bandwidth") or {}).get("ceilings") or {}).items():
        level = c.get("level", name.split()[0])
        t = theo.get(level)
        rows.append([f"{name} bandwidth", f"{fmt(c['gbps'])} GB/s", f"{c.get('kind', '?')} ({_probe(c)})",
                     _pct(c["gbps"], t["value"] if t else None),
                     _premise_cell(c.get("premise"), c.get("premise_ratio")), Link("bandwidth per level", "bandwidth")])
    pipes = data.get("pipelines") or {}
    for name, c in (pipes.get("compute_ceilings") or {}).items():
        t = (pipes.get("compute_theoretical") or {}).get(name)
        rows.append([f"{name} peak", f"{fmt(c['gflops'])} GFLOP/s", PIPE.get(name, c.get("how", "")),
                     _pct(c["gflops"], t["gflops"] if t else None),
                     _premise_cell(c.get("premise"), c.get("premise_ratio")), Link("pipelines", "execution")])
    t = data.get("tlb") or {}
    if t.get("page"):
        rows.append(["page size", fmt_bytes(t["page"]["page_bytes"]), "TLB chase", "–", "–", Link("TLB", "tlb")])
    for f in summary_transfers(data):
        k = f["key"]
        rows.append([f"{k['direction'].upper()} {k['memory']} transfer",
                     f.get("summary") or f"β {fmt(f.get('beta_gbps'))} GB/s, α {fmt(f.get('alpha_us'))} µs",
                     f"α + size/β fit over {f['points']} sizes ({k.get('engine') or '?'})" if f.get("fits", True) else
                     f"{f['points']} sizes measured ({k.get('engine') or '?'}); the transfer table has the fits",
                     "–", "–",
                     Link("transfers", "transfers")])
    rows += kernel_summary_rows(opt, theo)
    return rows


def theoretical_sources(data: dict) -> Dict[str, str]:
    """Where each theoretical figure of the summary comes from: said once under the table rather than
    in every row that divides by it."""
    out = {c["name"]: c["how"] for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    for name, t in ((data.get("pipelines") or {}).get("compute_theoretical") or {}).items():
        out.setdefault(name, t.get("how", "?"))
    return out


def summary_transfers(data: dict) -> list:
    """The transfer fits the summary shows: pinned host memory, copy engine, one per direction (what
    an application that cares about transfer speed uses). The other memories and engines (a dozen
    fits on a GPU that has them all) stay in the transfers section."""
    fits = (data.get("transfers") or {}).get("fits") or []
    out = []
    for direction in ("h2d", "d2h"):
        f = next((f for f in fits if f["key"].get("direction") == direction and f["key"].get("memory") == "pinned"
                  and f["key"].get("engine") in ("ce", None)), None)
        if f is not None:
            out.append(f)
    return out


def headline(data: dict, opt: list, issues: Sequence[str], families: Sequence[Optional[str]] = ()) -> List[str]:
    """The sentences the report opens with: what the GPU is, where it stands against its datasheet,
    whether the counters verified the ceilings, what limits each kernel, and the sentences of the families' own sections (`families`: peer-to-peer, collectives, multi-GPU
    kernels; None where a section has none)."""
    dev = data.get("device") or {}
    lines = []
    what = [f"compute capability {dev['gpu_compute_capability']}" if dev.get("gpu_compute_capability") else "",
            f"{dev['gpu_sm_count']} SMs" + (f" at up to {dev['gpu_sm_clock_max_mhz']} MHz"
                                            if dev.get("gpu_sm_clock_max_mhz") else "") if dev.get("gpu_sm_count") else "",
            f"{dev['gpu_bus_width_bits']}-bit memory bus" if dev.get("gpu_bus_width_bits") else "",
            f"driver L2 {fmt_bytes(float(dev['gpu_l2_bytes']))}" if _is_number(dev.get("gpu_l2_bytes")) else "",
            f"CUDA driver {dev['cuda_driver_version']}" if dev.get("cuda_driver_version") else ""]
    lines.append(f"{dev.get('gpu_name', 'Unknown GPU')}: " + (", ".join(w for w in what if w) or "no device context recorded")
                 + (f"; run of {dev['date'][:10]}" if dev.get("date") else "") + ".")
    measured = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if c["measured"]}
    theo = {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if not c["measured"]}
    parts = []
    for name in ("DRAM", "L2", "L1", "FP32", "FP64"):
        m = measured.get(name)
        if not m:
            continue
        t = theo.get(name)
        value = f"{name} {fmt(m['value'])} {m['unit']}"
        parts.append(value + (f" = {100 * m['value'] / t['value']:.0f} % of {fmt(t['value'])}" if t else
                              " (no theoretical figure)"))
    for name in ("DRAM", "L2"):  # a level with a datasheet figure and no measured ceiling: said, not skipped
        if name not in measured and name in theo:
            parts.append(f"{name} not measured (theoretical {fmt(theo[name]['value'])} {theo[name]['unit']})")
    if parts:
        lines.append("Measured ceilings against the datasheet: " + "; ".join(parts) + ".")
    prem = data.get("premises") or {}
    if prem.get("declared"):
        lines.append(f"Premises: {prem['verdict']} ({prem['ok']} of {prem['declared']} held by the counters of the "
                     f"same run, {prem['failed']} failed, {prem['unverified']} unchecked).")
    elif any(n.split()[0] in ("L1", "L2", "DRAM") for n in measured):
        lines.append("Memory ceilings UNVERIFIED: no entry declares a premise the counters could check.")
    elif parts or theo:
        lines.append("No memory ceilings measured: no L1, L2 or DRAM entry declares a premise, so none defines "
                     "a ceiling (results from a gpuprobe before the premise checks?); what needs one says so.")
    for k in kernel_headlines(opt):
        o = k["ours"]
        vs = f", {fmt(o['vs_cublas'], 3)}x cuBLAS" if o.get("vs_cublas") else ", no cuBLAS figure"
        lines.append(f"{k['kernel']} ({o['impl']}, {o['size']}): {kernel_verdict(o, theo)}{vs}; "
                     f"fastest there: {k['fastest']['impl']}.")
    lines += [line for line in families if line]
    rejected = sum(len(i.get("rejected") or []) for i in data.get("inputs") or [])
    if rejected:
        lines.append(f"{rejected} entries rejected for values that cannot be measurements (NaN, infinite, negative): "
                     "every figure is built without them; see Inputs and data quality.")
    if issues:
        lines.append(f"{len(issues)} problems found while reading the inputs: see Inputs and data quality.")
    return lines


def _is_number(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _probe(c: dict) -> str:
    probes = (c.get("source") or {}).get("probe") or []
    return ", ".join(probes) or "?"


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
    return f"{row['limiter']}-bound, {fmt(row['pct_of_bound'], 3)} % of its bound{note}"


def kernel_summary_rows(opt: list, theo: Optional[Dict[str, dict]] = None) -> list:
    """Per kernel, at its largest problem timed out of DRAM (else its largest): our default's % of
    its bound (minimal bytes), and the fastest implementation there."""
    rows = []
    for k in kernel_headlines(opt):
        kernel, ours, fastest = k["kernel"], k["ours"], k["fastest"]
        vs = f", {fmt(ours['vs_cublas'], 3)}x cuBLAS" if ours.get("vs_cublas") else ""
        excess = f"; excess traffic {fmt(ours['excess_traffic'], 3)}x" if ours.get("excess_traffic") else ""
        if ours.get("missing_ceilings"):
            value = f"{kernel_verdict(ours, theo or {})} ({ours['impl']}{vs}{excess})"
        elif ours.get("bound_note"):
            value = (f"{fmt(ours['pct_of_bound'], 3)} % of bound ({ours['impl']}, {ours['limiter']}-bound: "
                     f"{ours['bound_note']}{vs}{excess})")
        else:
            value = (f"{fmt(ours['pct_of_bound'], 3)} % of bound ({ours['impl']}, {ours['limiter']}-bound{vs}"
                     f"{excess})")
        rows.append([f"{kernel} at {ours['size']}", value, f"fastest here: {fastest['impl']}", "–",
                     "bound from minimal bytes", Link("optimality", "optimality")])
    return rows


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


def _or_range(value, rng, f) -> str:
    """The value, or the range the data leave open when the value is not determined."""
    if value is not None:
        return f(value)
    return f"{f(rng[0])} .. {f(rng[1])} (not determined)"


def _key(k: dict) -> str:
    return ", ".join(f"{a}={fmt_bytes(v) if isinstance(v, float) and v >= 1024 else fmt(v)}" for a, v in k.items() if v is not None)


def optimality_json(rows):
    from .profile_results import to_json
    return to_json(rows)
