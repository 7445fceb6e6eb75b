"""The sections' typed results, one dataclass per core section (and per row kind), as sections/ computes them.

Field names are the keys of device-profile.json and field order is its key order: `to_json` writes a
dataclass field by field. A field marked `optional()` is left out of the JSON while it is None (a key
only some inputs have); one marked `flattened()` writes its own fields into its parent's object (the
TLB fit's figures sit beside the TLB curves). `source` fields hold families.provenance's record and
`key` fields a curve's parameters (whatever axes its family has): both stay plain dicts.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

Source = Dict[str, object]  # families.provenance: entries, count, probe, method, units, files
Key = Dict[str, object]  # a curve's parameters, e.g. {"pattern": "random", "load": "ca", "stride": 64.0}


def optional(default=None):
    """A field whose key is absent from the JSON while its value is None."""
    return field(default=default, metadata={"omit_if_none": True})


def flattened(default=None):
    """A dataclass field whose fields are written into the parent object (nothing while None)."""
    return field(default=default, metadata={"flatten": True})


def to_json(o):
    """Plain JSON values: dataclasses as objects in field order, non-finite floats as null, numpy
    scalars as Python numbers."""
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        out = {}
        for f in dataclasses.fields(o):
            v = getattr(o, f.name)
            if f.metadata.get("flatten"):
                if v is not None:
                    out.update(to_json(v))
            elif v is not None or not f.metadata.get("omit_if_none"):
                out[f.name] = to_json(v)
        return out
    if isinstance(o, dict):
        return {str(k): to_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [to_json(v) for v in o]
    if isinstance(o, (np.floating, float)):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.bool_):
        return bool(o)
    return o


# ---------------------------------------------------------------------------------------- inputs
@dataclass
class InputFile:
    file: str
    partial: bool
    complete: bool
    incomplete_reason: str
    entries: int  # used from this file
    entries_read: int = 0  # read from it; the others merged into a later file's copy of the same entry
    rejected: List[str] = field(default_factory=list)  # "NAME: why", entries with values that are no measurement


# ---------------------------------------------------------------------------------------- hierarchy
@dataclass
class CurveLevel:
    """One level of one latency curve."""
    name: str
    cycles: float
    ns: Optional[float]
    capacity_bytes: Optional[float]
    capacity_bracket_bytes: Optional[List[float]]


@dataclass
class LatencyCurve:
    key: Key
    model: str  # the edges in words (profile.model_words)
    noise_rel: float
    points: int
    levels: List[CurveLevel]
    source: Source
    fit_model: str = ""  # the fit's own code (levels.LevelFit.model), for who reads the fit


@dataclass
class DeviceLevel:
    """One level of the device hierarchy (from the primary curve; shared memory from its own entries)."""
    name: str
    latency_cycles: float
    latency_ns: Optional[float]
    capacity_bytes: Optional[float]
    capacity_bracket_bytes: Optional[List[float]]
    model: str  # the edge that ends the level, in words (profile.edge_words)
    curve: Key
    source: Source
    # How capacity_bytes was decided where the data alone cannot place it: the L2 against the driver's figure
    # (inside the sweep's bracket: the driver's; outside: the sweep's and the disagreement), a sharp edge on a
    # grid too coarse for the accuracy claimed (bracket only) (sections/hierarchy.py).
    capacity_how: Optional[str] = optional()
    capacity_fit_bytes: Optional[float] = optional()  # the fit's own estimate, where capacity_bytes is the driver's


@dataclass
class CgCrossCheck:
    """The L1-bypassing chain of the primary curve's pattern and stride: its levels against the primary's."""
    curve: Key
    levels_cycles: List[float]
    capacities_bytes: List[float]
    primary_l2_dram_cycles: Dict[str, float]
    l1_absent: bool
    source: Source


@dataclass
class Capacities:
    l1_bytes: Optional[float] = optional()
    l2_near_partition_bytes: Optional[float] = optional()
    l2_bytes: Optional[float] = optional()
    # The sweep's own L2 estimate where l2_bytes is the driver's figure inside its bracket (hierarchy.py):
    # what the fit found, for those who judge the fit.
    l2_bytes_fit: Optional[float] = optional()
    l1_carveout: str = ""
    shared_per_sm_bytes_reported_by_driver: Optional[float] = optional()
    l2_bytes_reported_by_driver: Optional[float] = optional()


@dataclass
class Hierarchy:
    curves: List[LatencyCurve]
    levels: List[DeviceLevel]
    method: str
    primary_curve: Optional[Key] = optional()
    cross_check_cg: Optional[CgCrossCheck] = optional()
    capacities: Capacities = field(default_factory=Capacities)


# ---------------------------------------------------------------------------------------- granularity
@dataclass
class MissUnit:
    footprint_bytes: Optional[float]
    load: Optional[str]
    served_by: Optional[str]
    miss_unit_bytes: float
    miss_unit_pow2_bytes: float
    cycles_small_stride: float
    cycles_saturated: float
    source: Source


@dataclass
class NoMiss:
    """A footprint that fits the first level: every load hits, no miss unit."""
    footprint_bytes: Optional[float]
    load: Optional[str]
    served_by: str


@dataclass
class Granularity:
    per_footprint: List[MissUnit]
    by_level: Dict[str, float]
    no_miss: List[NoMiss]
    method: str


# ---------------------------------------------------------------------------------------- TLB
@dataclass
class TlbCurve:
    key: Key
    model: str
    reach_bytes: List[float]
    levels_cycles: List[float]
    source: Source


@dataclass
class TlbLevelResult:
    entries: Optional[float]
    entries_range: List[float]
    entries_bracket: List[float]
    penalty_cycles: float
    reach_bytes: Optional[float]
    reach_range_bytes: List[float]
    reach_bracket_bytes: List[float]


@dataclass
class TlbExcludedPoint:
    stride_bytes: float
    footprint_bytes: float
    cycles: float
    cv: float
    why: str


@dataclass
class TlbPage:
    page_bytes: Optional[float]


@dataclass
class TlbReach:
    reach_bytes: Optional[float]
    entries: Optional[float]
    penalty_cycles: float
    bracket_bytes: List[float]


@dataclass
class TlbFitResult:
    page_bytes: Optional[float]
    page_status: str
    page_range_bytes: List[float]
    strides_bytes: List[float]
    noise_rel: float
    base_cycles_by_stride: Dict[str, float]
    levels: List[TlbLevelResult]
    excluded: List[TlbExcludedPoint]
    max_footprint_by_stride: Dict[str, float]
    findings: List[str]
    page: Optional[TlbPage]  # the measured page only (kept for the summary and older readers)
    reach: Optional[List[TlbReach]]


@dataclass
class Tlb:
    curves: List[TlbCurve]
    source: Source
    method: str
    warm_up_recorded: bool
    fit: Optional[TlbFitResult] = flattened()


# ---------------------------------------------------------------------------------------- bandwidth
@dataclass
class Plateau:
    """A bandwidth curve's plateau in one level (median of its points there)."""
    name: str
    gbps_plateau: float
    points: int
    note: Optional[str] = None  # why the plateau is no figure of that level, where it is not


