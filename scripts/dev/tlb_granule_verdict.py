#!/usr/bin/env python3
"""Reads lab/experiments/tlb_granule's CSV and says what memory.tlb's 16 MiB TLB granule is.

    python3 scripts/dev/tlb_granule_verdict.py tlb_granule.csv

The question (issue 32, lab/experiments/tlb_16mib.md): is the 16 MiB granule the page, or one TLB entry
covering 8 physically contiguous 2 MiB pages? tlb_granule chases the same fixed-stride chains on buffers
that differ only in how virtual addresses reach physical memory (cudamalloc, vmm_one_handle,
vmm_in_order, vmm_scrambled: tlb_granule.cu says what each guarantees).

Per (mapping, stride) curve of cycles per load against the footprint, the knee: the one split of the
curve into a lower and a higher part (>= 2 points each) that fits best (least absolute deviation from
each part's median), kept when the step between the parts' medians is at least MIN_STEP_SIGMAS noise
sigmas (gpuprobe_analysis.levels.estimate_noise, as for memory.tlb) and MIN_STEP_FRACTION of the base.
Printed: the base, the reach (last footprint at the base), the knee (first footprint above it), the
plateau and the step. (Not a fixed "+20 % over the smallest footprint": a TLB miss on the H200 adds
~14 cycles to ~275, 5 %, and where a short chain's lines fall in the L2 moves single points by a few.)

The two hypotheses predict, with E entries (from the reference mapping's knee at a stride of at least
the granule, where both agree: reach = E x stride) and a stride S below the 16 MiB granule G:
- 16 MiB is the page (or an entry covering 16 MiB of VA whatever lies behind it): every mapping's reach
  is E x G, and the step is diluted to S / G of a miss (G / S loads share a translation), so at 2 and
  4 MiB it hardly shows (1.75 and 3.5 cycles on the H200);
- an entry coalesces 8 physically contiguous 2 MiB pages: the contiguous mappings behave as above, but
  the scrambled one has 2 MiB entries: reach E x S, and a full miss per load beyond it.
A curve's knee is called "small pages" when its reach lies below the geometric mean of E x S and E x G
(nearer the coalescing prediction), or when its step is at least half the reference's whole miss (its
step at the stride >= G: a diluted 16 MiB miss is at most S / G of it, so 2 MiB entries of another
count show this way); else, and without a knee, "granule".
Verdict: "16 MiB is the page (or a VA-contiguous entry)" when vmm_scrambled is "granule" at every such
stride; "entries coalesce physically contiguous 2 MiB pages" when it is "small pages" at every such
stride; both need the reference (vmm_one_handle, else cudamalloc) to be "granule" there. The page
verdict also needs every mapping's knee at the strides >= G to agree with the reference's within half
an octave (the control: a 16 MiB page predicts the same knee there whatever the mapping; 2 MiB entries
held in another count may not, which the coalescing verdict then lists). Anything else is
inconclusive, with the reasons.
Exit status: 0 with a verdict, 1 inconclusive, 2 unreadable input.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "analysis"))
from gpuprobe_analysis.levels import estimate_noise  # noqa: E402

MIB = 1 << 20
GRANULE = 16 * MIB  # memory.tlb's page on the H200, the granule under test
# A knee's step must reach this many noise sigmas (relative to the base) ... (as tlb.py's levels)
MIN_STEP_SIGMAS = 4.0
# ... and this fraction of the base: 5.5 cycles on the H200's ~275, against a 14-cycle miss there and a
# 1.75-cycle diluted one at 2 MiB strides on a 16 MiB page (which is not a knee this should see).
MIN_STEP_FRACTION = 0.02
MIN_POINTS_EACH_SIDE = 2
CONTROL_TOLERANCE = math.sqrt(2.0)  # half an octave
UNDILUTED_FRACTION = 0.5  # of the reference's whole miss: see classify()
REFERENCES = ("vmm_one_handle", "cudamalloc")
SCRAMBLED = "vmm_scrambled"
IN_ORDER = "vmm_in_order"
COLUMNS = ("mapping", "stride_bytes", "footprint_bytes", "elements", "cycles_per_load")

PAGE = "16 MiB is the page (or a VA-contiguous entry)"
COALESCE = "entries coalesce physically contiguous 2 MiB pages"


class InputError(Exception):
    pass


@dataclass
class Knee:
    base: float
    reach: Optional[float] = None  # last footprint at the base (bytes); None: no knee
    knee: Optional[float] = None  # first footprint above it
    plateau: Optional[float] = None
    threshold: float = 0.0
    largest: float = 0.0  # the curve's largest footprint

    @property
    def step(self) -> Optional[float]:
        return None if self.plateau is None else self.plateau - self.base


def read_csv(path: str) -> Tuple[Dict[Tuple[str, int], List[Tuple[int, float]]], List[str]]:
    """Curves {(mapping, stride): [(footprint, cycles)] by footprint} and the '#' lines."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e}") from e
    comments = [ln for ln in lines if ln.startswith("#")]
    rows = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    if not rows:
        raise InputError(f"{path}: no CSV header or rows (did tlb_granule run? its '#' lines: {len(comments)})")
    reader = csv.DictReader(rows)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{path}: header lacks {', '.join(missing)}")
    curves: Dict[Tuple[str, int], List[Tuple[int, float]]] = {}
    for n, row in enumerate(reader, start=2):
        try:
            stride, footprint = int(row["stride_bytes"]), int(row["footprint_bytes"])
            cycles = float(row["cycles_per_load"])
        except (TypeError, ValueError) as e:
            raise InputError(f"{path}: data row {n}: {e}") from e
        if stride <= 0 or footprint <= 0 or not (cycles > 0 and math.isfinite(cycles)):
            raise InputError(f"{path}: data row {n}: stride, footprint and cycles must be positive")
        curves.setdefault((row["mapping"], stride), []).append((footprint, cycles))
    if not curves:
        raise InputError(f"{path}: a header but no data rows")
    for pts in curves.values():
        pts.sort()
    return curves, comments


