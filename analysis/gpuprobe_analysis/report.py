"""The report: one self-contained HTML file (figures embedded as data URIs, no external resource)
and a Markdown version, plus device-profile.json and the figures as PNG/SVG files."""
from __future__ import annotations

import base64
import functools
import html
import json
import math
import os
from typing import Dict, List, Optional, Sequence

from . import collectives
from . import families as F
from . import mgpu
from . import p2p
from . import plots
from .profile import Profile
from .results import ResultSet
from .roofline import (READ_DOMINATED, ceilings_from, is_default, is_reference, kernel_comparison, kernel_points, memcpy_reference,
                       optimality)

# Every report has these sections, in this order (an empty one says why it is empty). The summary
# comes first: it is what a reader opens the report for; the inputs follow it.
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


def fmt(v, digits=4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "–"
        a = abs(v)
        if 1e3 <= a < 1e9:
            return f"{v:,.0f}"
        if a != 0 and (a >= 1e9 or a < 1e-3):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}"
    return str(v)


def fmt_bytes(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= div:
            return f"{v / div:.4g} {unit}"
    return f"{v:.4g} B"


class Link:
    """A table cell that points to a section: an anchor in the HTML, a link in the Markdown."""

    def __init__(self, text: str, target: str):
        self.text, self.target = text, target

    def __str__(self):
        return self.text


def _cell_html(c) -> str:
    if isinstance(c, Link):
        return f'<a href="#{html.escape(c.target)}">{html.escape(c.text)}</a>'
    return html.escape(c)


def _cell_md(c) -> str:
    if isinstance(c, Link):
        return f"[{c.text}](#{c.target})"
    return c.replace("|", "\\|")


class Doc:
    """Builds the HTML and the Markdown side by side."""

    def __init__(self, outdir: str):
        self.h: List[str] = []
        self.m: List[str] = []
        self.outdir = outdir

    def section(self, sid: str, title: Optional[str] = None):
        """A section heading; `title` for a section outside SECTIONS (one that only some inputs have)."""
        title = title or dict(SECTIONS)[sid]
        self.h.append(f'<h2 id="{sid}">{html.escape(title)}</h2>')
        self.m.append(f"\n## {title}\n")

    def sub(self, title: str):
        self.h.append(f"<h3>{html.escape(title)}</h3>")
        self.m.append(f"\n### {title}\n")

    def para(self, text: str):
        self.h.append(f"<p>{html.escape(text)}</p>")
        self.m.append(text + "\n")

    def items(self, lines: Sequence[str]):
        if not lines:
            return
        self.h.append("<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in lines) + "</ul>")
        self.m.append("\n".join(f"- {s}" for s in lines) + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence]):
        if not rows:
            self.para("(no data)")
            return
        cells = [[c if isinstance(c, (str, Link)) else fmt(c) for c in r] for r in rows]
        self.h.append("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr></thead><tbody>"
                      + "".join("<tr>" + "".join(f"<td>{_cell_html(c)}</td>" for c in r) + "</tr>" for r in cells)
                      + "</tbody></table>")
        self.m.append("| " + " | ".join(map(_cell_md, headers)) + " |\n|" + "---|" * len(headers) + "\n"
                      + "\n".join("| " + " | ".join(map(_cell_md, r)) + " |" for r in cells) + "\n")

    def begin_details(self, summary: str, sid: Optional[str] = None):
        """A collapsed block: long reference tables stay one click away instead of pages of scrolling.
        Markdown gets the same <details> element (GitHub and most renderers fold it)."""
        ident = f' id="{sid}"' if sid else ""
        self.h.append(f"<details{ident}><summary>{html.escape(summary)}</summary>")
        self.m.append(f"\n<details><summary>{html.escape(summary)}</summary>\n")

    def end_details(self):
        self.h.append("</details>")
        self.m.append("\n</details>\n")

    def figure(self, fig: Optional["plots.Figure"], registry: list):
        if fig is None:
            return
        registry.append(fig)
        with open(fig.files["png"], "rb") as fh:
            b64 = base64.b64encode(fh.read()).decode("ascii")
        n = len(registry)
        self.h.append(f'<figure id="fig-{fig.id}"><img alt="{html.escape(fig.title)}" src="data:image/png;base64,{b64}">'
                      f"<figcaption><b>Figure {n}. {html.escape(fig.title)}.</b> {html.escape(fig.caption)} "
                      f'<a href="#prov-{fig.id}">Source</a>.</figcaption></figure>')
        rel = os.path.relpath(fig.files["png"], self.outdir)
        self.m.append(f"\n![Figure {n}. {fig.title}]({rel})\n\n*Figure {n}. {fig.title}.* {fig.caption} "
                      f"Source: [provenance](#prov-{fig.id}) ([SVG]({os.path.relpath(fig.files['svg'], self.outdir)})).\n")


CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1em;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}img{max-width:100%}
figcaption{font-size:0.85em;color:#444}nav.toc{line-height:1.6}details{margin:0.5em 0 1em}
summary{cursor:pointer;color:#036}
table{display:block;max-width:100%;overflow-x:auto}.warn{color:#a40}code{background:#f4f4f4}"""


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
    prof = Profile(rs)
    pts, kernel_notes = kernel_points(rs)
    data = prof.to_json()
    ceilings = ceilings_from(data, rs)
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
    # Multi-GPU results only: a one-GPU result set has no such section (not even an empty one).
    peer = p2p.analyze(rs)
    if peer is not None:
        data["p2p"] = p2p.to_json(peer)
    sections = SECTIONS if peer is None else _insert_after(SECTIONS, "transfers", p2p.SECTION)
    coll = collectives.analyze(rs)  # NCCL collectives: likewise only with their entries
    if coll is not None:
        data["collectives"] = collectives.to_json(coll)
        sections = _insert_after(sections, p2p.SECTION[0] if peer is not None else "transfers", collectives.SECTION)
    # The multi-GPU kernels against their bound (the DRAM / L2 read ceilings of the profile above); the
    # reduction's time from the NCCL collectives' fits where they cover its op and G, else the P2P α-β.
    reduction_time = functools.partial(collectives.reduction_time, coll) if coll is not None else None
    multi = mgpu.analyze(rs, data, reduction_time)
    if multi is not None:
        data["mgpu"] = multi
        sections = _insert_after(sections, "kernels", mgpu.SECTION)
    with open(os.path.join(outdir, "device-profile.json"), "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=False)

    gpu = rs.context.get("gpu_name", "unknown GPU")
    title = title or f"gpuprobe report: {gpu}"
    d = Doc(outdir)
    figs: list = []
    pf = {f.id: f for f in plots.profile_figures(prof, figdir)}
    d.h.append(f"<h1>{html.escape(title)}</h1>")
    d.m.append(f"# {title}\n")
    d.h.append('<nav class="toc">' + " · ".join(f'<a href="#{sid}">{html.escape(t)}</a>' for sid, t in sections) + "</nav>")
    d.m.append(" · ".join(f"[{t}](#{sid})" for sid, t in sections) + "\n")

    # Summary: a few sentences, then the figures users ask for first, each linking to its section.
    issues = [i for i in data["issues"] if not i.startswith("note: ")] + data.get("notes", []) + kernel_notes
    d.section("summary")
    d.items(headline(data, opt, issues))
    prem = data.get("premises") or {}
    d.table(["figure", "value", "produced by", "% of theoretical", "premise (counters)", "details in"],
            summary_rows(data, opt) + [[r["figure"], r["value"], r["how"], "–", "–", Link("peer-to-peer", p2p.SECTION[0])]
                                       for r in p2p.summary(peer)])
    sources = theoretical_sources(data)
    if sources:
        d.para("Theoretical figures: " + "; ".join(f"{k} from {v}" for k, v in sources.items()) + ".")
    if prem.get("declared"):
        d.para("A ceiling is built only from entries whose premise held: the level it names served the bytes the "
               "probe counted, by the counters of the same run"
               + (" (failed entries: section Bandwidth)." if prem["failed"] else "."))

    # Inputs
    d.section("inputs")
    d.table(["file", "complete", "entries"], [[i["file"], "yes" if i["complete"] else f"no ({i['incomplete_reason']})",
                                               i["entries"]] for i in data["inputs"]])
    notes = [i for i in data["issues"] if i.startswith("note: ")]
    if issues:
        d.para("Problems found while reading (the report uses what exists):")
        d.items(issues)
    else:
        d.para("All inputs complete and conforming to docs/results-schema.md.")
    if notes:
        d.para("How the inputs were combined:")
        d.items(notes)
    if data["tool_time"]:
        total = sum(t["seconds"] for t in data["tool_time"].values())
        d.begin_details(f"Host wall time the tool spent per probe family: {total:,.0f} s in all")
        d.para("`entry_wall_seconds`: setup, warm-up, samples and, for entries taken from a counters file, their "
               "counter replays.")
        d.table(["family", "entries", "seconds"], [[f, t["entries"], f"{t['seconds']:.1f}"]
                                                   for f, t in data["tool_time"].items()])
        d.end_details()

    # Device
    d.section("device")
    d.table(["context key", "value"], [[k, str(v)] for k, v in data["device"].items()])

    # Hierarchy
    d.section("hierarchy")
    h = data.get("hierarchy")
    if h and h.get("levels"):
        d.para("Method: " + h["method"] + ".")
        d.table(["level", "capacity", "bracket (last point at or below, first above)", "latency (cycles)", "latency (ns)", "model", "curve"],
                [[lv["name"], fmt_bytes(lv["capacity_bytes"]),
                  " – ".join(fmt_bytes(b) for b in lv["capacity_bracket_bytes"]) if lv["capacity_bracket_bytes"] else "–",
                  lv["latency_cycles"], lv["latency_ns"], lv["model"], _key(lv["curve"])] for lv in h["levels"]])
        if h.get("primary_curve"):
            dev = data.get("device") or {}
            d.para("The device levels above come from one primary curve only (" + _key(h["primary_curve"]) +
                   ": random chain, L1-allocating load, one access per line); ns = the same level model fitted to "
                   "ns_per_op (globaltimer), cycles = clock64 at the SM clock recorded in the entries "
                   f"(max {dev.get('gpu_sm_clock_max_mhz', '?')} MHz). " +
                   ("\"L2\" is the whole L2 (far partition included); \"L2 near partition\" the part served at "
                    "the lower latency. " if any(lv["name"] == "L2 near partition" for lv in h["levels"]) else "") +
                   "Other curves are listed per curve below and never add rows to this table.")
        x = h.get("cross_check_cg")
        if x:
            d.sub("Cross-check: L1-bypassing chain (" + _key(x["curve"]) + ")")
            d.para("ld.global.cg caches in L2 only, so its first level must be an L2 level, not L1 "
                   f"(L1 absent: {'yes' if x['l1_absent'] else 'NO - check the probe'}). Levels closer than 10 % are merged.")
            d.table(["cg chain level", "latency (cycles)", "up to", "primary curve, same level (cycles)"],
                    [[f"level {i + 1}", v, fmt_bytes(x["capacities_bytes"][i]) if i < len(x["capacities_bytes"]) else "–",
                      list(x["primary_l2_dram_cycles"].values())[i] if i < len(x["primary_l2_dram_cycles"]) else "–"]
                     for i, v in enumerate(x["levels_cycles"])])
        caps = h.get("capacities", {})
        d.items([f"{k}: {fmt_bytes(v) if isinstance(v, (int, float)) else v}" for k, v in caps.items()])
        d.sub("Every curve (fixed-stride chains mix hits and misses: their levels are numbered, not device levels)")
        d.table(["curve", "model", "noise σ (rel.)", "points", "levels (name: cycles @ capacity)"],
                [[_key(c["key"]), c["model"], c["noise_rel"], c["points"],
                  "; ".join(f"{lv['name']}: {fmt(lv['cycles'])} @ {fmt_bytes(lv['capacity_bytes'])}" for lv in c["levels"])]
                 for c in h["curves"]])
    else:
        d.para("No memory.latency curve with enough footprints in the inputs.")
    d.figure(pf.get("latency_random"), figs)
    d.figure(pf.get("latency_stride"), figs)

    d.section("granularity")
    g = data.get("granularity")
    if g and g["per_footprint"]:
        d.para("Method: " + g["method"] + ".")
        d.table(["served by", "miss unit (power of two)"], [[k, fmt_bytes(v)] for k, v in g["by_level"].items()])
        d.table(["footprint", "load", "served by", "fitted unit", "cycles (small stride)", "cycles (saturated)"],
                [[fmt_bytes(r["footprint_bytes"]), r["load"], r["served_by"], fmt_bytes(r["miss_unit_bytes"]),
                  r["cycles_small_stride"], r["cycles_saturated"]] for r in g["per_footprint"]])
        if g.get("no_miss"):
            d.para("No miss unit at footprints that fit in " + ", ".join(sorted({str(r["served_by"]) for r in g["no_miss"]}))
                   + " (every load hits): " + ", ".join(fmt_bytes(r["footprint_bytes"]) for r in g["no_miss"]) + ".")
    else:
        d.para("No stride sweep (memory.latency pattern=stride) with a saturating latency in the inputs.")
    d.figure(pf.get("granularity"), figs)

    d.section("tlb")
    t = data.get("tlb")
    if t:
        d.para("Method: " + t["method"] + ".")
        for line in t.get("findings") or []:
            d.para(line)
        if t.get("levels"):
            d.table(["TLB level", "reach", "entries (reach / page)", "miss penalty (cycles)", "bracket (covered – missed)"],
                    [[f"level {i + 1}", _or_range(lv["reach_bytes"], lv["reach_range_bytes"], fmt_bytes),
                      _or_range(lv["entries"], lv["entries_range"], fmt), fmt(lv["penalty_cycles"]),
                      " – ".join(fmt_bytes(v) for v in lv["reach_bracket_bytes"])
                      if lv["reach_bytes"] is not None else
                      " – ".join(fmt(v) + " pages" for v in lv["entries_bracket"])]
                     for i, lv in enumerate(t["levels"])])
        if t.get("warm_up_recorded") is False:
            d.para("These entries do not record their warm-up (`warm_loads`): steady-state laps are told from "
                   "first-touch ones by their sample spread only.")
        d.sub("Per-stride curves (the same level detector as the caches, for reference: one curve's knees are not TLB levels)")
        d.table(["curve", "model", "knees", "levels (cycles)"],
                [[_key(c["key"]), c["model"], ", ".join(fmt_bytes(k) for k in c["reach_bytes"]),
                  ", ".join(fmt(v) for v in c["levels_cycles"])] for c in t["curves"]])
    else:
        d.para("No memory.tlb entries in the inputs.")
    d.figure(pf.get("tlb"), figs)

    d.section("bandwidth")
    b = data.get("bandwidth")
    if b and (b.get("ceilings") or b.get("curves")):
        d.para("Method: " + b["method"] + ".")
        d.table(["ceiling", "GB/s", "kind", "premise", "measured / counted bytes", "how"],
                [[k, v["gbps"], v.get("kind", "–"), v.get("premise", "–"), v.get("premise_ratio"), v["how"]]
                 for k, v in b["ceilings"].items()])
        for err in b.get("errors") or []:
            d.para("ERROR: " + err)
        prem = data.get("premises") or {}
        if prem.get("failed_entries"):
            d.sub("Entries whose premise failed (never a ceiling)")
            d.table(["entry", "level", "value", "measured / counted", "why"],
                    [[r["entry"], r["level"], f"{fmt(r['value'])} {r['unit']}", r["ratio"], r["why"]]
                     for r in prem["failed_entries"]])
        d.table(["curve", "levels (name: plateau GB/s, points in level)"],
                [[_key(c["key"]), "; ".join(f"{lv['name']}: {fmt(lv['gbps_plateau'])} ({lv['points']})" for lv in c["levels"])]
                 for c in b["curves"]])
    else:
        d.para("No memory.bandwidth or memory.shared_bandwidth entries in the inputs.")
    if data.get("baseline"):
        d.sub("Baseline: cudaMemcpy device-to-device (same run)")
        d.table(["entry", "size", "value", "unit", "cv"], [[r["entry"], fmt_bytes(r["size_bytes"]), r["value"], r["unit"], r["cv"]]
                                                            for r in data["baseline"]])
    d.figure(pf.get("bandwidth"), figs)
    d.figure(pf.get("occupancy"), figs)

    d.section("access")
    sa = data.get("stride_alignment")
    if sa:
        d.sub("Stride and alignment")
        d.para(sa["method"] + ".")
        d.table(["stride (elements)", "offset (bytes)", "value", "unit", "penalty (x)"],
                [[r["stride_elements"], r["offset_bytes"], r["value"], r["unit"], r["penalty_vs_best"]] for r in sa["rows"]])
    bk = data.get("banks")
    if bk:
        d.sub("Shared-memory banks")
        d.para(bk["method"] + ".")
        for wb in bk["by_word_bytes"]:
            if wb.get("banks"):
                d.para(f"{fmt(wb['word_bytes'])}-byte words: behaviour of {wb['banks']['banks']} banks "
                       f"(rms log error {fmt(wb['banks']['rms_log_error'])}).")
            d.table(["word stride", "value", "unit", "slowdown (x)"],
                    [[r["word_stride"], r["value"], r["unit"], r["slowdown_vs_stride1"]] for r in wb["rows"]])
    if not sa and not bk:
        d.para("No memory.stride or memory.bank_conflicts entries in the inputs.")
    d.figure(pf.get("stride_alignment"), figs)
    d.figure(pf.get("bank_conflicts"), figs)

    d.section("execution")
    pl = data.get("pipelines") or {}
    if pl.get("latency"):
        d.sub("Pipeline latency")
        d.table(["op", "latency", "unit", "cv"], [[r["op"], r["latency"], r["unit"], r["cv"]] for r in pl["latency"]])
    if pl.get("throughput"):
        d.sub("Throughput peaks")
        if pl.get("method"):
            d.para("Method: " + pl["method"] + ". Fraction of datasheet: the peak entry's own counter "
                   "`fraction_of_theoretical` (its ops/clock over the datasheet's at the clock it ran at); – where "
                   "the probe knows no datasheet rate for the op.")
        d.table(["op", "peak (ceiling)", "best single entry", "unit", "GFLOP/s", "at ILP", "at warps/SM",
                 "fraction of datasheet", "cheapest ILP, warps/SM for 95 %"],
                [[r["op"], r["peak"], r.get("best_single_entry"), r["unit"], r.get("gflops"), r["at_ilp"],
                  r["at_warps_per_sm"], _fraction(r.get("fraction_of_theoretical")),
                  f"{fmt(r['smallest_ilp_reaching_95pct'])}, {fmt(r['warps_per_sm_there'])}"] for r in pl["throughput"]])
    lb = data.get("launch_barrier") or {}
    if lb.get("launch"):
        d.sub("Launch")
        headers, rows, methods = launch_table(lb["launch"])
        d.para("How each measure is taken (one method per measure, for every API and grid below):")
        d.items([f"{m}: {text}" for m, text in methods.items()])
        d.table(headers, rows)
    if lb.get("barrier"):
        d.sub("Barriers")
        d.table(["kind", "blocks", "value", "unit", "cv"], [[r["kind"], r["blocks"], r["value"], r["unit"], r["cv"]]
                                                            for r in lb["barrier"]])
    if not pl.get("latency") and not pl.get("throughput") and not lb:
        d.para("No exec.* entries in the inputs.")
    for fid in ("pipeline_latency", "throughput", "launch", "barrier"):
        d.figure(pf.get(fid), figs)

    d.section("transfers")
    tr = data.get("transfers")
    if tr:
        d.para("Method: " + tr["method"] + ".")
        d.table(["direction", "memory", "engine", "points", "α (µs)", "± (µs)", "β (GB/s)", "± (GB/s)", "n½ (bytes)",
                 "rms rel. error", "max rel. error", "robust σ", "median CV of points", "outliers (sizes)", "verdict"],
                [[r["key"].get("direction") or "–", r["key"].get("memory") or "–", r["key"].get("engine") or "–", r["points"],
                  r.get("alpha_us"), r.get("alpha_stderr_us"), r.get("beta_gbps"), r.get("beta_stderr_gbps"),
                  fmt_bytes(r.get("half_bandwidth_bytes")), r.get("rms_rel_error"), r.get("max_rel_error"),
                  r.get("robust_rel_scale"), r.get("median_point_cv"),
                  f"{r.get('outliers', 0)}" + (" (" + ", ".join(fmt_bytes(v) for v in r.get("outlier_sizes_bytes") or []) + ")"
                                               if r.get("outliers") else ""), r.get("verdict") or "–"] for r in tr["fits"]])
        if tr.get("baseline"):
            d.sub("Baseline: blocking cudaMemcpy (same run)")
            d.table(["entry", "direction", "size", "value", "unit", "cv"],
                    [[r["entry"], r["direction"] or "–", fmt_bytes(r["size_bytes"]), r["value"], r["unit"], r["cv"]]
                     for r in tr["baseline"]])
    else:
        d.para("No transfer.host entries in the inputs.")
    d.figure(pf.get("transfers"), figs)

    p2p.write_section(d, peer, figdir, figs)
    collectives.write_section(d, coll, figdir, figs)

    d.section("roofline")
    d.table(["ceiling", "value", "unit", "kind", "how"],
            [[c["name"], c["value"], c["unit"], "measured" if c["measured"] else "theoretical (dashed)", c["how"]]
             for c in data["roofline"]["ceilings"]])
    d.figure(plots.roofline_figure(pts, ceilings, figdir), figs)

    d.section("optimality")
    if opt:
        d.para("bound = min over the measured ceilings of (a) the kernel's minimal bytes (its descriptor's: what "
               "any implementation must move) at the ceiling of the level that must serve them (L2 for problems "
               f"timed L2-resident, else DRAM: the read ceiling, or the copy ceiling when the kernel's counters show "
               f"less than {READ_DOMINATED:.0%} reads) and (b) the peak of the kernel's precision; % of bound = "
               "achieved / bound. Excess traffic = the counters' bytes at that level / the minimal bytes (a variant "
               "that moves more bytes shows it here, not as a larger bound). vs cuBLAS = achieved / cuBLAS achieved, "
               "same shape, same run. AI (counters) places the roofline's points.")
        headers = ["kernel", "impl", "size", "GFLOP/s", "GB/s (min. bytes)", "AI (counters, FLOP/B)", "bound (GFLOP/s)",
                   "% of bound", "limiting", "excess traffic", "vs cuBLAS", "cuBLAS impl"]
        row = lambda r: [r["kernel"], r["impl"], r["size"], r["gflops"], r["gbps"],  # noqa: E731
                         ", ".join(f"{k} {fmt(v, 3)}" for k, v in r["intensity"].items()),
                         r["bound_gflops"], r["pct_of_bound"], r["limiter"] or "–", r["excess_traffic"],
                         r["vs_cublas"], r["cublas_impl"] or "–"]
        main = headline_rows(opt)
        d.para(f"Below: our default implementation and cuBLAS at every size ({len(main)} of {len(opt)} rows); every "
               "implementation, our variants included, is in the collapsed table after it.")
        d.table(headers, [row(r) for r in main])
        d.begin_details(f"Every implementation and size ({len(opt)} rows)", "optimality-all")
        d.table(headers, [row(r) for r in opt])
        d.end_details()
    else:
        d.para("No kernels.* entries in the inputs.")

    d.section("kernels")
    if comparison:
        d.para("Each kernel's own figure (GB/s on the descriptor's minimal bytes for SYMV/GEMV, GFLOP/s for SGEMM), "
               "median over samples, every implementation of the same problem from the same run; ratios are our "
               "default implementation over each cuBLAS mode, and over "
               + (f"this run's cudaMemcpy D2D ({memcpy[0]:,.0f} GB/s, {memcpy[1]})." if memcpy else
                  "cudaMemcpy D2D (absent from these inputs: no ratio)."))
    for kernel, cmp in comparison.items():
        d.sub(f"{kernel} ({cmp['metric']}; default: {cmp['default'] or '–'})")
        ours = cmp["default"] or "ours (no default impl in the inputs)"
        headers = ["problem", "L2"] + cmp["impls"] + [f"{ours} / {r}" for r in cmp["references"]]
        if cmp["metric"] == "GB/s":
            headers.append(f"{ours} / memcpy")
        d.table(headers, [[r["size"], r["l2"] or "–"] + [r["values"].get(i) for i in cmp["impls"]]
                          + [r["ratios"][ref] for ref in cmp["references"]]
                          + ([r["vs_memcpy"]] if cmp["metric"] == "GB/s" else []) for r in cmp["rows"]])
    if unsettled:
        d.para(f"{len(unsettled)} entries were timed on fresh operands whose settle did not end stable "
               "(capped: still improving at its time limit; slowed: the settled read rate more than 5 % below the "
               "first pass, i.e. the device slowed down meanwhile). Their figures may be off; re-run them:")
        d.table(["entry", "operand", "settle", "first pass (GB/s)", "settled (GB/s)", "passes"],
                [[r["entry"], r["operand"], r["state"], r["first_gbps"], r["settled_gbps"], r["passes"]]
                 for r in unsettled])
    if gate["gated"] or gate["ungated"]:
        d.para(f"Event-timed entries: {gate['gated']} timed behind the launch gate (the GPU's time for the work, "
               f"without the host's submission of it), {gate['ungated']} ungated (families whose figure includes "
               "the host, or a run with --launch-gate=off); docs/probes.md.")
    if gate["timed_out"]:
        d.para(f"{len(gate['timed_out'])} entries had a launch gate time out: some of their samples hold host time. "
               "Re-run them:")
        d.table(["entry", "gate time-outs"], [[r["entry"], r["timeouts"]] for r in gate["timed_out"]])
    paired = data.get("paired") or []
    if paired:
        d.sub("paired comparisons (A and B timed in the same samples)")
        d.para("Each sample times one call of A and one of B back to back, A first in even samples and B first in "
               "odd ones; speedup = B's time / A's time (> 1: A faster), median over the samples, with the medians "
               f"over each order beside it. Entries whose speedups spread with CV > {F.PAIRED_NOISY_CV} are marked "
               "noisy: something slowed one call of some pairs more than the other; do not rely on their ratio.")
        d.table(["kernel", "problem", "L2", "A (ran)", "B (ran)", "speedup A over B", "A first", "B first", "cv",
                 "A µs", "B µs", "note"],
                [[r["kernel"], r["problem"], r["l2"] or "–", f"{r['a']} ({r['a_ran'] or '–'})",
                  f"{r['b']} ({r['b_ran'] or '–'})", r["speedup"], r["a_first"], r["b_first"], r["cv"], r["a_us"],
                  r["b_us"], "noisy" if r["noisy"] else ""] for r in paired])
    kf = plots.kernel_figures(pts, figdir, memcpy[0] if memcpy else None, ceilings)
    if not kf:
        d.para("No kernels.* entries in the inputs.")
    for f in kf:
        d.figure(f, figs)

    mgpu.write_section(d, multi)

    d.section("other")
    other = data.get("other_families") or {}
    if other:
        # A family a figure already shows gets a pointer to it, not its raw entries a second time.
        shown = {}
        for i, f in enumerate(figs, start=1):
            for p in f.provenance:
                for probe in (p or {}).get("probe", []):
                    shown.setdefault(probe, (i, f))
        for fam, rows in other.items():
            d.sub(fam)
            if fam in shown:
                i, f = shown[fam]
                d.h.append(f'<p>{len(rows)} entries, all drawn in <a href="#fig-{f.id}">Figure {i} '
                           f'({html.escape(f.title)})</a>; provenance under <a href="#prov-{f.id}">Figure {i}</a>.</p>')
                d.m.append(f"{len(rows)} entries, all drawn in [Figure {i} ({f.title})](#fig-{f.id}).\n")
                continue
            table = lambda: d.table(["entry", "value", "unit", "cv"],  # noqa: E731
                                    [[r["entry"], r["value"], r["unit"], r["cv"]] for r in rows])
            if len(rows) > LONG_TABLE:
                d.begin_details(f"{len(rows)} entries")
                table()
                d.end_details()
            else:
                table()
    else:
        d.para("Every family in the inputs has its own section above.")

    d.section("provenance")
    d.para("Three hops from any figure to its origin: the figure → the result entries named here (in the listed file) "
           "→ the probe descriptor: the ProbeDescriptor whose family is the entry's first name component, under "
           "microbench/probes/ (its method text is quoted here and in each entry's label; docs/probes*.md explain it).")
    for i, f in enumerate(figs, start=1):
        d.h.append(f'<h3 id="prov-{f.id}">Figure {i}: {html.escape(f.title)}</h3>')
        d.m.append(f'\n<a id="prov-{f.id}"></a>\n### Figure {i}: {f.title}\n')
        lines = []
        for p in f.provenance:
            if not p:
                continue
            lines.append(f"entries {p.get('entries')} ({p.get('count')}) · probe {', '.join(p.get('probe', []))} · "
                         f"method: {' | '.join(p.get('method', [])) or 'not recorded'} · units: {', '.join(p.get('units', []))} · "
                         f"file: {', '.join(p.get('files', []))}")
        # The heading (the target of each figure's "Source" link) stays visible; the list, up to one
        # line per curve, is folded.
        probes = sorted({q for p in f.provenance if p for q in p.get("probe", [])})
        d.begin_details(f"{len(lines)} entry groups from {', '.join(probes) or 'no probe'}")
        d.items(lines)
        d.end_details()

    html_doc = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.escape(title) + "</title><style>"
                + CSS + "</style></head><body>" + "\n".join(d.h) + "</body></html>")
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(html_doc)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(d.m))
    return {"html": os.path.join(outdir, "report.html"), "markdown": os.path.join(outdir, "report.md"),
            "profile": os.path.join(outdir, "device-profile.json"), "figures": [f.files for f in figs],
            "profile_obj": prof, "optimality": opt, "ceilings": ceilings}


# Tables longer than this fold into a <details> block where they are reference material.
LONG_TABLE = 30


def _insert_after(sections: list, after: str, section: tuple) -> list:
    i = [sid for sid, _ in sections].index(after)
    return sections[:i + 1] + [section] + sections[i + 1:]


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
        "FP16": "CUDA cores, HFMA2 (half2 FMA; not the tensor cores)",
        "BF16": "CUDA cores, HFMA2.BF16 (bf16x2 FMA; not the tensor cores)"}


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
        # L1's only recorded peak, l1tex__t_bytes.sum.peak_sustained, counts tag lookups (512 B/clk/SM on
        # GH100), not the load path: no theoretical figure to hold the load ceiling against.
        t = theo.get(level) if level not in ("L1", "shared") else None
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
                     f"β {fmt(f.get('beta_gbps'))} GB/s, α {fmt(f.get('alpha_us'))} µs",
                     f"α + size/β fit over {f['points']} sizes ({k.get('engine') or '?'})", "–", "–",
                     Link("transfers", "transfers")])
    rows += kernel_summary_rows(opt)
    return rows


