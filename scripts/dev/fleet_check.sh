#!/usr/bin/env bash
# Fleet mode on a one-GPU machine (docs/fleet.md), for the lead to run there:
#   1. the fleet preset under `mpirun -np 1` (when build/gpuprobe links MPI and mpirun exists), else
#      launcher-agnostic with the variables srun would set (SLURM_PROCID=0 SLURM_LOCALID=0), timed;
#   2. the same again while a second process (PyTorch bf16 matmuls in a loop) loads the GPU; clocks
#      and power limits are left as found;
#   3. gpuprobe-analyze fleet on each run with the committed reference's floors (reports/h100 or
#      reports/h200 by the GPU's name): the idle run should pass (exit 0), the loaded one be flagged
#      (exit 3) and say that it was not idle.
# usage: bash scripts/dev/fleet_check.sh [OUTDIR]   (default reports/local/fleet-check)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-reports/local/fleet-check}
rm -rf "$OUT" && mkdir -p "$OUT/idle" "$OUT/loaded"
[ -x build/gpuprobe ] || BUILD_TARGETS=gpuprobe bash scripts/build.sh >"$OUT/build.log" 2>&1 || {
  echo "fleet_check: build failed ($OUT/build.log)"; exit 1; }

model=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
case "$model" in
  *H100*) REF=reports/h100 ;;
  *H200*) REF=reports/h200 ;;
  *) REF="" ;;
esac
echo "fleet_check: GPU 0: ${model:-unknown}; reference: ${REF:-none for this model}"

if command -v mpirun >/dev/null 2>&1 && ldd build/gpuprobe | grep -q 'libmpi'; then
  how="mpirun -np 1"
  launch() { mpirun --allow-run-as-root --oversubscribe -np 1 build/gpuprobe "$@"; }
else
  how="launcher-agnostic (SLURM_PROCID=0 SLURM_LOCALID=0, as srun sets them)"
  launch() { SLURM_PROCID=0 SLURM_LOCALID=0 build/gpuprobe "$@"; }
fi
echo "fleet_check: launch: $how"

run_fleet() {  # $1: folder
  local t0 t1 rc
  t0=$(date +%s.%N)
  launch --device=local-rank --preset=fleet --benchmark_out="$1/fleet.json" >"$1/console.txt" 2>"$1/stderr.txt"
  rc=$?
  t1=$(date +%s.%N)
  printf 'fleet_check: %s: gpuprobe exit %d, wall %.1f s, %s\n' "$1" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
    "$(ls "$1" | grep -E 'rank[0-9]+\.json' | tr '\n' ' ')"
  grep -h 'warning' "$1/stderr.txt" | sed 's/^/  stderr: /'
}

run_fleet "$OUT/idle"

# The second process: bf16 matmuls on GPU 0 until killed (at most 10 minutes).
python3 - >"$OUT/loaded/load.txt" 2>&1 <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("load running", flush=True)
t_end = time.time() + 600
while time.time() < t_end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
PY
LOAD_PID=$!
for _ in $(seq 60); do grep -q 'load running' "$OUT/loaded/load.txt" 2>/dev/null && break; sleep 1; done
sleep 2
echo "fleet_check: load process $LOAD_PID: $(head -1 "$OUT/loaded/load.txt")"
run_fleet "$OUT/loaded"
kill "$LOAD_PID" 2>/dev/null; wait "$LOAD_PID" 2>/dev/null

for run in idle loaded; do
  ref_args=()
  # Floors at 0.9 x the same model's reference from this tool (DCGM's 0.75 lets a GPU shared with
  # another job pass: on an H200 beside a PyTorch matmul loop FP32 read 0.87, FP64 0.81, BF16 tensor 0.88).
  [ -n "$REF" ] && ref_args=(--reference "$REF" --floor-fraction "${FLOOR_FRACTION:-0.9}")
  PYTHONPATH=analysis python3 -m gpuprobe_analysis fleet "$OUT/$run" -o "$OUT/$run-analysis" "${ref_args[@]}" \
    >"$OUT/$run-analysis.txt" 2>&1
  rc=$?
  echo "fleet_check: gpuprobe-analyze fleet $run: exit $rc (expected $([ "$run" = idle ] && echo 0 || echo 3))"
  sed 's/^/  /' "$OUT/$run-analysis.txt" | grep -v '^  gpuprobe-analyze: warning' | head -8
  python3 - "$OUT/$run-analysis/fleet.json" <<'PY' 2>/dev/null
import json, sys
for g in json.load(open(sys.argv[1]))["gpus"]:
    print(f"  idle_at_start: {g['idle_at_start']}; uuid {g['uuid']}, serial {g['serial']}, vbios {g['vbios']}")
    print("  figures: " + ", ".join(f"{k} {v:.4g}" for k, v in g["figures"].items()))
PY
done
