#!/usr/bin/env bash
# Issue-42 items that need a GPU after the first round (development, not the user's path), in one call:
#   scripts/dev/app_rest_round.sh OUTDIR
# 1. build (the README's build step);
# 2. the worked examples (examples/apps), profiled by scripts/profile_app.sh and judged by
#    gpuprobe-analyze app against the committed reference of this GPU model (reports/h100 or reports/h200);
# 3. each example's .ncu-rep read through NVIDIA's ncu_report and compared with its raw-CSV export
#    (scripts/dev/ncu_rep_check.py);
# 4. the cuBLASLt entries of the cross-check profiled with ncu's --cache-control none beside all (the DRAM
#    bytes of an isolated, flushed launch against ours).
# Writes OUTDIR/app.tgz (no .ncu-rep but fft_sort's, the reader's recorded fixture).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: app_rest_round.sh OUTDIR}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$OUT/app" && OUT=$(cd "$OUT" && pwd)
start=$(date +%s)
stamp() { echo "[+$(( $(date +%s) - start ))s] $*"; }
pack() { tar czf "$OUT/app.tgz" -C "$OUT" --exclude='transformer_step/profile.ncu-rep' --exclude='crosscheck*/ncu/profile.ncu-rep' app; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/app/gpu.txt"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H100*) DEVICE=reports/h100 ;; *H200*) DEVICE=reports/h200 ;; *) echo "no committed reference for this GPU"; exit 1 ;;
esac
stamp "build"
bash scripts/build.sh > "$OUT/app/build.log" 2>&1 || { tail -30 "$OUT/app/build.log"; pack; exit 1; }
for ex in transformer_step:profiled_step fft_sort:profiled_run; do
  name=${ex%%:*}; range=${ex#*:}
  stamp "example $name"
  timeout -k 10 240 bash scripts/profile_app.sh -o "$OUT/app/$name" --nvtx-include "$range/" -- \
    python3 "examples/apps/$name.py" > "$OUT/app/$name.log" 2>&1; echo "profile_app: exit $?"; tail -3 "$OUT/app/$name.log"
  PYTHONPATH=analysis timeout 60 python3 -m gpuprobe_analysis app "$OUT/app/$name/profile.csv" --device "$DEVICE" \
    -o "$OUT/app/$name/verdict" --top 10 2>&1 | tail -25
  pack
done
stamp "ncu_report against the raw CSV"
python3 scripts/dev/ncu_rep_check.py "$OUT/app/fft_sort" "$OUT/app/transformer_step" 2>&1 | tee "$OUT/app/ncu_rep_check.log"
pack
for cache in none all; do
  stamp "cuBLASLt entries, --cache-control $cache"
  CACHE_CONTROL=$cache timeout -k 10 150 bash scripts/dev/app_crosscheck.sh "$OUT/app/crosscheck_lt_$cache" "$DEVICE" -- \
    --benchmark_filter='^kernels\.gemm_lt/.*n:4096/' 2>&1 | tail -30
  pack
done
stamp done
