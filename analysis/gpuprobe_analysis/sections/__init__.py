"""Report sections that belong to probe families, one module each, registered by family name.

A module in this package analyses its families (curves, fits, figures) and declares its report
section with `register(FamilySection(...))` at import. The report imports every module here
(`load()`): a new family's section is one new module, with no edit to report.py, families.py or the
templates. From the registration the report derives:

- whether the section is there: `analyze` returns None for inputs without the family's entries (a
  one-GPU result set has no peer-to-peer section, not even an empty one);
- where it goes: after the first of `after` present in the report;
- its text: the module's `template` (jinja2, one text for the HTML and the Markdown; the variable
  `section` is what `content` returned), else templates/sections/<id>.j2;
- device-profile.json[id] (`to_json`), the summary table's rows (`summary`) and the report's opening
  sentences (`headline`);
- the families the generic table ("Other probe families") leaves out: `families`.

A section may read the results of sections analysed before it (`uses`: their ids) and the device
profile of the same inputs (AnalysisInputs.profile): the multi-GPU kernels' bound divides by the
profile's read ceilings and adds the NCCL collectives' time.
"""
from __future__ import annotations

import graphlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..results import ResultSet


@dataclass
class AnalysisInputs:
    """What a section's `analyze` reads: the result set, the device profile's numbers of the same
    inputs (Profile.to_json()), and the results of the sections it `uses`, by id."""
    rs: ResultSet
    profile: dict
    results: Dict[str, Any] = field(default_factory=dict)


def _nothing(result: Any) -> list:
    return []


def _no_sentence(result: Any) -> Optional[str]:
    return None


@dataclass(frozen=True)
class FamilySection:
    id: str                        # anchor and template name; unique among the report's sections
    title: str
    families: Tuple[str, ...]      # the families it reads (left out of the generic table)
    after: Tuple[str, ...]         # placed after the first of these section ids present
    analyze: Callable[[AnalysisInputs], Any]   # None: the inputs have nothing for this section
    content: Callable[[Any, str], Any]         # (result, figure folder) -> the template's `section`
    to_json: Optional[Callable[[Any], Any]] = None   # device-profile.json[id]; None: not written
    summary: Callable[[Any], List[dict]] = _nothing  # summary-table rows {"figure", "value", "how"}
    headline: Callable[[Any], Optional[str]] = _no_sentence  # a sentence of the report's opening
    link_text: str = ""            # how the summary table points here (default: the title)
    uses: Tuple[str, ...] = ()     # ids of sections whose results `analyze` reads
    template: Optional[str] = None  # jinja2 source; None: templates/sections/<id>.j2
    # Compute ceilings the section measured, for the roofline and the optimality tables: dicts with
    # name, gflops, measured (False: a theoretical, dashed line), how, and source (measured only).
    ceilings: Callable[[Any], List[dict]] = _nothing


_REGISTERED: Dict[str, FamilySection] = {}


def register(section: FamilySection) -> FamilySection:
    """Adds a section (at the module's import). Refuses an id or a family another section claims."""
    if section.id in _REGISTERED:
        raise ValueError(f"report section {section.id!r} registered twice")
    for other in _REGISTERED.values():
        shared = set(other.families) & set(section.families)
        if shared:
            raise ValueError(f"section {section.id!r}: families {sorted(shared)} already belong to {other.id!r}")
    _REGISTERED[section.id] = section
    return section


def load() -> List[FamilySection]:
    """Imports every module of this package (each registers its section) and returns the sections in
    the order they are analysed and placed: a section after those it `uses` and after those of its
    `after` anchors that are family sections, else by id (never by import order). ValueError on a
    `uses` naming no registered section, or a cycle."""
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")
    graph = graphlib.TopologicalSorter()
    for sid in sorted(_REGISTERED):
        s = _REGISTERED[sid]
        missing = [u for u in s.uses if u not in _REGISTERED]
        if missing:
            raise ValueError(f"section {sid!r} uses {missing}: no such section is registered")
        graph.add(sid, *sorted(set(s.uses) | {a for a in s.after if a in _REGISTERED}))
    try:
        return [_REGISTERED[sid] for sid in graph.static_order()]
    except graphlib.CycleError as exc:
        raise ValueError(f"report sections depend on each other in a cycle: {exc.args[1]}") from None


def claimed_families() -> Tuple[str, ...]:
    """Every family a registered section reads."""
    return tuple(f for s in load() for f in s.families)


def template_source(name: str) -> Optional[str]:
    """The inline template of a section, for jinja2's loader: "sections/<id>.j2" -> its source."""
    if not name.startswith("sections/") or not name.endswith(".j2"):
        return None
    s = _REGISTERED.get(name[len("sections/"):-len(".j2")])
    return s.template if s is not None else None


@dataclass
class Placed:
    """A registered section present in the report, with its analysis result."""
    section: FamilySection
    result: Any


def analyze_all(rs: ResultSet, profile: dict) -> List[Placed]:
    """Every registered section the inputs have, analysed in load() order."""
    inputs = AnalysisInputs(rs, profile)
    out = []
    for s in load():
        result = s.analyze(inputs)
        inputs.results[s.id] = result
        if result is not None:
            out.append(Placed(s, result))
    return out


def place(order: Sequence[Tuple[str, str]], present: Sequence[Placed]) -> List[Tuple[str, str]]:
    """The report's (id, title) list with the present sections inserted after their anchors."""
    out = list(order)
    inserted = set()
    for p in present:
        ids = [sid for sid, _ in out]
        anchor = next((a for a in p.section.after if a in ids), None)
        if anchor is None:
            raise ValueError(f"section {p.section.id!r}: none of {p.section.after} is in the report")
        i = ids.index(anchor) + 1
        while i < len(out) and out[i][0] in inserted:  # after the sections placed there before it
            i += 1
        out.insert(i, (p.section.id, p.section.title))
        inserted.add(p.section.id)
    return out
