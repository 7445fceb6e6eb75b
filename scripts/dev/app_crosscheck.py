#!/usr/bin/env python3
"""The application path checked on our own kernels: gpuprobe profiled as an application (scripts/profile_app.sh)
against gpuprobe's own figures for the same entries.

  app_crosscheck.py --ncu PROFILE.csv --ncu-results UNDER_NCU.json --ours OURS.json --device DEVICE [-o TABLE.md]

PROFILE.csv: scripts/profile_app.sh's export of `gpuprobe --benchmark_filter=RE --benchmark_out=UNDER_NCU.json`;
the harness puts each entry's timed samples in the NVTX range "gpuprobe:ENTRY", so every launch names its
entry; the harness's own kernels (input fills, the L2 flush, the launch gate) are left out. UNDER_NCU.json
gives each entry's sample count in that run. OURS.json: the same entries run with --counters=roofline (our
CUPTI counters, one replay of one sample). DEVICE: the device results whose ceilings judge both (a main job's
folder, with these kernels' entries in it: its optimality table is the report's % of bound).

Per entry and per sample:
- FLOPs: the application path's count (SASS counters x NVIDIA's weights, tensor ops per type) against our
  CUPTI count of the same counters (must be equal: `--flop-tolerance`, default 0) and beside the kernel
  descriptor's flops_per_sample; for tensor work (no CUPTI count in the roofline set) against the descriptor
  (`--tensor-tolerance`, default 1 %), which also settles the tensor counters' weight (FLOP, not MAC);
- bytes per level (DRAM, L2, L1) against our CUPTI counters (within `--byte-tolerance`, default 2 %);
- % of bound: the application verdict's (bound over actual time of the entry's launches) against the report's
  optimality row for the entry (within `--bound-tolerance`, default 3 % of the report's figure), judged where
  the kernel moves its minimal bytes (the report's excess traffic within the byte tolerance): the report bounds
  by the descriptor's minimal bytes, the application path by the counted ones.
Exit 1 when any judged figure is off, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "analysis"))
from gpuprobe_analysis import families as F  # noqa: E402
from gpuprobe_analysis import ncu, results  # noqa: E402
from gpuprobe_analysis.cli import result_paths  # noqa: E402
from gpuprobe_analysis.compare import GBENCH_SUFFIX  # noqa: E402
from gpuprobe_analysis.sections import device_profile  # noqa: E402
from gpuprobe_analysis.sections.app_kernels import DeviceCeilings  # noqa: E402
from gpuprobe_analysis import app_verdict as V  # noqa: E402

RANGE_PREFIX = "gpuprobe:"
# The harness's kernels, launched inside the samples' range but outside the timed work (fill.cu, launch_gate.cu).
HARNESS_KERNELS = ("read_through_kernel", "launch_gate_kernel", "fill_uniform_kernel", "fill_constant_kernel")


def registered(name: str) -> str:
    """The registered name (the NVTX range's) of a JSON entry: without Google Benchmark's run suffixes."""
    return GBENCH_SUFFIX.sub("", name)


def entry_of(launch) -> str | None:
    for r in launch.nvtx:
        if r.startswith(RANGE_PREFIX):
            return r[len(RANGE_PREFIX):]
    return None


# A level's bytes are judged where they need at least this share of the launches' time at the level's ceiling.
BYTES_THAT_BIND = 0.05


def level_of(ceiling: str) -> str:
    """A memory ceiling's level ("DRAM copy" -> "DRAM"); a compute ceiling's own name ("BF16 tensor")."""
    first = ceiling.split()[0]
    return first if first in F.LEVEL_BYTES else ceiling


def calls(entry) -> float:
    """Calls of the timed work per sample (1 for an entry that times one call per sample)."""
    c = entry.num("calls_per_sample")
    return c if c > 0 else 1.0


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else (0.0 if a == 0 else math.inf)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--ncu-results", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--device", required=True, nargs="+")
    ap.add_argument("--flop-tolerance", type=float, default=0.0)
    ap.add_argument("--tensor-tolerance", type=float, default=0.01)
    ap.add_argument("--byte-tolerance", type=float, default=0.02)
    ap.add_argument("--bound-tolerance", type=float, default=0.03)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    try:
        profile = ncu.read_profile(a.ncu)
    except ncu.ProfileError as exc:
        print(f"app_crosscheck: {exc}", file=sys.stderr)
        return 1
    under = {registered(e.name): e for e in results.load([a.ncu_results]).entries}
    ours = {registered(e.name): e for e in results.load([a.ours]).entries}
    device_rs = results.load([p for d in a.device for p in result_paths(d)])
    device = DeviceCeilings.of(device_rs)
    ceilings = {c.name: c for c in device.ceilings}
    report_rows = {registered(r["entry"]): r for r in device_profile(device_rs).get("optimality", [])}

    by_entry = defaultdict(list)
    for launch in profile.launches:
        name = entry_of(launch)
        if name and not any(h in launch.kernel for h in HARNESS_KERNELS):
            by_entry[name].append(launch)
    if not by_entry:
        print(f"app_crosscheck: no launch of {a.ncu} is inside a '{RANGE_PREFIX}ENTRY' NVTX range "
              "(was it profiled with NVTX on, by scripts/profile_app.sh?)", file=sys.stderr)
        return 1

    lines = ["| entry | calls/sample | launches/call | SM clock MHz | FLOP/call ncu | ours (CUPTI) | descriptor | "
             "DRAM ncu/ours | L2 ncu/ours | L1 ncu/ours | % of bound ncu path | report | verdict |", "|" + "---|" * 13]
    bad = 0
    for name in sorted(by_entry):
        launches, e_under, e_ours = by_entry[name], under.get(name), ours.get(name)
        if e_under is None or e_ours is None:
            lines.append(f"| {name} | | {len(launches)} launches | | entry missing from "
                         f"{'the ncu run' if e_under is None else 'ours'} | | | | | | | | skipped |")
            continue
        samples = e_under.num("samples")
        if not (samples > 0):
            lines.append(f"| {name} | | {len(launches)} launches | | no sample count in {a.ncu_results} | | | | | | | | skipped |")
            continue
        # Per call: an entry that times back-to-back calls (calls_per_sample, chosen by time) makes a different
        # number of them under ncu than in our counter run.
        calls_ncu, calls_ours = calls(e_under), calls(e_ours)
        per_call = samples * calls_ncu
        ncu_flops = sum(l.total_flops for l in launches) / per_call
        ours_flops = sum(e_ours.counters[m] * w for m, w, _ in F.FLOP_METRICS if m in e_ours.counters) / calls_ours
        descriptor = e_under.num("flops_per_sample") / calls_ncu
        problems, notes = [], []
        # Tensor work has no CUPTI count in the roofline set: there the reference is the descriptor's count
        # (2mnk for a GEMM) of the same run, which a library kernel may exceed by its own epilogue or split-k.
        tensor = any(l.tensor_ops for l in launches) or e_under.num("flops_per_sample") > 0 and not ours_flops
        reference, tolerance = (descriptor, a.tensor_tolerance) if tensor else (ours_flops, a.flop_tolerance)
        compared = ncu_flops
        if not tensor:
            # Ours counts the precisions of F.FLOP_METRICS only: the ncu path's other precisions (half2
            # instructions in an FP32 kernel) are named, not compared.
            counted = {prec for _, _, prec in F.FLOP_METRICS}
            others: dict = defaultdict(float)
            for l in launches:
                for prec, f in l.flops.items():
                    if prec not in counted:
                        others[prec] += f / per_call
            compared = ncu_flops - sum(others.values())
            notes += [f"{prec} {f:,.0f} FLOP/call not in our count" for prec, f in sorted(others.items()) if f]
        if rel(compared, reference) > tolerance:
            problems.append("FLOPs")
        verdicts = [V.judge_launch(l, ceilings, V.cache_control(profile.notes)) for l in launches]
        actual = sum(v.actual_s for v in verdicts)
        ratios = {}
        for level, alternatives in F.LEVEL_BYTES.items():
            ours_b = next((sum(e_ours.counters[m] for m in ms) for ms in alternatives
                           if all(m in e_ours.counters for m in ms)), None)
            ours_b = ours_b / calls_ours if ours_b is not None else None
            ncu_b = sum(l.bytes.get(level, 0.0) for l in launches) / per_call
            ratios[level] = ncu_b / ours_b if ours_b else math.nan
            # Bytes that cannot bind are not judged: a level whose bytes need under BYTES_THAT_BIND of the
            # launches' time at its ceiling (a compute probe's few bytes) moves no bound, whatever its count.
            level_s = sum(r.seconds or 0.0 for v in verdicts for r in v.resources
                          if r.kind == "bytes" and r.name.split()[0] == level)
            if ours_b and rel(ncu_b, ours_b) > a.byte_tolerance:
                if actual > 0 and level_s / actual < BYTES_THAT_BIND:
                    notes.append(f"{level} bytes not judged ({100 * level_s / actual:.2g} % of the time at its ceiling)")
                else:
                    problems.append(f"{level} bytes")
        bound = sum(v.bound_s or 0.0 for v in verdicts)
        ncu_pct = 100.0 * bound / actual if actual > 0 else math.nan
        row = report_rows.get(name)
        report_pct = row.get("pct_of_bound") if row else None
        # The report bounds our kernels by their descriptor's minimal bytes, the application path by the
        # counted bytes: the two agree only where the kernel moves no more than its minimal bytes.
        excess = row.get("excess_traffic") if row else None
        by_design = excess is not None and abs(excess - 1) > a.byte_tolerance
        # Each path's limiter: the report's (minimal bytes and the declared compute ceiling) and the one that
        # binds most of the ncu path's bound time (every resource counted, the L2's bytes too).
        binding_s: dict = defaultdict(float)
        for v in verdicts:
            if v.binding is not None:
                binding_s[v.binding.name] += v.bound_s
        ncu_limiter = max(binding_s, key=binding_s.get) if binding_s else None
        report_limiter = row.get("limiter") if row else None
        same_limiter = bool(ncu_limiter and report_limiter) and level_of(ncu_limiter) == level_of(report_limiter)
        if by_design:
            notes.append(f"% of bound not judged: {excess:.3f}x its minimal bytes, which the report bounds")
        elif report_pct is not None and not same_limiter:
            notes.append(f"% of bound not judged: the ncu path is bound by {ncu_limiter} (counted bytes), the "
                         f"report by {report_limiter} (minimal bytes and the declared ceiling)")
        elif report_pct is not None and rel(ncu_pct, report_pct) > a.bound_tolerance:
            problems.append("% of bound")
        clocks = [l.sm_clock_hz / 1e6 for l in launches if math.isfinite(l.sm_clock_hz)]
        bad += bool(problems)
        fmt = lambda r: f"{r:.4f}" if math.isfinite(r) else "-"  # noqa: E731
        verdict = ("off: " + ", ".join(problems) if problems else "ok") + "".join(f"; {n}" for n in notes)
        lines.append(f"| {name} | {calls_ncu:g} | {len(launches) / per_call:g} | "
                     f"{min(clocks):.0f}-{max(clocks):.0f} | " if clocks else f"| {name} | {calls_ncu:g} | "
                     f"{len(launches) / per_call:g} | - | ")
        lines[-1] += (f"{ncu_flops:,.0f} | {ours_flops:,.0f} | {descriptor:,.0f} | {fmt(ratios['DRAM'])} | "
                      f"{fmt(ratios['L2'])} | {fmt(ratios['L1'])} | {ncu_pct:.1f} | "
                      f"{'-' if report_pct is None else f'{report_pct:.1f}'} | {verdict} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.output:
        with open(a.output, "w") as fh:
            fh.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
