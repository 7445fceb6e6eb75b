#!/usr/bin/env bash
# Ours beside cuBLAS under Nsight Compute (scripts/dev/ncu_stalls.sh: time, SM clock, issue slots, stalls
# per issued instruction, shared-memory wavefronts and bank conflicts), at the shapes where docs/perf/sgemm.md
# explains the gap: NN 4096 (several waves), NN 4097 (edge tiles, 4-byte copies), NN 1024 (under one wave).
#   scripts/dev/sgemm_ncu.sh OUTDIR [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: sgemm_ncu.sh OUTDIR [BUILD_DIR]}
export BUILD_DIR=${2:-build}
mkdir -p "$OUT"
for size in 4096 4097 1024; do
  for impl in ours_auto cublas_default; do
    entry="^kernels\.sgemm/impl:$impl/trans:nn/m:$size/n:$size/k:$size/"
    bash scripts/dev/ncu_stalls.sh "$entry" . 5 > "$OUT/${impl}_$size.tsv" 2>&1 || echo "ncu_stalls $impl $size failed"
    echo "== $impl NN $size"
    grep -E "gpu__time_duration|cycles_elapsed.avg.per_second|issue_active|stalled_(barrier|dispatch_stall|short_scoreboard|long_scoreboard|mio_throttle|not_selected|math_pipe|wait|no_instruction)_|wavefronts|bank_conflicts|inst_executed.sum" \
      "$OUT/${impl}_$size.tsv" | cut -f2- | sed 's/\t/  /g' | cut -c1-160
  done
done
