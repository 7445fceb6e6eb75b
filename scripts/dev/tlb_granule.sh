#!/usr/bin/env bash
# Builds and runs lab/experiments/tlb_granule on the GPU machine (is memory.tlb's 16 MiB granule the page,
# or one TLB entry over 8 contiguous 2 MiB pages? lab/experiments/tlb_16mib.md), then reads its verdict.
#   scripts/dev/tlb_granule.sh OUTDIR
# OUTDIR gets tlb_granule.csv (the experiment's stdout: '#' facts, then the CSV), tlb_granule.stderr,
# build.log and verdict.txt (scripts/dev/tlb_granule_verdict.py). BUILD_DIR (default build) is
# configured with -DGPUPROBE_BUILD_LAB=ON (kept if already so) and only the experiment's target is built.
# Exit status: the experiment's when it failed (1: a variant skipped, see '# skipped' lines), else the
# verdict's (0 a verdict, 1 inconclusive).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: scripts/dev/tlb_granule.sh OUTDIR" >&2; exit 2; }
OUT=$1
mkdir -p "$OUT"
BUILD_TARGETS=tlb_granule_experiment bash scripts/build.sh -DGPUPROBE_BUILD_LAB=ON >"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log" >&2; echo "tlb_granule.sh: build failed ($OUT/build.log)" >&2; exit 2; }
rc=0
timeout 300 "${BUILD_DIR:-build}/lab/experiments/tlb_granule" >"$OUT/tlb_granule.csv" 2>"$OUT/tlb_granule.stderr" || rc=$?
[ "$rc" -eq 0 ] || echo "tlb_granule.sh: tlb_granule exited $rc (stderr: $OUT/tlb_granule.stderr)" >&2
verdict_rc=0
python3 scripts/dev/tlb_granule_verdict.py "$OUT/tlb_granule.csv" >"$OUT/verdict.txt" || verdict_rc=$?
cat "$OUT/verdict.txt"
exit $([ "$rc" -ne 0 ] && echo "$rc" || echo "$verdict_rc")
