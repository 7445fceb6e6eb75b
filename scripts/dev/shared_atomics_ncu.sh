#!/usr/bin/env bash
# One-time cross-check of memory.shared_atomics against Nsight Compute (for development, not the
# user's path): for each entry, ncu profiles one launch of the kernel after the warm-up (its own
# timer and the SM clock it reports, clocks not locked) and counts its shared-memory atomic
# instructions. The independent rate = atomicAdd calls of one block / (kernel duration x SM clock);
# it includes the block's set-up and write-back, so it sits below the probe's in-kernel clock64 span.
# The instruction count shows whether every call is one ATOMS (u32) or a retried CAS (f32).
#   scripts/dev/shared_atomics_ncu.sh OUTDIR [GPUPROBE]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: shared_atomics_ncu.sh OUTDIR [GPUPROBE]}
GPUPROBE=${2:-build/gpuprobe}
mkdir -p "$OUT"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,sm__sass_inst_executed_op_shared_atom.sum
ncu --query-metrics 2>/dev/null | grep -iE 'shared_atom' > "$OUT/ncu_shared_atom_metrics.txt"
for entry in u32/contention:1 u32/contention:32 f32/contention:1 f32/contention:32; do
  name="memory.shared_atomics/type:${entry}"
  # Skip the warm-up launches (2 samples and the settle); one timed launch is profiled.
  ncu --clock-control none --cache-control none -k regex:shared_atomics --launch-skip 5 --launch-count 1 \
      --metrics "$metrics" --csv "$GPUPROBE" --benchmark_filter="^${name//./\\.}(/|\$)" --launch-gate=off \
      --samples=8 --benchmark_out="$OUT/probe-${entry//[\/:]/_}.json" --benchmark_out_format=json \
      > "$OUT/ncu-${entry//[\/:]/_}.csv" 2> "$OUT/ncu-${entry//[\/:]/_}.log"
  echo "$name: ncu exit $?"
done
python3 - "$OUT" <<'EOF'
import csv, glob, json, os, sys
out = sys.argv[1]
for path in sorted(glob.glob(os.path.join(out, "ncu-*.csv"))):
    tag = os.path.basename(path)[4:-4]
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    if len(rows) < 2:
        print(tag, "no ncu rows"); continue
    head = rows[0]; m = {}
    for r in rows[1:]:
        m[r[head.index("Metric Name")]] = (float(r[head.index("Metric Value")].replace(",", "")), r[head.index("Metric Unit")])
    dur = m["gpu__time_duration.sum"]; clk = m["sm__cycles_elapsed.avg.per_second"]
    dur_s = dur[0] * {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3}.get(dur[1], 1e-9)
    clk_hz = clk[0] * {"cycle/second": 1, "cycle/nsecond": 1e9, "cycle/usecond": 1e6, "Ghz": 1e9, "Mhz": 1e6}.get(clk[1], 1)
    probe = json.load(open(os.path.join(out, f"probe-{tag}.json")))["benchmarks"][0]
    sms = int(json.load(open(os.path.join(out, f"probe-{tag}.json")))["context"]["gpu_sm_count"])
    per_block = 1024 * 256
    atom = m.get("sm__sass_inst_executed_op_shared_atom.sum", (float("nan"), ""))[0]
    print(f"{tag}: probe {probe['value_median']:.4g} atomics/clk/SM (cv {probe['value_cv']:.3f}); ncu duration "
          f"{dur_s * 1e6:.3f} us at {clk_hz / 1e6:.0f} MHz -> {per_block / (dur_s * clk_hz):.4g} atomics/clk/SM over the "
          f"whole kernel, elapsed max {m['sm__cycles_elapsed.max'][0]:.0f} cycles; shared ATOM warp instructions "
          f"{atom:.0f} = {atom / (sms * 32 * 256):.3f} per warp-level atomicAdd call")
EOF
