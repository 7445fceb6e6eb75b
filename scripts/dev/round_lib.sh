# Sourced by the device-round scripts (scripts/dev/*_round.sh), after `cd` to the checkout:
#   round_start NAME OUTDIR DEFAULT_STEP...   (then "$@" of the caller: its STEPs, or the defaults)
# sets OUT (absolute, with OUT/NAME made), steps, and the $DEADLINE clock (seconds from the start, default 570):
# left (seconds left), stamp MESSAGE (a line with the time since the start); records the GPU's name, clocks
# and power in OUT/NAME/gpu.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
round_start() {
  ROUND=$1 OUT=$2
  shift 2
  mkdir -p "$OUT/$ROUND" && OUT=$(cd "$OUT" && pwd)
  start=$(date +%s)
  deadline=${DEADLINE:-570}
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/$ROUND/gpu.txt"
}
left() { echo $(( deadline - ($(date +%s) - start) )); }
stamp() { echo "[$ROUND round +$(( $(date +%s) - start ))s] $*"; }
