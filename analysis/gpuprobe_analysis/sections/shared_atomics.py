"""Shared-memory atomics vs contention (family memory.shared_atomics; docs/probes-memory.md): one curve
per type of the atomics an SM completes per clock against the number of threads that hit one word, its
figure, and its report section. The axes, units, title and method come from the family's record in
the result file; nothing here repeats them."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

from .. import families as F
from ..results import Entry
from . import AnalysisInputs, FamilySection, register

FAMILY = "memory.shared_atomics"


@dataclass
class Curve:
    key: Dict[str, object]  # the record's group axes -> value (type)
    x: List[float]          # the swept axis (contention)
    y: List[float]          # median per entry, in the record's unit
    entries: List[Entry]


@dataclass
class SharedAtomics:
    title: str
    method: str
    x_name: str
    x_unit: str
    unit: str
    curves: List[Curve]


def analyze(inputs: AnalysisInputs) -> Optional[SharedAtomics]:
    """The family's curves; None without its entries, without a curve (no entry has a value of the
    swept axis) or without its record (an old file's)."""
    entries, record = inputs.rs.by_family(FAMILY), inputs.rs.record(FAMILY)
    if not entries or record is None or record.x is None:
        return None
    curves = []
    for key, grp in sorted(F.group(entries, record.group).items(), key=lambda t: str(t[0])):
        grp = sorted((e for e in grp if math.isfinite(F.num(e, record.x))), key=lambda e: F.num(e, record.x))
        if grp:  # entries without a value of the swept axis draw no curve
            curves.append(Curve(dict(zip(record.group, key)), [F.num(e, record.x) for e in grp],
                                [e.value for e in grp], grp))
    if not curves:
        return None
    return SharedAtomics(record.title or FAMILY, record.method, record.x, record.axis(record.x).unit, record.unit,
                         curves)


def _label(c: Curve) -> str:
    return ", ".join(f"{k}={v}" for k, v in c.key.items())


def content(an: SharedAtomics, figdir: str) -> dict:
    """The section's table (one row per curve, one column per swept value) and its figure."""
    from .. import plots  # matplotlib only when the report draws
    xs = sorted({x for c in an.curves for x in c.x})
    rows = [[_label(c)] + [dict(zip(c.x, c.y)).get(x) for x in xs] for c in an.curves]
    figure = plots.simple_xy([(_label(c), c.x, c.y, c.entries) for c in an.curves], "shared_atomics", an.title,
                             f"{an.x_name} ({an.x_unit})", an.unit, figdir,
                             f"Median of each entry's samples; one curve per {', '.join(an.curves[0].key) or 'entry'}.")
    return {"method": an.method, "unit": an.unit,
            "headers": ["curve"] + [f"{an.x_name} {x:g}" for x in xs], "rows": rows, "figure": figure}


def to_json(an: SharedAtomics) -> dict:
    from ..profile_results import to_json as jsonable  # NaN becomes null
    return jsonable({"title": an.title, "x": an.x_name, "x_unit": an.x_unit, "unit": an.unit,
            "curves": [{"key": c.key, "x": c.x, "y": c.y, "source": F.provenance(c.entries)} for c in an.curves]})


def summary(an: SharedAtomics) -> List[dict]:
    """Per curve: the rate without contention (its smallest x) and at its largest contention."""
    rows = []
    for c in an.curves:
        if not c.x:
            continue
        rows.append({"figure": f"shared-memory atomics ({_label(c)})",
                     "value": f"{c.y[0]:,.4g} {an.unit} at {an.x_name} {c.x[0]:g}, "
                              f"{c.y[-1]:,.4g} at {c.x[-1]:g}",
                     "how": f"{FAMILY}, {len(c.x)} entries"})
    return rows


TEMPLATE = """
{%- call d.p() %}Method: {{ section.method }}. Figures in {{ section.unit }}.{% endcall %}
{%- call d.table(section.headers) %}{{ d.rows(section.rows) }}{% endcall %}
{{- d.figure(figs.place(section.figure)) }}
"""

SECTION = register(FamilySection(
    id="shared_atomics", title="Shared-memory atomics", families=(FAMILY,), after=("access",),
    analyze=analyze, content=content, to_json=to_json, summary=summary, template=TEMPLATE))