def find_knee(points: List[Tuple[int, float]]) -> Knee:
    f = np.array([p[0] for p in points], float)
    y = np.array([p[1] for p in points], float)
    largest = float(f[-1])
    if len(y) < 2 * MIN_POINTS_EACH_SIDE:
        return Knee(base=float(np.median(y)), largest=largest)
    best = None
    for k in range(MIN_POINTS_EACH_SIDE, len(y) - MIN_POINTS_EACH_SIDE + 1):
        lo, hi = np.median(y[:k]), np.median(y[k:])
        if hi <= lo:
            continue
        cost = float(np.abs(y[:k] - lo).sum() + np.abs(y[k:] - hi).sum())
        if best is None or cost < best[0]:
            best = (cost, k, float(lo), float(hi))
    if best is None:
        return Knee(base=float(np.median(y)), largest=largest)
    _, k, lo, hi = best
    threshold = max(MIN_STEP_SIGMAS * estimate_noise(y) * lo, MIN_STEP_FRACTION * lo)
    if hi - lo < threshold:
        return Knee(base=float(np.median(y)), threshold=threshold, largest=largest)
    return Knee(base=lo, reach=float(f[k - 1]), knee=float(f[k]), plateau=hi, threshold=threshold, largest=largest)


def mib(b: Optional[float]) -> str:
    if b is None:
        return "-"
    return f"{b / MIB:g} MiB"


def classify(knee: Knee, stride: float, entries: float, penalty: float) -> str:
    """'small pages' or 'granule' (see the module doc) for a stride below the granule."""
    if knee.reach is None:
        return "granule"
    if knee.reach < math.sqrt(entries * stride * entries * GRANULE):
        return "small pages"
    # Beyond the granule's reach: a 16 MiB entry shares its miss among GRANULE / stride loads; a step of
    # half a whole miss or more means every load missed on its own.
    return "small pages" if knee.step >= UNDILUTED_FRACTION * penalty else "granule"


