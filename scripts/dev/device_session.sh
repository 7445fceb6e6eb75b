#!/usr/bin/env bash
# Everything a development round needs from a GPU machine, in one command:
#   1. build + all GPU tests + compute-sanitizer memcheck/racecheck on the small tests (gpu_run.sh);
#   2. the main job, timed (main_job.sh: every probe, every kernel at the benchmark sizes, roofline
#      counters, report).
#
#   scripts/dev/device_session.sh OUTDIR [--budget=SECONDS] [--no-tests] [main_job.sh options]
#
# OUTDIR receives a handful of files: job.log (main job's terminal output with its wall time),
# results.json, premises.json, counters.json, report.tgz (report/ with report.html), logs.tgz
# (build, tests, sanitizer, bench, counters and report logs).
# --budget (default: none): when given, the tests get at most half of it and the main job is
# stopped at this many seconds after the start, so that whatever it finished is still copied out;
# a stopped run leaves results.json.partial.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: device_session.sh OUTDIR [--budget=SECONDS] [--no-tests] [main_job options]}
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
budget="" ; tests=1 ; job_args=() ; status=0
for arg in "$@"; do
  case "$arg" in
    --budget=*) budget=${arg#*=} ;;
    --no-tests) tests=0 ;;
    *) job_args+=("$arg") ;;
  esac
done
start=$(date +%s)
# limited SECONDS KILL_AFTER SIGNAL CMD...: CMD under a time limit when a budget was given, else as is.
limited() {
  local secs=$1 kill_after=$2 signal=$3; shift 3
  if [ -n "$budget" ]; then timeout -k "$kill_after" --signal="$signal" "$secs" "$@"; else "$@"; fi
}
export BUILD_DIR=${BUILD_DIR:-build} PYTHONUNBUFFERED=1

if ((tests)); then
  # Sanitizers on the small correctness tests only: the large ones take minutes under memcheck.
  # With a budget, at most half of it, so the main job always gets its turn.
  limited $(( ${budget:-0} / 2 )) 10 TERM bash scripts/gpu_run.sh "$OUT" --no-bench \
    --sanitizer-filter='SymvSmall*:GemvSmall*:GemvSinglePassWorkspace*:SgemmSmall*:BarrierCorrectness*:BarrierCheck*:ExecPipelineChain*:MemoryLatency.*:Harness.*:TransferSmCopy*:LaunchGate.*'
  rc=$?
  ((rc)) && status=1
  echo "[device_session] tests done at +$(( $(date +%s) - start ))s (status $rc)"
fi

# Variants that have never run on a GPU must not cost the reference run: if the GPU tests failed
# on them (plainly or under a sanitizer), a sanitizer reported errors, or the test binary died
# before its summary (a crash leaves the context unusable), the main job leaves their entries out
# and says so. Another test failing under a sanitizer (a timing bound, say) fails the session but
# keeps the entries.
kernel_tests='^\[  FAILED  \].*(V3|v3|SinglePass|Symv|Gemv)'
if ((tests)) && [ -f "$OUT/tests.log" ]; then
  if grep -qE "$kernel_tests" "$OUT/tests.log" || ! grep -q '^\[==========\].*ran' "$OUT/tests.log" \
     || grep -qE "$kernel_tests" "$OUT/sanitizer.log" 2>/dev/null \
     || grep -qE 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]' "$OUT/sanitizer.log" 2>/dev/null; then
    echo "[device_session] SYMV/GEMV v3 tests failed, a sanitizer found errors or the test run died: main job with --exclude='_v3'"
    job_args+=(--exclude=_v3)
  fi
fi

left=$(( ${budget:-0} - ($(date +%s) - start) ))
work=/tmp/gpuprobe-main-job
rm -rf "$work"
if [ -n "$budget" ] && ((left < 60)); then
  echo "[device_session] only ${left}s left of the ${budget}s budget: main job not started" | tee "$OUT/job.log"
  status=1
else
  [ -n "$budget" ] && echo "[device_session] main job with ${left}s left"
  job_start=$(date +%s)
  limited "$left" 15 INT bash scripts/main_job.sh "$work" "${job_args[@]}" > "$OUT/job.log" 2>&1
  rc=$?
  ((rc)) && status=1
  echo "main job: exit $rc, wall $(( $(date +%s) - job_start )) s$( ((rc == 124)) && echo ' (stopped at the budget)')" \
    | tee -a "$OUT/job.log"
fi
for f in results.json premises.json counters.json; do
  if [ -f "$work/$f" ]; then cp "$work/$f" "$OUT/"; elif [ -f "$work/$f.partial" ]; then cp "$work/$f.partial" "$OUT/"; fi
done
[ -d "$work/report" ] && tar czf "$OUT/report.tgz" -C "$work" report
grep -hE '^\[  (PASSED|FAILED)  \]|tests? (passed|failed)|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/tests.log" "$OUT/sanitizer.log" 2>/dev/null | tail -12
# The session's own logs travel inside logs.tgz with the main job's, so OUTDIR stays short.
for f in build.log tests.log sanitizer.log; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$work/session-$f" && rm "$OUT/$f"; done
(cd "$work" 2>/dev/null && tar czf "$OUT/logs.tgz" ./*.log) 2>/dev/null
tail -25 "$OUT/job.log" 2>/dev/null
echo "[device_session] done at +$(( $(date +%s) - start ))s (status $status)"
exit $status
