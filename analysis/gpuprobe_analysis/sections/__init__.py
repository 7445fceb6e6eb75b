"""The report's sections, one module each, registered by id: the core sections every report has
(CORE: inputs, device, hierarchy, granularity, tlb, bandwidth, access, execution, transfers, roofline,
optimality, kernels, other) and the sections of probe families (tensor, p2p, collectives, mgpu,
shared_atomics).

A module in this package analyses its families (curves, fits, figures) and declares its report
section with `register(FamilySection(...))` at import. The report imports every module here
(`load()`): a new family's section is one new module, with no edit to report.py, families.py or the
templates. `device_profile(rs)` is device-profile.json of a result set: every section's results. From
the registration the report derives:

- whether the section is there: `analyze` returns None for inputs without the family's entries (a
  one-GPU result set has no peer-to-peer section, not even an empty one);
- where it goes: after the first of `after` present in the report;
- its text: the module's `template` (jinja2, one text for the HTML and the Markdown; the variable
  `section` is what `content` returned), else templates/sections/<id>.j2;
- device-profile.json[id] (`to_json`), the summary table's rows (`summary`) and the report's opening
  sentences (`headline`);
- the families the generic table ("Other probe families") leaves out: `families`.

A section may read the results of sections analysed before it (`uses`: their ids; AnalysisInputs.results),
and the device-profile.json keys they wrote (AnalysisInputs.profile): the multi-GPU kernels' bound divides
by the bandwidth section's read ceilings and adds the NCCL collectives' time.

A core section (`core=True`) is in every report, at its place in CORE, its text written even where the
inputs have nothing for it (it says so). It writes top-level keys of device-profile.json (`profile_keys`,
in PROFILE_KEYS' order), offers the problems it met (`notes`), rows of the summary table with all its
columns (`summary_rows`) and sentences of the opening (`opening`), both from its result and the whole
device profile (the summary holds a bandwidth against the roofline's theoretical figure). Its `content`
is a dict of the names its template reads.
"""
from __future__ import annotations

import graphlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..results import ResultSet


# The core sections, in the order the report shows them (the summary comes first and the provenance of
# the figures last: the report's own).
CORE = ("inputs", "device", "hierarchy", "granularity", "tlb", "bandwidth", "access", "execution", "transfers",
        "roofline", "optimality", "kernels", "other")

# device-profile.json's top-level keys in the order the file has always had them (readers diff two
# profiles); each belongs to one core section (`profile_keys`). "notes" gathers the sections' `notes`. The
# family sections' keys (their ids) follow.
PROFILE_KEYS = ("device", "inputs", "hierarchy", "granularity", "tlb", "bandwidth_l2", "bandwidth_errors", "premises",
                "bandwidth", "stride_alignment", "banks", "pipelines", "launch_barrier", "transfers", "baseline",
                "paired", "other_families", "notes", "issues", "roofline", "optimality", "kernels_vs_cublas",
                "tool_time", "unsettled_operands", "launch_gate", "unsteady_warmups")


@dataclass
class AnalysisInputs:
    """What a section's `analyze` reads: the result set and the results of the sections analysed before
    it, by id (those it `uses` among them)."""
    rs: ResultSet
    results: Dict[str, Any] = field(default_factory=dict)

    @property
    def profile(self) -> dict:
        """device-profile.json's keys of the core sections analysed so far (PROFILE_KEYS order)."""
        return _profile_json([(_REGISTERED[sid], r) for sid, r in self.results.items()
                              if r is not None and _REGISTERED[sid].core])


def _nothing(result: Any) -> list:
    return []


def _no_sentence(result: Any) -> Optional[str]:
    return None


def _no_keys(result: Any) -> dict:
    return {}


def _no_rows(result: Any, profile: dict) -> list:
    return []


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
    # A core section (see the module's docstring): in every report; analyze never returns None.
    core: bool = False
    profile_keys: Callable[[Any], Dict[str, Any]] = _no_keys     # top-level keys of device-profile.json
    notes: Callable[[Any], List[str]] = _nothing                 # problems met ("notes" of the profile)
    summary_rows: Callable[[Any, dict], List[list]] = _no_rows   # (result, device profile) -> table rows
    opening: Callable[[Any, dict], List[str]] = _no_rows         # (result, device profile) -> sentences
    reads_all_ceilings: bool = False  # analysed after every section that offers `ceilings`


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
    for sid in sorted(_REGISTERED):  # every node first, by id: the order among sections ready together
        graph.add(sid)
    for sid in sorted(_REGISTERED):
        graph.add(sid, *sorted(_dependencies(sid)))
    try:
        return [_REGISTERED[sid] for sid in graph.static_order()]
    except graphlib.CycleError as exc:
        raise ValueError(f"report sections depend on each other in a cycle: {exc.args[1]}") from None


