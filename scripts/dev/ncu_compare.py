#!/usr/bin/env python3
"""Compares gpuprobe's CUPTI counter values with Nsight Compute's for the same entries.

  ncu_compare.py OURS.json NCU.csv --metrics=a,b,c [--tolerance=0.02]

OURS.json: a gpuprobe result file collected with --counters=...,replay=kernel (one range per kernel,
--ours-replay=kernel) or replay=user (one range around the entry's whole work, --ours-replay=user:
compare with ncu --replay-mode application, which, like user replay, neither saves nor restores
memory between passes). NCU.csv: rows of
`ncu --csv --page raw --print-units base`, with a first column "entry" naming the gpuprobe entry that
was run under ncu. The entry's kernels are those launched most often (warm-up and samples launch each
of them once per repetition; input fills run once), less the harness's L2 flush; the sum over them of ncu's median per kernel is
compared with our value, which sums the same kernels (replay=kernel) — when the kernel counts agree.
gpu__time_duration.sum is shown but not judged (time varies run to run; counts do not). Neither is a
DRAM metric whose value is below --dram-floor bytes (default 256 MiB, five L2s of an H100): such
small DRAM totals depend on what the L2 held when the kernel started (dirty lines written back,
inputs already resident), which differs between the tools — ncu flushes or restores memory its own
way, CUPTI's kernel replay leaves the lines of its memory restore dirty — so they are shown as
"state", not judged.
Exit status 1 if any judged value differs by more than the tolerance.
"""
import argparse
import csv
import json
import statistics
import sys
from collections import defaultdict

INFORMATIONAL = {"gpu__time_duration.sum"}
# The harness's own kernels, launched once per sample like the entry's: the L2 flush before each
# sample (flush_l2 -> read_through_kernel) is outside the timed region and outside our counter range.
HARNESS_KERNELS = ("read_through_kernel",)


def number(text):
    text = (text or "").replace(",", "").strip().strip('"')
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ours")
    ap.add_argument("ncu_csv")
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--dram-floor", type=float, default=256 * 2**20)
    ap.add_argument("--ours-replay", choices=("kernel", "user"), default="kernel",
                    help="how OURS.json was collected: a range per kernel, or one range per entry")
    args = ap.parse_args()
    metrics = [m for m in args.metrics.split(",") if m]

    with open(args.ours) as f:
        ours = {b["name"]: b for b in json.load(f)["benchmarks"]}

    launches = defaultdict(lambda: defaultdict(list))  # entry -> kernel -> [row]
    with open(args.ncu_csv) as f:
        for row in csv.DictReader(f):
            if number(row.get("ID")) is None:  # the units row
                continue
            kernel = row.get("Kernel Name", "?")
            if any(h in kernel for h in HARNESS_KERNELS):
                continue
            launches[row["entry"]][kernel].append(row)

    failures, compared = 0, 0
    print(f"{'entry / metric':70s} {'gpuprobe':>16s} {'ncu (median)':>16s} {'diff':>8s}")
    for entry in sorted(set(ours) | set(launches)):
        if entry not in ours or entry not in launches:
            print(f"{entry}: missing from {'ncu' if entry in ours else 'gpuprobe'} output")
            failures += 1
            continue
        mine = ours[entry]
        most = max(len(rows) for rows in launches[entry].values())
        kernels = {k: rows for k, rows in launches[entry].items() if len(rows) == most}
        ranges = mine.get("gpuprobe__counter_ranges")
        names = "; ".join(k[:60] for k in kernels)
        print(f"{entry}\n  {len(kernels)} kernel(s) x {most} launches under ncu ({names}); {ranges} range(s) ours")
        if args.ours_replay == "kernel" and ranges != len(kernels):
            print("  skipped: our ranges and ncu's kernels do not correspond")
            failures += 1
            continue
        for m in metrics:
            medians = []
            for rows in kernels.values():
                values = [v for v in (number(r.get(m)) for r in rows) if v is not None]
                if values:
                    medians.append(statistics.median(values))
            if m not in mine or len(medians) != len(kernels):
                print(f"  {m:68s} missing ({'ours' if m not in mine else 'ncu'})")
                failures += 1
                continue
            theirs = sum(medians)
            diff = (mine[m] - theirs) / theirs if theirs else (0.0 if mine[m] == 0 else float("inf"))
            state = m.startswith("dram__") and theirs < args.dram_floor
            judged = m not in INFORMATIONAL and not state
            bad = judged and abs(diff) > args.tolerance
            compared += judged
            failures += bad
            flag = "FAIL" if bad else ("state" if state else ("info" if not judged else "ok"))
            print(f"  {m:68s} {mine[m]:16.6g} {theirs:16.6g} {diff * 100:+7.2f}% {flag}")
    print(f"ncu_compare: {compared} values judged, {failures} outside ±{args.tolerance * 100:.1f}% or missing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
