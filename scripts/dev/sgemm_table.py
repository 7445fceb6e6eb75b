"""The issue-44 table from a kernels.sgemm benchmark JSON (gpuprobe --benchmark_out=..., development):
    python3 scripts/dev/sgemm_table.py SGEMM.json
One row per shape: ours (the dispatcher, kAuto, and the kernel it ran), cuBLAS (default math) in the same
run, their ratio, SM clock and board power of each, and kTuned's and kSmall's own ratios where they ran."""
import json
import sys


def label_fields(label):
    return dict(p.split("=", 1) for p in label.split(";") if "=" in p)


def main():
    runs = json.load(open(sys.argv[1]))["benchmarks"]
    by = {}
    for b in runs:
        if b.get("run_type") != "iteration" or "error_occurred" in b:
            continue
        f = label_fields(b.get("label", ""))
        parts = dict(p.split(":", 1) for p in b["name"].split("/")[1:] if ":" in p)
        key = (parts["trans"], int(parts["m"]), int(parts["n"]), int(parts["k"]))
        by.setdefault(key, {})[parts["impl"]] = {"gflops": b.get("value_median", b.get("gflops")),
                                                 "clock": b.get("sm_clock_mhz"), "power": b.get("power_w"),
                                                 "kernel": f.get("kernel", "")}
    print("| shape | ours (kAuto) GFLOP/s | kernel run | cuBLAS GFLOP/s | ours / cuBLAS | SM MHz ours, cuBLAS "
          "| power W ours, cuBLAS | tuned / cuBLAS | small / cuBLAS |")
    print("|---|---|---|---|---|---|---|---|---|")
    order = {"nn": 0, "nt": 1, "tn": 2, "tt": 3}
    for key in sorted(by, key=lambda k: (k[1] * k[2] * k[3], order[k[0]])):
        r = by[key]
        ours, ref = r.get("ours_auto"), r.get("cublas_default")
        if not ours or not ref:
            continue
        def ratio(name):
            x = r.get(name)
            return f"{x['gflops'] / ref['gflops']:.3f}" if x else "–"
        def num(x, fmt="{:.0f}"):
            return fmt.format(x) if x is not None else "–"
        m, n, k = key[1:]
        shape = f"{key[0].upper()} {m}³" if m == n == k else f"{key[0].upper()} {m} x {n} x {k}"
        print(f"| {shape} | {ours['gflops']:,.0f} | {ours['kernel']} | {ref['gflops']:,.0f} | "
              f"**{ours['gflops'] / ref['gflops']:.3f}** | {num(ours['clock'])}, {num(ref['clock'])} | "
              f"{num(ours['power'])}, {num(ref['power'])} | {ratio('ours_tuned')} | {ratio('ours_small')} |")


if __name__ == "__main__":
    main()
