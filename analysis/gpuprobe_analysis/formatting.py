"""How the report, the CLI and the sections write numbers and sizes: one format for all of them."""
from __future__ import annotations

import math


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
