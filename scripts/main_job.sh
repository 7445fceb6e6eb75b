#!/usr/bin/env bash
# The main job, end to end: build -> characterize the GPU (all probes) -> kernel benchmarks with
# roofline counters -> report. Progress on the terminal, a summary at the end.
#
#   scripts/main_job.sh [OUTDIR] [--quick] [--device=N] [--no-counters] [--exclude=RE]... [--no-build]
#   scripts/main_job.sh --report-only DIR [-o REPORTDIR]
#
# --exclude=RE (repeatable; the entries matching any of them are left out) goes to gpuprobe.
# --no-build runs the gpuprobe already built in $BUILD_DIR (default build/); GPUPROBE=PATH names
# another executable.
#
# OUTDIR (default reports/local, ignored by git) receives results.json (all probes and kernel
# benchmarks, timing), premises.json (the ceiling probes' premises checked by counters, in untimed
# replays), counters.json (kernel benchmarks again with --counters=roofline, in an untimed replay),
# logs, and report/ (report.html, report.md, device-profile.json, plots). Before
# measuring it removes what an earlier run left there, so the results in OUTDIR are this run's.
# Without a GPU nothing is measured (exit 0): it says so, and how to see a report of existing results.
#
# --report-only DIR builds the report of the results already in DIR (premises.json[.gz],
# results.json[.gz], counters.json[.gz]) into REPORTDIR (default reports/local/report-of-<DIR's name>).
#
# Neither OUTDIR nor REPORTDIR may be a folder holding files tracked by git (reports/h100 ...:
# committed reference data). Exit codes: 0 done (or no GPU here), 1 a step failed, 2 usage error;
# a failure ends with one line "main_job: FAILED: ...".
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=reports/local ; quick=() ; device=() ; counters=1 ; exclude=() ; excluded=() ; build=1
report_only="" ; report_dir=""
usage() { echo "main_job.sh: $*" >&2; exit 2; }
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg=${args[i]}
  case "$arg" in
    --quick) quick=(--quick) ;;
    --device=*) device=("$arg") ;;
    --no-counters) counters=0 ;;
    --no-build) build=0 ;;
    --exclude=?*) excluded+=("${arg#*=}") ;;  # gpuprobe's: entries matching RE are not registered
    --report-only=?*) report_only=${arg#*=} ;;
    --report-only) ((i + 1 < ${#args[@]})) || usage "--report-only needs a folder of results"
                   report_only=${args[++i]} ;;
    -o) ((i + 1 < ${#args[@]})) || usage "-o needs a folder"; report_dir=${args[++i]} ;;
    -o=?*|--output=?*) report_dir=${arg#*=} ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) usage "unknown option $arg (--help lists them)" ;;
    *) OUT=$arg ;;
  esac
done
[ -n "$report_dir" ] && [ -z "$report_only" ] && usage "-o is for --report-only; a run writes into OUTDIR"

fail() { echo "main_job: FAILED: $*" >&2; exit 1; }

# The analysis of this checkout, also where another checkout's package is installed (pip -e).
export PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"

# Refuses a folder that holds files tracked by git, or lies inside one below the checkout's root:
# committed reference data is never overwritten, and a report or a run's logs must not dirty the
# checkout. The rule is the analysis' (gpuprobe_analysis/outputs.py), the one gpuprobe-analyze's
# commands apply too: it prints the reason and the tracked folder, and exits 1.
refuse_tracked() {
  local what=$2 verdict rc
  verdict=$(python3 -m gpuprobe_analysis.outputs "$1")
  rc=$?
  ((rc == 0)) && return 0
  ((rc == 1)) || fail "could not check $1 for files tracked by git (python3 -m gpuprobe_analysis.outputs: exit $rc)"
  local why=${verdict%%$'\n'*} d=${verdict#*$'\n'} also=""
  # The advice names folders this check accepts: under reports/local/ (ignored by git).
  if [ "$what" = OUTDIR ] && compgen -G "$d/results.json*" >/dev/null; then
    also="; a report of the results in $d: --report-only $d -o"
    also+=" reports/local/$(basename -- "$(realpath -- "$d")")-report"
  fi
  usage "$what $why$also"
}

if [ -n "$report_only" ]; then
  [ -d "$report_only" ] || usage "--report-only $report_only: no such folder"
  report_dir=${report_dir:-reports/local/report-of-$(basename "$(cd "$report_only" && pwd)")}
  refuse_tracked "$report_dir" "-o"
  inputs=()
  # The counter runs first: the last file's entry is used (results.json's timing), completed by the
  # counters and premise tags only the earlier files have.
  for base in premises counters results; do
    for f in "$report_only/$base.json" "$report_only/$base.json.gz" "$report_only/$base.json.partial"; do
      if [ -f "$f" ]; then
        # The analysis reads FILE.partial for FILE and marks the report incomplete.
        inputs+=("${f%.partial}"); break
      fi
    done
  done
  ((${#inputs[@]})) || fail "no results.json, results.json.gz or counters.json in $report_only to report on"
  mkdir -p "$report_dir"
  python3 -m gpuprobe_analysis report "${inputs[@]}" -o "$report_dir" \
    || fail "the analysis could not report on ${inputs[*]} (messages above)"
  echo "main_job: report of ${inputs[*]}: open $report_dir/report.html"
  exit 0
fi

refuse_tracked "$OUT" "OUTDIR"
# Several --exclude (e.g. the caller's and scripts/dev/device_session.sh's own) leave out the union.
if ((${#excluded[@]})); then
  joined=$(printf '|(?:%s)' "${excluded[@]}")
  exclude=("--exclude=${joined:1}")
fi
mkdir -p "$OUT"
start=$(date +%s)
step() { echo; echo "== [$(( $(date +%s) - start ))s] $*"; }
BUILD_DIR=${BUILD_DIR:-build}
GPUPROBE=${GPUPROBE:-$BUILD_DIR/gpuprobe}

if ((build)); then
  step "build ($BUILD_DIR; log: $OUT/build.log)"
  # The executable's identity before the build: whether the build made a new one (below).
  stamp() { stat -c '%.9Y %i %s' -- "$GPUPROBE" 2>/dev/null; }
  before=$(stamp)
  # Progress every 10 % of the steps (Ninja "[n/N]", Make "[ p%]"): a first build takes minutes. The
  # configure step's notes ("-- gpuprobe: ...": the GPU architectures, and which optional parts, NCCL,
  # MPI, PAPI, were found or left out) are shown as they come.
  BUILD_DIR=$BUILD_DIR BUILD_TARGETS=${BUILD_TARGETS-gpuprobe} bash scripts/build.sh 2>&1 | tee "$OUT/build.log" | awk '
    /^-- gpuprobe: / { print "  configure: " substr($0, 14); fflush(); next }
    /^CMake Warning/ { print "  configure: a CMake warning (in the build log)"; fflush(); next }
    match($0, /^\[ *[0-9]+\/[0-9]+\]/) { split(substr($0, 2, RLENGTH - 2), nN, "/"); p = int(100 * nN[1] / nN[2]) }
    match($0, /^\[ *[0-9]+%\]/) { p = substr($0, 2, RLENGTH - 3) + 0 }
    p != "" && int(p / 10) != last { last = int(p / 10); printf "  build %3d %%\n", p; fflush() }'
  build_status=${PIPESTATUS[0]}
  if ((build_status)); then
    tail -20 "$OUT/build.log"; fail "build (exit $build_status; log: $OUT/build.log)"
  fi
  # The build tool counts only the steps it found out of date (a rebuild may stop at "build 33 %"):
  # the end is said in words, and truthfully: a new executable, or the one already there.
  if [ "$(stamp)" != "$before" ]; then
    echo "  build done: built $GPUPROBE"
  else
    echo "  build done: $GPUPROBE is up to date"
  fi
fi
[ -x "$GPUPROBE" ] || fail "no executable $GPUPROBE (build it, or leave out --no-build)"

# Every flag is checked here, before a GPU is needed: a wrong flag ends the job on any machine.
"$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" --benchmark_list_tests > /dev/null 2> "$OUT/gpu-check.log"
check=$?
if ((check)); then
  line=$(grep -m1 '^gpuprobe:' "$OUT/gpu-check.log" || head -1 "$OUT/gpu-check.log")
  if ((check == 2)) && [[ $line == "gpuprobe: no usable GPU"* ]]; then
    line=${line%%; --benchmark_list_tests*}  # gpuprobe's hint on that flag: this job uses it only as a check
    echo "main_job: nothing measured: $line"
    echo "main_job: to see a report of committed results without a GPU:" \
         "bash scripts/main_job.sh --report-only reports/h100 -o reports/local/h100-report"
    exit 0
  fi
  echo "main_job: $line" >&2
  exit "$((check == 2 ? 2 : 1))"
fi

# What an earlier run left (only the names this script writes) goes before this run writes: nothing
# in OUTDIR afterwards can be taken for this run's results. Not before: without a GPU they stay.
old=()
for f in results.json premises.json counters.json results.json.partial premises.json.partial counters.json.partial \
         report bench.log premises.log counters.log report.log prefit.log .fit-cache; do
  [ -e "$OUT/$f" ] && old+=("$f")
done
if ((${#old[@]})); then
  echo "main_job: removing the previous run's ${old[*]} from $OUT"
  (cd "$OUT" && rm -rf -- "${old[@]}")
fi

step "characterize + kernel benchmarks -> $OUT/results.json"
# Progress: each family's name once, when its first entry finishes (families whose entries alternate,
# such as exec.tensor and exec.tensor_latency, are not named again), and a dot per 50 entries.
"$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" --benchmark_out="$OUT/results.json" --benchmark_out_format=json \
  --benchmark_format=console 2>&1 | tee "$OUT/bench.log" | grep -E --line-buffered "^(baseline|memory|exec|transfer|kernels)\.[a-z_0-9]+/" \
  | awk -F/ '{fam=$1; if (!(fam in seen)) { printf "%s  %-28s", (n ? "\n" : ""), fam; seen[fam] = 1 } ; n++; if (n % 50 == 0) printf "."; fflush() } END { print "" }'
bench_status=${PIPESTATUS[0]}
if ((bench_status)) || [ ! -f "$OUT/results.json" ]; then
  tail -3 "$OUT/bench.log"
  fail "gpuprobe exit $bench_status: $(grep -m1 '^gpuprobe:' "$OUT/bench.log" || echo 'no results.json written') (log: $OUT/bench.log; the entries it finished: $OUT/results.json.partial)"
fi

status=0 ; failed=""
prefit_pid=""
if ((counters)); then
  # The level fits of the timing run's curves, the report's slowest part, are computed now on the CPU
  # while the GPU runs the counter passes; the report finds them in the fit cache (analysis levels.py:
  # keyed by each curve's data and the fitting code, so nothing stale is reused).
  export GPUPROBE_FIT_CACHE="$OUT/.fit-cache"
  python3 -m gpuprobe_analysis profile "$OUT/results.json" > "$OUT/prefit.log" 2>&1 &
  prefit_pid=$!
fi
# One untimed counter run: NAME (premises, counters), what it is for, then gpuprobe's own flags. A
# failure fails the job (after the report); a refusal of the counters (no permission, a profiler
# attached) leaves timing only, and the report says what went unchecked.
counter_run() {
  local name=$1 what=$2 ; shift 2
  step "$what -> $OUT/$name.json"
  if ! "$GPUPROBE" "${device[@]}" "${quick[@]}" "${exclude[@]}" "$@" \
      --benchmark_out="$OUT/$name.json" --benchmark_out_format=json > "$OUT/$name.log" 2>&1; then
    local why="$name run: $(grep -m1 '^gpuprobe:' "$OUT/$name.log") (log: $OUT/$name.log)"
    status=1 ; failed="${failed:+$failed; }$why"
    echo "main_job: $why" >&2
  elif grep -q '^gpuprobe: counters: .*continuing with timing only' "$OUT/$name.log"; then
    echo "main_job: counters unavailable for $name: $(grep -m1 '^gpuprobe: counters:' "$OUT/$name.log")"
  fi
}
if ((counters)); then
  # Every ceiling probe's premise (which level served what it counts), checked by CUPTI counters in
  # untimed replays of each entry (one sample each: the figures come from results.json).
  counter_run premises "ceiling probes' premises with hardware counters (application replay)" \
    --counters=premise,replay=application --samples=1 \
    --benchmark_filter='^memory\.(bandwidth|occupancy|l1_peak|l2_bandwidth|shared_bandwidth)/|^exec\.(throughput_peak|tensor)/'
  # One timed sample each: the figures come from results.json, the counters from untimed replays.
  # The one-GPU kernels only: the multi-GPU ones (kernels.*_mgpu*) are judged by their own bound
  # (docs/perf/symv_mgpu.md), and a SYTRD sequence replayed under the profiler would take minutes.
  counter_run counters "kernel benchmarks with roofline counters (untimed replays)" \
    --counters=roofline --samples=1 --benchmark_filter='^(kernels\.(symv|gemv|sgemm)|baseline\.[a-z_0-9]+)/'
fi

step "report -> $OUT/report"
# A failed early fit only costs time: the report fits what the cache lacks.
[ -n "$prefit_pid" ] && { wait "$prefit_pid" || echo "main_job: the early level fits failed (log: $OUT/prefit.log); the report fits them"; }
# results.json last: the last file's entry is used (the timing run's figures), completed by the
# counters and premise tags of the counter runs.
inputs=()
[ -f "$OUT/premises.json" ] && inputs+=("$OUT/premises.json")
[ -f "$OUT/counters.json" ] && inputs+=("$OUT/counters.json")
inputs+=("$OUT/results.json")
if ! python3 -m gpuprobe_analysis report "${inputs[@]}" -o "$OUT/report" 2>&1 | tee "$OUT/report.log"; then
  status=1 ; failed="${failed:+$failed; }report (log: $OUT/report.log)"
fi
rm -rf "$OUT/.fit-cache"
((status)) && fail "$failed"
step "done in $(( $(date +%s) - start )) s: open $OUT/report/report.html"
exit 0
