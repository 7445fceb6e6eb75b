#!/usr/bin/env python3
"""Per-kernel instruction mix of the SGEMM kernels from a `cuobjdump -sass` dump.

    cuobjdump -sass build-gpu/kernels/libgpuprobe_kernels.a | python3 scripts/dev/sgemm_sass_summary.py
    cuobjdump -sass build-gpu/lab/sgemm_variants/sgemm_variants | python3 scripts/dev/sgemm_sass_summary.py  # variants

For each sgemm kernel: FFMA count, shared loads by width (LDS.128 expected in the tuned inner loop),
cp.async (LDGSTS), global loads/stores by width, and local memory (LDL/STL: must be 0).
"""
import re
import sys
from collections import Counter

funcs, name = {}, None
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1)
        funcs[name] = Counter()
        continue
    if name is None:
        continue
    m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        funcs[name][m.group(1)] += 1

KEYS = ["FFMA", "LDS.128", "LDS.64", "LDS", "LDGSTS.E.BYPASS.128", "LDGSTS.E", "LDG.E", "LDG.E.128",
        "STG.E", "STG.E.128", "STS.128", "LDL", "STL", "BAR.SYNC.DEFER_BLOCKING"]
bad = 0
for fname, counts in sorted(funcs.items()):
    if "sgemm" not in fname:
        continue
    local = sum(v for k, v in counts.items() if k.startswith(("LDL", "STL")))
    bad += local > 0
    shown = ", ".join(f"{k} {counts[k]}" for k in KEYS if counts.get(k))
    others = ", ".join(f"{k} {v}" for k, v in counts.items() if k.startswith(("LDS", "LDG", "STG", "STS")) and k not in KEYS)
    print(f"{fname[:110]}\n    {shown}" + (f"; other: {others}" if others else "") + f"; local memory ops: {local}")
sys.exit(1 if bad else 0)
