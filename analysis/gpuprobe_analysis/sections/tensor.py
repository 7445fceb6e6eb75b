"""Tensor cores (families exec.tensor and exec.tensor_latency; docs/probes.md#tensor-cores): one measured
ceiling per tensor type ("BF16 tensor", ...) for the roofline and the summary, each with the clock and
board power it ran at and its fraction of the dense per-clock peak at that clock; the throughput of every
instruction form on random and zero operands; wgmma throughput and latency against N.

Which type an entry measures comes from its family record (`compute` by precision), its units and method
from the record as well; nothing here repeats them."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .. import families as F
from ..gpu_specs import GpuSpec, find_gpu_of
from ..results import Entry
from ..roofline import max_sm_clock, plausible_clock
from . import AnalysisInputs, FamilySection, register

THROUGHPUT = "exec.tensor"
LATENCY = "exec.tensor_latency"
FORM_AXES = ("instr", "precision", "acc", "a", "m", "n", "k")


def _form(e: Entry) -> str:
    instr = F.text(e, "instr") or "?"
    shape = f"m{int(F.num(e, 'm'))}n{int(F.num(e, 'n'))}k{int(F.num(e, 'k'))}"
    a = F.text(e, "a")
    where = "" if instr == "mma" else (", A in registers" if a == "reg" else ", A in smem")
    return f"{instr}.{shape} {F.text(e, 'precision')}->{F.text(e, 'acc')}{where}"


def _shape(e: Entry) -> str:
    """An instruction's full tile shape, "m16n8k4": the f64 mma.sync forms share N = 8 and differ in M and K."""
    return f"m{int(F.num(e, 'm'))}n{int(F.num(e, 'n'))}k{int(F.num(e, 'k'))}"


def _rate_unit(e: Entry) -> str:
    """Integer types' rates are operations, not floating-point ones: INT8's tera-rate is TOPS."""
    return "TOPS" if (F.text(e, "precision") or "").startswith(("s", "u")) else "TFLOP/s"


def _finite(v: float) -> Optional[float]:
    return v if v is not None and math.isfinite(v) else None


def _ratio(value: float, of: Optional[float]) -> Optional[float]:
    return value / of if of is not None and math.isfinite(value) and math.isfinite(of) and of > 0 else None


@dataclass
class FormRow:
    ceiling: str
    form: str
    data: str
    gflops: float
    per_clock: Optional[float]
    # Two fractions of the dense peak, never mixed in one line (docs/analysis.md, "Tensor cores"):
    fraction: Optional[float]       # per SM while busy: the median SM's FLOP per clock over its own busy
    #                                 span / the dense per-clock peak (the entry's fraction_of_theoretical)
    chip_fraction: Optional[float]  # whole chip over wall time: the entry's rate / (dense per-clock peak x
    #                                 SMs x the entry's clock) (its theoretical_gflops_at_kernel_clock)
    peak_at_clock: Optional[float]  # that denominator, GFLOP/s
    clock_mhz: Optional[float]
    power_w: Optional[float]
    warps: Optional[float]
    min_warps: Optional[float]
    premise: Optional[str]
    entry: Entry


@dataclass
class TensorCeiling:
    name: str                 # "BF16 tensor"
    gflops: float             # random operands: what real data gets
    row: FormRow
    zero: Optional[FormRow]   # the same form on zero operands
    datasheet_gflops: Optional[float]  # dense per-clock peak x SMs x the entry's own clock


@dataclass
class Tensor:
    ceilings: Dict[str, TensorCeiling]
    rows: List[FormRow]
    failed: List[FormRow]                    # premise failed: never a ceiling
    n_curves: Dict[str, List[FormRow]]       # wgmma, random, per type/acc/A: throughput against N
    latency: Dict[str, List[Entry]]          # per form without N: latency entries against N
    method: str
    latency_method: str
    notes: List[str] = field(default_factory=list)


