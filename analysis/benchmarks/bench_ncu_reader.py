"""Benchmark (not a test): read and reduce a SYNTHETIC 10,000-launch Nsight Compute raw-page export.

    PYTHONPATH=analysis:analysis/tests python3 analysis/benchmarks/bench_ncu_reader.py [--launches N] [--repeats R]

The issue asks for an export of 10,000 launches analysed in at most 10 s on the CPU machine; this times the
reader's part (ncu.read_profile), the median of R runs."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from gpuprobe_analysis import ncu  # noqa: E402
from ncu_synth import synthetic_raw_csv  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    text = synthetic_raw_csv(args.launches, nvtx=lambda i: ("train_step", ("forward", "backward")[i % 2], f"layer{i % 12}"))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "synthetic_profile.csv")
        with open(path, "w") as f:
            f.write(text)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            p = ncu.read_profile(path)
            times.append(time.perf_counter() - t0)
        assert len(p.launches) == args.launches
    print(f"read_profile: {args.launches} launches ({len(text) / 1e6:.1f} MB SYNTHETIC raw CSV, "
          f"{len(ncu.M.METRICS)} declared metrics): median {statistics.median(times):.3f} s over {args.repeats} "
          f"runs (min {min(times):.3f}, max {max(times):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
