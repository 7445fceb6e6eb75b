"""The report audit: a report checked against its own data, line by line (docs/analysis.md#report-audit).

`build(rs)` makes the report of a result set in memory (the Markdown text, the device profile, the figures
drawn and not written, with the reference lines each drew: plots.reference_lines); `run(built)` applies
every check of CHECKS and returns its findings per check (an empty list: the check passes). Each check
re-derives what the report says from the JSON (device-profile.json and the result entries), never from
the report's own wording:

- summary: every number of the Summary (its opening lines and its table) comes from the device profile;
  the ceilings' "% of" the datasheet, the premise counts and each kernel's line (% of bound, ratio to the
  named cuBLAS baseline with three significant digits, limiter, fastest implementation) are recomputed.
- above_bound: no figure above 100 % of a bound or of a theoretical value without a stated reason.
- one_clock: a line that gives a rate and a % of a per-clock peak uses one clock for both (the % is the
  rate over the peak at the rate's clock).
- whole_counts: counts are whole where they must be (TLB entries, banks, levels).
- glossary: every implementation, ceiling, level and op a table names is defined in the report's glossary.
- same_ceilings: compare (compare.headline_figures) and fleet (fleet.reference_figures, with a preset's
  figures) take the report's ceilings, on the same inputs.
- figure_references: every reference line a figure draws is a ceiling the tables use for that panel, with
  the same value and unit.
- roofline_roofs: every ceiling a roofline panel's kernels are bounded by is drawn there, and the memory
  roofs end at the highest measured compute roof drawn.

`gpuprobe-analyze audit RESULTS` prints `to_text(run(build(...)))`; analysis/tests/test_report_audit.py
runs the audit on the committed references and on synthetic GPUs.
"""
from __future__ import annotations

import math
import re
import statistics
import tempfile
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import fleet as FL
from . import plots
from .results import ResultSet
from .roofline import ceilings_beaten


@dataclass
class Built:
    """A report made in memory: its Markdown, its device profile, its figures (with their reference
    lines) and the result set it came from."""
    rs: ResultSet
    data: dict
    markdown: str
    figures: List[plots.Figure]


def build(rs: ResultSet) -> Built:
    from .report import assemble, render
    outdir = tempfile.mkdtemp(prefix="gpuprobe-audit-")
    with plots.drawn_only():
        _present, data, context = assemble(rs, outdir)
        markdown, figs = render("md", context)
    return Built(rs, data, markdown, [f.fig for f in figs.placed])


# ------------------------------------------------------------------------------------------ the text
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?=x\b)|(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?!\w|\.\d)")
# Any run of digits: the numbers inside the JSON's strings (a date, an entry name's axis values).
DIGITS = re.compile(r"\d+(?:\.\d+)?")


def numbers(text: str) -> List[str]:
    """The numbers printed in a text (digits inside names such as L2, FP32 or f64 are not numbers)."""
    return [m.group(0) for m in NUMBER.finditer(text)]


def value_of(printed: str) -> float:
    return float(printed.replace(",", ""))


def agrees(printed: str, value: Optional[float], rel: float = 1e-9) -> bool:
    """Whether a printed number is `value` written with the digits it shows (half a unit of its last
    digit, or of its mantissa's last digit in exponent notation)."""
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    p = printed.replace(",", "").lstrip("+")
    mantissa, _, exp = p.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    tol = 0.5 * 10.0 ** (-decimals) * (10.0 ** int(exp) if exp else 1.0)
    return abs(float(p) - value) <= tol + rel * abs(value)


def significant_digits(printed: str) -> int:
    digits = printed.replace(",", "").lstrip("+-").lower().partition("e")[0].replace(".", "").lstrip("0")
    return len(digits)


def sections_of(markdown: str) -> Dict[str, str]:
    """The report's sections by title (## headings)."""
    out, title, lines = {}, None, []
    for line in markdown.splitlines():
        if line.startswith("## "):
            if title is not None:
                out[title] = "\n".join(lines)
            title, lines = line[3:].strip(), []
        else:
            lines.append(line)
    if title is not None:
        out[title] = "\n".join(lines)
    return out


