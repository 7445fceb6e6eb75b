"""Memory ceilings from the probes that declare a premise, and the premise report.

A probe that defines a ceiling declares which level must serve what it counts (the entry's label
tags premise_level and premise_rule); the counter run checks it (premise_ok, premise_ratio and the
tag premise). A ceiling is built only from entries whose premise held; where no counter run checked
them (counters refused or not asked for) the ceiling is built, marked unverified, and only from
entries whose premise holds by how the probe works (`by_construction`): a run without counters must
not pick the loads the L2's request coalescer merged, which read faster than the L2 can serve. An
entry whose premise failed never becomes a ceiling and is listed with its measured ratio.

Which probe gives which ceiling (docs/probes-memory.md):
- L1: memory.l1_peak (L1 hit rate >= 99 %);
- L2: memory.l2_bandwidth, per kind (read / write / copy) the best walk's median over the working sets
  below the L2's near partition; the far partition separately where it differs;
- DRAM: memory.bandwidth and memory.occupancy entries whose working set is far beyond the L2
  (premise DRAM), the best curve plateau per kernel (read / write / copy / triad);
- shared: memory.shared_bandwidth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import families as F
from .results import Entry, ResultSet, finite, to_number

# What a stream kernel's bytes are, for naming ceilings: read-only kernels are "read".
KERNEL_KIND = {"read": "read", "read_cg": "read", "read_nc": "read", "write": "write", "copy": "copy",
               "triad": "triad"}
# L2 working sets counted as the near-partition plateau: at most this share of the near capacity
# (or of the whole L2 when it has no partitions), so that the edge's transition stays out.
L2_PLATEAU_SHARE = 0.8
# The far partition gets its own row only when its plateau differs from the near one by more than this.
L2_PARTITION_DIFFERENCE = 0.05
# walk=blocks (memory.l2_bandwidth's record: block b reads piece b mod runs of each row, 8 KiB pieces,
# `loads` rows per array): blocks `runs` apart read the same piece, and the L2's request coalescer
# merges some of those reads. The premise runs measured the merged share falling as about 1/runs (H100:
# 15 % at 8 pieces per row, 7 % at 16, 3 % at 32, premise ratio >= 0.97 from 32 on), so a read array
# of at least 32 pieces (256 KiB) per row is beyond the coalescing window.
L2_BLOCKS_MERGE_FREE_ROW_BYTES = 32 * 8 * 1024
# Arrays a kernel of memory.l2_bandwidth walks (its footprint is over all of them) and whether it loads.
L2_KERNEL_ARRAYS = {"read_cg": 1, "write": 1, "copy": 2}
L2_KERNEL_LOADS = {"read_cg": True, "write": False, "copy": True}


@dataclass
class LevelCeiling:
    level: str  # "L1", "L2", "DRAM", "shared"
    kind: str  # "read", "write", "copy", "triad"; "L2 far" partition rows have level "L2 far"
    gbps: float
    premise: str  # "ok" or "unverified"
    premise_ratio: Optional[float]  # median measured / counted bytes at the level, over the entries used
    how: str
    entries: List[Entry] = field(default_factory=list)

    def to_json(self) -> dict:
        cvs = [e.cv for e in self.entries if math.isfinite(e.cv)]
        return {"level": self.level, "kind": self.kind, "gbps": self.gbps, "premise": self.premise,
                "premise_ratio": self.premise_ratio, "how": self.how, "source": F.provenance(self.entries),
                "cv": float(np.median(cvs)) if cvs else None}


def usable(e: Entry) -> bool:
    """An entry may define a ceiling: finite positive value and a premise that held or was not checked."""
    return math.isfinite(e.value) and e.value > 0 and e.premise in ("ok", "unverified")


def by_construction(e: Entry, l2_serves_bytes: Optional[float]) -> Optional[str]:
    """Why the premise of an entry no counter checked holds by how its probe works, or None when it
    holds only by luck (the counters alone could tell). `l2_serves_bytes`: the L2 capacity a working
    set may use with margin (L2_PLATEAU_SHARE of the near partition, else of the L2)."""
    if e.premise_level in ("L1", "shared"):
        return "per-block resident data reread (the record's design)"
    if e.premise_level == "DRAM":
        return "declared only for working sets far beyond the L2"
    if e.family != "memory.l2_bandwidth" or e.premise_level != "L2":
        return None
    fp = F.num(e, "footprint")
    if not (l2_serves_bytes and math.isfinite(fp) and fp <= l2_serves_bytes):
        return None  # beyond the capacity the hierarchy measured, DRAM may serve part of it
    kernel, walk = F.text(e, "kernel") or "", F.text(e, "walk") or ""
    if kernel not in L2_KERNEL_LOADS:
        return None
    if not L2_KERNEL_LOADS[kernel]:
        return "stores only (the request coalescer merges loads, not stores)"
    if walk == "own_slice":
        return "walk=own_slice: no sector is read by two SMs"
    if walk == "blocks":
        loads = F.num(e, "loads")
        row = fp / L2_KERNEL_ARRAYS[kernel] / loads if math.isfinite(loads) and loads > 0 else math.nan
        if row >= L2_BLOCKS_MERGE_FREE_ROW_BYTES:
            return (f"walk=blocks with at least {L2_BLOCKS_MERGE_FREE_ROW_BYTES // 1024} KiB per row of each array, "
                    "beyond the request coalescer's window")
    return None  # walk=shared: every SM reads every sector, which the coalescer merges


def qualifies(e: Entry, l2_serves_bytes: Optional[float] = None) -> bool:
    """An entry may define a ceiling: usable, and its premise held under the counters or, unchecked,
    holds by construction."""
    return usable(e) and (e.premise == "ok" or by_construction(e, l2_serves_bytes) is not None)


def _ratio(entries: List[Entry]) -> Optional[float]:
    r = [e.num("premise_ratio") for e in entries]
    r = [v for v in r if math.isfinite(v)]
    return float(np.median(r)) if r else None


def _status(entries: List[Entry]) -> str:
    return "ok" if all(e.premise == "ok" for e in entries) else "unverified"


def _unchecked(entries: List[Entry], l2_serves_bytes: Optional[float] = None) -> str:
    """The how's tail for entries no counter checked: why their premise holds anyway."""
    why = sorted({w for e in entries if e.premise != "ok" for w in [by_construction(e, l2_serves_bytes)] if w})
    return f"; unverified, premise by construction: {'; '.join(why)}" if why else ""


