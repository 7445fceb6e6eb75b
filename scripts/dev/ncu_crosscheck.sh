#!/usr/bin/env bash
# Cross-checks gpuprobe's CUPTI counters against Nsight Compute on the same kernels.
#
#   scripts/dev/ncu_crosscheck.sh OUTDIR [--filter=RE] [--metrics=LIST] [--limit=N] [--tolerance=0.02]
#                             [--replay=application|kernel]
#
# 1. gpuprobe --counters=METRICS on the entries matching RE (one CUPTI session);
# 2. for each entry: ncu --clock-control none --metrics METRICS gpuprobe --benchmark_filter=^ENTRY$
#    (no --counters there: under ncu CUPTI refuses, error 39), exported, then read back as CSV;
# 3. scripts/dev/ncu_compare.py: per entry, the sum over the entry's kernels of ncu's median per kernel
#    vs ours; exit 1 when a count differs by more than the tolerance.
# Replay, matched on both sides: application (default) = ours in user replay (one range around the
# entry's work, replayed by us) vs ncu --replay-mode application (the process re-run per pass):
# neither tool saves and restores memory, so the L2 holds what the previous sample left. kernel =
# both in kernel replay, where each tool restores memory its own way between passes (CUPTI's
# restore left 19 MB of dirty lines that SSYMV's L2 count then included: +2.13 %, 2026-11-22).
# Conditions matched: --cache-control none (ncu otherwise flushes the L2 before each pass, CUPTI does
# not; for an L2-resident working set DRAM writes then depend on which dirty lines each tool left),
# --samples=5 both times (the entry's kernels then have the most launches, ahead of the input fills).
# Clocks: ncu locks the SM clock to base unless --clock-control none, which we pass so both run at
# the clock the GPU chooses. Counts (bytes, instructions) do not depend on the clock; time does.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: ncu_crosscheck.sh OUTDIR [--filter=RE] [--metrics=LIST] [--limit=N] [--tolerance=X]}
shift
filter='^(memory\.occupancy/kernel:copy/vector:16/store:default/footprint:1073741824/blocks_per_sm:8|kernels\.sgemm/impl:ours_tuned/trans:nn/m:2048/n:2048/k:2048|kernels\.gemv/impl:ours/precision:s/trans:n/m:16384/n:16384|kernels\.symv/impl:ours/precision:s/uplo:lower/n:16384)/'
metrics="dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum"
limit=8 ; tolerance=0.02 ; replay=application
for a in "$@"; do
  case "$a" in
    --filter=*) filter="${a#*=}" ;;
    --metrics=*) metrics="${a#*=}" ;;
    --limit=*) limit="${a#*=}" ;;
    --tolerance=*) tolerance="${a#*=}" ;;
    --replay=application|--replay=kernel) replay="${a#*=}" ;;
    *) echo "ncu_crosscheck.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
GPUPROBE=${GPUPROBE:-${BUILD_DIR:-build}/gpuprobe}
NCU=${NCU:-ncu}
mkdir -p "$OUT"
command -v "$NCU" >/dev/null || { echo "ncu_crosscheck: $NCU not found" >&2; exit 2; }

mapfile -t entries < <("$GPUPROBE" --samples=5 --benchmark_list_tests=true --benchmark_filter="$filter" | head -n "$limit")
((${#entries[@]})) || { echo "ncu_crosscheck: no entry matches $filter" >&2; exit 2; }
echo "ncu_crosscheck: ${#entries[@]} entries; metrics $metrics"

if [ "$replay" = application ]; then ours_replay=user; ncu_replay=application; else ours_replay=kernel; ncu_replay=kernel; fi
"$GPUPROBE" --samples=5 --counters="$metrics,replay=$ours_replay" --benchmark_filter="$filter" \
  --benchmark_out="$OUT/ncu_ours.json" --benchmark_out_format=json > "$OUT/ncu_ours.log" 2>&1 ||
  { echo "ncu_crosscheck: gpuprobe with counters failed:"; tail -5 "$OUT/ncu_ours.log"; exit 1; }

: > "$OUT/ncu.csv"
i=0
for e in "${entries[@]}"; do
  i=$((i + 1))
  re="^$(printf '%s' "$e" | sed 's/[].[*^$()+?{}|\\]/\\&/g')\$"
  echo "ncu_crosscheck: [$i/${#entries[@]}] $e"
  rep="$OUT/ncu_$i"
  if ! "$NCU" --clock-control none --cache-control none --replay-mode "$ncu_replay" --metrics "$metrics" \
       --export "$rep" --force-overwrite \
       "$GPUPROBE" --samples=5 --benchmark_filter="$re" > "$OUT/ncu_$i.log" 2>&1; then
    echo "ncu_crosscheck: ncu failed on $e:"; tail -5 "$OUT/ncu_$i.log"; continue
  fi
  # One CSV row per kernel launch, values in base units (bytes, ns), tagged with the entry.
  "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base 2>/dev/null |
    python3 -c 'import sys,csv; w=csv.writer(sys.stdout); e=sys.argv[1]
for i,row in enumerate(csv.reader(sys.stdin)): w.writerow(["entry" if i==0 else e]+row)' "$e" |
    { if [ -s "$OUT/ncu.csv" ]; then tail -n +2; else cat; fi; } >> "$OUT/ncu.csv"
  rm -f "$rep.ncu-rep" "$OUT/ncu_$i.log"
done
python3 scripts/dev/ncu_compare.py "$OUT/ncu_ours.json" "$OUT/ncu.csv" --metrics="$metrics" --tolerance="$tolerance" \
  --ours-replay="$ours_replay" |
  tee "$OUT/ncu_compare.txt"
exit "${PIPESTATUS[0]}"
