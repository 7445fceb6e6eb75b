#!/usr/bin/env bash
# One call on the GPU machine: build, GPU tests, compute-sanitizer, then the benchmarks.
#
#   scripts/gpu_run.sh OUTDIR [--committed] [--filter=RE] [--quick] [--no-tests] [--no-sanitizer] [--no-bench]
#                      [--tests-filter=GTEST_FILTER] [--sanitizer-filter=GTEST_FILTER]
#                      [-- extra gpuprobe flags]
#
# --sanitizer-filter: the GPU tests run under compute-sanitizer (default: the --tests-filter ones);
# a smaller set keeps slow-under-instrumentation tests (large shapes) out of the sanitizer pass.
#
# Writes into OUTDIR: build.log, tests.log, sanitizer.log, bench.log and results.json (Google
# Benchmark JSON, schema in docs/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_run.sh OUTDIR [options]}
shift
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ "${1:-}" = "--committed" ]; then
  # Only from .snapshot/head.tar (scripts/dev/snapshot.sh here, then copy .snapshot/ along): a GPU
  # machine's copy of .git can be older than the working tree it receives, and `git archive HEAD`
  # there silently builds that older commit.
  shift
  if [ ! -f .snapshot/head.tar ]; then
    echo "gpu_run.sh: --committed needs .snapshot/head.tar (run scripts/dev/snapshot.sh, copy .snapshot/ along)" >&2; exit 2
  fi
  head_dir=/tmp/gpuprobe-head
  rm -rf "$head_dir" && mkdir -p "$head_dir"
  tar -xf .snapshot/head.tar -C "$head_dir" || { echo "gpu_run.sh: bad .snapshot/head.tar" >&2; exit 1; }
  echo "[gpu_run] building the committed tree: $(cat "$head_dir/.snapshot-revision" 2>/dev/null || echo unknown)"
  exec bash "$head_dir/scripts/gpu_run.sh" "$OUT" "$@"
fi
filter="." ; quick=() ; tests=1 ; sanitizer=1 ; bench=1 ; tests_filter="*" ; sanitizer_filter="" ; extra=()
while (($#)); do
  case "$1" in
    --filter=*) filter="${1#*=}" ;;
    --quick) quick=(--quick) ;;
    --no-tests) tests=0 ;;
    --no-sanitizer) sanitizer=0 ;;
    --no-bench) bench=0 ;;
    --tests-filter=*) tests_filter="${1#*=}" ;;
    --sanitizer-filter=*) sanitizer_filter="${1#*=}" ;;
    --) shift; extra=("$@"); break ;;
    *) echo "gpu_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

export BUILD_DIR=${BUILD_DIR:-build-gpu}
start=$(date +%s)
stamp() { echo "[gpu_run +$(( $(date +%s) - start ))s] $*"; }

stamp "build"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/build.log" 2>&1
if ! bash scripts/build.sh >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; stamp "BUILD FAILED"; exit 1
fi
grep -E "warning|spill|stack frame" "$OUT/build.log" | sort -u | head -40

status=0
if ((tests)); then
  stamp "GPU tests"
  if ! "$BUILD_DIR/tests/gpuprobe_gpu_tests" --gtest_filter="$tests_filter" > "$OUT/tests.log" 2>&1; then
    status=1; stamp "GPU TESTS FAILED"; grep -E "FAILED|Failure|error" "$OUT/tests.log" | head -40
  fi
  # The other GPU-labelled CTest entries (probe invariants on a --quick result file).
  if ! ctest --test-dir "$BUILD_DIR" -L gpu -E '^gpu_tests$' --output-on-failure >> "$OUT/tests.log" 2>&1; then
    status=1; stamp "GPU CTEST ENTRIES FAILED"; grep -E "FAIL|Failed" "$OUT/tests.log" | head -20
  fi
  tail -3 "$OUT/tests.log"
fi
# Under the sanitizers, tests that assert timings (suites named *Timing*) are left out: the
# instrumentation slows every access by orders of magnitude.
san_filter="${sanitizer_filter:-$tests_filter}"
[[ "$san_filter" == *-* ]] && san_filter="$san_filter:*Timing*" || san_filter="$san_filter-*Timing*"
if ((sanitizer)); then
  stamp "compute-sanitizer memcheck + racecheck (GPU tests)"
  {
    compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD_DIR/tests/gpuprobe_gpu_tests" \
      --gtest_filter="$san_filter" --gtest_brief=1
    echo "memcheck exit: $?"
    compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD_DIR/tests/gpuprobe_gpu_tests" \
      --gtest_filter="$san_filter" --gtest_brief=1
    echo "racecheck exit: $?"
  } > "$OUT/sanitizer.log" 2>&1
  grep -E "exit:|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log"
  grep -q "exit: [^0]" "$OUT/sanitizer.log" && status=1
fi
if ((bench)); then
  stamp "benchmarks (filter: $filter)"
  "$BUILD_DIR/gpuprobe" --benchmark_filter="$filter" "${quick[@]}" \
    --benchmark_out="$OUT/results.json" --benchmark_out_format=json "${extra[@]}" > "$OUT/bench.log" 2>&1
  rc=$?
  ((rc)) && { status=1; stamp "BENCHMARKS FAILED (exit $rc)"; tail -5 "$OUT/bench.log"; }
fi
stamp "done (status $status)"
exit $status
