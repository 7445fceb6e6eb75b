"""Family records: what the binary declares about each probe family (microbench/harness/family.hpp),
read from a result file's context key `gpuprobe_families` (docs/results-schema.md, "Family records").

A record names the family's axes (name, unit, numeric or text, role: curve-group key, swept x or
fixed; in the entry name or not), its declared fields, its title and figure, for pipeline families
each op's precision and flops per op, and for kernel families the compute ceiling of their work (one
for every entry, or one per value of the text axis `precision`). The analysis reads these instead of
keeping its own tables, so a fact is spelled once, in the C++ that measures it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, Optional, Tuple

CONTEXT_KEY = "gpuprobe_families"


@dataclass(frozen=True)
class Axis:
    name: str
    type: str  # "numeric" | "text"
    unit: str
    role: str  # "group" | "x" | "fixed"
    in_name: bool = True


@dataclass(frozen=True)
class Field:
    name: str  # may hold "<i>": one field per index (e.g. per GPU)
    type: str
    unit: str


@dataclass(frozen=True)
class ComputeOp:
    name: str
    precision: str  # the compute ceiling it belongs to ("FP32", ...); "" for no floating-point peak
    flops_per_op: float
    premise_metric: str = ""


@dataclass(frozen=True)
class FamilyRecord:
    family: str
    title: str
    figure: str
    unit: str
    better: str  # "higher" | "lower"
    method: str
    entry_name: str
    premise: Dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    axes: Tuple[Axis, ...] = ()
    fields: Tuple[Field, ...] = ()
    ops: Tuple[ComputeOp, ...] = ()
    # The compute ceiling of the entries' work, by `precision` value ("": every entry's); () if none.
    compute: Tuple[Tuple[str, str], ...] = ()

    def axis(self, name: str) -> Optional[Axis]:
        return next((a for a in self.axes if a.name == name), None)

    @property
    def group(self) -> Tuple[str, ...]:
        """The axes that key one curve (or row), in the record's order."""
        return tuple(a.name for a in self.axes if a.role == "group")

    @property
    def x(self) -> Optional[str]:
        """The swept axis of a curve, if the family has one."""
        return next((a.name for a in self.axes if a.role == "x"), None)

    def is_text(self, name: str) -> Optional[bool]:
        """Whether `name` is a text axis or field (None: the record does not declare it)."""
        for item in self.axes + self.fields:
            if item.name == name:
                return item.type == "text"
        return None

    def op(self, name: Optional[str]) -> Optional[ComputeOp]:
        return next((o for o in self.ops if o.name == name), None)

    def compute_ceiling(self, precision: Optional[str]) -> Optional[str]:
        """The compute ceiling ("FP32", "FP64", ...) of an entry of this `precision` (None for an entry
        without one): the record's one for every entry, else its one for that precision; None where it
        declares none."""
        ceilings = dict(self.compute)
        if "" in ceilings:
            return ceilings[""]
        return ceilings.get(precision) if precision else None


def _record(d: dict) -> FamilyRecord:
    return FamilyRecord(
        family=str(d["family"]), title=str(d.get("title", "")), figure=str(d.get("figure", "")),
        unit=str(d.get("unit", "")), better=str(d.get("better", "higher")), method=str(d.get("method", "")),
        entry_name=str(d.get("entry_name", "")), premise=dict(d.get("premise") or {}),
        axes=tuple(Axis(str(a["name"]), str(a["type"]), str(a.get("unit", "")), str(a["role"]),
                        bool(a.get("in_name", True))) for a in d.get("axes", [])),
        fields=tuple(Field(str(f["name"]), str(f["type"]), str(f.get("unit", ""))) for f in d.get("fields", [])),
        ops=tuple(ComputeOp(str(o["name"]), str(o.get("precision", "")), float(o.get("flops_per_op", 0)),
                            str(o.get("premise_metric", ""))) for o in d.get("ops", [])),
        compute=tuple((str(k), str(v)) for k, v in dict(d.get("compute") or {}).items()))


def parse(text: Optional[str]) -> Tuple[Dict[str, FamilyRecord], str]:
    """The records of a context value, by family, and "" or why they could not be read. The files of
    one binary carry the same text (a fleet: thousands of them), so it is parsed once."""
    records, why = _parse_once(text)
    return dict(records), why


@lru_cache(maxsize=16)
def _parse_once(text: Optional[str]) -> Tuple[Dict[str, FamilyRecord], str]:
    if text is None or text == "":
        return {}, "absent"
    try:
        doc = json.loads(text)
        if not isinstance(doc, list):
            return {}, f"not a JSON array but a {type(doc).__name__}"
        out = {}
        for d in doc:
            r = _record(d)
            out[r.family] = r
        return out, ""
    except (ValueError, KeyError, TypeError) as exc:
        return {}, f"unreadable ({type(exc).__name__}: {exc})"
