#!/usr/bin/env bash
# Without a GPU: do CUDA translation units compile to the same kernels at another commit? Each UNIT
# (default: the GEMV ones) is compiled from both trees with this build's flags (BUILD_DIR's
# compile_commands.json) plus -Xptxas -v and --keep; then ptxas's report of every kernel (registers,
# stack, spills, barriers, shared memory), the PTX of every function (line info and the anonymous
# namespace's per-file hash left out) and `nm -C` of the objects are compared.
#   scripts/dev/kernel_unit_compare.sh OLD_COMMIT [UNIT.cu ...]     e.g. ce0c55d kernels/src/gemv.cu
# Exit 0 when every kernel's PTX and ptxas report are identical (host symbols are listed, not judged).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:?usage: kernel_unit_compare.sh OLD_COMMIT [UNIT.cu ...]}
shift
units=("$@")
((${#units[@]})) || units=(kernels/src/gemv.cu kernels/src/gemv_double.cu)
BUILD_DIR=${BUILD_DIR:-build}
[ -f "$BUILD_DIR/compile_commands.json" ] || { echo "kernel_unit_compare: configure $BUILD_DIR first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old-src" && git archive "$OLD" | tar -x -C "$work/old-src"
for u in "${units[@]}"; do
  cmd=$(python3 -c 'import json, os, sys
for c in json.load(open(sys.argv[1])):
    if os.path.realpath(c["file"]) == os.path.realpath(sys.argv[2]):
        print(c["command"]); break' "$BUILD_DIR/compile_commands.json" "$u")
  [ -n "$cmd" ] || { echo "kernel_unit_compare: $u is not in $BUILD_DIR/compile_commands.json" >&2; exit 2; }
  name=$(basename "$u" .cu)
  for which in old new; do
    root=$PWD
    [ "$which" = old ] && root=$work/old-src
    mkdir -p "$work/$which/keep-$name"
    # This tree's command, pointed at the other tree's sources and headers, and at our outputs.
    c=${cmd//$PWD/$root}
    c=$(sed -E "s# -o [^ ]+# -o $work/$which/$name.o#" <<< "$c")
    (cd "$BUILD_DIR" && eval "$c -Xptxas -v --keep --keep-dir $work/$which/keep-$name") > "$work/$which/$name.ptxas.txt" 2>&1
  done
done
python3 - "$work" "${units[@]}" <<'PY'
import re, subprocess, sys
sys.path.insert(0, 'scripts/dev')  # run from the repository root
from cuda_symbols import normal


def ptxas(path):
    out, cur = {}, None
    for line in open(path):
        m = re.search(r"Compiling entry function '([^']+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            cur = normal(m.group(1)); out.setdefault(cur, []); continue
        if cur and ('registers' in line or 'stack frame' in line):
            out[cur].append(line.strip())
    return out

def ptx_functions(path):
    lines = [l for l in normal(open(path).read()).split('\n') if not l.strip().startswith(('.loc', '.file', '//'))]
    text = re.sub(r'\.section\s+\.debug\w*\s*\{.*?\n\s*\}', '', '\n'.join(lines), flags=re.S)
    return {m.group(2): m.group(1) for m in
            re.finditer(r'(\.(?:visible|weak|extern)?\s*\.?(?:entry|func)[^\n]*?(\w+)\s*\(.*?\n\}\n)', text, flags=re.S)}

def nm(path):
    syms = set()
    for l in subprocess.run(['nm', '-C', path], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = l.split(None, 2) if l[:1] != ' ' else [''] + l.split(None, 1)
        if len(parts) == 3 and not parts[2].startswith('.LC'):  # .LC: local constants' numbering
            syms.add((parts[1], normal(parts[2]).replace('(anonymous namespace)', 'ANON')))
    return syms

work, ok = sys.argv[1], True
for unit in sys.argv[2:]:
    name = unit.rsplit('/', 1)[-1][:-3]
    a, b = ptxas(f'{work}/old/{name}.ptxas.txt'), ptxas(f'{work}/new/{name}.ptxas.txt')
    fa, fb = ptx_functions(f'{work}/old/keep-{name}/{name}.ptx'), ptx_functions(f'{work}/new/keep-{name}/{name}.ptx')
    good = a == b and fa == fb and len(a) > 0
    ok = ok and good
    print(f'{unit}: {len(a)} kernels old, {len(b)} new; ptxas -v reports identical: {a == b}; '
          f'PTX of {len(fa)} / {len(fb)} functions identical: {fa == fb}')
    for k in sorted(set(a) | set(b) | set(fa) | set(fb)):
        if a.get(k) != b.get(k) or fa.get(k) != fb.get(k):
            print('  differs:', k)
    sa, sb = nm(f'{work}/old/{name}.o'), nm(f'{work}/new/{name}.o')
    print(f'  nm -C: {len(sa & sb)} host symbols in both, {len(sa - sb)} only old, {len(sb - sa)} only new')
    for s in sorted(sa - sb): print('    only old:', *s)
    for s in sorted(sb - sa): print('    only new:', *s)
print('KERNELS IDENTICAL' if ok else 'KERNELS DIFFER')
sys.exit(0 if ok else 1)
PY