def _kind(e: Entry) -> str:
    return KERNEL_KIND.get(F.text(e, "kernel") or "", F.text(e, "kernel") or "?")


def dram_ceilings(rs: ResultSet) -> List[LevelCeiling]:
    """Per kernel kind, the best plateau (median over a curve's DRAM-premise entries) of its curves."""
    ents = [e for fam in ("memory.bandwidth", "memory.occupancy") for e in rs.by_family(fam)
            if e.premise_level == "DRAM" and qualifies(e)]
    best: Dict[str, LevelCeiling] = {}
    for key, grp in F.group(ents, ("family", "kernel", "vector", "blocks_per_sm", "store")).items():
        plateau = float(np.median([e.value for e in grp]))
        kind = _kind(grp[0])
        fam, kernel, vector, bps, store = key
        if kind not in best or plateau > best[kind].gbps:
            best[kind] = LevelCeiling(
                "DRAM", kind, plateau, _status(grp), _ratio(grp),
                f"{fam} kernel={kernel} vector={vector} B, {bps} blocks/SM, store={store or 'default'}: median of "
                f"its {len(grp)} working sets beyond the L2 (best curve of kind {kind}){_unchecked(grp)}", grp)
    return list(best.values())


def l2_ceilings(rs: ResultSet, near_bytes: Optional[float], l2_bytes: Optional[float]) -> List[LevelCeiling]:
    """Per kind, the best walk's plateau: the median over its premise-held working sets up to
    L2_PLATEAU_SHARE of the near partition (of the L2 when it has none); the far partition (between
    the near capacity and the L2 size) as level 'L2 far' when its median differs from the near one by
    more than L2_PARTITION_DIFFERENCE, else one plateau over both."""
    serves = L2_PLATEAU_SHARE * (near_bytes or l2_bytes) if (near_bytes or l2_bytes) else None
    ents = [e for e in rs.by_family("memory.l2_bandwidth") if qualifies(e, serves) and e.premise_level == "L2"]
    best: Dict[str, List[LevelCeiling]] = {}
    fp = lambda e: F.num(e, "footprint")  # noqa: E731
    for (kernel, walk, loads), grp in F.group(ents, ("kernel", "walk", "loads")).items():
        kind = KERNEL_KIND.get(kernel or "", kernel or "?")
        what = f"memory.l2_bandwidth kernel={kernel} walk={walk or '?'} loads={_int(loads)}"
        tail = lambda pts: _unchecked(pts, serves)  # noqa: E731
        near = [e for e in grp if near_bytes and fp(e) <= L2_PLATEAU_SHARE * near_bytes]
        far = [e for e in grp if near_bytes and l2_bytes and near_bytes < fp(e) <= l2_bytes]
        rows: List[LevelCeiling] = []
        if near and far and abs(_median(far) / _median(near) - 1) > L2_PARTITION_DIFFERENCE:
            rows.append(LevelCeiling("L2", kind, _median(near), _status(near), _ratio(near),
                                     f"{what}: median of its {len(near)} working sets up to "
                                     f"{L2_PLATEAU_SHARE:.0%} of the near partition{tail(near)}", near))
            rows.append(LevelCeiling("L2 far", kind, _median(far), _status(far), _ratio(far),
                                     f"{what}: median of its {len(far)} working sets between the near partition "
                                     f"and the L2 size{tail(far)}", far))
        else:
            top = L2_PLATEAU_SHARE * (l2_bytes or math.inf)
            pts = [e for e in grp if fp(e) <= top]
            if pts:
                if near and far:
                    where = f"near and far partitions alike (within {L2_PARTITION_DIFFERENCE:.0%})"
                elif not near_bytes:
                    where = "no near partition detected"
                else:
                    where = f"no premise-held working set {'beyond' if near else 'within'} the near partition"
                rows.append(LevelCeiling("L2", kind, _median(pts), _status(pts), _ratio(pts),
                                         f"{what}: median of its {len(pts)} working sets up to "
                                         f"{L2_PLATEAU_SHARE:.0%} of the L2 ({where}){tail(pts)}", pts))
        if rows and (kind not in best or rows[0].gbps > best[kind][0].gbps):
            best[kind] = rows
    return [c for rows in best.values() for c in rows]


