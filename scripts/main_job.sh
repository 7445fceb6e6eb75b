#!/usr/bin/env bash
# The main job, end to end: build -> characterize the GPU (all probes) -> kernel benchmarks with
# roofline counters -> report. Progress on the terminal, a summary at the end.
#
#   scripts/main_job.sh [OUTDIR] [--quick] [--device=N] [--no-counters] [--exclude=RE]...
#
# --exclude=RE (repeatable; the entries matching any of them are left out) goes to gpuprobe.
#
# OUTDIR (default reports/local) receives results.json (all probes and kernel benchmarks, timing),
# premises.json (the ceiling probes' premises checked by counters, in untimed replays), counters.json
# (kernel benchmarks again with --counters=roofline, in an untimed replay), logs, and
# report/ (report.html, report.md, device-profile.json, plots). Without a GPU it says so and builds
# the report from the result files already in OUTDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=reports/local ; quick=() ; device=() ; counters=1 ; exclude=() ; excluded=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    --device=*) device=("$arg") ;;
    --no-counters) counters=0 ;;
    --exclude=?*) excluded+=("${arg#*=}") ;;  # gpuprobe's: entries matching RE are not registered
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "main_job.sh: unknown option $arg" >&2; exit 2 ;;
    *) OUT=$arg ;;
  esac
done
# Several --exclude (e.g. the caller's and device_session.sh's own) leave out the union.
if ((${#excluded[@]})); then
  joined=$(printf '|(?:%s)' "${excluded[@]}")
  exclude=("--exclude=${joined:1}")
fi
mkdir -p "$OUT"
start=$(date +%s)
step() { echo; echo "== [$(( $(date +%s) - start ))s] $*"; }
BUILD_DIR=${BUILD_DIR:-build}
GPUPROBE="$BUILD_DIR/gpuprobe"
# The analysis package, installed (scripts/setup.sh) or straight from the tree (no pip needed).
python3 -c "import gpuprobe_analysis" 2>/dev/null || export PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"

step "build ($BUILD_DIR)"
if ! BUILD_DIR=$BUILD_DIR bash scripts/build.sh > "$OUT/build.log" 2>&1; then
  tail -20 "$OUT/build.log"; echo "main_job: build failed (log: $OUT/build.log)" >&2; exit 1
fi

have_gpu=1
if ! "$GPUPROBE" "${device[@]}" --benchmark_list_tests > /dev/null 2> "$OUT/gpu-check.log"; then
  have_gpu=0
  echo "main_job: no GPU measurement possible here: $(head -1 "$OUT/gpu-check.log")"
fi

status=0
if ((have_gpu)); then
  step "characterize + kernel benchmarks -> $OUT/results.json"
  "$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" --benchmark_out="$OUT/results.json" --benchmark_out_format=json \
    --benchmark_format=console 2>&1 | tee "$OUT/bench.log" | grep -E --line-buffered "^(baseline|memory|exec|transfer|kernels)\.[a-z_0-9]+/" \
    | awk -F/ '{fam=$1; if (fam != last) { printf "  %-28s", fam; last = fam; n = 0 } ; n++; if (n % 50 == 0) printf "."; fflush() } END { print "" }'
  [ -f "$OUT/results.json" ] || { status=1; echo "main_job: the benchmark run did not finish (see $OUT/bench.log)" >&2; tail -3 "$OUT/bench.log"; }
  if ((counters)); then
    # Every ceiling probe's premise (which level served what it counts), checked by CUPTI counters in
    # untimed replays of each entry (one sample each: the figures come from results.json).
    step "ceiling probes' premises with hardware counters (application replay) -> $OUT/premises.json"
    if ! "$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" --counters=premise,replay=application --samples=1 \
        --benchmark_filter='^memory\.(bandwidth|occupancy|l1_peak|l2_bandwidth|shared_bandwidth)/|^exec\.throughput' \
        --benchmark_out="$OUT/premises.json" --benchmark_out_format=json > "$OUT/premises.log" 2>&1; then
      echo "main_job: premise run failed or counters unavailable (ceilings will say unverified): $(grep -m1 'gpuprobe:' "$OUT/premises.log")"
    fi
    step "kernel benchmarks with roofline counters (untimed replays) -> $OUT/counters.json"
    if ! "$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" --counters=roofline --benchmark_filter='^(kernels|baseline)\.' \
        --benchmark_out="$OUT/counters.json" --benchmark_out_format=json > "$OUT/counters.log" 2>&1; then
      echo "main_job: counter run failed or counters unavailable: $(grep -m1 'gpuprobe:' "$OUT/counters.log")"
    fi
  fi
fi

step "report -> $OUT/report"
inputs=()
# premises.json first: its entries only complete results.json's (the later file's entry is used).
for f in "$OUT"/premises.json "$OUT"/results.json "$OUT"/counters.json; do [ -f "$f" ] && inputs+=("$f"); done
if ((${#inputs[@]} == 0)); then
  echo "main_job: no result files in $OUT to report on" >&2; exit 1
fi
if ! python3 -m gpuprobe_analysis report "${inputs[@]}" -o "$OUT/report" 2>&1 | tee "$OUT/report.log"; then
  status=1
fi
step "done in $(( $(date +%s) - start )) s: open $OUT/report/report.html"
exit $status
