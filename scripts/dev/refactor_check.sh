#!/usr/bin/env bash
# A GPU-machine check that a refactored tree measures what an earlier one did (for development, not
# the user's path): both gpuprobe binaries are built and run one after the other on every family
# (--quick sweeps), then `gpuprobe_analysis compare` lists what moved beyond the recorded noise,
# beside what moved between two runs of the old one.
#   git archive --format=tar OLD_COMMIT -o .snapshot/old.tar   (here; .snapshot/ travels with `carry`)
#   scripts/dev/refactor_check.sh OUTDIR [extra gpuprobe flags]
# OUTDIR receives old.json.gz, new.json.gz, old2.json.gz, compare.md, compare_old_old.md and logs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: refactor_check.sh OUTDIR [gpuprobe flags]}
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
OLD_TAR=${OLD_TAR:-.snapshot/old.tar}  # another archive: OLD_TAR=.snapshot/other.tar
[ -f "$OLD_TAR" ] || { echo "refactor_check: no $OLD_TAR (see the header)" >&2; exit 2; }
export NCCL_NVLS_ENABLE=0 PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
stamp() { echo "[refactor_check +$(( $(date +%s) - start ))s] $*"; }
logs=/tmp/refactor-check-logs
rm -rf "$logs" /tmp/gpuprobe-old && mkdir -p "$logs" /tmp/gpuprobe-old
tar -xf "$OLD_TAR" -C /tmp/gpuprobe-old

stamp "build old and new gpuprobe"
# The gpuprobe target alone, configured the same way for both (the old tree's build.sh may build more).
build_gpuprobe() {
  (cd "$1" && cmake -S . -B build-refactor-check -G Ninja -DCMAKE_BUILD_TYPE=Release &&
   cmake --build build-refactor-check -j "$(nproc)" --target gpuprobe)
}
build_gpuprobe /tmp/gpuprobe-old > "$logs/build-old.log" 2>&1 || { tail -20 "$logs/build-old.log"; exit 1; }
build_gpuprobe "$PWD" > "$logs/build-new.log" 2>&1 || { tail -20 "$logs/build-new.log"; exit 1; }

# old, new, old again: the two old runs show how far figures move between runs of one binary (host-
# bound figures such as small transfers and launch costs move more than their in-run noise says).
for which in old new old2; do
  exe=build-refactor-check/gpuprobe
  [ "$which" != new ] && exe=/tmp/gpuprobe-old/build-refactor-check/gpuprobe
  stamp "run $which"
  "$exe" --quick "$@" --benchmark_out="$OUT/$which.json" --benchmark_out_format=json > "$logs/run-$which.log" 2>&1
  echo "$which exit $?" | tee -a "$logs/run-$which.log"
done
stamp compare
python3 -m gpuprobe_analysis compare "$OUT/old.json" "$OUT/new.json" -o "$OUT/compare.md" > "$logs/compare.log" 2>&1
echo "compare exit $?" >> "$logs/compare.log"
python3 -m gpuprobe_analysis compare "$OUT/old.json" "$OUT/old2.json" -o "$OUT/compare_old_old.md" >> "$logs/compare.log" 2>&1
head -40 "$OUT/compare.md"
gzip -f "$OUT/old.json" "$OUT/new.json" "$OUT/old2.json"
tar czf "$OUT/logs.tgz" -C "$logs" .
stamp done
