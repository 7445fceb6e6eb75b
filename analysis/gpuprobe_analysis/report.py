"""The report: one self-contained HTML file (figures embedded as data URIs, no external resource)
and a Markdown version, plus device-profile.json and the figures as PNG/SVG files.

The sections (sections/: one module each, core and family) compute every number, draw their figures and
offer their summary rows and opening sentences; this module orders them and renders. The jinja2
templates under templates/ write both documents: report.html.j2 and report.md.j2 are the pages, body.j2
and sections/<id>.j2 the sections' text (one text for both outputs), blocks.html.j2 and blocks.md.j2 how
a heading, paragraph, table, fold or figure is written in each format.
"""
from __future__ import annotations

import base64
import functools
import json
import math
import os
import re
from typing import List, Optional

import jinja2
from markupsafe import Markup

from . import plots
from . import sections as S
from .glossary import GLOSSARY, implementation_terms, report_terms, terms_used
from .formatting import Link, fmt, fmt_bytes
from .results import ResultSet
from .sections.inputs import problems as found_problems
from .sections.roofline import theoretical_sources

# The summary comes first, then the core sections (sections.CORE) with the family sections placed after
# their anchors, then where each figure comes from.
FIRST, LAST = ("summary", "Summary"), ("provenance", "Where each figure comes from")
# The summary table's rows: the core sections' in this order, then the family sections' (placement order).
SUMMARY_ORDER = ("hierarchy", "bandwidth", "execution", "tlb", "transfers", "optimality")
# The opening sentences: these core sections', the family sections', then the inputs' (what was rejected).
OPENING_ORDER = ("device", "roofline", "optimality")


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
    loader = jinja2.ChoiceLoader([jinja2.FunctionLoader(S.template_source),
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


def _outline() -> List[tuple]:
    titles = {s.id: s.title for s in S.load()}
    return [FIRST] + [(sid, titles[sid]) for sid in S.CORE] + [LAST]


# The report's (id, title) list before the family sections are placed.
SECTIONS = _outline()


def section_order(present: List[S.Placed]) -> List[tuple]:
    """The report's (id, title) list: SECTIONS with the family sections present after their anchors."""
    return S.place(SECTIONS, present)


def summary_rows(present: List[S.Placed], data: dict) -> list:
    """figure, value, produced by, % of theoretical, premise, section (the summary table's columns)."""
    by_id = {p.section.id: p for p in present}
    rows = [r for sid in SUMMARY_ORDER for r in by_id[sid].section.summary_rows(by_id[sid].result, data)]
    return rows + [[r["figure"], r["value"], r["how"], "–", "–", Link(p.section.link_text or p.section.title, p.section.id)]
                   for p in present if not p.section.core for r in p.section.summary(p.result)]


def opening(present: List[S.Placed], data: dict) -> List[str]:
    """The sentences the report opens with: what the GPU is, where it stands against its datasheet,
    whether the counters verified the ceilings, what limits each kernel, the families' own sections'
    sentences, and what the inputs lacked."""
    by_id = {p.section.id: p for p in present}
    lines = [line for sid in OPENING_ORDER for line in by_id[sid].section.opening(by_id[sid].result, data)]
    lines += [line for p in present if not p.section.core for line in [p.section.headline(p.result)] if line]
    return lines + by_id["inputs"].section.opening(by_id["inputs"].result, data)


def summary_glossary(rs: ResultSet, headline: List[str], rows: list) -> dict:
    """The names the Summary uses, defined (glossary.py): every term, code and implementation name that
    occurs in its sentences or its table."""
    words = list(headline) + [str(c) for r in rows for c in r]
    return terms_used(words, {**GLOSSARY, **implementation_terms(rs.entries)})


def assemble(rs: ResultSet, outdir: str, title: Optional[str] = None) -> tuple:
    """(present sections, device profile, template context) of a result set, its figures drawn for
    outdir/figures (within plots.drawn_only() drawn and not written): what build_report writes and the
    report audit reads."""
    figdir = os.path.join(outdir, "figures")
    present = S.analyze_all(rs)
    data = S.profile_json(present)
    gpu = rs.context.get("gpu_name", "unknown GPU")
    headline, rows = opening(present, data), summary_rows(present, data)
    context = {
        "outdir": outdir, "title": title or f"gpuprobe report: {gpu}", "sections": section_order(present),
        "data": data, "premises": data.get("premises") or {}, "problems": found_problems(data),
        "input_notes": [i for i in data["issues"] if i.startswith("note: ")], "headline": headline,
        "summary_rows": rows, "theoretical_sources": theoretical_sources(data),
        "glossary": {**report_terms(data), **GLOSSARY, **implementation_terms(rs.entries)},
        "summary_glossary": summary_glossary(rs, headline, rows),
        "pf": {}, "family_sections": {},
    }
    # The figures, drawn here (and written by worker processes meanwhile); the templates place (and so
    # number) them. A core section's content holds the names its template reads ("figures": by id, as pf).
    with plots.parallel_saves():
        for p in present:
            content = p.section.content(p.result, figdir)
            if not p.section.core:
                context["family_sections"][p.section.id] = content
                continue
            context["pf"].update({f.id: f for f in content.pop("figures", []) if f is not None})
            clash = set(content) & set(context)
            if clash:
                raise ValueError(f"section {p.section.id!r}: template names {sorted(clash)} already taken")
            context.update(content)
    return present, data, context


def build_report(rs: ResultSet, outdir: str, title: Optional[str] = None) -> dict:
    """Writes report.html, report.md, device-profile.json and figures/ into outdir."""
    os.makedirs(outdir, exist_ok=True)
    present, data, context = assemble(rs, outdir, title)
    with open(os.path.join(outdir, "device-profile.json"), "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=False)
    html_doc, figs = render("html", context)
    md_doc, _ = render("md", context)
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(html_doc)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as fh:
        fh.write(md_doc)
    return {"html": os.path.join(outdir, "report.html"), "markdown": os.path.join(outdir, "report.md"),
            "profile": os.path.join(outdir, "device-profile.json"), "figures": [f.files for f in figs.placed],
            "data": data, "sections": {p.section.id: p.result for p in present}}


def _fraction(v) -> str:
    return f"{100 * v:.1f} %" if isinstance(v, (int, float)) and math.isfinite(v) else "–"


def _us(seconds) -> Optional[float]:
    return seconds * 1e6 if isinstance(seconds, (int, float)) and math.isfinite(seconds) else None


def _or_range(value, rng, f) -> str:
    """The value, or the range the data leave open when the value is not determined."""
    if value is not None:
        return f(value)
    return f"{f(rng[0])} .. {f(rng[1])} (not determined)"


def _key(k: dict) -> str:
    return ", ".join(f"{a}={fmt_bytes(v) if isinstance(v, float) and v >= 1024 else fmt(v)}" for a, v in k.items() if v is not None)


APP_SECTION = ("app_kernels", "Application kernels")


def build_app_report(verdict, outdir: str, top: int = 20) -> dict:
    """The "Application kernels" page of an ncu profile's verdict (app_verdict.AppVerdict): app-kernels.html
    and .md with the report's templates, app-kernels.json and figures/ in outdir."""
    from . import app_verdict as V
    from .roofline import READ_DOMINATED
    from .sections import app_kernels
    os.makedirs(outdir, exist_ok=True)
    data = V.to_json(verdict, top)
    with open(os.path.join(outdir, "app-kernels.json"), "w") as fh:
        json.dump(data, fh, indent=1, allow_nan=False)
    content = app_kernels.content(verdict, os.path.join(outdir, "figures"), top)  # one figure: no worker pool
    context = {"outdir": outdir, "title": f"Application kernels: {os.path.basename(verdict.profile.path)} on "
               f"{verdict.device}", "sections": [APP_SECTION], "family_sections": {APP_SECTION[0]: content},
               "read_dominated": READ_DOMINATED}
    out = {"json": os.path.join(outdir, "app-kernels.json")}
    for markup, ext in (("html", "html"), ("md", "md")):
        doc, figs = render(markup, context)
        out[markup] = os.path.join(outdir, f"app-kernels.{ext}")
        with open(out[markup], "w", encoding="utf-8") as fh:
            fh.write(doc)
    out["figures"] = [f.files for f in figs.placed]
    return out
