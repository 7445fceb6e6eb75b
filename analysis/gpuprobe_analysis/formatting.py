"""How the report, the CLI and the sections write numbers, sizes and table cells: one format for all of them."""
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


class Link:
    """A table cell that points to a section: an anchor in the HTML, a link in the Markdown."""

    def __init__(self, text: str, target: str):
        self.text, self.target = text, target

    def __str__(self):
        return self.text


def pct_of(value, theoretical) -> str:
    """A summary cell: value as a % of its theoretical figure."""
    return f"{100 * value / theoretical:.0f} % of {fmt(theoretical)}" if value and theoretical else "–"


def premise_cell(status, ratio) -> str:
    """A summary cell: a ceiling's premise, as the counters judged it."""
    if not status:
        return "none declared"
    return status + (f", {ratio:.3f}x counted" if isinstance(ratio, (int, float)) else "")


def fmt_ratio(v, digits: int = 3) -> str:
    """A ratio to `digits` significant digits, trailing zeros kept: 0.9998 is "1.00", never "1"."""
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "–"
    return f"{v:#.{digits}g}".rstrip(".")


def fmt_pct(v) -> str:
    """A share in per cent with one decimal: 100.2 % of a bound must not read "100 %"."""
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "–"
    return f"{v:.1f}"
