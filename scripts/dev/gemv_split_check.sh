#!/usr/bin/env bash
# A GPU-machine check that a change to the GEMV sources changed no kernel (for development, not the
# user's path), all in one call: an old tree (OLD_TAR) and this one are built, then
#   1. this tree's GEMV GPU tests (gpuprobe_gpu_tests --gtest_filter='Gemv*');
#   2. the machine code of both gpuprobe binaries (cuobjdump -sass and -res-usage), function by
#      function, with the anonymous namespaces' per-file hashes taken out: every GEMV kernel
#      (gemv.cu, gemv_double.cu) must be identical, and so must every other kernel;
#   3. the GEMV figures, kernels.gemv and paired.gemv (--quick), timed with old, new and old again;
#      `gpuprobe_analysis compare` lists what moved beyond the recorded noise, beside what moved
#      between the two runs of the old binary.
#
#   git archive --format=tar BASE_COMMIT -o .snapshot/old.tar   (here; .snapshot/ travels with `carry`)
#   scripts/dev/gemv_split_check.sh OUTDIR
#
# Builds and runs are kept in WORK (default build-gemv-check/, ignored by git) and a stage whose output
# is there is not redone: a call cut short by the time limit resumes where it stopped (the builds
# too). Exit 0 when the tests pass and every kernel is identical; the figures are for reading
# (OUTDIR/compare.md against OUTDIR/compare_old_old.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gemv_split_check.sh OUTDIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
OLD_TAR=${OLD_TAR:-.snapshot/old.tar}
WORK=${WORK:-build-gemv-check}
[ -f "$OLD_TAR" ] || { echo "gemv_split_check: no $OLD_TAR (see the header)" >&2; exit 2; }
command -v cuobjdump >/dev/null || { echo "gemv_split_check: cuobjdump not found" >&2; exit 2; }
export PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
start=$(date +%s)
stamp() { echo "[gemv_split_check +$(( $(date +%s) - start ))s] $*"; }
status=0

# The old tree is unpacked again only when OLD_TAR changed.
tar_sum=$(sha256sum "$OLD_TAR" | cut -d' ' -f1)
if [ "$(cat "$WORK/old-src.sha256" 2>/dev/null)" != "$tar_sum" ]; then
  rm -rf "$WORK/old-src" "$WORK/runs" && mkdir -p "$WORK/old-src"
  tar -xf "$OLD_TAR" -C "$WORK/old-src" && echo "$tar_sum" > "$WORK/old-src.sha256"
fi

build() {  # TREE BUILD_DIR TARGETS...: configured the same way for both trees
  local tree=$1 dir=$2
  shift 2
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake -S "$tree" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$dir.configure.log" 2>&1 &&
    cmake --build "$dir" -j "$(nproc)" "${targets[@]}" > "$dir.build.log" 2>&1
}
stamp "build old gpuprobe, new gpuprobe and gpuprobe_gpu_tests"
build "$WORK/old-src" "$WORK/old" gpuprobe || { tail -20 "$WORK/old.build.log"; exit 1; }
build "$PWD" "$WORK/new" gpuprobe gpuprobe_gpu_tests || { tail -20 "$WORK/new.build.log"; exit 1; }

stamp "GEMV GPU tests"
"$WORK/new/tests/gpuprobe_gpu_tests" --gtest_filter='Gemv*' > "$OUT/gpu_tests.log" 2>&1
tests_rc=$?
tail -4 "$OUT/gpu_tests.log"
[ "$tests_rc" -eq 0 ] || { echo "GEMV GPU tests FAILED (exit $tests_rc): $OUT/gpu_tests.log"; status=1; }

stamp "machine code of old and new"
for which in old new; do
  cuobjdump -sass "$WORK/$which/gpuprobe" > "$WORK/$which.sass" 2>&1
  cuobjdump -res-usage "$WORK/$which/gpuprobe" > "$WORK/$which.res" 2>&1
done
python3 - "$WORK/old.sass" "$WORK/new.sass" "$WORK/old.res" "$WORK/new.res" > "$OUT/kernels.txt" <<'EOF' || status=1
import re, sys

START = re.compile(r'(\d+)(_GLOBAL__N_|_INTERNAL_)')

def normal(text):
    """Each length-prefixed anonymous-namespace or internal name (it holds a hash of the file) -> its file."""
    out, pos = [], 0
    for m in START.finditer(text):
        if m.start() < pos:
            continue
        n = int(m.group(1))
        name = text[m.end(1):m.end(1) + n]
        f = re.fullmatch(r'_(?:GLOBAL__N_|INTERNAL)_[0-9a-f]+_\d+_(\w+?)_cu_[0-9a-f]+(?:_\d+)?', name)
        if f:
            out += [text[pos:m.start()], f"ANON[{f.group(1)}]"]
            pos = m.end(1) + n
    return ''.join(out + [text[pos:]])

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
for label, pick, must_have in (("GEMV kernels (gemv.cu, gemv_double.cu)", is_gemv, True),
                               ("every other kernel", lambda f: not is_gemv(f), False)):
    a = {f for f in old if pick(f)}
    b = {f for f in new if pick(f)}
    same_sass = sum(1 for f in a & b if old[f] == new[f])
    same_res = sum(1 for f in a & b if old_res.get(f) == new_res.get(f) and f in old_res)
    good = a == b and same_sass == len(a) and same_res == len(a) and (len(a) > 0 or not must_have)
    ok = ok and good
    print(f"{label}: {len(a)} old, {len(b)} new; SASS identical {same_sass}, resource usage identical {same_res}"
          f" -> {'IDENTICAL' if good else 'DIFFERENT'}")
    for f in sorted(a ^ b):
        print(f"  only in {'old' if f in a else 'new'}: {f}")
    for f in sorted(a & b):
        if old[f] != new[f] or old_res.get(f) != new_res.get(f):
            print(f"  differs: {f}\n    old {old_res.get(f)}\n    new {new_res.get(f)}")
sys.exit(0 if ok else 1)
EOF
cat "$OUT/kernels.txt"

# old, new, old again: the two old runs show how far figures move between runs of one binary.
mkdir -p "$WORK/runs"
for which in old new old2; do
  [ -s "$WORK/runs/$which.json" ] && continue
  build_dir=$WORK/new
  [ "$which" != new ] && build_dir=$WORK/old
  stamp "GEMV figures: $which"
  "$build_dir/gpuprobe" --quick --benchmark_filter='^(kernels|paired)\.gemv/' \
    --benchmark_out="$WORK/runs/$which.json.partial" --benchmark_out_format=json > "$WORK/runs/$which.log" 2>&1 &&
    mv "$WORK/runs/$which.json.partial" "$WORK/runs/$which.json"
  echo "$which exit $?"
done
stamp compare
python3 -m gpuprobe_analysis compare "$WORK/runs/old.json" "$WORK/runs/new.json" -o "$OUT/compare.md" > /dev/null 2>&1 ||
  echo "compare old new failed"
python3 -m gpuprobe_analysis compare "$WORK/runs/old.json" "$WORK/runs/old2.json" -o "$OUT/compare_old_old.md" > /dev/null 2>&1 ||
  echo "compare old old2 failed"
head -30 "$OUT/compare.md" 2>/dev/null
echo "--- old vs old again:"
head -30 "$OUT/compare_old_old.md" 2>/dev/null
gzip -c "$WORK/runs/old.json" > "$OUT/old.json.gz" 2>/dev/null
gzip -c "$WORK/runs/new.json" > "$OUT/new.json.gz" 2>/dev/null
stamp "done (exit $status)"
exit $status