def _median(entries: List[Entry]) -> float:
    return float(np.median([e.value for e in entries]))


def _int(v) -> str:
    return str(int(v)) if isinstance(v, float) and math.isfinite(v) else str(v)


def single_entry_ceilings(rs: ResultSet, family: str, level: str, kind: str) -> List[LevelCeiling]:
    ents = [e for e in rs.by_family(family) if qualifies(e) and e.premise_level == level]
    if not ents:
        return []
    top = max(ents, key=lambda e: e.value)
    params = ", ".join(f"{k}={v}" for k, v in top.params.items())
    return [LevelCeiling(level, kind, top.value, _status([top]), _ratio([top]),
                         f"{family} {params}: the best of its {len(ents)} entries{_unchecked([top])}", [top])]


# CUDA events resolve about half a microsecond (cudaEventElapsedTime's documentation).
EVENT_RESOLUTION_S = 0.5e-6


def shared_ceilings(rs: ResultSet) -> List[LevelCeiling]:
    """memory.shared_bandwidth's ceiling. Its event time is quantised when the timer's resolution is
    larger than the samples' spread (on the H100 every sample read 270,336 ns, giving exactly 32,768
    GB/s); the probe's clock64-based bytes per clock per SM x SMs x the entry's SM clock is then the
    figure (said in `how`), the event figure beside it."""
    out = single_entry_ceilings(rs, "memory.shared_bandwidth", "shared", "read")
    sms = rs.context_number("gpu_sm_count")
    for c in out:
        e = c.entries[0]
        per_clock, mhz, secs = e.num("bytes_per_clock_per_sm"), e.num("sm_clock_mhz"), e.num("time_median_s")
        if not all(math.isfinite(v) and v > 0 for v in (per_clock, mhz, secs, sms)):
            continue
        quantum = EVENT_RESOLUTION_S / secs
        spread = e.cv if math.isfinite(e.cv) else 0.0
        if quantum > spread:
            clocked = per_clock * sms * mhz * 1e6 / 1e9
            c.how += (f"; the event time ({secs * 1e9:,.0f} ns) is quantised (timer resolution "
                      f"{EVENT_RESOLUTION_S * 1e6:g} us = {100 * quantum:.2f} % of it, above the samples' spread "
                      f"{100 * spread:.2f} %), so the figure is the probe's clock64 one: {per_clock:.4g} B/clk/SM x "
                      f"{sms:g} SMs x {mhz:g} MHz (events: {c.gbps:,.0f} GB/s)")
            c.gbps = clocked
    return out


