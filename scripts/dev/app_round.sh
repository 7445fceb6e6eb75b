#!/usr/bin/env bash
# Issue-42 round on one GPU, in one call (development, not the user's path): what only a GPU can show of
# the application path.
#   scripts/dev/app_round.sh OUTDIR [DEVICE_RESULTS]
# 1. build (the README's build step);
# 2. DEVICE_RESULTS: a main job of this GPU (scripts/dev/device_session.sh --no-tests) unless given;
# 3. the cross-check on our own kernels (scripts/dev/app_crosscheck.sh) against it;
# 4. the worked examples (examples/apps): each profiled by scripts/profile_app.sh, then
#    gpuprobe-analyze app against DEVICE_RESULTS (their top kernels, roofline figure, JSON).
# Logs and results under OUTDIR, packed into few files (app.tgz, console.log).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: app_round.sh OUTDIR [DEVICE_RESULTS]}
DEVICE=${2:-}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$OUT/app"
start=$(date +%s)
stamp() { echo "[app round +$(( $(date +%s) - start ))s] $*"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/app/gpu.txt"

stamp build
bash scripts/build.sh > "$OUT/app/build.log" 2>&1 || { tail -30 "$OUT/app/build.log"; exit 1; }
if [ -z "$DEVICE" ]; then
  stamp "main job (the device results the verdicts use)"
  bash scripts/dev/device_session.sh "$OUT/main" --no-tests --budget=300 > "$OUT/app/session.log" 2>&1
  DEVICE="$OUT/main"
fi
stamp "cross-check on our own kernels"
timeout 400 bash scripts/dev/app_crosscheck.sh "$OUT/app/crosscheck" "$DEVICE" 2>&1 | tail -20
for ex in transformer_step:profiled_step fft_sort:profiled_run; do
  name=${ex%%:*}; range=${ex#*:}
  stamp "example $name"
  timeout 400 bash scripts/profile_app.sh -o "$OUT/app/$name" --nvtx-include "$range/" -- \
    python3 "examples/apps/$name.py" > "$OUT/app/$name.log" 2>&1 || tail -5 "$OUT/app/$name.log"
  PYTHONPATH=analysis python3 -m gpuprobe_analysis app "$OUT/app/$name/profile.csv" --device "$DEVICE" \
    -o "$OUT/app/$name/verdict" --top 10 2>&1 | tail -25
done
tar czf "$OUT/app.tgz" -C "$OUT" app
[ -d "$OUT/main" ] && tar czf "$OUT/main.tgz" -C "$OUT" main
stamp done
