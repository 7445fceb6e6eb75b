"""Fleet mode: many result files, one per GPU (gpuprobe --preset=fleet, one process per GPU), compared
GPU against GPU of the same model; the slow or faulty ones are named with the figure that shows it.

Which figures: the preset's own declaration, which the binary writes into each result file's context
(`gpuprobe_preset`, microbench/harness/fleet.cpp): for each figure its family, the axis values of its
entry, which entry of a sweep it takes (largest or smallest value of an axis, the worst one over an
axis such as the P2P neighbour, or the level ceiling the report's code derives from the sweep:
ceilings.ceiling_of, premise rules included), the counter it reads (value_median or a rate such as gflops) and its
tolerance. The direction of "worse" is the family record's `better` for value_median, else the
declaration's (a rate or a clock: higher; a time: lower).

Per model (`gpu_name`) and figure: median, MAD and the robust z of each GPU,
  z = (value - median) / max(1.4826 x MAD, SPREAD_FLOOR x |median|),
signed so that a positive z is worse. A GPU is flagged for a figure when z > z_threshold (default 3.5,
Iglewicz & Hoaglin's cut for outliers) and it is worse than the model's median by more than the
figure's tolerance; both must hold, so that neither a tight fleet's harmless 1 % nor a wide fleet's
noise flags a GPU. Models with fewer than MIN_WITHIN GPUs are not compared within (too few for a
median to mean anything); an optional reference (another run on a GPU of the same model, e.g.
reports/h100) gives absolute floors at `floor_fraction` x its figures (for a lower-is-better figure:
its figure / floor_fraction: a ceiling), as DCGM's diagnostics set theirs at about 0.75 x a reference run;
a figure whose declared tolerance is wide (launches, transfers: the host's share) at most 1 - 2 x that
tolerance (launch rate, 20 %: 0.6). A FILE.partial too short to hold its context is a GPU of unknown
identity flagged incomplete; the others are judged.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import ceilings as C
from . import results

PRESET_CONTEXT_KEY = "gpuprobe_preset"
MAD_TO_SIGMA = 1.4826  # MAD x this = the standard deviation of a normal distribution
# A quantized figure (clocks at exactly 1980 MHz on every GPU) has MAD 0: the spread is taken as at
# least this fraction of the median, so that z stays finite and meaningful.
SPREAD_FLOOR = 0.005
MIN_WITHIN = 8  # GPUs of one model needed to compare them with each other
DEFAULT_Z = 3.5
DEFAULT_FLOOR_FRACTION = 0.75
UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class FigureSpec:
    """One figure of the preset, as the binary declares it (docs/fleet.md)."""
    name: str
    family: str
    axes: Tuple[Tuple[str, str], ...]
    pick_axis: str  # "" when the axes name one entry
    take: str  # "max" | "min" (by the pick axis' value) | "worst" (by the figure over the pick axis)
    field: str  # "value_median" or a counter of the entry
    unit: str
    better: str  # the declaration's; the family record's wins for value_median
    tolerance_pct: float
    phase: str  # "together" | "apart"

    @staticmethod
    def from_json(d: dict) -> "FigureSpec":
        pick = d.get("pick") or {}
        return FigureSpec(str(d["figure"]), str(d["family"]),
                          tuple((str(k), str(v)) for k, v in dict(d.get("axes") or {}).items()),
                          str(pick.get("axis", "")), str(pick.get("take", "")), str(d.get("field", "value_median")),
                          str(d.get("unit", "")), str(d.get("better", "higher")), float(d.get("tolerance_pct", 5)),
                          str(d.get("phase", "")))


def parse_preset(text: Optional[str]) -> Tuple[List[FigureSpec], str]:
    """The figures of a `gpuprobe_preset` context value, and "" or why it could not be read."""
    if not text:
        return [], "absent"
    try:
        doc = json.loads(text)
        return [FigureSpec.from_json(d) for d in doc["figures"]], ""
    except (ValueError, KeyError, TypeError) as exc:
        return [], f"unreadable ({type(exc).__name__}: {exc})"


@dataclass
class Gpu:
    """One GPU: its identity from its result file's context and its figures."""
    file: str
    host: str
    uuid: str
    serial: str
    pci_bus_id: str
    model: str
    context: Dict[str, str]
    complete: bool
    incomplete_reason: str = ""
    values: Dict[str, float] = field(default_factory=dict)  # figure -> value
    entries: Dict[str, str] = field(default_factory=dict)  # figure -> entry name it came from
    reasons: List[dict] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    worst_z: float = -math.inf  # the largest "worse" z over its figures (sorting)

    @property
    def key(self) -> str:
        if self.uuid and self.uuid != UNAVAILABLE:
            return self.uuid
        if self.pci_bus_id:
            return f"{self.host}/{self.pci_bus_id}"
        return self.file

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