def missing_l2_read_ceiling(rs: ResultSet, near_bytes: Optional[float], l2_bytes: Optional[float]) -> Optional[str]:
    """Why memory.l2_bandwidth's read entries give no L2 read ceiling, where they exist and none qualifies:
    no counter checked them, and no working set that the L2 serves with margin holds its premise by
    construction (walk=blocks needs L2_BLOCKS_MERGE_FREE_ROW_BYTES per row, i.e. loads x that in bytes;
    walk=own_slice needs a ring of two chunks per SM): on a small L2 the probe's grid has no such point."""
    reads = [e for e in rs.by_family("memory.l2_bandwidth")
             if e.premise_level == "L2" and KERNEL_KIND.get(F.text(e, "kernel") or "") == "read" and usable(e)]
    serves = L2_PLATEAU_SHARE * (near_bytes or l2_bytes) if (near_bytes or l2_bytes) else None
    if not reads or any(qualifies(e, serves) for e in reads) or any(e.premise == "ok" for e in reads):
        return None
    loads = sorted({int(F.num(e, "loads")) for e in reads if F.text(e, "walk") == "blocks"
                    and math.isfinite(F.num(e, "loads"))})
    need = ", ".join(f"{L2_BLOCKS_MERGE_FREE_ROW_BYTES * n / 2**20:g} MiB at loads={n}" for n in loads)
    own = sorted(F.num(e, "footprint") for e in reads if F.text(e, "walk") == "own_slice")
    size = f"{serves / 2**20:.3g} MiB" if serves else "an unknown size"
    return (f"no L2 read ceiling: no counter checked memory.l2_bandwidth's read entries (premise unverified), and "
            f"none holds its premise by construction within the {size} the L2 serves with margin "
            f"({L2_PLATEAU_SHARE:.0%} of the {'near partition' if near_bytes else 'L2'}): walk=blocks qualifies only "
            f"with at least {L2_BLOCKS_MERGE_FREE_ROW_BYTES // 1024} KiB per row of each array"
            + (f" ({need})" if need else "")
            + (f", walk=own_slice only from its smallest ring ({own[0] / 2**20:.3g} MiB here)" if own else
               ", and no walk=own_slice entry is in the inputs")
            + "; walk=shared never (its loads merge). Run with counters (the premise is then measured), or on this "
              "L2 size the probe's grid has no qualifying point")


def level_ceilings(rs: ResultSet, near_bytes: Optional[float], l2_bytes: Optional[float]) -> List[LevelCeiling]:
    return (single_entry_ceilings(rs, "memory.l1_peak", "L1", "read") + l2_ceilings(rs, near_bytes, l2_bytes)
            + dram_ceilings(rs) + shared_ceilings(rs))


class _EntrySet:
    """The part of a ResultSet the ceiling functions read, over a given list of entries."""

    def __init__(self, entries: List[Entry], context: Dict[str, str]):
        self._entries, self._context = list(entries), context

    def by_family(self, family: str) -> List[Entry]:
        return [e for e in self._entries if e.family == family]

    def context_number(self, key: str) -> float:
        return to_number(self._context.get(key))


def ceiling_of(entries: List[Entry], context: Dict[str, str]) -> Optional[LevelCeiling]:
    """The ceiling the report's rules derive from these entries of one probe and one kind (e.g. one L2
    walk's working sets), without a latency sweep (so no near partition: the L2 plateau is taken up to
    L2_PLATEAU_SHARE of the L2 size in the context), or None when none of them qualifies. Fleet mode's
    figures go through here, so that a fleet's figures and the report's ceilings never disagree."""
    l2 = finite(to_number(context.get("gpu_l2_bytes")))
    found = level_ceilings(_EntrySet(entries, context), None, l2)  # type: ignore[arg-type]
    return max(found, key=lambda c: c.gbps) if found else None


def l2_serves_bytes(context: Dict[str, str]) -> Optional[float]:
    """The working set an L2 entry may use with margin when no latency sweep measured the partitions:
    L2_PLATEAU_SHARE of the context's L2 size."""
    l2 = finite(to_number(context.get("gpu_l2_bytes")))
    return L2_PLATEAU_SHARE * l2 if l2 else None


def premise_report(rs: ResultSet) -> dict:
    """Every entry that declares a premise: how many held, failed or went unchecked, and the failures
    with their measured ratio and the check's own sentence."""
    declared = [e for e in rs.entries if e.premise_level]
    counted = {s: sum(1 for e in declared if e.premise == s) for s in ("ok", "failed", "unverified")}
    failed = [{"entry": e.name, "level": e.premise_level, "ratio": finite(e.num("premise_ratio")),
               "why": e.premise_why or "failed", "value": finite(e.value), "unit": e.unit}
              for e in declared if e.premise == "failed"]
    checked = counted["ok"] + counted["failed"] > 0
    # Why no counters, where a file says (counters refused, or a gpuprobe built without the CUPTI backend:
    # then every figure is timing-only).
    unavailable = next((f.context["counters_unavailable"] for f in rs.files if f.context.get("counters_unavailable")),
                       None)
    return {"declared": len(declared), **counted, "failed_entries": failed, "counters_checked": checked,
            "verdict": ("no entry declares a premise" if not declared else
                        "ceilings verified by the counters" if checked and not counted["unverified"] else
                        "ceilings UNVERIFIED: no counter run checked the probes' premises"
                        + (f" ({unavailable})" if unavailable else "") if not checked else
                        f"{counted['unverified']} of {len(declared)} premises unchecked")}
