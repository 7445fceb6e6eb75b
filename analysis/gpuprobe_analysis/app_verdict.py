"""The verdict on an application's kernels: each launch of an Nsight Compute profile (ncu.py) held to this
GPU's measured ceilings, grouped by kernel and launch shape and by NVTX range, ordered by the time each
would save at its bound; and two profiles compared kernel by kernel.

Bottom layer: the ceilings come in as `AppCeiling`s (sections/app_kernels.py builds them from the one path
the report takes, sections/roofline.py `measured_ceilings`); nothing here knows a section.

The bound. A launch cannot take less than the time its busiest resource needs: for each resource it used
(bytes at DRAM, L2, L1 and shared memory; FLOPs per precision; tensor operations per type), work / that
resource's measured ceiling; the bound is the largest of those times and the binding ceiling is the one
that gives it. % of bound = bound time / actual time; the saving = actual - bound time (0 for a launch
above its roof). DRAM bytes go to the DRAM read ceiling when at least roofline.READ_DOMINATED of them are
reads (or the reads are not known), else to the copy ceiling, as the report's own kernels. A resource the
launch used with no measured ceiling is named, and the bound is then a lower bound of the time ("at
least"), never silently the bound of the other resources.

Clock scaling. The ceilings of the SM's own units (compute pipes, tensor types, L1, shared memory) are per
clock: each is scaled to the launch's SM clock, ceiling x launch clock / the SM clock its own entry ran at
(`AppCeiling.clock_mhz`). DRAM is not scaled (its clock is the memory's); nor is the L2, whose clock the
profile does not relate to the SM's. Each resource says which scaling it got.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from . import ncu_metrics as M
from .profile_results import to_json as jsonable
from .roofline import PER_CLOCK_LEVELS, READ_DOMINATED, Ceiling

# A launch whose bound exceeds its actual time by more than this share is above a measured roof: beyond
# the run-to-run noise of the ceilings and of ncu's duration, something in the data is off (flagged).
ABOVE_ROOF = 0.03
# A launch clock this far above its ceiling's clock, on a ceiling not scaled to it, explains a point above.
CLOCK_TOLERANCE = 0.03
# DRAM bytes below this share of the L2's: the data were L2-resident (a warm cache) for that launch.
WARM_DRAM_SHARE = 0.05


# The metrics that count work at a resource: one of them missing hides a resource the launch may have used.
WORK_ROLES = (M.BYTES, M.FLOPS, M.TENSOR)


class AppVerdictError(ValueError):
    """A profile that cannot be judged against these device results; str(exc) is one line."""


@dataclass(frozen=True)
class AppCeiling:
    """A measured ceiling as the verdict uses it."""
    name: str                    # "DRAM", "DRAM copy", "L2", "L1", "shared", "FP32", "BF16 tensor", ...
    value: float                 # GB/s (memory) or GFLOP/s (compute; INT8 tensor: GOP/s), at clock_mhz
    is_memory: bool
    clock_mhz: Optional[float]   # the SM clock its own entry ran at (None: not recorded)
    clock_how: str               # which entry and field clock_mhz comes from
    how: str                     # how the ceiling was measured (entry, premise)
    source: dict = field(default_factory=dict)  # families.provenance of its entries

    @property
    def per_clock(self) -> bool:
        return not self.is_memory or self.name in PER_CLOCK_LEVELS

    @property
    def unit(self) -> str:
        return "GB/s" if self.is_memory else "GFLOP/s"

    @classmethod
    def of(cls, c: Ceiling, clock_mhz: Optional[float], clock_how: str) -> "AppCeiling":
        return cls(c.name, c.value, c.is_memory, clock_mhz, clock_how, c.how, dict(c.source))


@dataclass
class Resource:
    """One resource a launch used: its work, the ceiling it is held to at the launch's clock, and the time
    that ceiling needs for the work."""
    name: str                    # the ceiling's name ("DRAM copy", "BF16 tensor")
    kind: str                    # "bytes", "flops" or "tensor"
    work: float                  # bytes, FLOPs or tensor operations
    metrics: Tuple[str, ...]     # the ncu metrics that counted the work
    ceiling: Optional[float]     # GB/s or GFLOP/s at the launch's clock; None: not measured
    scaling: str                 # how the ceiling was brought to the launch's clock, or why it was not
    scaled: bool = False         # True: ceiling x launch clock / the ceiling's clock

    @property
    def seconds(self) -> Optional[float]:
        return self.work / (self.ceiling * 1e9) if self.ceiling else None


@dataclass
class LaunchVerdict:
    launch: object               # ncu.Launch
    resources: List[Resource]
    bound_s: Optional[float]     # None: no resource it used has a measured ceiling (or it used none)
    binding: Optional[Resource]
    missing_ceilings: List[str]  # resources it used without a measured ceiling: the bound is "at least"
    causes: List[str] = field(default_factory=list)  # why it is above its roof (empty: it is not)

    @property
    def actual_s(self) -> float:
        return self.launch.duration_s

    @property
    def missing_work(self) -> List[str]:
        """Declared metrics of work (bytes, FLOPs, tensor operations) the launch lacked: a resource it may have
        used unseen. (A missing clock only leaves the ceilings unscaled, and says so.)"""
        return [n for n in self.launch.missing if n not in M.BY_NAME or M.BY_NAME[n].role in WORK_ROLES]

    @property
    def at_least(self) -> bool:
        """The bound is a lower bound only: a resource it used had no ceiling, or a metric of work was missing."""
        return bool(self.missing_ceilings or self.missing_work)

    @property
    def above_roof(self) -> bool:
        return bool(self.causes)

    @property
    def saving_s(self) -> float:
        return max(0.0, self.actual_s - self.bound_s) if self.bound_s is not None else 0.0


@dataclass
class Group:
    """Launches of one kernel and launch shape, or of one NVTX range (and the ranges inside it). Built once,
    never changed: its figures are computed on first use and kept."""
    key: Tuple[str, ...]         # (kernel, launch shape) or the NVTX range path
    label: str
    launches: List[LaunchVerdict]
    total_s: float               # the application's GPU time (every launch with a duration)

    @property
    def count(self) -> int:
        return len(self.launches)

    @cached_property
    def time_s(self) -> float:
        return sum(v.actual_s for v in self.launches)

    @property
    def share(self) -> float:
        return self.time_s / self.total_s if self.total_s > 0 else math.nan

    @cached_property
    def judged(self) -> List[LaunchVerdict]:
        return [v for v in self.launches if v.bound_s is not None]

    @cached_property
    def bound_s(self) -> Optional[float]:
        judged = self.judged
        return sum(v.bound_s for v in judged) if judged else None

    @cached_property
    def pct_of_bound(self) -> Optional[float]:
        """Bound time over actual time of the launches with a bound, in %."""
        judged = self.judged
        t = sum(v.actual_s for v in judged)
        return 100.0 * sum(v.bound_s for v in judged) / t if judged and t > 0 else None

    @cached_property
    def saving_s(self) -> float:
        return sum(v.saving_s for v in self.launches)

    @cached_property
    def binding(self) -> Optional[str]:
        """The ceiling that binds the most of the group's bound time."""
        by: Dict[str, float] = {}
        for v in self.judged:
            by[v.binding.name] = by.get(v.binding.name, 0.0) + v.bound_s
        return max(by, key=by.get) if by else None

    @cached_property
    def representative(self) -> Optional[LaunchVerdict]:
        """The launch with the largest bound time bound by the group's binding ceiling: its scaling is the row's."""
        b = self.binding
        cands = [v for v in self.judged if v.binding.name == b]
        return max(cands, key=lambda v: v.bound_s) if cands else None

    @cached_property
    def at_least(self) -> bool:
        return any(v.at_least for v in self.launches)

    @cached_property
    def missing_ceilings(self) -> List[str]:
        return sorted({n for v in self.launches for n in v.missing_ceilings})

    @cached_property
    def missing_metrics(self) -> List[str]:
        return sorted({n for v in self.launches for n in v.launch.missing})

    @cached_property
    def flagged(self) -> List[LaunchVerdict]:
        return [v for v in self.launches if v.above_roof]

    @cached_property
    def causes(self) -> List[str]:
        return list(dict.fromkeys(c for v in self.launches for c in v.causes))

    @cached_property
    def _work(self) -> Dict[Tuple[str, str], float]:
        out: Dict[Tuple[str, str], float] = {}
        for v in self.launches:
            for r in v.resources:
                out[(r.kind, r.name)] = out.get((r.kind, r.name), 0.0) + r.work
        return out

    def work(self, kind: str) -> Dict[str, float]:
        """Work per resource name of one kind ("bytes", "flops", "tensor") over the group's launches."""
        return {name: w for (k, name), w in self._work.items() if k == kind}

    @cached_property
    def bytes(self) -> Dict[str, float]:
        """Bytes per level (DRAM under the ceiling's name it went to: "DRAM" or "DRAM copy" merged as DRAM)."""
        out: Dict[str, float] = {}
        for name, b in self.work("bytes").items():
            level = name.split()[0]
            out[level] = out.get(level, 0.0) + b
        return out

    @cached_property
    def flops(self) -> float:
        return sum(self.work("flops").values()) + sum(self.work("tensor").values())

    @cached_property
    def rates(self) -> Dict[str, float]:
        """Achieved GFLOP/s per precision and per tensor type over the group's time."""
        t = self.time_s
        return {n: w / t / 1e9 for kind in ("flops", "tensor") for n, w in self.work(kind).items()} if t > 0 else {}

    @cached_property
    def intensity(self) -> Dict[str, float]:
        """FLOP (all precisions and tensor types) per byte at each level."""
        f = self.flops
        return {lvl: f / b for lvl, b in self.bytes.items() if b > 0}

    @cached_property
    def clock_mhz(self) -> Tuple[float, float]:
        clocks = [v.launch.sm_clock_hz / 1e6 for v in self.launches if _finite(v.launch.sm_clock_hz)]
        return (min(clocks), max(clocks)) if clocks else (math.nan, math.nan)

    @cached_property
    def ncu_roof(self) -> Optional[Tuple[str, float, float]]:
        """Nsight Compute's own roof of the binding memory level, beside ours: (level, its roof in GB/s, the
        group's bytes there per second as % of it). The roof is ncu's `peak_sustained` per cycle x that unit's
        cycles per second (median over the launches), as its roofline charts draw it. None where the binding
        ceiling is no DRAM, L2 or L1, or the profile lacks those metrics."""
        if self.binding is None or self.time_s <= 0:
            return None
        level = self.binding.split()[0]
        names = M.NCU_ROOF_OF.get(level)
        if names is None:
            return None
        roofs = sorted(v.launch.metrics[names[0]] * v.launch.metrics[names[1]] / 1e9 for v in self.launches
                       if names[0] in v.launch.metrics and names[1] in v.launch.metrics)
        if not roofs or not roofs[len(roofs) // 2] > 0:
            return None
        roof = roofs[len(roofs) // 2]
        return level, roof, 100.0 * self.bytes.get(level, 0.0) / self.time_s / 1e9 / roof


@dataclass
class AppVerdict:
    profile: object              # ncu.Profile
    device: str                  # the device results' GPU model
    ceilings: List[AppCeiling]
    launches: List[LaunchVerdict]
    kernels: List[Group]         # by kernel and launch shape, largest saving first
    ranges: List[Group]          # by NVTX range path (every enclosing range too), largest saving first
    total_s: float
    notes: List[str]

    @property
    def saving_s(self) -> float:
        return sum(g.saving_s for g in self.kernels)

    @property
    def headroom(self) -> float:
        """The share of the application's GPU time its kernels would save at their bounds."""
        return self.saving_s / self.total_s if self.total_s > 0 else math.nan


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


@lru_cache(maxsize=None)
def _metrics_of(target: str, role: str) -> Tuple[str, ...]:
    """The declared ncu metrics that count work of `role` for `target` (a level, precision or tensor type)."""
    return tuple(m.name for m in M.METRICS if m.target == target and m.role == role)


def same_model(profile_device: str, device: str) -> bool:
    """Whether the profile's GPU model is the device results' (names as CUDA and ncu print them)."""
    norm = lambda s: " ".join(s.lower().split())  # noqa: E731
    return norm(profile_device) == norm(device)


def _scaled(c: AppCeiling, launch_mhz: float) -> Tuple[float, str, bool]:
    """(value at the launch's clock, how, scaled?)."""
    return _scaled_memo(c.name, c.value, c.per_clock, c.clock_mhz, launch_mhz)


@lru_cache(maxsize=4096)  # a profile's launches run at a few clocks: one text per ceiling and clock
def _scaled_memo(name: str, value: float, per_clock: bool, clock_mhz: Optional[float],
                 launch_mhz: float) -> Tuple[float, str, bool]:
    if not per_clock:
        why = "its clock is the memory's" if name.split()[0] == "DRAM" else \
            "the profile does not relate the L2's clock to the SM's"
        return value, f"not scaled: {why}", False
    if not _finite(launch_mhz):
        return value, "not scaled: the launch's SM clock is unknown (sm__cycles_elapsed.avg.per_second missing)", False
    if not (clock_mhz and clock_mhz > 0):
        return value, "not scaled: the ceiling's entry records no SM clock", False
    return (value * launch_mhz / clock_mhz,
            f"x {launch_mhz:,.0f} / {clock_mhz:,.0f} MHz (the launch's SM clock / the ceiling entry's)", True)


def resources(launch, ceilings: Dict[str, AppCeiling]) -> List[Resource]:
    """Every resource the launch used with its work and its ceiling at the launch's clock."""
    mhz = launch.sm_clock_hz / 1e6 if _finite(launch.sm_clock_hz) else math.nan
    out: List[Resource] = []

    def add(name: str, kind: str, work: float, metrics: Tuple[str, ...]):
        if not (_finite(work) and work > 0):
            return
        c = ceilings.get(name)
        if c is None:
            out.append(Resource(name, kind, work, metrics, None, "no measured ceiling"))
        else:
            value, how, scaled = _scaled(c, mhz)
            out.append(Resource(name, kind, work, metrics, value, how, scaled))

    for level, b in launch.bytes.items():
        name = level
        if level == "DRAM":
            read = launch.dram_read_bytes
            share = read / b if read is not None and _finite(read) and b > 0 else None
            if share is not None and share < READ_DOMINATED and "DRAM copy" in ceilings:
                name = "DRAM copy"
        add(name, "bytes", b, _metrics_of(level, M.BYTES))
    for precision, f in launch.flops.items():
        add(precision, "flops", f, _metrics_of(precision, M.FLOPS))
    for kind, ops in launch.tensor_ops.items():
        add(kind, "tensor", ops, _metrics_of(kind, M.TENSOR))
    return out


def _causes(v: LaunchVerdict, ceilings: Dict[str, AppCeiling], cache_control: Optional[str]) -> List[str]:
    """Why a launch sits above its roof, the likeliest first, from the data. The sentences carry no figure
    of the launch itself (its clock, its bytes), so that a group's launches share them; the group's row gives
    its clocks and its largest % of bound."""
    r, launch = v.binding, v.launch
    c = ceilings[r.name]
    mhz = launch.sm_clock_hz / 1e6 if _finite(launch.sm_clock_hz) else math.nan
    out = []
    if c.name.split()[0] != "DRAM" and not r.scaled:
        if not _finite(mhz):
            out.append(f"clock: the launch's SM clock is unknown, so the {c.name} ceiling was not scaled to it")
        elif c.clock_mhz and mhz > c.clock_mhz * (1 + CLOCK_TOLERANCE):
            out.append(f"clock: the launch ran above the {c.clock_mhz:,.0f} MHz of the {c.name} ceiling's entry, "
                       f"and that ceiling is {r.scaling}")
    # With --cache-control all every replay pass starts with flushed caches, so the timed pass and the counted
    # ones saw the same (cold) state; otherwise they may not have, and DRAM bytes far below the L2's say the
    # data stayed in the L2 between passes.
    if c.is_memory and c.name.split()[0] in ("DRAM", "L2") and cache_control != "all":
        dram, l2 = launch.bytes.get("DRAM"), launch.bytes.get("L2")
        warm = dram is not None and l2 and dram < WARM_DRAM_SHARE * l2
        out.append("cache-warm replay: the bytes were counted in other replay passes than the one timed, with the "
                   "caches in another state" + (" (profiled with --cache-control none)" if cache_control == "none"
                                                else " (cache control not recorded)" if cache_control is None
                                                else f" (cache control {cache_control})")
                   + (f"; DRAM moved under {WARM_DRAM_SHARE:.0%} of the L2's bytes: the data stayed in the L2"
                      if warm else ""))
    if not c.is_memory:
        out.append(f"operations: the counters' {r.name} work exceeds what the pipe can do in the time: their weights "
                   "or types do not fit these instructions (e.g. FP16 weights assume half2 instructions; sparse or "
                   f"another type's operations counted as {r.name})")
    return out or [f"unexplained: above the measured {r.name} ceiling ("
                   + ("scaled to the launch's clock" if r.scaled else r.scaling) + "); check the ceiling's entry and the profile"]


def cache_control(notes: Iterable[str]) -> Optional[str]:
    """The profile's cache control ("all", "none") from its notes (ncu.py's "cache control: X"); None: unknown."""
    for n in notes:
        if n.startswith("cache control:"):
            return n.split(":", 1)[1].strip().split()[0] if n.split(":", 1)[1].strip() else None
    return None


def judge_launch(launch, ceilings: Dict[str, AppCeiling], cache: Optional[str] = None) -> LaunchVerdict:
    res = resources(launch, ceilings)
    timed = [r for r in res if r.seconds is not None]
    binding = max(timed, key=lambda r: r.seconds) if timed else None
    v = LaunchVerdict(launch, res, binding.seconds if binding else None, binding,
                      [r.name for r in res if r.ceiling is None])
    if binding is not None and _finite(launch.duration_s) and launch.duration_s > 0 \
            and binding.seconds > launch.duration_s * (1 + ABOVE_ROOF):
        v.causes = _causes(v, ceilings, cache)
    return v


def _groups(verdicts: Sequence[LaunchVerdict], keys, total_s: float) -> List[Group]:
    by: Dict[tuple, List[LaunchVerdict]] = {}
    labels: Dict[tuple, str] = {}
    for v in verdicts:
        for key, label in keys(v.launch):
            by.setdefault(key, []).append(v)
            labels[key] = label
    groups = [Group(k, labels[k], vs, total_s) for k, vs in by.items()]
    return sorted(groups, key=lambda g: (-g.saving_s, -g.time_s, g.label))


def _kernel_key(launch):
    return [((launch.kernel, launch.launch_shape), f"{launch.kernel} [{launch.launch_shape}]")]


def _range_keys(launch):
    """Every range path enclosing the launch: a launch in a > b counts to "a" and to "a > b"."""
    return [(tuple(launch.nvtx[:i]), " > ".join(launch.nvtx[:i])) for i in range(1, len(launch.nvtx) + 1)]


def check_model(profile, device: str) -> None:
    """AppVerdictError unless the profile is of the device results' GPU model."""
    if not same_model(profile.device, device):
        raise AppVerdictError(f"{profile.path}: a profile of {profile.device!r}, but the device results are of "
                              f"{device!r}: judge it against results of the same GPU model")


def judge(profile, device: str, ceilings: Sequence[AppCeiling]) -> AppVerdict:
    """Every launch of `profile` held to `ceilings` (measured ones, of the GPU model `device`)."""
    check_model(profile, device)
    by_name = {c.name: c for c in ceilings}
    cache = cache_control(profile.notes)
    timed = [la for la in profile.launches if _finite(la.duration_s) and la.duration_s > 0]
    notes = list(profile.notes)
    if len(timed) < len(profile.launches):
        notes.append(f"{len(profile.launches) - len(timed)} of {len(profile.launches)} launches have no duration "
                     "(gpu__time_duration.sum): left out")
    verdicts = [judge_launch(la, by_name, cache) for la in timed]
    total = sum(v.actual_s for v in verdicts)
    unmeasured = sorted({n for v in verdicts for n in v.missing_ceilings})
    if unmeasured:
        notes.append(f"used without a measured ceiling (their launches' bounds are lower bounds, 'at least'): "
                     f"{', '.join(unmeasured)}")
    return AppVerdict(profile, device, list(ceilings), verdicts, _groups(verdicts, _kernel_key, total),
                      _groups([v for v in verdicts if v.launch.nvtx], _range_keys, total), total, notes)


# ---- rows (JSON, Markdown) --------------------------------------------------------------------------------

def group_row(g: Group, ceilings: Dict[str, AppCeiling]) -> dict:
    """A group as the report and app-kernels.json show it, with how each figure was obtained."""
    rep = g.representative
    b = g.binding
    lo, hi = g.clock_mhz
    return {
        "label": g.label, "key": list(g.key), "launches": g.count, "time_s": g.time_s, "share": g.share,
        "bound_s": g.bound_s, "pct_of_bound": g.pct_of_bound, "saving_s": g.saving_s,
        "bound_is_lower_bound": g.at_least, "binding": b,
        "binding_ceiling": ({"value": ceilings[b].value, "unit": ceilings[b].unit, "clock_mhz": ceilings[b].clock_mhz,
                             "how": ceilings[b].how, "source": ceilings[b].source.get("entries", "")}
                            if b in ceilings else None),
        "scaling": rep.binding.scaling if rep else None,
        "binding_metrics": list(rep.binding.metrics) if rep else [],
        "sm_clock_mhz": [lo, hi] if _finite(lo) else None,
        "rates_gflops": g.rates, "bytes": g.bytes, "intensity": g.intensity,
        "missing_ceilings": g.missing_ceilings, "missing_metrics": g.missing_metrics,
        "above_roof_launches": len(g.flagged), "above_roof_causes": g.causes,
        "ncu_roof": (dict(zip(("level", "gbps", "pct"), g.ncu_roof)) if g.ncu_roof else None),
    }


def to_json(v: AppVerdict, top: Optional[int] = None) -> dict:
    """app-kernels.json: plain JSON values (NaN as null)."""
    ceilings = {c.name: c for c in v.ceilings}
    p = v.profile
    return jsonable({
        "profile": {"path": p.path, "device": p.device, "source": p.source, "launches": len(p.launches),
                    "notes": v.notes},
        "device": v.device, "total_gpu_time_s": v.total_s, "saving_s": v.saving_s, "headroom": v.headroom,
        "method": METHOD,
        "ceilings": [{"name": c.name, "value": c.value, "unit": c.unit, "per_clock": c.per_clock,
                      "clock_mhz": c.clock_mhz, "clock_how": c.clock_how, "how": c.how, "source": c.source}
                     for c in v.ceilings],
        "kernels": [group_row(g, ceilings) for g in v.kernels[:top]],
        "kernels_left_out": max(0, len(v.kernels) - top) if top else 0,
        "nvtx_ranges": [group_row(g, ceilings) for g in v.ranges],
    })


METHOD = ("bound = max over the resources a launch used (bytes at DRAM, L2, L1, shared; FLOPs per precision; "
          "tensor operations per type) of work / that resource's measured ceiling, the per-clock ceilings (compute, "
          "tensor, L1, shared) scaled to the launch's SM clock; % of bound = bound time / actual time; saving = "
          f"actual - bound time per launch (0 above the roof); above the roof = bound > actual x {1 + ABOVE_ROOF:g}")


def _fmt_s(s: Optional[float]) -> str:
    if s is None or not _finite(s):
        return "–"
    return f"{s * 1e3:,.3f} ms" if s >= 1e-3 else f"{s * 1e6:,.1f} µs"


def _pct(v: Optional[float]) -> str:
    return f"{v:.1f} %" if v is not None and _finite(v) else "–"


def table_rows(v: AppVerdict, groups: Sequence[Group]) -> List[List[str]]:
    """One row per group: label, launches, time, share, binding (scaling), % of bound, saving, flags."""
    rows = []
    for g in groups:
        rep = g.representative
        binding = "–" if g.binding is None else f"{g.binding} ({rep.binding.scaling})"
        pct = _pct(g.pct_of_bound)
        if g.at_least and g.pct_of_bound is not None:
            pct = "≥ " + pct
        flags = []
        if g.missing_ceilings:
            flags.append("no ceiling: " + ", ".join(g.missing_ceilings))
        if g.missing_metrics:
            flags.append("metrics missing: " + ", ".join(g.missing_metrics))
        if g.flagged:
            worst = max(100 * f.bound_s / f.actual_s for f in g.flagged)
            flags.append(f"ABOVE ROOF ({len(g.flagged)} of {g.count} launches, up to {worst:.1f} % of bound): "
                         + "; ".join(g.causes))
        ncu_roof = f"{_pct(g.ncu_roof[2])} of {g.ncu_roof[0]} {g.ncu_roof[1]:,.0f} GB/s" if g.ncu_roof else "–"
        rows.append([g.label, str(g.count), _fmt_s(g.time_s), _pct(100 * g.share), binding, pct, ncu_roof,
                     _fmt_s(g.saving_s), "; ".join(flags) or "–"])
    return rows


TABLE_HEADERS = ["kernel [launch shape]", "launches", "time", "share of GPU time", "binding ceiling (clock scaling)",
                 "% of bound", "ncu's roof (peak x clock)", "saving at bound", "flags"]


def markdown(v: AppVerdict, top: Optional[int] = None) -> str:
    """The verdict as a Markdown table (the top kernels by saving), with the headroom."""
    def table(headers, rows):
        esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
        return "\n".join(["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
                         + ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows])
    out = [f"# Application kernels: {v.profile.path} on {v.device}", "",
           f"{len(v.launches)} launches, {_fmt_s(v.total_s)} of GPU time; at their bounds they would save "
           f"{_fmt_s(v.saving_s)}: headroom {_pct(100 * v.headroom)}.", "", f"Method: {METHOD}.", "",
           table(TABLE_HEADERS, table_rows(v, v.kernels[:top]))]
    if top and len(v.kernels) > top:
        out += ["", f"{len(v.kernels) - top} more kernels left out (--top {top})."]
    if v.ranges:
        out += ["", "## By NVTX range", "", table(["NVTX range"] + TABLE_HEADERS[1:], table_rows(v, v.ranges))]
    if v.notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in v.notes]
    return "\n".join(out) + "\n"


# ---- compare ---------------------------------------------------------------------------------------------

@dataclass
class Change:
    key: Tuple[str, str]         # (kernel, launch shape)
    label: str
    before: Optional[Group]
    after: Optional[Group]

    @property
    def delta_s(self) -> float:
        return (self.after.time_s if self.after else 0.0) - (self.before.time_s if self.before else 0.0)


def compare(before: AppVerdict, after: AppVerdict) -> List[Change]:
    """The two profiles' kernels matched by kernel name and launch shape, largest time change first; kernels
    in one profile only have None on the other side."""
    a = {g.key: g for g in before.kernels}
    b = {g.key: g for g in after.kernels}
    keys = list(dict.fromkeys(list(a) + list(b)))
    out = [Change(k, (a.get(k) or b.get(k)).label, a.get(k), b.get(k)) for k in keys]
    return sorted(out, key=lambda c: (-abs(c.delta_s), c.label))


def compare_json(before: AppVerdict, after: AppVerdict, changes: List[Change]) -> dict:
    def side(g: Optional[Group]):
        return None if g is None else {"launches": g.count, "time_s": g.time_s, "pct_of_bound": g.pct_of_bound,
                                       "binding": g.binding, "bound_is_lower_bound": g.at_least}
    return jsonable({"before": before.profile.path, "after": after.profile.path, "device": before.device,
            "total_gpu_time_s": [before.total_s, after.total_s], "headroom": [before.headroom, after.headroom],
            "kernels": [{"kernel": c.key[0], "launch_shape": c.key[1], "before": side(c.before),
                         "after": side(c.after), "delta_s": c.delta_s} for c in changes]})


def compare_markdown(before: AppVerdict, after: AppVerdict, changes: List[Change]) -> str:
    def cells(g: Optional[Group]):
        if g is None:
            return ["–", "–", "(not in this profile)"]
        pct = _pct(g.pct_of_bound)
        return [_fmt_s(g.time_s), ("≥ " + pct) if g.at_least and g.pct_of_bound is not None else pct, g.binding or "–"]
    head = ["kernel [launch shape]", "time before", "% of bound before", "binding before", "time after",
            "% of bound after", "binding after", "change"]
    rows = []
    for c in changes:
        t0 = c.before.time_s if c.before else None
        change = "only before" if c.after is None else "only after" if c.before is None else \
            (f"{100 * c.delta_s / t0:+.1f} %" if t0 else "–")
        rows.append([c.label.replace("|", "\\|")] + cells(c.before) + cells(c.after) + [change])
    lines = [f"# Application kernels compared on {before.device}", "",
             f"before: {before.profile.path}: {_fmt_s(before.total_s)} of GPU time, headroom "
             f"{_pct(100 * before.headroom)}", "",
             f"after: {after.profile.path}: {_fmt_s(after.total_s)} of GPU time, headroom "
             f"{_pct(100 * after.headroom)}", "",
             "Matched by kernel name and launch shape; largest time change first.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
