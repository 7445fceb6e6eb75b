#!/usr/bin/env bash
# The application path (scripts/profile_app.sh + gpuprobe-analyze app) checked on our own kernels, on a GPU:
#   scripts/dev/app_crosscheck.sh OUTDIR DEVICE_RESULTS... [-- --benchmark_filter=RE]
# 1. gpuprobe --counters=roofline on the entries (our CUPTI counts, one replay of one sample each);
# 2. the same entries run as an application under scripts/profile_app.sh (ncu, --clock-control none); the
#    harness's NVTX range gpuprobe:ENTRY names each launch's entry;
# 3. scripts/dev/app_crosscheck.py: FLOPs, bytes per level and % of bound per entry, ncu path against ours
#    and the report's optimality row of DEVICE_RESULTS (a main job's folder of this GPU, with these entries).
# $CACHE_CONTROL (all, ncu's default, or none) is passed to profile_app.sh's --cache-control.
# Exit 1 when a figure is off (the table says which), 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: app_crosscheck.sh OUTDIR DEVICE_RESULTS... [-- --benchmark_filter=RE]}
shift
device=()
while (($#)) && [ "$1" != -- ]; do device+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
((${#device[@]})) || { echo "app_crosscheck.sh: no DEVICE_RESULTS given" >&2; exit 2; }
kernels='kernels\.(sgemm/impl:ours_tuned/trans:nn/m:2048/n:2048/k:2048|gemv/impl:ours/precision:s/trans:[nt]/m:16384/n:16384|symv/impl:ours/precision:s/uplo:lower/n:16384|gemm_lt/.*n:4096)/'
# One exec.tensor form per type and instruction family, on random data.
tensor='exec\.tensor/instr:(mma/precision:(f16/acc:f32|bf16|tf32|e4m3|s8|f64/acc:f64/a:reg/m:8)|wgmma/precision:(f16|bf16|tf32|e4m3|s8)/acc:[fs]32/a:smem/m:64/n:256)/.*data:random/'
filter="^($kernels|$tensor)"
for a in "$@"; do case "$a" in --benchmark_filter=*) filter="${a#*=}" ;; *) echo "app_crosscheck.sh: unknown option $a" >&2; exit 2 ;; esac; done
GPUPROBE=${GPUPROBE:-${BUILD_DIR:-build}/gpuprobe}
mkdir -p "$OUT"
"$GPUPROBE" --samples=1 --counters=roofline --benchmark_filter="$filter" --benchmark_out="$OUT/ours.json" \
  --benchmark_out_format=json > "$OUT/ours.log" 2>&1 || { echo "app_crosscheck.sh: gpuprobe --counters failed"; tail -5 "$OUT/ours.log"; exit 1; }
# Only the timed samples (the harness's NVTX ranges "gpuprobe:ENTRY"): warm-ups are not profiled.
bash scripts/profile_app.sh -o "$OUT/ncu" --cache-control "${CACHE_CONTROL:-all}" --nvtx-include 'regex:gpuprobe:.*/' -- "$GPUPROBE" --samples=1 --benchmark_filter="$filter" \
  --benchmark_out="$OUT/under_ncu.json" --benchmark_out_format=json || exit 1
python3 scripts/dev/app_crosscheck.py --ncu "$OUT/ncu/profile.csv" --ncu-results "$OUT/under_ncu.json" \
  --ours "$OUT/ours.json" --device "${device[@]}" -o "$OUT/crosscheck.md"
