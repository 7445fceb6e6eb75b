#!/usr/bin/env bash
# A/B of a build-time experiment (a -D flag such as GPUPROBE_STREAM_L2_PREFETCH_256B=1) on the GPU
# machine: builds `gpuprobe` a second time with the flag, then runs the base build's binary and the
# flagged one alternately, ROUNDS times each, on the same benchmark filter, so that drift between
# processes falls on both alike. Run it after scripts/gpu_run.sh has built the base (BUILD_DIR,
# default build-gpu).
#
#   scripts/dev/ab_build_flag.sh OUTDIR DEFINE FILTER [ROUNDS=2]
#
# AB_TESTS=GTEST_FILTER (environment): also build the GPU tests with the flag and run those first (a
# flag that changes a kernel must keep it correct); a failure skips the timing rounds.
#
# Writes OUTDIR/ab_<name>.log and OUTDIR/ab_<name>.tar.gz (results_base_K.json, results_flag_K.json;
# the results as one archive), <name> = DEFINE up to its "=".
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: ab_build_flag.sh OUTDIR DEFINE FILTER [ROUNDS]}
DEFINE=${2:?DEFINE, e.g. GPUPROBE_STREAM_L2_PREFETCH_256B=1}
FILTER=${3:?benchmark filter}
ROUNDS=${4:-2}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
name=${DEFINE%%=*}
base_dir=${BUILD_DIR:-build-gpu}
flag_dir=build-ab-$name
log="$OUT/ab_$name.log"
work=$(mktemp -d)
start=$(date +%s)
stamp() { echo "[ab +$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }

[ -x "$base_dir/gpuprobe" ] || { echo "ab_build_flag.sh: no base build in $base_dir (run gpu_run.sh first)" >&2; exit 2; }
stamp "build $flag_dir with -D$DEFINE"
if ! { cmake -S . -B "$flag_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         "-DCMAKE_CUDA_FLAGS=-D$DEFINE" && cmake --build "$flag_dir" -j "$(nproc)" --target gpuprobe; } >> "$log" 2>&1; then
  stamp "BUILD FAILED"; tail -20 "$log"; exit 1
fi
status=0
if [ -n "${AB_TESTS:-}" ]; then
  stamp "GPU tests of the flagged build: $AB_TESTS"
  if ! { cmake --build "$flag_dir" -j "$(nproc)" --target gpuprobe_gpu_tests >> "$log" 2>&1 &&
         "$flag_dir/tests/gpuprobe_gpu_tests" --gtest_filter="$AB_TESTS" --gtest_brief=1 >> "$log" 2>&1; }; then
    stamp "FLAGGED GPU TESTS FAILED (no timing rounds)"; tail -20 "$log"; exit 1
  fi
  stamp "GPU tests passed: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
fi
for k in $(seq 1 "$ROUNDS"); do
  for side in base flag; do
    dir=$base_dir; [ "$side" = flag ] && dir=$flag_dir
    stamp "round $k: $side"
    if ! "$dir/gpuprobe" --benchmark_filter="$FILTER" --benchmark_out="$work/results_${side}_$k.json" \
         --benchmark_out_format=json >> "$log" 2>&1; then
      status=1; stamp "round $k $side FAILED"
    fi
  done
done
tar -czf "$OUT/ab_$name.tar.gz" -C "$work" .
stamp "done (status $status)"
exit $status