@dataclass
class BandwidthCurve:
    key: Key
    model: Optional[str]
    levels: List[Plateau]
    source: Source


@dataclass
class PlateauCandidate:
    """The best plateau of the curves in one level."""
    gbps: float
    how: str
    source: Source


@dataclass
class BandwidthCeiling:
    """ceilings.LevelCeiling under its report name ("DRAM", "DRAM copy", "L2 far write"...)."""
    level: str
    kind: str
    gbps: float
    premise: str
    premise_ratio: Optional[float]
    how: str
    source: Source
    name: str
    cv: Optional[float] = optional()  # median CV of its entries' samples: its noise (roofline.ceilings_beaten)
    theoretical_gbps: Optional[float] = optional()
    theoretical_how: Optional[str] = optional()


@dataclass
class FailedPremise:
    entry: str
    level: str
    ratio: Optional[float]
    why: str
    value: Optional[float]
    unit: str


@dataclass
class PremiseReport:
    """ceilings.premise_report: how many declared premises held, failed or went unchecked."""
    declared: int
    ok: int
    failed: int
    unverified: int
    failed_entries: List[FailedPremise]
    counters_checked: bool
    verdict: str

    @classmethod
    def of(cls, report: dict) -> "PremiseReport":
        return cls(**dict(report, failed_entries=[FailedPremise(**r) for r in report["failed_entries"]]))


@dataclass
class Bandwidth:
    curves: List[BandwidthCurve]
    ceilings: Dict[str, BandwidthCeiling]
    errors: List[str]
    method: str


# ---------------------------------------------------------------------------------------- access
@dataclass
class StrideRow:
    stride_elements: Optional[float]
    offset_bytes: Optional[float]
    value: float
    unit: str
    penalty_vs_best: Optional[float]
    entry: str


@dataclass
class StrideAlignment:
    rows: List[StrideRow]
    best: float
    source: Source
    method: str


@dataclass
class BankRow:
    word_stride: Optional[float]
    value: float
    unit: str
    slowdown_vs_stride1: float
    entry: str


@dataclass
class BankFit:
    banks: int
    rms_log_error: float


@dataclass
class BankWords:
    word_bytes: Optional[float]
    rows: List[BankRow]
    banks: Optional[BankFit]
    source: Source


