#!/usr/bin/env bash
# Issue-42 round on one GPU, in one call (development, not the user's path): what only a GPU can show of
# the application path.
#   scripts/dev/app_round.sh OUTDIR [DEVICE_RESULTS]
# 1. build (the README's build step) and this GPU's metric list (ncu --query-metrics);
# 2. DEVICE_RESULTS: unless given, this GPU's reference run (scripts/dev/reference_run.sh: every probe, the
#    premises, the kernels' counters, the report), into OUTDIR/ref;
# 3. the cross-check on our own kernels (scripts/dev/app_crosscheck.sh) against it;
# 4. the worked examples (examples/apps): each profiled by scripts/profile_app.sh, then
#    gpuprobe-analyze app against DEVICE_RESULTS (their top kernels, roofline figure, JSON).
# $DEADLINE (seconds from the start, default 570): no step starts after it, and each is stopped by it, so
# that what finished is packed: OUTDIR/app.tgz (cross-check, examples, logs) and OUTDIR/ref.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: app_round.sh OUTDIR [DEVICE_RESULTS]}
DEVICE=${2:-}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$OUT/app" && OUT=$(cd "$OUT" && pwd)
start=$(date +%s)
deadline=${DEADLINE:-570}
stamp() { echo "[app round +$(( $(date +%s) - start ))s] $*"; }
left() { echo $(( deadline - ($(date +%s) - start) )); }
pack() {
  tar czf "$OUT/app.tgz" -C "$OUT" app
  [ -d "$OUT/ref" ] && tar czf "$OUT/ref.tgz" -C "$OUT" ref
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/app/gpu.txt"
ncu --version > "$OUT/app/ncu-version.txt" 2>&1
ncu --query-metrics > "$OUT/app/query-metrics.txt" 2>&1
PYTHONPATH=analysis python3 -m gpuprobe_analysis.ncu_metrics --query "$OUT/app/query-metrics.txt" --absent |
  sed 's/^/declared metrics this GPU lacks: /'
grep -oE '^sm__(ops_path_tensor|inst_executed_pipe_tensor)[a-z0-9_]*' "$OUT/app/query-metrics.txt" > "$OUT/app/tensor-metrics.txt"

if [ -z "$DEVICE" ]; then
  stamp "reference run (build, main job)"
  # Its own budget (the main job stopped by SIGINT keeps what it finished), leaving REF_RESERVE seconds.
  timeout -k 10 "$(left)" bash scripts/dev/reference_run.sh "$OUT/ref" --budget=$(( $(left) - ${REF_RESERVE:-120} )) \
    > "$OUT/app/reference_run.log" 2>&1
  echo "reference run: exit $?"; tail -15 "$OUT/app/reference_run.log"
  DEVICE="$OUT/ref"
else
  stamp build
  bash scripts/build.sh > "$OUT/app/build.log" 2>&1 || { tail -30 "$OUT/app/build.log"; pack; exit 1; }
fi
pack
if (( $(left) > 60 )); then
  stamp "cross-check on our own kernels"
  timeout -k 10 "$(left)" bash scripts/dev/app_crosscheck.sh "$OUT/app/crosscheck" "$DEVICE" 2>&1 | tail -40
  pack
fi
for ex in transformer_step:profiled_step fft_sort:profiled_run; do
  name=${ex%%:*}; range=${ex#*:}
  (( $(left) > 45 )) || { stamp "example $name: no time left"; continue; }
  stamp "example $name"
  timeout -k 10 "$(( $(left) - 20 ))" bash scripts/profile_app.sh -o "$OUT/app/$name" --nvtx-include "$range/" -- \
    python3 "examples/apps/$name.py" > "$OUT/app/$name.log" 2>&1 || tail -5 "$OUT/app/$name.log"
  PYTHONPATH=analysis timeout 60 python3 -m gpuprobe_analysis app "$OUT/app/$name/profile.csv" --device "$DEVICE" \
    -o "$OUT/app/$name/verdict" --top 10 2>&1 | tail -25
  pack
done
stamp done