def _peak_per_clock(spec: Optional[GpuSpec], e: Entry) -> Optional[float]:
    """The datasheet's dense per-clock peak of the entry's type and accumulator (gpu_specs), None for a GPU
    or type the table lacks."""
    if spec is None:
        return None
    return spec.peak_per_clock(F.text(e, "precision") or "", F.text(e, "acc") or "")


def _row(e: Entry, ceiling: str, spec: Optional[GpuSpec], max_mhz: Optional[float] = None) -> FormRow:
    per_clock, peak = _finite(e.num("flops_per_clk_per_sm")), _peak_per_clock(spec, e)
    # The whole chip's dense peak at the entry's own clock, from the same datasheet table (none for a GPU
    # the table lacks): the denominator of the chip / wall-time fraction. A clock above the GPU's maximum
    # is a failed reading: none (analyze() says which).
    clock = _finite(e.num("sm_clock_kernel_mhz"))
    clock = clock if clock is not None and plausible_clock(clock, max_mhz) else None
    at_clock = peak * spec.sm_count * clock / 1e3 if peak and clock and spec is not None else None
    return FormRow(ceiling=ceiling, form=_form(e), data=F.text(e, "data") or "?", gflops=e.value,
                   per_clock=per_clock, fraction=per_clock / peak if per_clock and peak else None,
                   chip_fraction=_ratio(e.value, at_clock), peak_at_clock=at_clock,
                   clock_mhz=clock, power_w=_finite(e.num("power_w")),
                   warps=_finite(e.num("warps_per_sm")), min_warps=_finite(e.num("min_warps_per_sm")),
                   premise=e.premise, entry=e)


# Forms within this share of the best rate per clock saturate the tensor pipe; which of them ran fastest
# per second is then the clock's doing (each entry runs at the clock its power allowed), so the ceiling is
# their median, not their maximum.
SATURATED = 0.97