@dataclass
class Banks:
    by_word_bytes: List[BankWords]
    method: str


# ---------------------------------------------------------------------------------------- execution
@dataclass
class PipelineLatency:
    op: str
    latency: float
    unit: str
    cv: Optional[float]
    source: Source


@dataclass
class ThroughputPeak:
    op: str
    peak: float
    peak_how: str
    best_single_entry: float
    unit: str
    at_ilp: Optional[float]
    at_warps_per_sm: Optional[float]
    smallest_ilp_reaching_95pct: Optional[float]
    warps_per_sm_there: Optional[float]
    fraction_of_theoretical: Optional[float]
    source: Source
    gflops: Optional[float] = optional()


@dataclass
class ComputeCeiling:
    gflops: float
    how: str
    op: str
    premise: Optional[str]
    premise_ratio: Optional[float]
    source: Source
    cv: Optional[float] = optional()  # its entry's CV: its noise (roofline.ceilings_beaten)


@dataclass
class FailedComputeCeiling:
    gflops: float
    why: Optional[str]


@dataclass
class TheoreticalCompute:
    gflops: float
    how: str


@dataclass
class Pipelines:
    latency: List[PipelineLatency]
    throughput: List[ThroughputPeak]
    compute_ceilings: Dict[str, ComputeCeiling]
    compute_ceilings_failed_premise: Dict[str, FailedComputeCeiling]
    compute_theoretical: Dict[str, TheoreticalCompute]
    method: str


@dataclass
class LaunchCost:
    measure: str
    mode: Optional[str]
    grid_blocks: Optional[float]
    value: float
    unit: str
    min: float
    max: float
    entries: int
    method: str
    source: Source


@dataclass
class BarrierCost:
    kind: Optional[str]
    blocks: Optional[float]
    value: float
    unit: str
    cv: Optional[float]
    entry: str


@dataclass
class LaunchBarrier:
    launch: List[LaunchCost]
    barrier: List[BarrierCost]
    source: Source


# ---------------------------------------------------------------------------------------- transfers
@dataclass
class AlphaBetaFigures:
    """fits.AlphaBeta in the report's units, with the verdict on its residuals."""
    alpha_us: float
    alpha_stderr_us: float
    beta_gbps: Optional[float]  # None where it is no bandwidth (beta_note: fits.beta_not_quoted)
    beta_stderr_gbps: Optional[float]
    half_bandwidth_bytes: float
    rms_rel_error: float
    max_rel_error: float
    robust_rel_scale: float
    outliers: int
    outlier_sizes_bytes: List[float]
    median_point_cv: Optional[float]
    verdict: str
    # Whether alpha and beta hold (rms error <= rms_threshold): the one verdict every view uses.
    fits: bool = True
    rms_threshold: float = math.nan
    # Where they do not: what fits instead, and the short sentence the summary shows in either case.
    regimes: Optional[List["TransferRegime"]] = optional()
    measured_peak_gbps: Optional[float] = optional()
    measured_peak_at_bytes: Optional[float] = optional()
    summary: str = ""
    beta_note: str = ""


@dataclass
class TransferRegime:
    """One regime of a two-regime alpha-beta fit: the sizes from lo to hi bytes."""
    lo_bytes: float
    hi_bytes: float
    alpha_us: float
    beta_gbps: Optional[float]  # None where it is no bandwidth (beta_note says why: fits.beta_not_quoted)
    rms_rel_error: float
    fits: bool
    beta_note: str = ""


@dataclass
class TransferFit:
    key: Key  # direction, memory, engine
    points: int
    source: Source
    model: Optional[AlphaBetaFigures] = flattened()
    fit: Optional[str] = optional()  # why there is no model


@dataclass
class TransferBaseline:
    entry: str
    direction: Optional[str]
    size_bytes: Optional[float]
    value: float
    unit: str
    cv: Optional[float]
    method: str


@dataclass
class Transfers:
    fits: List[TransferFit]
    baseline: List[TransferBaseline]
    method: str


@dataclass
class D2dBaseline:
    entry: str
    size_bytes: Optional[float]
    value: float
    unit: str
    cv: Optional[float]


# ---------------------------------------------------------------------------------------- other
@dataclass
class PairedRow:
    entry: str
    kernel: str
    problem: str
    a: Optional[str]
    b: Optional[str]
    a_ran: Optional[str]
    b_ran: Optional[str]
    speedup: Optional[float]
    a_first: Optional[float]
    b_first: Optional[float]
    cv: Optional[float]
    a_us: Optional[float]
    b_us: Optional[float]
    l2: Optional[str]
    noisy: bool


@dataclass
class OtherEntry:
    entry: str
    value: float
    unit: str
    cv: Optional[float]
    tags: Dict[str, str]