def _dependencies(sid: str) -> set:
    """The sections analysed before `sid`: those it uses, its family-section anchors and, where it reads
    every ceiling, the sections that offer ceilings. ValueError on a `uses` naming no registered section."""
    s = _REGISTERED[sid]
    missing = [u for u in s.uses if u not in _REGISTERED]
    if missing:
        raise ValueError(f"section {sid!r} uses {missing}: no such section is registered")
    deps = set(s.uses) | {a for a in s.after if a in _REGISTERED and not _REGISTERED[a].core}
    if s.reads_all_ceilings:
        deps |= {o for o, t in _REGISTERED.items() if t.ceilings is not _nothing and o != sid}
    return deps


def inputs_for(rs: ResultSet, sid: str) -> AnalysisInputs:
    """The inputs section `sid`'s analyze reads: every section it depends on (directly or not) analysed, in
    load() order, and no other. What needs one section's figures (the application kernels need the
    roofline's ceilings) skips the rest of the report (the TLB fits, the transfers ...)."""
    order = load()
    needed, todo = set(), [sid]
    while todo:
        for d in _dependencies(todo.pop()):
            if d not in needed:
                needed.add(d)
                todo.append(d)
    inputs = AnalysisInputs(rs)
    for s in order:
        if s.id in needed:
            inputs.results[s.id] = s.analyze(inputs)
    return inputs


def claimed_families() -> Tuple[str, ...]:
    """Every family a registered family section reads (the core sections name none)."""
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


def _closure(ids: Sequence[str]) -> set:
    """The sections `ids` name and every section they depend on (uses, reads_all_ceilings), transitively."""
    registered = {s.id: s for s in load()}
    todo, out = list(ids), set()
    while todo:
        sid = todo.pop()
        if sid in out:
            continue
        out.add(sid)
        s = registered[sid]
        todo += list(s.uses)
        if s.reads_all_ceilings:
            todo += [o for o, t in registered.items() if t.ceilings is not _nothing and o != sid]
    return out


def analyze_all(rs: ResultSet, only: Optional[Sequence[str]] = None) -> List[Placed]:
    """Every registered section the inputs have (every core section), analysed in load() order; with
    `only`, just those sections and what they depend on (a caller that reads a few figures: compare)."""
    inputs = AnalysisInputs(rs)
    wanted = _closure(only) if only is not None else None
    out = []
    for s in load():
        if wanted is not None and s.id not in wanted:
            continue
        result = s.analyze(inputs)
        if s.core and result is None:
            raise ValueError(f"core section {s.id!r}: analyze returned None")
        inputs.results[s.id] = result
        if result is not None:
            out.append(Placed(s, result))
    return out


def _profile_json(core: Sequence[Tuple[FamilySection, Any]]) -> dict:
    keys: Dict[str, Any] = {"notes": [n for sid in CORE for s, r in core if s.id == sid for n in s.notes(r)]}
    for s, r in core:
        for k, v in s.profile_keys(r).items():
            if k not in PROFILE_KEYS or k == "notes":
                raise ValueError(f"section {s.id!r} writes device-profile.json key {k!r}, which PROFILE_KEYS does not order")
            keys[k] = v
    return {k: keys[k] for k in PROFILE_KEYS if k in keys}


def profile_json(present: Sequence[Placed]) -> dict:
    """device-profile.json of analysed sections: the core sections' keys in PROFILE_KEYS order, then each
    family section's to_json under its id (load() order)."""
    out = _profile_json([(p.section, p.result) for p in present if p.section.core])
    for p in present:
        if not p.section.core and p.section.to_json is not None:
            out[p.section.id] = p.section.to_json(p.result)
    return out


def results_of(rs: ResultSet) -> Dict[str, Any]:
    """Every registered section's typed result by id (None: the inputs have nothing for it)."""
    analyzed = {p.section.id: p.result for p in analyze_all(rs)}
    return {s.id: analyzed.get(s.id) for s in load()}


def device_profile(rs: ResultSet, only: Optional[Sequence[str]] = None) -> dict:
    """device-profile.json of a result set (what the report writes): every section's results (with
    `only`: those sections' and their dependencies' keys alone)."""
    return profile_json(analyze_all(rs, only))


def place(order: Sequence[Tuple[str, str]], present: Sequence[Placed]) -> List[Tuple[str, str]]:
    """The report's (id, title) list with the present sections inserted after their anchors."""
    out = list(order)
    inserted = set()
    for p in (p for p in present if not p.section.core):
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
