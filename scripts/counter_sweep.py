#!/usr/bin/env python3
"""Counter sweep: kernels x implementations x sizes x precisions x metric sets -> one JSON file.

Selects gpuprobe entries by the parts of their names (family/key:value/...), runs gpuprobe once per
metric set on all of them (one CUPTI session per set: the ~0.2 s session cost is paid once per set,
not per entry), shows progress per entry, and merges the runs into one Google Benchmark JSON file
whose entries carry every set's metrics. Optionally runs the same entries once without counters
first, to measure what the counters cost (--baseline).

  scripts/counter_sweep.sh --sets=roofline,memory --kernels=sgemm,sgemv --impls=ours_tuned,cublas_default \
      --sizes=2048,16384 --precisions=s --out=sweep.json

Replay: application by default (--replay): gpuprobe times the selection once, then re-runs it once
per counter pass with each entry's work in its own range, so CUPTI starts and stops once per pass
rather than once per pass and entry (about 15 ms each on the H100 machine). A set that names its own
replay= (e.g. 'roofline,replay=user') keeps it.
"""
import argparse
import json
import re
import subprocess
import sys
import time

SIZE_KEYS = ("n", "m", "k", "size", "footprint")
PRECISION_KEYS = ("precision", "prec", "dtype", "type")


def parse_entry(name):
    parts = name.split("/")
    params = {}
    for p in parts[1:]:
        if ":" in p:
            k, v = p.split(":", 1)
            params[k] = v
    return parts[0], params


def csv(text):
    return [x for x in (text or "").split(",") if x]


def selected(name, args):
    family, params = parse_entry(name)
    if args.kernels and not any(k in family for k in csv(args.kernels)):
        return False
    if args.impls and params.get("impl") not in csv(args.impls) and params.get("kernel") not in csv(args.impls):
        return False
    if args.sizes and not any(params.get(k) in csv(args.sizes) for k in SIZE_KEYS):
        return False
    if args.precisions:
        wanted = csv(args.precisions)
        tagged = [params[k] for k in PRECISION_KEYS if k in params]
        # BLAS-style family names carry the precision as a prefix: kernels.sgemv, kernels.dsymv.
        leaf = family.split(".")[-1]
        if not (any(t in wanted for t in tagged) or any(leaf.startswith(p) for p in wanted)):
            return False
    return True


def list_entries(gpuprobe, extra):
    out = subprocess.run([gpuprobe, "--benchmark_list_tests=true", *extra], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"counter_sweep: {gpuprobe} --benchmark_list_tests failed: {out.stderr.strip()}")
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def run_gpuprobe(gpuprobe, entries, counters, out_file, extra, label, total_runs, run_index):
    pattern = "^(" + "|".join(re.escape(e) for e in entries) + ")$"
    cmd = [gpuprobe, f"--benchmark_filter={pattern}", f"--benchmark_out={out_file}",
           "--benchmark_out_format=json", *extra]
    if counters:
        cmd.append(f"--counters={counters}")
    start = time.time()
    done = 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    names = set(entries)
    for line in proc.stdout:
        line = line.rstrip("\n")
        first = line.split(" ", 1)[0]
        if first in names:
            done += 1
            print(f"[{run_index}/{total_runs} {label}] {done}/{len(entries)} {first}  "
                  f"({time.time() - start:.1f} s)", flush=True)
        elif line.startswith("gpuprobe:"):
            print(f"[{run_index}/{total_runs} {label}] {line}", flush=True)
    rc = proc.wait()
    if rc != 0:
        sys.exit(f"counter_sweep: gpuprobe failed (exit {rc}) during '{label}'; partial output in {out_file}.partial")
    return time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="roofline", help="metric sets or metric names, ';' between separate runs "
                    "(e.g. 'roofline;memory'); ',' within one --counters value")
    ap.add_argument("--kernels", help="comma list; entry families containing one of them (sgemm, memory.stride...)")
    ap.add_argument("--impls", help="comma list of impl: (or kernel:) values")
    ap.add_argument("--sizes", help="comma list; an entry matches when n, m, k, size or footprint equals one")
    ap.add_argument("--precisions", help="comma list (s, d...): precision:/dtype: params or sgemv-style prefixes")
    ap.add_argument("--filter", help="extra regular expression the entry name must match")
    ap.add_argument("--limit", type=int, help="at most this many entries (in listing order)")
    ap.add_argument("--baseline", action="store_true", help="run once without counters first and report the cost")
    ap.add_argument("--replay", choices=("application", "user", "kernel"), default="application",
                    help="CUPTI replay for sets that do not name one (default: application)")
    ap.add_argument("--gpuprobe", default="build/gpuprobe")
    ap.add_argument("--out", default="counter_sweep.json")
    ap.add_argument("extra", nargs="*", help="after --: more gpuprobe flags (e.g. --samples=5 --quick)")
    args = ap.parse_args()

    entries = [e for e in list_entries(args.gpuprobe, args.extra) if selected(e, args)]
    if args.filter:
        entries = [e for e in entries if re.search(args.filter, e)]
    if args.limit:
        entries = entries[: args.limit]
    if not entries:
        sys.exit("counter_sweep: no entry matches (see gpuprobe --benchmark_list_tests)")
    sets = [s for s in args.sets.split(";") if s]
    print(f"counter_sweep: {len(entries)} entries x {len(sets)} metric set run(s): {', '.join(sets)}", flush=True)

    runs = (["none"] if args.baseline else []) + sets
    merged, context, seconds = {}, None, {}
    for i, label in enumerate(runs, 1):
        tmp = f"{args.out}.{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}.json"
        counters = None if label == "none" else (label if "replay=" in label else f"{label},replay={args.replay}")
        seconds[label] = run_gpuprobe(args.gpuprobe, entries, counters, tmp, args.extra, label, len(runs), i)
        with open(tmp) as f:
            result = json.load(f)
        if label == "none":
            continue
        if context is None:
            context = result["context"]
        for b in result["benchmarks"]:
            if b["name"] not in merged:
                merged[b["name"]] = b  # timing statistics from the first set's run
            else:
                for k, v in b.items():
                    if "__" in k or k.startswith("papi."):
                        merged[b["name"]][k] = v
        for k, v in list(result["context"].items()):
            if k.startswith("counters_"):
                context[f"{k}[{label}]"] = v

    context["counter_sweep_sets"] = ";".join(sets)
    context["counter_sweep_seconds"] = json.dumps(seconds)
    with open(args.out, "w") as f:
        json.dump({"context": context, "benchmarks": [merged[e] for e in entries if e in merged]}, f, indent=1)
    summary = ", ".join(f"{k}: {v:.1f} s" for k, v in seconds.items())
    print(f"counter_sweep: wrote {args.out} ({len(merged)} entries); wall time per run: {summary}")
    if args.baseline and sets:
        instrumented = seconds[sets[0]]
        print(f"counter_sweep: '{sets[0]}' run took {instrumented / seconds['none']:.2f}x the uninstrumented run")


if __name__ == "__main__":
    main()
