"""Other probe families: the entries of every family no section analyses, as they are."""
from __future__ import annotations

from typing import Dict, List, Optional

from .. import families as F
from .. import profile_results as R
from ..results import finite
from . import AnalysisInputs, FamilySection, claimed_families, register

# Tables longer than this fold into a <details> block where they are reference material.
LONG_TABLE = 30


def analyze(inputs: AnalysisInputs) -> Optional[Dict[str, List[R.OtherEntry]]]:
    rs = inputs.rs
    # Families with their own section (sections/) are never also raw rows here.
    known = set(F.PROFILE_FAMILIES) | set(claimed_families())
    gen = {}
    for fam in rs.families():
        if fam in known or fam.startswith(F.KERNEL_PREFIX) or fam.startswith(F.PAIRED_PREFIX):
            continue
        gen[fam] = [R.OtherEntry(entry=e.name, value=e.value, unit=e.unit, cv=finite(e.cv), tags=e.tags)
                    for e in rs.by_family(fam)]
    return gen


SECTION = register(FamilySection(
    id="other", title="Other probe families", families=(), after=(), core=True, analyze=analyze,
    content=lambda gen, figdir: {"long_table": LONG_TABLE},
    profile_keys=lambda gen: {"other_families": R.to_json(gen)} if gen else {}))