def table_rows(text: str) -> List[Tuple[List[str], List[str]]]:
    """(header, cells) of every Markdown table row in a text."""
    out, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if header is None:
            header = cells
        elif not all(set(c) <= set("-: ") for c in cells):
            out.append((header, cells))
    return out


def bullets(text: str) -> List[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def leaves(tree, strings: bool = True) -> Iterable[float]:
    """Every number in a JSON tree, also those written inside its strings (sizes such as "n=4096")."""
    if isinstance(tree, bool) or tree is None:
        return
    if isinstance(tree, (int, float)):
        if math.isfinite(tree):
            yield float(tree)
    elif isinstance(tree, str):
        if strings:
            for n in DIGITS.findall(tree):
                yield float(n)
    elif isinstance(tree, dict):
        for k, v in tree.items():
            if strings and isinstance(k, str):
                yield from (float(n) for n in DIGITS.findall(k))
            yield from leaves(v, strings)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from leaves(v, strings)
        # A summary gives the median over a list's items (e.g. over GPU pairs): each numeric field's median.
        rows = [v for v in tree if isinstance(v, dict)]
        for k in {k for r in rows for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}:
            vals = [r[k] for r in rows if isinstance(r.get(k), (int, float)) and math.isfinite(r[k])]
            if len(vals) > 1:
                yield float(statistics.median(vals))


# How the report prints a number of the JSON: as it is, in kilo- (TFLOP/s from GFLOP/s), micro- (µs
# from s), per cent (of a fraction), or in KiB, MiB or GiB (of bytes).
UNIT_SCALES = (1.0, 1e-3, 1e6, 100.0, 2.0**-10, 2.0**-20, 2.0**-30)


def derivable(printed: str, pool: Sequence[float]) -> bool:
    return any(agrees(printed, v * s) for v in pool for s in UNIT_SCALES)


Finding = str
Check = Callable[[Built, dict], List[Finding]]


# ------------------------------------------------------------------------------------------ checks
SUMMARY = "Summary"
# The device-profile keys behind each section a summary row links to (any other: the whole profile).
SECTION_KEYS = {"hierarchy": ("hierarchy",), "bandwidth": ("bandwidth", "bandwidth_l2", "roofline"),
                "execution": ("pipelines", "roofline"), "tlb": ("tlb",), "transfers": ("transfers",),
                "optimality": ("optimality", "kernels_vs_cublas"), "roofline": ("roofline",)}


def _ceilings(data: dict, measured: bool) -> Dict[str, dict]:
    return {c["name"]: c for c in (data.get("roofline") or {}).get("ceilings", []) if c["measured"] == measured}


def _pct_of(text: str, value: float, theoretical: float, what: str) -> List[Finding]:
    want = 100 * value / theoretical
    return [] if agrees(text, want) else [f"{what}: {text} % printed, the data give {want:.2f} %"]


def _kernel_line(line: str, data: dict, where: str) -> List[Finding]:
    """A kernel's summary line: its % of bound, its ratio to the named cuBLAS baseline, its limiter and the
    fastest implementation of the same problem, each recomputed from the optimality rows."""
    m = re.match(r"(?P<kernel>\w+) \((?P<impl>[\w.]+), (?P<size>[^)]*)\): (?P<rest>.*)", line) or \
        re.match(r"(?P<kernel>\w+) at (?P<size>[^|]*?) \| (?P<rest>.*)", line)
    if not m:
        return []
    rows = [r for r in data.get("optimality") or [] if r["kernel"] == m["kernel"] and r["size"] == m["size"].strip()]
    if not rows:
        return [f"{where}: no optimality row of {m['kernel']} at {m['size']}"]
    impl = m.groupdict().get("impl") or (re.search(r"\((\w+),", m["rest"]) or [None, None])[1]
    ours = next((r for r in rows if r["impl"] == impl), None)
    if ours is None:
        return [f"{where}: no optimality row of {m['kernel']} {impl} at {m['size']}"]
    out = []
    rest = m["rest"]
    pct = re.search(r"([\d.,]+) % of (?:its )?bound", rest)
    if ours.get("pct_of_bound") is not None:
        if not pct or not agrees(pct[1], ours["pct_of_bound"]):
            out.append(f"{where}: % of bound {pct[1] if pct else 'missing'}, the data give {ours['pct_of_bound']:.3f}")
        elif significant_digits(pct[1]) < 3:
            out.append(f"{where}: % of bound {pct[1]} has fewer than three significant digits "
                       f"({ours['pct_of_bound']:.4g})")
    if ours.get("limiter") and f"{ours['limiter']}-bound" not in rest:
        out.append(f"{where}: limiter {ours['limiter']} not named")
    ratio = re.search(r"([\d.,]+)x (\S+?)[;,)]", rest)
    if ours.get("vs_cublas"):
        if not ratio or not agrees(ratio[1], ours["vs_cublas"]):
            out.append(f"{where}: ratio to cuBLAS {ratio[1] if ratio else 'missing'}, the data give {ours['vs_cublas']:.4g}")
        else:
            if significant_digits(ratio[1]) < 3:
                out.append(f"{where}: ratio {ratio[1]}x has fewer than three significant digits "
                           f"({ours['vs_cublas']:.4g} over {ours.get('cublas_impl')})")
            if ours.get("cublas_impl") and ours["cublas_impl"].lower() not in rest.lower():
                out.append(f"{where}: the ratio {ratio[1]}x is to {ours['cublas_impl']}, which the line does not name "
                           f"(it says {ratio[2]!r})")
    fastest = max(rows, key=lambda r: r["gflops"])["impl"]
    said = re.search(r"fastest (?:there|here): ([\w.]*\w)", line)
    if said and said[1] != fastest:
        out.append(f"{where}: fastest {said[1]}, the data give {fastest}")
    return out


def check_summary(b: Built, ctx: dict) -> List[Finding]:
    data, out = b.data, []
    summary = sections_of(b.markdown).get(SUMMARY, "")
    measured, theo = _ceilings(data, True), _ceilings(data, False)
    dev = data.get("device") or {}
    whole = list(leaves(data))
    for line in bullets(summary):
        where = f"summary line {line[:60]!r}"
        if line.startswith("Measured ceilings against the datasheet:"):
            for name, val, unit, pct, t in re.findall(r"([\w][\w ]*?) ([\d,.]+) (GB/s|GFLOP/s)(?: = (\d+) % of ([\d,.]+))?",
                                                      line.split(":", 1)[1]):
                name = name.strip()
                if name not in measured or not agrees(val, measured[name]["value"]):
                    out.append(f"{where}: {name} {val} {unit} is not the measured ceiling "
                               f"{measured.get(name, {}).get('value')}")
                elif pct:
                    if name not in theo or not agrees(t, theo[name]["value"]):
                        out.append(f"{where}: {name}'s theoretical {t} is not the data's {theo.get(name, {}).get('value')}")
                    else:
                        out += _pct_of(pct, measured[name]["value"], theo[name]["value"], f"{where}: {name}")
        elif line.startswith("Premises:"):
            p = data.get("premises") or {}
            m = re.search(r"\((\d+) of (\d+) held .*?, (\d+) failed, (\d+) unchecked\)", line)
            if not m or [int(x) for x in m.groups()] != [p.get("ok"), p.get("declared"), p.get("failed"),
                                                         p.get("unverified")]:
                out.append(f"{where}: premise counts are not the data's {p.get('ok')}/{p.get('declared')}/"
                           f"{p.get('failed')}/{p.get('unverified')}")
        elif line.startswith("Tensor cores"):
            tc = (data.get("tensor") or {}).get("ceilings") or {}
            for name, val in re.findall(r"(\w+ tensor) ([\d,.]+) (?:TFLOP/s|TOPS)", line):
                if name not in tc or not agrees(val, tc[name]["gflops"] / 1e3):
                    out.append(f"{where}: {name} {val} is not the data's {tc.get(name, {}).get('gflops')}")
        elif line.startswith(str(dev.get("gpu_name", "\0")) + ":"):
            for n in numbers(line):
                if not derivable(n, list(leaves(dev))):
                    out.append(f"{where}: {n} is in no field of the device context")
        elif re.match(r"\w+ \([\w.]+, ", line):
            out += _kernel_line(line, data, where)
        else:
            out += [f"{where}: {n} derives from no number of the device profile" for n in numbers(line)
                    if not derivable(n, whole)]
    for header, cells in table_rows(summary):
        if header[:2] != ["figure", "value"]:
            continue
        where = f"summary row {cells[0]!r}"
        link = re.search(r"\]\(#(\w+)\)", cells[-1])
        keys = SECTION_KEYS.get(link[1], (link[1],)) if link else tuple(data)
        pool = [v for k in keys + ("device",) for v in leaves(data.get(k))]
        # A ceiling a kernel beats: the row names the kernel, its figure and the gap (roofline.ceilings_beaten).
        for gap in ceilings_beaten(data.get("optimality") or []):
            pool += list(leaves(gap)) + [100 * gap["excess"], 100 * gap["noise"]]
        if link and link[1] == "optimality":
            out += _kernel_line(f"{cells[0]} | {cells[1]} | {cells[2]}", data, where)
        pct = re.match(r"(\d+) % of ([\d,.]+)", cells[3]) if len(cells) > 3 else None
        if pct and numbers(cells[1]):
            out += _pct_of(pct[1], value_of(numbers(cells[1])[0]), value_of(pct[2]), where)
            cells = cells[:3] + [pct[2]] + cells[4:]  # the % is checked above: its theoretical figure below
        for cell in cells[:5]:
            out += [f"{where}: {n} derives from no number of {', '.join(keys)}" for n in numbers(cell)
                    if not derivable(n, pool)]
    return out


# A row's own statement of why it stands above its bound: any non-empty text field of these names.
REASON = re.compile(r"note|reason|why", re.I)


def _reason(row: dict) -> bool:
    """A non-empty note/reason/why field of the row, or of a record inside it (the optimality rows' `above`)."""
    return any(REASON.search(k) and isinstance(v, str) and v.strip() for k, v in row.items()) or any(
        _reason(v) for v in row.values() if isinstance(v, dict))


def check_above_bound(b: Built, ctx: dict) -> List[Finding]:
    data, out = b.data, []
    for r in data.get("optimality") or []:
        if (r.get("pct_of_bound") or 0) > 100 and not _reason(r):
            out.append(f"optimality {r['kernel']} {r['impl']} {r['size']}: {r['pct_of_bound']:.2f} % of its "
                       f"{r.get('limiter')} bound, no reason given")
    for r in (data.get("pipelines") or {}).get("throughput", []):
        if (r.get("fraction_of_theoretical") or 0) > 1 and not _reason(r):
            out.append(f"pipelines {r['op']}: {100 * r['fraction_of_theoretical']:.2f} % of the datasheet, no reason given")
    tensor = data.get("tensor") or {}
    for r in tensor.get("forms", []):
        if (r.get("fraction_of_dense_peak") or 0) > 1 and not _reason(r):
            out.append(f"tensor {r['form']} ({r['data']}): {100 * r['fraction_of_dense_peak']:.2f} % of the dense "
                       "peak, no reason given")
    theo = _ceilings(data, False)
    notes = " ".join((data.get("roofline") or {}).get("notes", []) + data.get("notes", []))
    for name, c in _ceilings(data, True).items():
        t = theo.get(name)
        if t and c["value"] > t["value"] and name not in notes:
            out.append(f"ceiling {name}: {c['value']:.1f} {c['unit']} above its theoretical {t['value']:.1f}, "
                       "no note says why")
    # The text: "X % of ..." above 100 in a line that gives no reason (the word "above" or "because").
    for line in b.markdown.splitlines():
        for m in re.finditer(r"(\d[\d,.]*) ?% of (?:its |the |that )?(bound|theoretical|datasheet|dense peak|peak)", line):
            if value_of(m[1]) > 100 and not re.search(r"\b(above|because|beats|exceeds)\b", line):
                out.append(f"text: {m[0]!r} without a reason in {line[:100]!r}")
    return out


def check_one_clock(b: Built, ctx: dict) -> List[Finding]:
    """A rate and its % of a per-clock peak at one clock: % = rate / (peak per clock x SMs x that clock)."""
    data, out = b.data, []
    sms = float((data.get("device") or {}).get("gpu_sm_count") or "nan")
    for name, c in ((data.get("tensor") or {}).get("ceilings") or {}).items():
        r, peak = c.get("random") or {}, c.get("datasheet_gflops_at_clock")
        if not (peak and r.get("sm_clock_mhz") and r.get("fraction_of_dense_peak")):
            continue
        per_clock_sm = peak / (sms * r["sm_clock_mhz"] * 1e-3)
        forms = [f for f in (data.get("tensor") or {}).get("forms", []) if f.get("form") and
                 f.get("fraction_of_dense_peak") and f.get("sm_clock_mhz") and _same_type(f, name, data)]
        for f in forms:
            rate_pct = 100 * f["gflops"] / (per_clock_sm * sms * f["sm_clock_mhz"] * 1e-3)
            said = 100 * f["fraction_of_dense_peak"]
            if abs(said - rate_pct) > 0.05:
                out.append(f"{name} {f['form']} ({f['data']}): {f['gflops'] / 1e3:,.1f} TFLOP/s at {f['sm_clock_mhz']:,.0f} MHz "
                           f"is {rate_pct:.1f} % of the dense peak at that clock; the report says {said:.1f} %")
    for r in (data.get("pipelines") or {}).get("throughput", []):
        theo = ((data.get("pipelines") or {}).get("compute_theoretical") or {})
        name = next((n for n, c in ((data.get("pipelines") or {}).get("compute_ceilings") or {}).items()
                     if c.get("op") == r["op"]), None)
        if name and name in theo and r.get("fraction_of_theoretical") and r.get("gflops"):
            rate_pct = 100 * r["gflops"] / theo[name]["gflops"]
            if abs(100 * r["fraction_of_theoretical"] - rate_pct) > 0.05:
                out.append(f"pipelines {r['op']}: {r['gflops']:,.0f} GFLOP/s is {rate_pct:.1f} % of {theo[name]['gflops']:,.0f}; "
                           f"the report says {100 * r['fraction_of_theoretical']:.1f} %")
    return out


def _same_type(form: dict, ceiling: str, data: dict) -> bool:
    ceilings = (data.get("tensor") or {}).get("ceilings") or {}
    ref = (ceilings.get(ceiling) or {}).get("random") or {}
    # A form belongs to the ceiling whose reference form shares its precision and accumulator.
    kind = lambda f: re.search(r" (\S+->\S+)", f or "")  # noqa: E731
    a, c = kind(form.get("form")), kind(ref.get("form"))
    return bool(a and c and a[1] == c[1])


WHOLE = re.compile(r"(\d[\d,]*\.\d*[1-9]\d*) (entries|entry|banks|levels|pages|SMs|ways)\b")


def check_whole_counts(b: Built, ctx: dict) -> List[Finding]:
    data, out = b.data, []
    tlb = data.get("tlb") or {}
    for i, lv in enumerate(tlb.get("levels") or []):
        for k in ("entries", "entries_range", "entries_bracket"):
            for v in (lv.get(k) if isinstance(lv.get(k), list) else [lv.get(k)]):
                if isinstance(v, (int, float)) and v != round(v):
                    out.append(f"TLB level {i + 1}: {k} {v} is not a whole number")
    for i, lv in enumerate(tlb.get("reach") or []):
        if isinstance(lv.get("entries"), (int, float)) and lv["entries"] != round(lv["entries"]):
            out.append(f"TLB reach {i + 1}: entries {lv['entries']} is not a whole number")
    for w in (data.get("banks") or {}).get("by_word_bytes", []):
        n = (w.get("banks") or {}).get("banks")
        if isinstance(n, (int, float)) and n != round(n):
            out.append(f"banks of {w.get('word_bytes')}-byte words: {n} is not a whole number")
    for m in WHOLE.finditer(b.markdown):
        out.append(f"text: {m[0]!r} is not a whole count")
    return out


GLOSSARY = "Glossary"


def glossary_terms(data: dict) -> List[str]:
    """The names and codes the report's tables use that a reader must look up: implementations, ceilings,
    memory levels and the plateaus of the bandwidth curves, pipeline ops."""
    names = {r["impl"] for r in data.get("optimality") or []}
    names |= {c["name"] for c in (data.get("roofline") or {}).get("ceilings", [])}
    names |= {lv["name"] for lv in (data.get("hierarchy") or {}).get("levels", [])}
    names |= set(data.get("bandwidth_l2") or {})
    names |= {r["op"] for r in (data.get("pipelines") or {}).get("throughput", [])}
    return sorted(names)


def check_glossary(b: Built, ctx: dict) -> List[Finding]:
    text = sections_of(b.markdown).get(GLOSSARY)
    terms = glossary_terms(b.data)
    if text is None:
        return [f"the report has no {GLOSSARY} section; undefined: {', '.join(terms)}"]
    defined = {cells[0].strip("`* ") for _h, cells in table_rows(text)} | {
        re.split(r"[:—–]", line, 1)[0].strip("`* ") for line in bullets(text)}
    return [f"{t!r} is used in a table and not defined in the glossary" for t in terms if t not in defined]


# A fleet figure's counterpart in the report: (where, name) - a bandwidth or compute ceiling, a tensor
# ceiling or a level's latency. The other fleet figures (launch, transfers, P2P, clock) are no ceilings.
FLEET_CEILINGS = {"DRAM read": ("bandwidth", "DRAM"), "DRAM write": ("bandwidth", "DRAM write"),
                  "L2 read": ("bandwidth", "L2"), "FP32": ("compute", "FP32"), "FP64": ("compute", "FP64"),
                  "BF16 tensor": ("tensor", "BF16 tensor"), "FP64 tensor": ("tensor", "FP64 tensor"),
                  "DRAM latency": ("latency", "DRAM")}


def report_value(data: dict, where: str, name: str) -> Optional[float]:
    if where == "bandwidth":
        return ((data.get("bandwidth") or {}).get("ceilings") or {}).get(name, {}).get("gbps")
    if where == "compute":
        return ((data.get("pipelines") or {}).get("compute_ceilings") or {}).get(name, {}).get("gflops")
    if where == "tensor":
        return ((data.get("tensor") or {}).get("ceilings") or {}).get(name, {}).get("gflops")
    return next((lv.get("latency_ns") for lv in (data.get("hierarchy") or {}).get("levels", []) if lv["name"] == name),
                None)


def check_same_ceilings(b: Built, ctx: dict) -> List[Finding]:
    """compare's ceilings equal the report's; a fleet reference figure that stands for a ceiling comes from an
    entry whose premise held, and lies within the figure's declared tolerance of the report's ceiling."""
    from .compare import headline_figures
    data, out = b.data, []
    ceilings, _kernels = headline_figures(b.rs)
    mine = {f"{n} bandwidth": c["gbps"] for n, c in ((data.get("bandwidth") or {}).get("ceilings") or {}).items()}
    mine.update({f"{n} peak": c["gflops"] for n, c in ((data.get("pipelines") or {}).get("compute_ceilings") or {}).items()})
    mine.update({f"{n} peak": c["gflops"] for n, c in ((data.get("tensor") or {}).get("ceilings") or {}).items()})
    mine.update({f"{lv['name']} latency": lv["latency_ns"] for lv in (data.get("hierarchy") or {}).get("levels", [])
                 if lv.get("latency_ns")})
    for name in sorted(set(ceilings) | set(mine)):
        a, r = (ceilings.get(name) or (None,))[0], mine.get(name)
        if a is None or r is None or not math.isclose(a, r, rel_tol=1e-9):
            out.append(f"compare's {name} {a} differs from the report's {r}")
    specs = ctx.get("fleet_figures") or []
    failed = {f["entry"] for f in (data.get("premises") or {}).get("failed_entries", [])}
    device = b.rs.context.get("gpu_index", "0")
    for spec in specs:
        if spec.name not in FLEET_CEILINGS:
            continue
        v, e = FL.figure_value(b.rs.entries, spec, device, b.rs.context)
        if e is None:
            continue
        where, name = FLEET_CEILINGS[spec.name]
        r = report_value(data, where, name)
        if e.name in failed:
            out.append(f"fleet {spec.name} {v:,.1f} {spec.unit} from {e.name}, whose premise failed in the report")
        if r is None:
            out.append(f"fleet {spec.name} {v:,.1f} {spec.unit}: the report has no {name} ceiling")
        elif abs(v / r - 1) * 100 > spec.tolerance_pct:
            out.append(f"fleet {spec.name} {v:,.1f} {spec.unit} is {100 * (v / r - 1):+.1f} % off the report's {name} "
                       f"{r:,.1f} (the figure's tolerance: {spec.tolerance_pct:g} %)")
    return out


RATE = re.compile(r"([\d,]+(?:\.\d+)?) ?(GB/s|GFLOP/s|TFLOP/s|TOPS|GOP/s)")
TO_TABLE_UNIT = {"TFLOP/s": ("GFLOP/s", 1e3), "TOPS": ("GOP/s", 1e3)}


def _panel_tokens(panel: str) -> set:
    return set(re.findall(r"\w+=\w+", panel))


def _ceiling_values(data: dict) -> List[Tuple[str, float, str]]:
    """(name, value, unit) of every ceiling and baseline the report's tables give."""
    out = [(c["name"], c["value"], c["unit"]) for c in (data.get("roofline") or {}).get("ceilings", [])]
    out += [(n, c["gbps"], "GB/s") for n, c in ((data.get("bandwidth") or {}).get("ceilings") or {}).items()]
    memcpy = (data.get("kernels_vs_cublas") or {}).get("memcpy_d2d_gbps")
    if memcpy:
        out.append((MEMCPY_BASELINE, memcpy, "GB/s"))
    return out


# The kernels table's baseline (its "vs memcpy" column): a reference line of the kernel figures that is no bound.
MEMCPY_BASELINE = "cudaMemcpy D2D"


def check_figure_references(b: Built, ctx: dict) -> List[Finding]:
    data, out = b.data, []
    table = _ceiling_values(data)
    opt = data.get("optimality") or []
    caps = (data.get("hierarchy") or {}).get("capacities") or {}
    for fig in b.figures:
        for ref in fig.references:
            where = f"figure {fig.id!r} panel {ref['panel']!r}"
            if ref["orientation"] == "vertical":
                if fig.id == "bandwidth" and not any(isinstance(v, float) and math.isclose(v, ref["value"], rel_tol=1e-9)
                                                     for v in caps.values()):
                    out.append(f"{where}: a level edge at {ref['value']:.0f} B that is no capacity of the hierarchy")
                continue
            texts = [ref["label"]] if ref["label"] else [t["text"] for t in ref["texts"] if t["color"] == ref["color"]]
            said = None
            for text in texts:
                m = RATE.search(text) or re.search(r"([\d,]+(?:\.\d+)?)$", text)
                if m and agrees(m[1], ref["value"] / TO_TABLE_UNIT.get(m.groups()[-1] if len(m.groups()) > 1 else "",
                                                                       ("", 1.0))[1], rel=5e-4):
                    said = text
            if said is None:
                if any(RATE.search(t) for t in texts) or ref["label"] or (fig.id == "roofline" and ref["orientation"] == "diagonal"):
                    out.append(f"{where}: a {ref['orientation']} line at {ref['value']:,.1f} whose label "
                               f"({'; '.join(texts) or 'none'}) does not give that value")
                continue
            unit = (RATE.search(said) or [None, None, None])[2]
            unit, scale = TO_TABLE_UNIT.get(unit, (unit, 1.0)) if unit else (None, 1.0)
            named = [t for t in table if re.search(rf"(^|\W){re.escape(t[0])}(\W|$)", said)
                     and math.isclose(t[1], ref["value"], rel_tol=5e-4) and (unit is None or t[2] == unit)]
            if not named:
                out.append(f"{where}: {said!r} is no ceiling of the tables with that name, value and unit")
                continue
            # The panel's kernels: the ceilings their optimality rows are bounded by must be what it draws.
            kernel = fig.id[len("kernel_"):] if fig.id.startswith("kernel_") else None
            if kernel and any(t[0] != MEMCPY_BASELINE for t in named):
                tokens = _panel_tokens(ref["panel"])
                rows = [r for r in opt if r["kernel"] == kernel and tokens <= set(r["size"].split())]
                used = {r["limiter"] for r in rows if r.get("limiter")}
                if used and not any(t[0] in used for t in named):
                    out.append(f"{where}: draws {said!r}, while the tables bound this panel's problems by "
                               f"{', '.join(sorted(used))}")
                elif used and any(t[0] in used for t in named):
                    roof = {c["name"]: c["value"] for c in (data.get("roofline") or {}).get("ceilings", []) if c["measured"]}
                    n = next(t[0] for t in named if t[0] in used)
                    if n in roof and not math.isclose(roof[n], ref["value"], rel_tol=5e-4):
                        out.append(f"{where}: draws {n} at {ref['value']:,.0f} ({said!r}); the optimality table bounds "
                                   f"this panel's problems by the measured {n} {roof[n]:,.0f}")
    return out


def check_roofline_roofs(b: Built, ctx: dict) -> List[Finding]:
    return [f for fig in b.figures if fig.id == "roofline" for f in _roofline_panels(fig, b.data)]


def _roofline_panels(fig: plots.Figure, data: dict) -> List[Finding]:
    """Every ceiling a kernel's optimality rows are bounded by (their limiters) is a roof of its panel; the
    memory roofs end at the highest measured compute roof drawn there, not at a roof no line shows."""
    out = []
    measured = {c["name"]: c["value"] for c in (data.get("roofline") or {}).get("ceilings", []) if c["measured"]}
    for kernel in sorted({r["kernel"] for r in data.get("optimality") or []}):
        refs = [r for r in fig.references if r["panel"].startswith(f"{kernel}:")]
        if not refs:
            continue
        used = {r["limiter"] for r in data["optimality"] if r["kernel"] == kernel and r.get("limiter")}
        for name in sorted(used):
            if name in measured and not any(math.isclose(r["value"], measured[name], rel_tol=5e-4) for r in refs):
                out.append(f"figure 'roofline' panel {kernel!r}: no roof for {name} ({measured[name]:,.0f}), which "
                           f"bounds {kernel}'s rows in the optimality table")
        roofs = [r["value"] for r in refs if r["orientation"] == "horizontal"
                 and any(math.isclose(r["value"], v, rel_tol=5e-4) for v in measured.values())]
        caps = {r["cap"] for r in refs if r["orientation"] == "diagonal" and r.get("cap")}
        for cap in sorted(caps):
            if not roofs or not math.isclose(cap, max(roofs), rel_tol=5e-4):
                out.append(f"figure 'roofline' panel {kernel!r}: the memory roofs end at {cap:,.0f} GFLOP/s, not at the "
                           f"highest measured roof drawn there ({max(roofs):,.0f})" if roofs else
                           f"figure 'roofline' panel {kernel!r}: the memory roofs end at {cap:,.0f} GFLOP/s, and no "
                           "measured compute roof is drawn")
    return out


CHECKS: Dict[str, Tuple[Check, str]] = {
    "summary": (check_summary, "every number in the Summary re-derived from the device profile"),
    "above_bound": (check_above_bound, "no figure above 100 % of a bound or theoretical value without a reason"),
    "one_clock": (check_one_clock, "a rate and its % of a per-clock peak use one clock"),
    "whole_counts": (check_whole_counts, "TLB entries, banks and levels are whole numbers"),
    "glossary": (check_glossary, "every name or code in a table is defined in the glossary"),
    "same_ceilings": (check_same_ceilings, "compare, fleet and the report use the same ceilings"),
    "figure_references": (check_figure_references, "every reference line of a figure is a ceiling its tables use"),
    "roofline_roofs": (check_roofline_roofs, "each roofline panel draws its kernels' limiters; memory roofs end at "
                       "the highest measured roof"),
}


def run(b: Built, fleet_figures: Sequence[FL.FigureSpec] = (), only: Optional[Sequence[str]] = None
        ) -> Dict[str, List[Finding]]:
    ctx = {"fleet_figures": list(fleet_figures)}
    return {name: fn(b, ctx) for name, (fn, _what) in CHECKS.items() if only is None or name in only}


def to_text(found: Dict[str, List[Finding]], title: str = "") -> str:
    lines = [f"# report audit{': ' + title if title else ''}", ""]
    for name, findings in found.items():
        lines.append(f"- {name} ({CHECKS[name][1]}): " + ("pass" if not findings else f"FAIL, {len(findings)} finding(s)"))
        lines += [f"    - {f}" for f in findings]
    failed = sum(1 for f in found.values() if f)
    lines += ["", f"{len(found) - failed} of {len(found)} checks pass."]
    return "\n".join(lines) + "\n"
