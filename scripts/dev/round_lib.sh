# Sourced by the device-round scripts (scripts/dev/*_round.sh), after `cd` to the checkout:
#   round_start NAME "DEFAULT STEPS" "$@"     (the caller's arguments: OUTDIR [STEP...])
# sets OUT (absolute, with OUT/NAME made), steps (the caller's STEPs, else the defaults), and the $DEADLINE clock (seconds from the start, default 570):
# left (seconds left), stamp MESSAGE (a line with the time since the start); records the GPU's name, clocks
# and power in OUT/NAME/gpu.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
round_start() {
  ROUND=$1
  local defaults=$2
  shift 2
  [ $# -ge 1 ] || { echo "usage: $(basename "$0") OUTDIR [STEP...]" >&2; exit 2; }
  OUT=$1
  shift
  steps=("$@")
  ((${#steps[@]})) || read -r -a steps <<< "$defaults"
  mkdir -p "$OUT/$ROUND" && OUT=$(cd "$OUT" && pwd)
  start=$(date +%s)
  deadline=${DEADLINE:-570}
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/$ROUND/gpu.txt"
}
left() { echo $(( deadline - ($(date +%s) - start) )); }
stamp() { echo "[$ROUND round +$(( $(date +%s) - start ))s] $*"; }
