#!/usr/bin/env bash
# The reference run for reports/<gpu>/ on a GPU machine: build, then the main job (every probe, the
# premise pass, the kernels' roofline counters, the report). Writes into OUTDIR: results.json.gz,
# premises.json.gz, counters.json.gz, report.tgz, logs.tgz, job.log.
#   scripts/dev/reference_run.sh OUTDIR [--budget=SECONDS] [main_job.sh options]
# --budget (default: none): when given, the main job is stopped (SIGINT) at this many seconds after
# the build started, and whatever it finished is still written out (as *.json.partial.gz).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: reference_run.sh OUTDIR [--budget=SECONDS] [main_job options]}
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
budget="" ; args=()
for a in "$@"; do case "$a" in --budget=*) budget=${a#*=} ;; *) args+=("$a") ;; esac; done
export BUILD_DIR=${BUILD_DIR:-build} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
start=$(date +%s)
work=/tmp/gpuprobe-reference
rm -rf "$work" && mkdir -p "$work"
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
echo "[reference_run] built in $(( $(date +%s) - start )) s"
if [ -n "$budget" ]; then
  left=$(( budget - ($(date +%s) - start) ))
  echo "[reference_run] main job with ${left} s"
  timeout -k 10 --signal=INT "$left" bash scripts/main_job.sh "$work" --no-build "${args[@]}" > "$OUT/job.log" 2>&1
else
  bash scripts/main_job.sh "$work" --no-build "${args[@]}" > "$OUT/job.log" 2>&1
fi
rc=$?
echo "main job: exit $rc, wall $(( $(date +%s) - start )) s since the build started" | tee -a "$OUT/job.log"
for f in results premises counters; do
  if [ -f "$work/$f.json" ]; then gzip -c "$work/$f.json" > "$OUT/$f.json.gz"
  elif [ -f "$work/$f.json.partial" ]; then gzip -c "$work/$f.json.partial" > "$OUT/$f.json.partial.gz"; fi
done
[ -d "$work/report" ] && tar czf "$OUT/report.tgz" -C "$work" report
(cd "$work" && tar czf "$OUT/logs.tgz" ./*.log)
tail -30 "$OUT/job.log"
exit $rc
