#!/usr/bin/env python3
"""One line per entry of a multi-GPU run (scripts/dev/multigpu_run.sh): name, median, CV, and the fields
that say whether the figure can be trusted (gate timeouts, busbw, bound inputs). For reading device
output quickly; the report is the real presentation.
    python3 scripts/dev/multigpu_summary.py OUTDIR/multigpu.json.gz [REGEX]"""
import gzip
import json
import re
import sys

path = sys.argv[1]
rx = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt") as fh:
    doc = json.load(fh)
print(doc["context"].get("gpu_name"), "x", doc["context"].get("gpu_count", "?"))
for b in doc["benchmarks"]:
    name = re.sub(r"/iterations:\d+.*", "", b["name"])
    if rx and not rx.search(name):
        continue
    unit = dict(p.split("=", 1) for p in b.get("label", "").split(";") if "=" in p).get("unit", "")
    extra = " ".join(f"{k}={b[k]:.4g}" for k in ("busbw_gbps", "cycles_per_op", "launch_gate_timeouts") if k in b)
    print(f"{name:90s} {b.get('value_median', float('nan')):11.2f} {unit:8s} cv={b.get('value_cv', float('nan')):.3f} {extra}")
