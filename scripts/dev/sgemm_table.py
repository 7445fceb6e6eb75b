"""The issue-44 table from a kernels.sgemm benchmark JSON (gpuprobe --benchmark_out=..., development):
    python3 scripts/dev/sgemm_table.py SGEMM.json
One row per shape: ours (the dispatcher, kAuto, and the kernel it ran), cuBLAS (default math) in the same
run, their ratio, SM clock and board power of each, and kTuned's and kSmall's own ratios where they ran.
The file is read by the analysis's own reader (gpuprobe_analysis.results)."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "analysis"))
from gpuprobe_analysis import results  # noqa: E402

ORDER = {"nn": 0, "nt": 1, "tn": 2, "tt": 3}


def main():
    rs = results.load(sys.argv[1:2])
    by = {}
    for e in rs.by_family("kernels.sgemm"):
        key = (e.tag("trans"), int(e.num("m")), int(e.num("n")), int(e.num("k")))
        by.setdefault(key, {})[e.tag("impl")] = e
    print("| shape | ours (kAuto) GFLOP/s | kernel run | cuBLAS GFLOP/s | ours / cuBLAS | SM MHz ours, cuBLAS "
          "| power W ours, cuBLAS | tuned / cuBLAS | small / cuBLAS |")
    print("|---|---|---|---|---|---|---|---|---|")

    def num(x):
        return f"{x:.0f}" if math.isfinite(x) else "–"

    for key in sorted(by, key=lambda k: (k[1] * k[2] * k[3], ORDER[k[0]])):
        r = by[key]
        ours, ref = r.get("ours_auto"), r.get("cublas_default")
        if not ours or not ref:
            continue

        def ratio(name):
            return f"{r[name].value / ref.value:.3f}" if name in r else "–"
        m, n, k = key[1:]
        shape = f"{key[0].upper()} {m}³" if m == n == k else f"{key[0].upper()} {m} x {n} x {k}"
        print(f"| {shape} | {ours.value:,.0f} | {ours.tag('kernel')} | {ref.value:,.0f} | "
              f"**{ours.value / ref.value:.3f}** | {num(ours.num('sm_clock_mhz'))}, {num(ref.num('sm_clock_mhz'))} | "
              f"{num(ours.num('power_w'))}, {num(ref.num('power_w'))} | {ratio('ours_tuned')} | {ratio('ours_small')} |")


if __name__ == "__main__":
    main()
