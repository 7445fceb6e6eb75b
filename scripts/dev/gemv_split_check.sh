#!/usr/bin/env bash
# A GPU-machine check that the GEMV split (gemv_kernels.cuh in independent parts, one plan/launch template
# over GemvImpl; commit 618e8a0, merged by 1d02e4e) changed no GEMV kernel and no GEMV figure. For
# development, not the user's path. Two steps:
#
#   1. Here, where git history is:   scripts/dev/gemv_split_check.sh --snapshot
#      writes .snapshot/gemv-old.tar (its commit in .snapshot/gemv-old.tar.commit): the folders a build
#      needs at OLD_COMMIT (default 1d02e4e^1: main just before the merge, whose kernels/ differs from
#      today's only in the GEMV files; 1.2 MB).
#   2. On the GPU machine, in one call, with .snapshot carried (it is ignored by git):
#        run(command="bash scripts/dev/gemv_split_check.sh $OUT", carry=[".snapshot"])
#      builds the old tree's gpuprobe and this tree's gpuprobe and gpuprobe_gpu_tests (both at once), then
#        a. this tree's GEMV GPU tests (gpuprobe_gpu_tests --gtest_filter='Gemv*');
#        b. the machine code of both gpuprobe binaries (cuobjdump -sass and -res-usage), function by
#           function, the anonymous namespaces' per-file hashes taken out: every GEMV kernel (gemv.cu,
#           gemv_double.cu) must be identical. Other kernels are counted, not judged (families other than
#           GEMV changed since OLD_COMMIT);
#        c. the GEMV figures, kernels.gemv and paired.gemv (--quick), timed with old, new and old again:
#           an entry matches when old -> new moved within compare's 2-sigma noise or within twice what the
#           same entry moved between the two old runs, and both binaries ran the same entries.
#
# Writes to OUTDIR: summary.txt (the three verdicts, times, the old commit), gpu_tests.log, kernels.txt,
# figures.txt (every entry: old, new, old again, the verdict), compare.md and compare_old_old.md
# (gpuprobe_analysis compare), old.json.gz and new.json.gz, and the build logs' tails when a build fails.
# Exit 0 when the tests pass, every GEMV kernel is identical and every GEMV figure matches.
# Builds and runs are kept in WORK (default build-gemv-check/, ignored by git), so a call cut short by
# the time limit resumes where it stopped (the builds are incremental; a finished run is not redone).
set -uo pipefail
cd "$(dirname "$0")/../.."
OLD_TAR=${OLD_TAR:-.snapshot/gemv-old.tar}
OLD_COMMIT=${OLD_COMMIT:-1d02e4e^1}

if [ "${1:-}" = "--snapshot" ]; then
  # Only what the old gpuprobe's build reads (its tests are not built).
  mkdir -p "$(dirname "$OLD_TAR")"
  git archive --format=tar -o "$OLD_TAR" "$OLD_COMMIT" CMakeLists.txt cmake common profilers kernels microbench ||
    exit 1
  git rev-parse "$OLD_COMMIT" > "$OLD_TAR.commit"
  echo "gemv_split_check: $OLD_TAR holds $(git rev-parse --short "$OLD_COMMIT") ($(du -h "$OLD_TAR" | cut -f1));" \
       "gemv_kernels.cuh there: $(git show "$OLD_COMMIT:kernels/src/gemv_kernels.cuh" | wc -l) lines"
  exit 0
fi

OUT=${1:?usage: gemv_split_check.sh OUTDIR | --snapshot}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
WORK=${WORK:-build-gemv-check}
if [ ! -f "$OLD_TAR" ]; then
  echo "gemv_split_check: no $OLD_TAR (run scripts/dev/gemv_split_check.sh --snapshot first, then carry .snapshot)" >&2
  exit 2
