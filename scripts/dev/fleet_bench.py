#!/usr/bin/env python3
"""How long `gpuprobe-analyze fleet` takes on simulated fleets (analysis/tests/fleet_sim.py), for
docs/fleet.md: generates each fleet into a temporary folder, then times the command end to end (read,
statistics, fleet.json, fleet.md, fleet.png) in a fresh process. A benchmark, not a test.

    python3 scripts/dev/fleet_bench.py            # 1,024 and 10,000 files
    python3 scripts/dev/fleet_bench.py 2048       # other sizes
"""
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "analysis", "tests"))
from fleet_sim import make_fleet  # noqa: E402


def main(sizes):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "analysis"))
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            make_fleet(os.path.join(tmp, "r"), gpus=n)
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "gpuprobe_analysis", "fleet", os.path.join(tmp, "r"),
                                   "-o", os.path.join(tmp, "o")], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            first = proc.stdout.splitlines()[0] if proc.stdout else proc.stderr[-300:]
            print(f"{n} files: {wall:.1f} s wall, exit {proc.returncode} ({first}); {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1024, 10000])
