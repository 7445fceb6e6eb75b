"""Benchmark (not a test): the whole `gpuprobe-analyze app` path on a SYNTHETIC 10,000-launch export.

    PYTHONPATH=analysis:analysis/tests python3 analysis/benchmarks/bench_app_verdict.py [--device reports/h200]
        [--launches N] [--repeats R]

The issue asks for an export of 10,000 launches analysed in at most 10 s on the CPU machine. This times each
step, the median of R runs: reading the export (ncu.read_profile), judging every launch (app_verdict.judge),
and writing the page (report.build_app_report: JSON, figure, HTML, Markdown). The device results' ceilings
are built once before (seconds with their level fits in $GPUPROBE_FIT_CACHE, about a minute without): they
are the device's, not the export's, and `app` builds them once per command whatever the export's size."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from gpuprobe_analysis import cli, ncu, results  # noqa: E402
from gpuprobe_analysis.report import build_app_report  # noqa: E402
from gpuprobe_analysis.sections.app_kernels import DeviceCeilings  # noqa: E402
from ncu_synth import synthetic_raw_csv  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                     "reports", "h200"))
    ap.add_argument("--launches", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rs = results.load(cli.result_paths(args.device))
    device = DeviceCeilings.of(rs)
    ceilings_s = time.perf_counter() - t0
    text = synthetic_raw_csv(args.launches, device=device.device,
                             nvtx=lambda i: ("train_step", ("forward", "backward")[i % 2], f"layer{i % 12}"))
    steps = {"read": [], "judge": [], "page": []}
    cpu = []  # this process's CPU seconds for the three steps: on a shared machine the wall time is not the work
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "synthetic_profile.csv")
        with open(path, "w") as f:
            f.write(text)
        for r in range(args.repeats):
            c0 = time.process_time()
            t0 = time.perf_counter()
            p = ncu.read_profile(path)
            t1 = time.perf_counter()
            v = device.judge(p)
            t2 = time.perf_counter()
            build_app_report(v, os.path.join(d, f"page{r}"), top=20)
            t3 = time.perf_counter()
            cpu.append(time.process_time() - c0)
            steps["read"].append(t1 - t0)
            steps["judge"].append(t2 - t1)
            steps["page"].append(t3 - t2)
        assert len(v.launches) == args.launches
    med = {k: statistics.median(x) for k, x in steps.items()}
    print(f"{args.launches} launches ({len(text) / 1e6:.1f} MB SYNTHETIC raw CSV), {len(v.kernels)} kernel groups, "
          f"{len(v.ranges)} NVTX ranges; median of {args.repeats} runs: read {med['read']:.2f} s, judge "
          f"{med['judge']:.2f} s, page {med['page']:.2f} s, total {sum(med.values()):.2f} s wall, {statistics.median(cpu):.2f} s CPU "
          f"(the device's ceilings, once: {ceilings_s:.1f} s; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