def verdict(knees: Dict[Tuple[str, int], Knee]) -> Tuple[Optional[str], List[str]]:
    """(verdict or None, the lines that explain it)."""
    lines: List[str] = []
    mappings = sorted({m for m, _ in knees})
    reference = next((m for m in REFERENCES if m in mappings), None)
    if reference is None:
        return None, [f"no reference mapping ({' or '.join(REFERENCES)}) in the data"]
    if SCRAMBLED not in mappings:
        return None, [f"no {SCRAMBLED} rows (skipped? see the '#' lines)"]
    strides = sorted({s for _, s in knees})
    control = [s for s in strides if s >= GRANULE and (reference, s) in knees and knees[(reference, s)].reach]
    if not control:
        return None, [f"the reference {reference} shows no knee at any stride >= {mib(GRANULE)}: "
                      "memory.tlb's granule is not reproduced, so there is nothing to test"]
    c = control[0]
    entries = knees[(reference, c)].reach / c
    penalty = knees[(reference, c)].step
    lines.append(f"entries: {entries:g}, a miss {penalty:.1f} cycles ({reference}'s reach "
                 f"{mib(knees[(reference, c)].reach)} and step at stride {mib(c)})")
    problems: List[str] = []
    control_problems: List[str] = []
    for s in control:
        ref = knees[(reference, s)].reach
        for m in mappings:
            k = knees.get((m, s))
            if k is None:
                continue
            if k.reach is None or not (ref / CONTROL_TOLERANCE <= k.reach <= ref * CONTROL_TOLERANCE):
                control_problems.append(f"control: {m} at stride {mib(s)} has reach {mib(k.reach)} against "
                                        f"{reference}'s {mib(ref)}")
    testing = [s for s in strides if s < GRANULE]
    if not testing:
        problems.append(f"no stride below {mib(GRANULE)}: nothing tells the hypotheses apart")
    classes: Dict[str, List[str]] = {}
    for s in testing:
        lines.append(f"stride {mib(s)}: 16 MiB granule -> reach {mib(entries * GRANULE)} (step diluted to "
                     f"{s / GRANULE:g} of a miss); 2 MiB entries -> reach {mib(entries * s)}")
        for m in mappings:
            k = knees.get((m, s))
            if k is None:
                if m in (reference, SCRAMBLED):
                    problems.append(f"no {m} curve at stride {mib(s)}")
                continue
            cls = classify(k, s, entries, penalty)
            classes.setdefault(m, []).append(cls)
            where = (f"reach {mib(k.reach)}, step {k.step:.1f}" if k.reach else f"no knee up to {mib(k.largest)}")
            lines.append(f"  {m}: {where} -> {cls}")
    if any(c != "granule" for c in classes.get(reference, [])):
        problems.append(f"the reference {reference} itself shows small-page knees: it does not reproduce "
                        "memory.tlb's 16 MiB granule")
    scrambled = classes.get(SCRAMBLED, [])
    if IN_ORDER in classes and scrambled:
        same = classes[IN_ORDER] == scrambled
        lines.append(f"{IN_ORDER} (the same chunks as {SCRAMBLED}, in creation order) behaves like "
                     f"{SCRAMBLED if same else reference}" + (
                         ": separately created chunks are not coalesced even in order" if same and
                         "small pages" in scrambled else ""))
    if problems:
        return None, lines + control_problems + problems
    if scrambled and all(c == "granule" for c in scrambled):
        if control_problems:
            return None, lines + control_problems + [
                "a 16 MiB page predicts the same knee for every mapping at these strides"]
        return PAGE, lines
    if scrambled and all(c == "small pages" for c in scrambled):
        # A control mismatch here says the scrambled mapping's 2 MiB entries are not counted like the
        # 16 MiB ones (another structure or count): coalescing still, the lines say how.
        return COALESCE, lines + control_problems
    return None, lines + control_problems + [
        f"{SCRAMBLED} is 'small pages' at some strides and 'granule' at others: {scrambled}"]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="tlb_granule's stdout")
    args = ap.parse_args(argv)
    try:
        curves, comments = read_csv(args.csv)
    except InputError as e:
        print(f"tlb_granule_verdict: {e}", file=sys.stderr)
        return 2
    for ln in comments:
        print(ln)
    knees = {key: find_knee(pts) for key, pts in curves.items()}
    print(f"{'mapping':<16} {'stride':>8} {'base':>7} {'reach':>9} {'knee':>9} {'plateau':>8} {'step':>6} "
          f"{'threshold':>9}")
    for (m, s), k in sorted(knees.items()):
        step = "-" if k.step is None else f"{k.step:.1f}"
        plateau = "-" if k.plateau is None else f"{k.plateau:.1f}"
        reach = mib(k.reach) if k.reach else f"> {mib(k.largest)}"
        print(f"{m:<16} {mib(s):>8} {k.base:>7.1f} {reach:>9} {mib(k.knee):>9} {plateau:>8} {step:>6} "
              f"{k.threshold:>9.1f}")
    result, lines = verdict(knees)
    for ln in lines:
        print(ln)
    print(f"verdict: {result}" if result else "verdict: inconclusive")
    return 0 if result else 1


if __name__ == "__main__":
    sys.exit(main())