def _known(v: Optional[str]) -> str:
    return v if v else UNAVAILABLE


def _axis_matches(value: Optional[str], wanted: str, device: str) -> bool:
    if value is None:
        return False
    if wanted == "<device>":
        wanted = device
    if value == wanted:
        return True
    try:  # a numeric axis written 16 in one place and 16.0 in another
        return float(value) == float(wanted)
    except ValueError:
        return False


def _entry_value(e: results.Entry, spec: FigureSpec) -> float:
    v = e.counters.get(spec.field)
    return float(v) if v is not None and math.isfinite(v) else math.nan


def better_of(spec: FigureSpec, entry: Optional[results.Entry]) -> str:
    """'higher' or 'lower': the family record's for its figure (value_median), else the declaration's."""
    if spec.field == "value_median" and entry is not None and entry.record is not None:
        return entry.record.better
    return spec.better


LATENCY_FAMILY = "memory.latency"


def _number(v) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def figure(entries: Sequence[results.Entry], spec: FigureSpec, device: str,
           context: Optional[Dict[str, str]] = None) -> Tuple[float, Optional[results.Entry], str]:
    """(value, entry, where it came from) of the figure among one GPU's entries, or (nan, None, "") when
    it has none. The report's premise rules hold here too (ceilings.qualifies): an entry that declares
    a premise counts only where its premise held, or, unchecked (a fleet run has no counters), holds by
    how its probe works; take "ceiling" is the report's ceiling over the sweep (ceilings.ceiling_of)."""
    context = context or {}
    cands = [e for e in entries if e.family == spec.family
             and all(_axis_matches(e.tag(k), v, device) for k, v in spec.axes)]
    cands = [e for e in cands if math.isfinite(_entry_value(e, spec))]
    serves = C.l2_serves_bytes(context)
    cands = [e for e in cands if not e.premise_level or C.qualifies(e, serves)]
    if not cands:
        return math.nan, None, ""
    if spec.take == "ceiling":
        ceiling = C.ceiling_of(cands, context)
        if ceiling is None:
            return math.nan, None, ""
        return ceiling.gbps, ceiling.entries[0], f"{ceiling.level} {ceiling.kind} ceiling: {ceiling.how}"
    if spec.pick_axis and spec.take in ("max", "min"):
        def axis_value(e):
            v = e.num(spec.pick_axis)
            return v if math.isfinite(v) else -math.inf if spec.take == "max" else math.inf
        e = (max if spec.take == "max" else min)(cands, key=axis_value)
        # The report's rule for a latency sweep (sections/hierarchy.py): a chase that stays inside the L2 the
        # driver reports never reached DRAM, so its largest footprint is no DRAM figure (a run cut short).
        l2 = _number(context.get("gpu_l2_bytes"))
        if spec.family == LATENCY_FAMILY and spec.pick_axis == "footprint" and l2 and axis_value(e) <= l2:
            return math.nan, None, ""
    elif spec.take == "worst":
        higher = better_of(spec, cands[0]) == "higher"
        e = (min if higher else max)(cands, key=lambda c: _entry_value(c, spec))
    else:
        e = cands[-1]
    return _entry_value(e, spec), e, e.name


def figure_value(entries: Sequence[results.Entry], spec: FigureSpec, device: str,
                 context: Optional[Dict[str, str]] = None):
    """(value, entry) of figure()."""
    v, e, _ = figure(entries, spec, device, context)
    return v, e