def _ceiling_row(random_rows: List[FormRow]) -> Optional[FormRow]:
    """The row whose rate is the ceiling: the median rate (per second) of the forms that saturate the pipe
    per clock; without per-clock figures (an unknown peak), the fastest form."""
    if not random_rows:
        return None
    per_clock = [r for r in random_rows if r.per_clock]
    if not per_clock:
        return max(random_rows, key=lambda r: r.gflops)
    best = max(r.per_clock for r in per_clock)
    saturated = sorted((r for r in per_clock if r.per_clock >= SATURATED * best), key=lambda r: r.gflops)
    return saturated[(len(saturated) - 1) // 2]  # the lower median: an entry's own figure, never a mean


def analyze(inputs: AnalysisInputs) -> Optional[Tensor]:
    rs = inputs.rs
    thr, record = rs.by_family(THROUGHPUT), rs.record(THROUGHPUT)
    if not thr or record is None:
        return None
    rows, failed, notes = [], [], []
    spec = find_gpu_of(rs)  # None: no % of theoretical (the inputs' notes say why)
    top = max_sm_clock(rs)
    implausible = []
    for e in thr:
        ceiling = record.compute_ceiling(F.text(e, "precision"))
        if ceiling is None or not math.isfinite(e.value):
            continue
        r = _row(e, ceiling, spec, top)
        k = _finite(e.num("sm_clock_kernel_mhz"))
        if k is not None and r.clock_mhz is None:
            implausible.append((k, r.form))
        (failed if r.premise == "failed" else rows).append(r)
    by_form = {(r.ceiling, r.form, r.data): r for r in rows}
    ceilings: Dict[str, TensorCeiling] = {}
    for name in sorted({r.ceiling for r in rows}):
        ref = _ceiling_row([r for r in rows if r.ceiling == name and r.data == "random"])
        if ref is not None:
            peak, sms = _peak_per_clock(spec, ref.entry), rs.context_number("gpu_sm_count")
            datasheet = peak * sms * ref.clock_mhz * 1e-3 if peak and ref.clock_mhz and math.isfinite(sms) else None
            ceilings[name] = TensorCeiling(name, ref.gflops, ref, by_form.get((name, ref.form, "zero")), datasheet)
    if implausible:
        lo, hi = min(k for k, _ in implausible), max(k for k, _ in implausible)
        forms = sorted({f for _, f in implausible})
        notes.append(f"{len(implausible)} entries read their in-kernel SM clock at {lo:,.0f}-{hi:,.0f} MHz, above the "
                     f"GPU's maximum of {top:,.0f} MHz: a failed reading, not used (no clock, and no fraction of the "
                     f"dense peak at that clock, for {', '.join(forms[:4])}{' ...' if len(forms) > 4 else ''})")
    for c in ceilings.values():  # a rate above the peak at the GPU's highest clock cannot be: said, per ceiling
        peak, sms = _peak_per_clock(spec, c.row.entry), rs.context_number("gpu_sm_count")
        if peak and top and math.isfinite(sms) and c.gflops > peak * sms * top * 1e-3:
            notes.append(f"{c.name} {c.gflops / 1e3:,.1f} TFLOP/s is above the dense peak at the GPU's maximum clock "
                         f"({peak * sms * top * 1e-6:,.1f} TFLOP/s at {top:,.0f} MHz, the datasheet's per-clock figure "
                         f"x {sms:.0f} SMs): the timing or the clock of its entry is off; the figure is suspect")
    if failed:
        notes.append(f"{len(failed)} tensor entries failed their premise (the tensor pipe's instruction count "
                     "differs from the entry's): none is a ceiling")
    curves: Dict[str, List[FormRow]] = {}
    for r in rows:
        if r.data == "random" and F.text(r.entry, "instr") == "wgmma":
            key = f"{F.text(r.entry, 'precision')}->{F.text(r.entry, 'acc')}, A in {F.text(r.entry, 'a')}"
            curves.setdefault(key, []).append(r)
    for v in curves.values():
        v.sort(key=lambda r: F.num(r.entry, "n"))
    lat: Dict[str, List[Entry]] = {}
    for e in rs.by_family(LATENCY):
        if math.isfinite(e.value):
            key = f"{F.text(e, 'instr')} {F.text(e, 'precision')}->{F.text(e, 'acc')}" + (
                f", A in {F.text(e, 'a')}" if F.text(e, "instr") == "wgmma" else "")
            lat.setdefault(key, []).append(e)
    for v in lat.values():
        v.sort(key=lambda e: F.num(e, "n"))
    lat_record = rs.record(LATENCY)
    order = sorted(rows, key=lambda r: (r.ceiling, r.form, r.data))
    return Tensor(ceilings=dict(sorted(ceilings.items())), rows=order, failed=failed, n_curves=curves, latency=lat,
                  method=record.method, latency_method=lat_record.method if lat_record else "", notes=notes)


def ceilings(an: Tensor) -> List[dict]:
    """The roofline's tensor roofs: measured (random operands), and the datasheet's dense per-clock peak at
    the same entry's clock (dashed)."""
    out = []
    for c in an.ceilings.values():
        how = (f"{THROUGHPUT} {c.row.form}, random operands, {c.row.clock_mhz or float('nan'):.0f} MHz"
               + (f", {c.row.power_w:.0f} W" if c.row.power_w else "") + f" (premise {c.row.premise or 'not checked'})")
        out.append({"name": c.name, "gflops": c.gflops, "measured": True, "how": how,
                    "source": F.provenance([c.row.entry]), "cv": _finite(c.row.entry.cv)})
        if c.datasheet_gflops:
            out.append({"name": c.name, "gflops": c.datasheet_gflops, "measured": False,
                        "how": "dense per-clock peak (datasheet / SMs / boost clock) x SMs x the entry's clock"})
    return out


def _pct(v: Optional[float]) -> str:
    return f"{100 * v:.1f} %" if v is not None else "–"


def _num(v: Optional[float], fmt: str = ",.0f") -> str:
    return format(v, fmt) if v is not None else "–"


def content(an: Tensor, figdir: str) -> dict:
    from .. import plots  # matplotlib only when the report draws
    ceiling_rows = []
    for c in an.ceilings.values():
        z = c.zero
        ceiling_rows.append([c.name, c.row.form, _num(c.gflops / 1e3, ",.1f"), _num(c.row.clock_mhz),
                             _num(c.row.power_w), _pct(c.row.chip_fraction), _pct(c.row.fraction),
                             _num(z.gflops / 1e3, ",.1f") if z else "–", _num(z.clock_mhz) if z else "–",
                             _num(z.power_w) if z else "–", _pct(z.chip_fraction) if z else "–",
                             c.row.premise or "not checked"])
    form_rows = [[r.ceiling, r.form, r.data, _num(r.gflops / 1e3, ",.1f"), _pct(r.chip_fraction), _num(r.per_clock),
                  _pct(r.fraction), _num(r.clock_mhz), _num(r.power_w), _num(r.warps), _num(r.min_warps),
                  r.premise or "not checked"]
                 for r in an.rows]
    failed_rows = [[r.form, r.data, _num(r.gflops / 1e3, ",.1f"), r.entry.premise_why or ""] for r in an.failed]
    n_fig = plots.simple_xy([(k, [F.num(r.entry, "n") for r in v], [r.gflops / 1e3 for r in v], [r.entry for r in v])
                             for k, v in an.n_curves.items()], "tensor_n", "wgmma throughput against N (random operands)",
                            "N (columns of the instruction's tile)", "TFLOP/s (INT8: TOPS)", figdir,
                            "Median of each entry's samples at the sweep's best warpgroups per SM.", logx=True)
    # Against N only the forms whose shapes differ in N (the wgmma ones); the f64 mma.sync shapes all have N = 8.
    lat_fig = plots.simple_xy([(k, [F.num(e, "n") for e in v], [e.value for e in v], v)
                               for k, v in an.latency.items() if len({F.num(e, "n") for e in v}) == len(v) > 1],
                              "tensor_latency",
                              "wgmma latency against N", "N (columns of the instruction's tile)", "cycles", figdir,
                              "One warpgroup, each instruction waiting for the one before.", logx=True)
    lat_rows = latency_rows(an)
    return {"method": an.method, "latency_method": an.latency_method, "ceiling_rows": ceiling_rows,
            "form_rows": form_rows, "failed_rows": failed_rows, "n_figure": n_fig, "latency_figure": lat_fig,
            "latency_rows": lat_rows, "notes": an.notes,
            "has_peak": any(r.fraction is not None or r.chip_fraction is not None for r in an.rows)}


def latency_rows(an: Tensor) -> List[list]:
    """Per form, its latency at each tile shape, labelled by the full shape (not N alone)."""
    return [[k, ", ".join(f"{_shape(e)}: {e.value:.1f}" for e in v)] for k, v in an.latency.items()]


def to_json(an: Tensor) -> dict:
    from ..profile_results import to_json as jsonable  # NaN becomes null

    def row(r: FormRow) -> dict:
        return {"form": r.form, "data": r.data, "gflops": r.gflops, "flops_per_clk_per_sm": r.per_clock,
                "fraction_of_dense_peak_chip_wall_time": r.chip_fraction,
                "fraction_of_dense_peak_per_sm_busy": r.fraction, "sm_clock_mhz": r.clock_mhz, "power_w": r.power_w,
                "warps_per_sm": r.warps, "min_warps_per_sm": r.min_warps, "premise": r.premise,
                "entry": r.entry.name}
    return jsonable({
        "ceilings": {c.name: {"gflops": c.gflops, "unit": "GOP/s" if _rate_unit(c.row.entry) == "TOPS" else "GFLOP/s",
                              "datasheet_gflops_at_clock": c.datasheet_gflops,
                              "random": row(c.row), "zero": row(c.zero) if c.zero else None}
                     for c in an.ceilings.values()},
        "forms": [row(r) for r in an.rows], "failed_premise": [row(r) for r in an.failed],
        "latency_cycles": {k: {_shape(e): e.value for e in v} for k, v in an.latency.items()}})


def summary(an: Tensor) -> List[dict]:
    rows = []
    for c in an.ceilings.values():
        r = c.row
        at = f" at {r.clock_mhz:,.0f} MHz" if r.clock_mhz else ""
        power = f", {r.power_w:,.0f} W" if r.power_w else ""
        unit = _rate_unit(r.entry)
        # One definition in the line: the rate is the whole chip's over wall time, so is its fraction.
        of_peak = (f" = {100 * r.chip_fraction:.1f} % of the dense peak at that clock ({r.peak_at_clock / 1e3:,.1f} "
                   f"{unit}; whole chip over wall time)" if r.chip_fraction else "")
        zero = (f"; zeros {c.zero.gflops / 1e3:,.1f} {unit} at {c.zero.clock_mhz:,.0f} MHz"
                if c.zero and c.zero.clock_mhz else "")
        premise = f"; premise {r.premise}" + (f" ({r.entry.num('premise_ratio'):.3f}x counted)"
                                              if math.isfinite(r.entry.num("premise_ratio")) else "")
        rows.append({"figure": c.name, "value": f"{c.gflops / 1e3:,.1f} {unit}{at}{power}{of_peak}{zero}",
                     "how": f"{THROUGHPUT} {r.form}, random operands{premise}"})
    return rows


def headline(an: Tensor) -> Optional[str]:
    if not an.ceilings:
        return None
    parts = [f"{c.name} {c.gflops / 1e3:,.0f} {_rate_unit(c.row.entry)}" for c in an.ceilings.values()]
    return "Tensor cores (random operands): " + ", ".join(parts) + "."


TEMPLATE = """
{%- call d.p() %}Method: {{ section.method }}. Each ceiling is, among the forms of its type that saturate the tensor pipe per clock
(within 3 % of the best on random operands), the one of median rate: which of them ran fastest per second
is the clock's doing. Its clock and board power are those of its own samples.{% if section.has_peak %} Two fractions of the dense peak, each
its own column: "of peak, chip" = its rate (the whole chip over the wall time) / (the dense per-clock peak x SMs x
its clock): the figure the rate is held to; "of peak, per SM busy" = the median SM's FLOP per clock over its own
busy span (clock64, first block start to last block end) / the dense per-clock peak (the entry's
fraction_of_theoretical): what the pipe does while it runs, without the grid's ramp and tail. The dense
per-clock peak is the datasheet's dense rate over SMs and boost clock.{% endif %}{% endcall %}
{%- call d.table(["ceiling", "form", "TFLOP/s (INT8: TOPS)", "MHz", "W", "of peak, chip", "of peak, per SM busy", "zeros: same unit", "MHz", "W", "of peak, chip", "premise"]) %}{{ d.rows(section.ceiling_rows) }}{% endcall %}
{%- for n in section.notes %}{% call d.p() %}{{ n }}{% endcall %}{% endfor %}
{{- d.figure(figs.place(section.n_figure)) }}
{%- call d.p() %}Latency: {{ section.latency_method }}.{% endcall %}
{%- call d.table(["form", "cycles per instruction, by tile shape (mMnNkK)"]) %}{{ d.rows(section.latency_rows) }}{% endcall %}
{{- d.figure(figs.place(section.latency_figure)) }}
{%- if section.failed_rows %}{% call d.p() %}Entries whose premise failed (not ceilings):{% endcall %}
{%- call d.table(["form", "data", "TFLOP/s (INT8: TOPS)", "why"]) %}{{ d.rows(section.failed_rows) }}{% endcall %}{% endif %}
{%- call d.p() %}Every form:{% endcall %}
{%- call d.table(["ceiling", "form", "data", "TFLOP/s (INT8: TOPS)", "of peak, chip", "FLOP/clk/SM busy", "of peak, per SM busy", "MHz", "W", "warps/SM", "min warps/SM", "premise"]) %}{{ d.rows(section.form_rows) }}{% endcall %}
"""

SECTION = register(FamilySection(
    id="tensor", title="Tensor cores", families=(THROUGHPUT, LATENCY), after=("execution",),
    analyze=analyze, content=content, to_json=to_json, summary=summary, headline=headline, template=TEMPLATE,
    ceilings=ceilings))