fi
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
[ -x "$CUOBJDUMP" ] || { echo "gemv_split_check: cuobjdump not found (set CUOBJDUMP)" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "gemv_split_check: no GPU" >&2; exit 2; }
export PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
start=$(date +%s)
stamp() { echo "[gemv_split_check +$(( $(date +%s) - start ))s] $*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"
stamp "old tree: $OLD_TAR (commit $(cat "$OLD_TAR.commit" 2>/dev/null || echo '?')); new tree: this working tree"
status=0

# The old tree is unpacked again only when OLD_TAR changed.
tar_sum=$(sha256sum "$OLD_TAR" | cut -d' ' -f1)
if [ "$(cat "$WORK/old-src.sha256" 2>/dev/null)" != "$tar_sum" ]; then
  rm -rf "$WORK/old-src" "$WORK/old" "$WORK/runs" && mkdir -p "$WORK/old-src"
  tar -xf "$OLD_TAR" -C "$WORK/old-src" && echo "$tar_sum" > "$WORK/old-src.sha256"
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
build() {  # TREE BUILD_DIR TESTS(ON|OFF) TARGETS...: configured the same way for both trees
  local tree=$1 dir=$2 tests=$3
  shift 3
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake -S "$tree" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUPROBE_BUILD_TESTS="$tests" \
    > "$dir.configure.log" 2>&1 &&
    cmake --build "$dir" -j "$(nproc)" "${targets[@]}" > "$dir.build.log" 2>&1 ||
    { tail -40 "$dir.configure.log" "$dir.build.log" > "$OUT/$(basename "$dir").build-failure.log"; return 1; }
}
# Both at once: each build's tail (one large unit) leaves cores idle that the other one uses.
stamp "build old gpuprobe, new gpuprobe and gpuprobe_gpu_tests"
build "$WORK/old-src" "$WORK/old" OFF gpuprobe & old_pid=$!
build "$PWD" "$WORK/new" ON gpuprobe gpuprobe_gpu_tests & new_pid=$!
wait $old_pid; old_rc=$?
wait $new_pid; new_rc=$?
if [ $old_rc -ne 0 ] || [ $new_rc -ne 0 ]; then
  stamp "BUILD FAILED (old exit $old_rc, new exit $new_rc): $OUT/*.build-failure.log"
  exit 1
fi
stamp "built"

stamp "GEMV GPU tests"
timeout 300 "$WORK/new/tests/gpuprobe_gpu_tests" --gtest_filter='Gemv*' > "$OUT/gpu_tests.log" 2>&1
tests_rc=$?
tail -3 "$OUT/gpu_tests.log"
if [ "$tests_rc" -eq 0 ]; then
  stamp "GEMV GPU tests: PASSED ($(grep -c '^\[       OK \]' "$OUT/gpu_tests.log") tests)"
else
  stamp "GEMV GPU tests: FAILED (exit $tests_rc): gpu_tests.log"
  status=1
fi

stamp "machine code of old and new"
for which in old new; do
  "$CUOBJDUMP" -sass "$WORK/$which/gpuprobe" > "$WORK/$which.sass" 2>&1
  "$CUOBJDUMP" -res-usage "$WORK/$which/gpuprobe" > "$WORK/$which.res" 2>&1
done
python3 - "$WORK/old.sass" "$WORK/new.sass" "$WORK/old.res" "$WORK/new.res" > "$OUT/kernels.txt" <<'EOF'
import re, sys
sys.path.insert(0, 'scripts/dev')  # run from the repository root
from cuda_symbols import normal


def functions(path):
    """name -> the sorted list of its bodies (a kernel of a header, e.g. blas2's, is in several units):
    the instruction and encoding lines of `cuobjdump -sass`, which all start with a comment."""
    funcs, cur = {}, None
    for line in open(path, errors='replace'):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            cur = []
            funcs.setdefault(normal(m.group(1)), []).append(cur)
        elif cur is not None and line.strip().startswith('/*'):
            cur.append(normal(line.strip()))
    return {f: sorted('\n'.join(b) for b in bodies) for f, bodies in funcs.items()}

def resources(path):
    """name -> sorted usage lines of `cuobjdump -res-usage` ("Function NAME:" then "REG:.. STACK:.. ...")."""
    out, cur = {}, None
    for line in open(path, errors='replace'):
        m = re.match(r'\s*Function (\S+?):\s*(.*)$', line)
        if m:
            cur = normal(m.group(1))
            if m.group(2):
                out.setdefault(cur, []).append(m.group(2).strip())
                cur = None
        elif cur is not None and line.strip():
            out.setdefault(cur, []).append(line.strip())
            cur = None
    return {f: sorted(v) for f, v in out.items()}

old, new = functions(sys.argv[1]), functions(sys.argv[2])
old_res, new_res = resources(sys.argv[3]), resources(sys.argv[4])
is_gemv = lambda f: 'ANON[gemv]' in f or 'ANON[gemv_double]' in f
ok = True
for label, pick, judged in (("GEMV kernels (gemv.cu, gemv_double.cu)", is_gemv, True),
                            ("every other kernel (not judged: other families changed since the old commit)",
                             lambda f: not is_gemv(f), False)):
    a = {f for f in old if pick(f)}
    b = {f for f in new if pick(f)}
    same_sass = sum(1 for f in a & b if old[f] == new[f])
    same_res = sum(1 for f in a & b if old_res.get(f) == new_res.get(f) and f in old_res)
    good = a == b and same_sass == len(a) and same_res == len(a) and len(a) > 0
    if judged:
        ok = ok and good
    print(f"{label}: {len(a)} old, {len(b)} new; SASS identical {same_sass}, resource usage identical {same_res}"
          f" -> {'IDENTICAL' if good else 'DIFFERENT'}")
    if not judged:
        continue
    for f in sorted(a ^ b):
        print(f"  only in {'old' if f in a else 'new'}: {f}")
    for f in sorted(a & b):
        if old[f] != new[f] or old_res.get(f) != new_res.get(f):
            print(f"  differs: {f}\n    old {old_res.get(f)}\n    new {new_res.get(f)}")
print("GEMV kernels verdict:", "IDENTICAL" if ok else "DIFFERENT")
sys.exit(0 if ok else 1)
EOF
kernels_rc=$?
head -3 "$OUT/kernels.txt"
stamp "$(grep '^GEMV kernels verdict' "$OUT/kernels.txt" || echo 'GEMV kernels verdict: NONE (the comparison failed)')"
[ "$kernels_rc" -eq 0 ] || status=1

# old, new, old again: the two old runs show how far figures move between runs of one binary.
mkdir -p "$WORK/runs"
for which in old new old2; do
  [ -s "$WORK/runs/$which.json" ] && continue
  build_dir=$WORK/new
  [ "$which" != new ] && build_dir=$WORK/old
  stamp "GEMV figures: $which"
  timeout 150 "$build_dir/gpuprobe" --quick --benchmark_filter='^(kernels|paired)\.gemv/' \
    --benchmark_out="$WORK/runs/$which.json.partial" --benchmark_out_format=json > "$WORK/runs/$which.log" 2>&1 &&
    mv "$WORK/runs/$which.json.partial" "$WORK/runs/$which.json"
  run_rc=$?
  if [ "$run_rc" -ne 0 ]; then
    stamp "GEMV figures: $which FAILED (exit $run_rc)"
    tail -20 "$WORK/runs/$which.log" > "$OUT/$which.run-failure.log"
  fi
done
python3 - "$WORK/runs/old.json" "$WORK/runs/new.json" "$WORK/runs/old2.json" > "$OUT/figures.txt" <<'EOF'
import sys
from gpuprobe_analysis.compare import compare
from gpuprobe_analysis.results import load

old, new, old2 = (load([p]) for p in sys.argv[1:4])
moved, noise = compare(old, new, summary=False), compare(old, old2, summary=False)
again = {r["entry"]: r for r in noise["rows"]}
bad = 0
print(f"{'entry':70s} {'old':>10s} {'new':>10s} {'old again':>10s} {'old->new':>9s} {'allowed':>8s}")
for r in moved["rows"]:
    o2 = again.get(r["entry"])
    allowed = max(r["threshold_pct"], 2 * abs(o2["change_pct"]) if o2 else 0.0)
    ok = abs(r["change_pct"]) <= allowed
    bad += not ok
    print(f"{r['entry']:70s} {r['a']:10.4g} {r['b']:10.4g} {o2['b'] if o2 else float('nan'):10.4g} "
          f"{r['change_pct']:+8.2f}% {allowed:7.2f}% {'' if ok else 'MOVED'}")
missing = moved["only_in_a"] + moved["only_in_b"]
for e in moved["only_in_a"]:
    print("only in old:", e)
for e in moved["only_in_b"]:
    print("only in new:", e)
good = bad == 0 and not missing and len(moved["rows"]) > 0
print(f"GEMV figures verdict: {'MATCH' if good else 'DIFFERENT'} ({len(moved['rows'])} entries, {bad} moved beyond "
      f"max(2 sigma, 2 x old-vs-old), {len(missing)} in one binary only)")
sys.exit(0 if good else 1)
EOF
figures_rc=$?
stamp "$(grep '^GEMV figures verdict' "$OUT/figures.txt" || echo 'GEMV figures verdict: NONE (a run or the comparison failed)')"
[ "$figures_rc" -eq 0 ] || status=1
python3 -m gpuprobe_analysis compare "$WORK/runs/old.json" "$WORK/runs/new.json" -o "$OUT/compare.md" > /dev/null 2>&1 ||
  echo "compare old new failed"
python3 -m gpuprobe_analysis compare "$WORK/runs/old.json" "$WORK/runs/old2.json" -o "$OUT/compare_old_old.md" > /dev/null 2>&1 ||
  echo "compare old old2 failed"
gzip -c "$WORK/runs/old.json" > "$OUT/old.json.gz" 2>/dev/null
gzip -c "$WORK/runs/new.json" > "$OUT/new.json.gz" 2>/dev/null
stamp "done (exit $status)"
exit $status