def expand(paths: Sequence[str]) -> List[str]:
    """Files as given; a folder gives its result files (*.json, *.json.gz, *.json.partial), recursively."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if re.search(r"\.json(\.gz|\.partial)?$", f) and f != "fleet.json":
                        full = os.path.join(root, f)
                        # FILE and FILE.partial: the complete one (results._resolve warns of the other).
                        if f.endswith(".partial") and os.path.exists(full[:-len(".partial")]):
                            continue
                        out.append(full)
        else:
            out.append(p)
    return out


@dataclass
class FleetInput:
    gpus: List[Gpu]
    figures: List[FigureSpec]
    issues: List[results.Issue]
    rejected: List[str]
    # Per figure, 'higher' or 'lower' is better: the family record's (value_median) as the entries the
    # figure took carry it, else the declaration's.
    better: Dict[str, str] = field(default_factory=dict)


def load(paths: Sequence[str]) -> FleetInput:
    """Every file alone (files of different GPUs must never merge, as results.load would do for one
    device); the figures are the union of the files' preset declarations, in declaration order."""
    rs = results.ResultSet()
    files = expand(paths)
    unreadable: List[Gpu] = []
    for p in files:
        if results.read_one(p, rs) is None and p.endswith(".partial") and p in rs.rejected:
            # A rank stopped before it wrote its context (an empty FILE.partial): a GPU whose run did not
            # finish, not an unusable input; its identity is unknown, so it is its file.
            rs.rejected.remove(p)
            unreadable.append(Gpu(file=p, host=UNAVAILABLE, uuid=UNAVAILABLE, serial=UNAVAILABLE, pci_bus_id="",
                                  model=UNAVAILABLE, context={}, complete=False,
                                  incomplete_reason="empty or unreadable FILE.partial: the rank stopped before it "
                                                    "wrote its context and entries"))
    figures: Dict[str, FigureSpec] = {}
    for f in rs.files:
        specs, why = parse_preset(f.context.get(PRESET_CONTEXT_KEY))
        if why and why != "absent":
            rs.error(f.path, f"{PRESET_CONTEXT_KEY} {why}")
        for s in specs:
            if s.name in figures and figures[s.name] != s:
                rs.warn(f.path, f"declares figure {s.name!r} otherwise than an earlier file (another gpuprobe "
                        "version?); the first declaration is used")
            figures.setdefault(s.name, s)
    missing = [f.path for f in rs.files if PRESET_CONTEXT_KEY not in f.context]
    if missing and figures:
        rs.warn(missing[0], f"{len(missing)} file(s) not run with --preset=fleet (no {PRESET_CONTEXT_KEY}); "
                "their figures are taken by the other files' declaration")
    gpus = []
    better: Dict[str, str] = {}
    for f in rs.files:
        c = f.context
        g = Gpu(file=f.path, host=_known(c.get("host_name")), uuid=_known(c.get("gpu_uuid")),
                serial=_known(c.get("gpu_serial")), pci_bus_id=_known(c.get("gpu_pci_bus_id")),
                model=c.get("gpu_name") or UNAVAILABLE, context=c, complete=f.complete,
                incomplete_reason=f.incomplete_reason)
        device = c.get("gpu_index", "0")
        for spec in figures.values():
            v, e = figure_value(f.entries, spec, device, c)
            if e is not None:
                g.values[spec.name] = v
                g.entries[spec.name] = e.name
                b = better_of(spec, e)
                if better.setdefault(spec.name, b) != b:
                    rs.warn(f.path, f"its record says {b} is better for {spec.name}, an earlier file's the opposite; "
                            "the first is used")
        gpus.append(g)
    for spec in figures.values():
        better.setdefault(spec.name, spec.better)
    return FleetInput(_deduplicate(gpus, rs) + unreadable, list(figures.values()), rs.issues, rs.rejected, better)


def _deduplicate(gpus: List[Gpu], rs: results.ResultSet) -> List[Gpu]:
    """One result per GPU: of several files of one GPU (a re-run), the latest by the context's date."""
    by_key: Dict[str, List[Gpu]] = {}
    for g in gpus:
        by_key.setdefault(g.key, []).append(g)
    out = []
    for key, gs in by_key.items():
        if len(gs) > 1:
            gs.sort(key=lambda g: g.context.get("date", ""))
            rs.warn(gs[-1].file, f"{len(gs)} files of GPU {key} ({', '.join(g.file for g in gs)}); the latest "
                    "by date is used")
        out.append(gs[-1])
    return out