def theoretical_sources(data: dict) -> Dict[str, str]:
    """Where each theoretical figure of the summary comes from: said once under the table rather than
    in every row that divides by it."""
    out = {c["name"]: c["how"] for c in (data.get("roofline") or {}).get("ceilings", [])
           if not c["measured"] and c["name"] != "L1"}
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


def headline(data: dict, opt: list, issues: Sequence[str]) -> List[str]:
    """The sentences the report opens with: what the GPU is, where it stands against its datasheet,
    whether the counters verified the ceilings, and what limits each kernel."""
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
        t = theo.get(name) if name != "L1" else None  # L1's peak metric counts tag lookups, not loads (summary_rows)
        value = f"{name} {fmt(m['value'])} {m['unit']}"
        parts.append(value + (f" = {100 * m['value'] / t['value']:.0f} % of {fmt(t['value'])}" if t else
                              " (no theoretical figure)"))
    if parts:
        lines.append("Measured ceilings against the datasheet: " + "; ".join(parts) + ".")
    prem = data.get("premises") or {}
    if prem.get("declared"):
        lines.append(f"Premises: {prem['verdict']} ({prem['ok']} of {prem['declared']} held by the counters of the "
                     f"same run, {prem['failed']} failed, {prem['unverified']} unchecked).")
    elif parts:
        lines.append("Ceilings UNVERIFIED: no entry declares a premise the counters could check.")
    for k in kernel_headlines(opt):
        o = k["ours"]
        vs = f", {fmt(o['vs_cublas'], 3)}x cuBLAS" if o.get("vs_cublas") else ", no cuBLAS figure"
        lines.append(f"{k['kernel']} ({o['impl']}, {o['size']}): {o['limiter']}-bound, "
                     f"{fmt(o['pct_of_bound'], 3)} % of its bound{vs}; fastest there: {k['fastest']['impl']}.")
    peer = data.get("p2p") or {}
    weak = [(m, c) for m in peer.get("bandwidth", []) for c in m.get("weak", [])]
    if peer.get("bandwidth"):
        lines.append(f"Peer-to-peer over {len(peer['devices'])} GPUs: "
                     + (f"{len(weak)} pair results below {peer['weak_fraction']:.0%} of the best pair of their matrix "
                        "(section Multi-GPU: peer-to-peer)." if weak else
                        f"every pair within {peer['weak_fraction']:.0%} of the best pair of its matrix."))
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


def kernel_summary_rows(opt: list) -> list:
    """Per kernel, at its largest problem timed out of DRAM (else its largest): our default's % of
    its bound (minimal bytes), and the fastest implementation there."""
    rows = []
    for k in kernel_headlines(opt):
        kernel, ours, fastest = k["kernel"], k["ours"], k["fastest"]
        vs = f", {fmt(ours['vs_cublas'], 3)}x cuBLAS" if ours.get("vs_cublas") else ""
        excess = f"; excess traffic {fmt(ours['excess_traffic'], 3)}x" if ours.get("excess_traffic") else ""
        rows.append([f"{kernel} at {ours['size']}",
                     f"{fmt(ours['pct_of_bound'], 3)} % of bound ({ours['impl']}, {ours['limiter']}-bound{vs}{excess})",
                     f"fastest here: {fastest['impl']}", "–", "bound from minimal bytes", Link("optimality", "optimality")])
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
        fastest = max(at, key=lambda r: r["gflops"])
        impls = {r["impl"] for r in at}
        ours = next((r for r in at if is_default(kernel, r["impl"], impls) and not is_reference(r["impl"])), None)
        if ours is None or ours.get("pct_of_bound") is None:
            continue
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
