"""Inputs and data quality: the files read (complete or not, entries rejected), the problems found while
reading them, the tool's time per family; the opening's sentences on rejected entries and problems."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List

from .. import profile_results as R
from ..results import ResultSet
from . import AnalysisInputs, FamilySection, register


@dataclass
class InputsResult:
    inputs: List[R.InputFile]
    issues: List[str]
    tool_time: Dict[str, dict]


def analyze(inputs: AnalysisInputs) -> InputsResult:
    rs = inputs.rs
    files = [R.InputFile(file=f.path, partial=f.partial, complete=f.complete, incomplete_reason=f.incomplete_reason,
                         entries=len(f.entries), entries_read=f.entries_read, rejected=list(f.rejected))
             for f in rs.files]
    return InputsResult(files, [str(i) for i in rs.issues], tool_time(rs))


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


def problems(data: dict) -> List[str]:
    """The problems found while reading and analysing (the "note: " issues only say how the inputs were
    combined): the report lists them under Inputs and the optimality tables."""
    return ([i for i in data["issues"] if not i.startswith("note: ")] + data.get("notes", [])
            + (data.get("roofline") or {}).get("notes", []))


def opening(an: InputsResult, data: dict) -> List[str]:
    lines = []
    rejected = sum(len(i.get("rejected") or []) for i in data.get("inputs") or [])
    if rejected:
        lines.append(f"{rejected} entries rejected for values that cannot be measurements (NaN, infinite, negative): "
                     "every figure is built without them; see Inputs and data quality.")
    issues = problems(data)
    if issues:
        lines.append(f"{len(issues)} problems found while reading the inputs: see Inputs and data quality.")
    return lines


SECTION = register(FamilySection(
    id="inputs", title="Inputs and data quality", families=(), after=(), core=True, analyze=analyze,
    content=lambda an, figdir: {}, opening=opening,
    profile_keys=lambda an: {"inputs": R.to_json(an.inputs), "issues": an.issues, "tool_time": R.to_json(an.tool_time)}))