@dataclass
class FigureStats:
    model: str
    figure: str
    unit: str
    better: str
    n: int
    median: float
    mad: float
    scale: float  # the spread z divides by


def _worse_z(value: float, median: float, scale: float, better: str) -> float:
    z = (value - median) / scale
    return -z if better == "higher" else z


def _worse_pct(value: float, reference: float, better: str) -> float:
    """How much worse than the reference, in percent (negative: better)."""
    rel = value / reference - 1.0
    return 100.0 * (-rel if better == "higher" else rel)


def _fmt(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def reference_figures(paths: Sequence[str], figures: Sequence[FigureSpec]):
    """(model, models, {figure: (value, where it came from, better)}, result set) of a reference run: a
    main job's folder (results.json and the premise and counter runs beside it, as the report reads
    them: results.result_paths, so that the premises the counters checked count here as there), else
    every result file in it, merged as one device."""
    chosen: List[str] = []
    for p in paths:
        if os.path.isdir(p) and results.folder_result_files(p):
            chosen += results.folder_result_files(p)
        elif os.path.isdir(p):
            chosen += expand([p])
        else:
            chosen.append(p)
    rs = results.load(chosen)
    models = sorted({f.context.get("gpu_name", UNAVAILABLE) for f in rs.files})
    ctx = rs.context
    device = ctx.get("gpu_index", "0")
    out = {}
    for spec in figures:
        v, e, source = figure(rs.entries, spec, device, ctx)
        if e is not None:
            out[spec.name] = (v, source, better_of(spec, e))
    return (models[0] if len(models) == 1 else None), models, out, rs


@dataclass
class Criteria:
    z: float = DEFAULT_Z
    floor_fraction: float = DEFAULT_FLOOR_FRACTION
    min_within: int = MIN_WITHIN


def analyze(inp: FleetInput, criteria: Criteria, reference=None) -> dict:
    """Flags the GPUs (their `reasons`) and returns the statistics per model and figure."""
    stats: Dict[Tuple[str, str], FigureStats] = {}
    models: Dict[str, List[Gpu]] = {}
    for g in inp.gpus:
        if g.context:  # an unreadable file has no model to be compared within
            models.setdefault(g.model, []).append(g)
    notes: List[str] = []
    for model, gs in sorted(models.items()):
        within = len(gs) >= criteria.min_within
        if not within:
            notes.append(f"{model}: {len(gs)} GPU(s), fewer than {criteria.min_within}: not compared with each "
                         "other" + (" (reference floors only)" if reference else " (give --reference for floors)"))
        for spec in inp.figures:
            have = [g for g in gs if spec.name in g.values]
            if not have:
                continue
            vals = np.fromiter((g.values[spec.name] for g in have), float, len(have))
            med = float(np.median(vals))
            mad = float(np.median(np.abs(vals - med)))
            scale = max(MAD_TO_SIGMA * mad, SPREAD_FLOOR * abs(med), 1e-300)
            b = inp.better[spec.name]
            stats[(model, spec.name)] = FigureStats(model, spec.name, spec.unit, b, len(have), med, mad, scale)
            for g in gs:
                if spec.name not in g.values:
                    # Absent where most GPUs of its model have it: an entry that failed, a fault sign.
                    if within and 2 * len(have) > len(gs):
                        g.reasons.append({"kind": "missing", "figure": spec.name, "value": None, "unit": spec.unit,
                                          "model_median": med, "robust_z": None,
                                          "text": f"{spec.name}: no value (its entry failed or did not run), "
                                                  f"while {len(have)} of {len(gs)} {model} GPUs have one"})
                    continue
                v = g.values[spec.name]
                z = _worse_z(v, med, scale, b)
                g.worst_z = max(g.worst_z, z) if within else g.worst_z
                worse = _worse_pct(v, med, b)
                if within and z > criteria.z and worse > spec.tolerance_pct:
                    g.reasons.append({"kind": "fleet", "figure": spec.name, "value": v, "unit": spec.unit,
                                      "model_median": med, "robust_z": round(z, 2), "worse_pct": round(worse, 2),
                                      "better": b,
                                      "text": f"{spec.name} {_fmt(v)} {spec.unit}: {worse:.1f} % worse than the "
                                              f"{model} median {_fmt(med)} {spec.unit} (robust z {z:.1f})"})
    if reference is not None:
        ref_model, _, ref_values, _ = reference
        for g in inp.gpus:
            if g.model != ref_model:
                continue
            for spec in inp.figures:
                if spec.name not in g.values or spec.name not in ref_values:
                    continue
                ref, ref_entry, b = ref_values[spec.name]
                # A figure that varies more between healthy runs (its declared tolerance: launches and
                # transfers, which the host shares) gets a looser floor: at most 1 - 2 x its tolerance.
                fraction = min(criteria.floor_fraction, 1 - 2 * spec.tolerance_pct / 100)
                floor = ref * fraction if b == "higher" else ref / fraction
                v = g.values[spec.name]
                if (v < floor) if b == "higher" else (v > floor):
                    st = stats.get((g.model, spec.name))
                    z = _worse_z(v, st.median, st.scale, b) if st and st.n >= criteria.min_within else None
                    # Sorting: the robust z where the model is compared within, else how far (in %)
                    # it is worse than the reference.
                    g.worst_z = max(g.worst_z, z if z is not None else _worse_pct(v, ref, b))
                    bound = (f"below the floor {_fmt(floor)} ({fraction:g} x the reference's {_fmt(ref)}"
                             if b == "higher" else
                             f"above the ceiling {_fmt(floor)} (the reference's {_fmt(ref)} / {fraction:g}")
                    if fraction < criteria.floor_fraction:
                        bound += f", {fraction:g} = 1 - 2 x its {spec.tolerance_pct:g} % tolerance"
                    g.reasons.append({"kind": "floor", "figure": spec.name, "value": v, "unit": spec.unit,
                                      "floor": floor, "reference": ref, "fraction": fraction,
                                      "model_median": st.median if st else None,
                                      "robust_z": None if z is None else round(z, 2),
                                      "text": f"{spec.name} {_fmt(v)} {spec.unit} {bound}; model median "
                                              f"{_fmt(st.median) if st else 'n/a'}"
                                              + (f", robust z {z:.1f})" if z is not None else ")")})
    for g in inp.gpus:
        if not g.complete:
            g.reasons.append({"kind": "incomplete", "figure": None, "value": None, "model_median": None,
                              "robust_z": None, "text": f"incomplete result ({g.incomplete_reason}): the run on "
                                                        "this GPU did not finish"})
            g.worst_z = max(g.worst_z, math.inf)
        health = health_problems(g.context)
        if health:
            g.reasons.append({"kind": "health", "figure": None, "value": None, "model_median": None, "robust_z": None,
                              "text": "NVML: " + ", ".join(health)})
            g.worst_z = max(g.worst_z, math.inf)
        busy = g.context.get("gpu_idle_at_start", "")
        if busy.startswith("no"):
            g.notes.append(f"not idle when measured ({busy[3:].strip()}): its figures may be a share of another "
                           "job's GPU")
    return {"stats": stats, "notes": notes}


def health_problems(context: Dict[str, str]) -> List[str]:
    """What NVML recorded that makes a GPU unfit whatever its figures: uncorrectable ECC errors since
    the driver loaded, a row remapping that failed or waits for a reset."""
    out = []
    v = results.to_number(context.get("gpu_ecc_uncorrected_volatile"))
    if math.isfinite(v) and v > 0:
        out.append(f"{v:g} uncorrectable ECC errors since the driver loaded")
    if context.get("gpu_remapped_rows_failure") == "yes":
        out.append("a row remapping failed")
    if context.get("gpu_remapped_rows_pending") == "yes":
        out.append("a row remapping is pending (needs a GPU reset)")
    return out


def _sort_key(g: Gpu):
    return (not g.flagged, -g.worst_z if math.isfinite(g.worst_z) else (-math.inf if g.worst_z > 0 else math.inf),
            g.model, g.host, g.pci_bus_id)


def gpu_json(g: Gpu) -> dict:
    return {"host": g.host, "uuid": g.uuid, "serial": g.serial, "pci_bus_id": g.pci_bus_id, "model": g.model,
            "flagged": g.flagged, "reasons": g.reasons, "notes": g.notes,
            "figures": {k: v for k, v in g.values.items()}, "file": g.file,
            "vbios": g.context.get("gpu_vbios", UNAVAILABLE), "driver": g.context.get("gpu_driver_version", UNAVAILABLE),
            "idle_at_start": g.context.get("gpu_idle_at_start", UNAVAILABLE)}


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return x


def to_markdown(gpus: Sequence[Gpu], figures: Sequence[FigureSpec], stats, criteria: Criteria, notes, reference,
                limit: int = 200) -> str:
    flagged = [g for g in gpus if g.flagged]
    out = [f"# gpuprobe fleet: {len(flagged)} of {len(gpus)} GPUs flagged\n",
           f"A GPU is flagged for a figure when its robust z (vs the median of its model, worse > 0) exceeds "
           f"{criteria.z:g} and it is worse than that median by more than the figure's tolerance"
           + (f", or when it is beyond {criteria.floor_fraction:g} x the reference ({reference[0]})" if reference else "")
           + "; also when a figure most of its model has is missing, or its run did not finish.\n"]
    out += [f"- note: {n}" for n in notes]
    out.append("\n## Medians per model\n")
    out.append("| model | figure | unit | better | GPUs | median | MAD | tolerance |\n|---|---|---|---|---|---|---|---|")
    tol = {f.name: f.tolerance_pct for f in figures}
    for (model, name), st in sorted(stats.items(), key=lambda kv: (kv[0][0], [f.name for f in figures].index(kv[0][1]))):
        out.append(f"| {model} | {name} | {st.unit} | {st.better} | {st.n} | {_fmt(st.median)} | {_fmt(st.mad)} | "
                   f"{tol[name]:g} % |")
    out.append(f"\n## GPUs, worst first{f' (first {limit})' if len(gpus) > limit else ''}\n")
    out.append("| # | host | PCI bus | UUID | model | flagged | reasons |\n|---|---|---|---|---|---|---|")
    for i, g in enumerate(gpus[:limit]):
        why = "; ".join(r["text"] for r in g.reasons) + ("; " if g.reasons and g.notes else "") + "; ".join(g.notes)
        out.append(f"| {i + 1} | {g.host} | {g.pci_bus_id} | {g.uuid} | {g.model} | {'yes' if g.flagged else 'no'} | "
                   f"{why} |")
    return "\n".join(out) + "\n"


def plot(gpus: Sequence[Gpu], figures: Sequence[FigureSpec], stats, path: str, rows: int = 40) -> None:
    """The worst GPUs first (top), one column per figure: the robust z (worse > 0), flagged cells marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = list(gpus[:rows])
    names = [f.name for f in figures]
    z = np.full((len(shown), len(names)), np.nan)
    for i, g in enumerate(shown):
        for j, f in enumerate(figures):
            st = stats.get((g.model, f.name))
            if st is not None and f.name in g.values:
                z[i, j] = _worse_z(g.values[f.name], st.median, st.scale, st.better)
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(names), 1.2 + 0.28 * max(len(shown), 1)))
    im = ax.imshow(np.clip(z, -10, 10), cmap="RdBu_r", vmin=-10, vmax=10, aspect="auto")
    for i, g in enumerate(shown):
        for r in g.reasons:
            if r.get("figure") in names:
                j = names.index(r["figure"])
                ax.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=1.8,
                                                          ec="black" if r["kind"] != "floor" else "magenta"))
    ax.set_xticks(range(len(names)), names, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(shown)), [f"{g.host} {g.pci_bus_id}" + (" *" if g.flagged else "") for g in shown],
                  fontsize=7)
    ax.set_title(f"Worst {len(shown)} of {len(gpus)} GPUs: robust z vs their model's median (worse > 0); "
                 "framed: flagged (black: fleet, magenta: floor)", fontsize=8)
    fig.colorbar(im, ax=ax, label="robust z, worse > 0 (clipped at ±10)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(paths: Sequence[str], outdir: str, criteria: Criteria, reference_paths: Optional[Sequence[str]] = None,
        log=print, err=None) -> int:
    """The command: 0 no GPU flagged, 3 some flagged, 1 an input unusable (nothing written)."""
    import sys
    err = err or (lambda m: print(f"gpuprobe-analyze: {m}", file=sys.stderr))
    inp = load(paths)
    for issue in inp.issues:
        if issue.severity != "note":
            err(str(issue))
    if not inp.gpus and not inp.rejected:
        err("no result files in the inputs")
        return 1
    if inp.rejected:
        err(f"unusable input: {', '.join(inp.rejected[:10])}" + (f" and {len(inp.rejected) - 10} more" if len(inp.rejected) > 10 else "")
            + " (see the messages above); nothing written")
        return 1
    if not inp.figures:
        err(f"no input declares the fleet preset's figures ({PRESET_CONTEXT_KEY} in the context): run "
            "gpuprobe --preset=fleet; nothing written")
        return 1
    reference = None
    if reference_paths:
        ref_model, ref_models, ref_values, ref_rs = reference_figures(reference_paths, inp.figures)
        for issue in ref_rs.issues:
            if issue.severity == "error":
                err(str(issue))
        if ref_rs.rejected or not ref_rs.entries:
            err("unusable reference: " + ", ".join(ref_rs.rejected or list(reference_paths)) + "; nothing written")
            return 1
        if ref_model is None:
            err(f"the reference holds results of several GPU models ({', '.join(ref_models)}): give one; nothing written")
            return 1
        if not ref_values:
            err("the reference has none of the preset's figures; nothing written")
            return 1
        reference = (ref_model, ref_models, ref_values, ref_rs)
        if ref_model not in {g.model for g in inp.gpus}:
            err(f"note: the reference is a {ref_model}, no GPU of the fleet is: its floors apply to none")
    res = analyze(inp, criteria, reference)
    gpus = sorted(inp.gpus, key=_sort_key)
    os.makedirs(outdir, exist_ok=True)
    doc = {
        "gpus": [gpu_json(g) for g in gpus],
        "flagged": sum(g.flagged for g in gpus),
        "criteria": {"robust_z": criteria.z, "spread_floor_fraction_of_median": SPREAD_FLOOR,
                     "min_gpus_per_model": criteria.min_within,
                     "floor_fraction": criteria.floor_fraction if reference else None,
                     "reference": {"model": reference[0], "files": sorted({e.source for e in reference[3].entries}),
                                   "figures": {k: {"value": v[0], "entry": v[1]} for k, v in reference[2].items()}}
                     if reference else None},
        "figures": [{"figure": f.name, "unit": f.unit, "better": inp.better[f.name],
                     "tolerance_pct": f.tolerance_pct, "family": f.family, "field": f.field, "phase": f.phase,
                     "models": {m: {"gpus": st.n, "median": st.median, "mad": st.mad}
                                for (m, name), st in res["stats"].items() if name == f.name}}
                    for f in inp.figures],
        "notes": res["notes"],
    }
    with open(os.path.join(outdir, "fleet.json"), "w") as fh:
        json.dump(_json_safe(doc), fh, indent=1)
    with open(os.path.join(outdir, "fleet.md"), "w") as fh:
        fh.write(to_markdown(gpus, inp.figures, res["stats"], criteria, res["notes"], reference))
    plot(gpus, inp.figures, res["stats"], os.path.join(outdir, "fleet.png"))
    flagged = [g for g in gpus if g.flagged]
    log(f"{len(flagged)} of {len(gpus)} GPUs flagged ({len({g.model for g in gpus})} model(s), "
        f"{len(inp.figures)} figures)")
    for g in flagged[:20]:
        log(f"  {g.host} {g.pci_bus_id} {g.uuid} ({g.model}): " + "; ".join(r["text"] for r in g.reasons))
    if len(flagged) > 20:
        log(f"  … {len(flagged) - 20} more in fleet.json")
    log(f"wrote {os.path.join(outdir, 'fleet.json')}, fleet.md, fleet.png")
    return 3 if flagged else 0

