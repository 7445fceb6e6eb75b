#!/usr/bin/env bash
# Re-checks in the machine code that each exec.latency chain (microbench/probes/exec_pipeline.cu,
# kernels gp_latency_<op>) compiles to the intended instruction with nothing else in its timed
# loop but loop control, so that "cycles per operation" is the latency of that instruction.
#
#   scripts/dev/check_sass.sh [BINARY]       BINARY defaults to $BUILD_DIR/gpuprobe (BUILD_DIR=build-gpu)
#   SASS_FILE=dump.sass scripts/dev/check_sass.sh   checks an existing disassembly (cuobjdump -sass or nvdisasm)
#
# Needs cuobjdump (the GPU machine has it). Exit 0 when every chain passes, 1 otherwise.
# For each kernel it finds the innermost timed loop (the backward branch whose body holds the most
# chain instructions) and requires: the chain instruction writes one register a multiple of 64
# times (the unroll), companions appear exactly once per chain step (sin: FMUL.RZ, the 1/2pi scale
# PTX sin.approx needs; ffma_shared: LDS, the shared operand), and every other instruction is loop
# control (branch, compare, counter increment on the uniform datapath).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-${BUILD_DIR:-build-gpu}/gpuprobe}
if [ -n "${SASS_FILE:-}" ]; then
  sass=$SASS_FILE
else
  command -v cuobjdump >/dev/null || { echo "check_sass.sh: cuobjdump not found (it is on the GPU machine)" >&2; exit 2; }
  [ -f "$BIN" ] || { echo "check_sass.sh: $BIN not found; build first" >&2; exit 2; }
  sass=$(mktemp)
  trap 'rm -f "$sass"' EXIT
  cuobjdump -sass "$BIN" > "$sass"
fi
python3 - "$sass" <<'EOF'
import re, sys
from collections import Counter

text = open(sys.argv[1]).read()
# op -> (chain mnemonics, companions that must appear once per chain step)
EXPECT = {
    "fadd": ({"FADD"}, []), "fmul": ({"FMUL"}, []), "ffma": ({"FFMA"}, []),
    "dadd": ({"DADD"}, []), "dfma": ({"DFMA"}, []),
    # ptxas issues f16x2/bf16x2 FMAs alternately to the FMA pipe and to the MMA pipe (.MMA forms).
    "hfma2": ({"HFMA2", "HFMA2.MMA"}, []),
    "bfma2": ({"HFMA2.BF16_V2", "HFMA2.MMA.BF16_V2"}, []),
    "iadd3": ({"IADD3"}, []), "imad": ({"IMAD"}, []),
    "rsqrt": ({"MUFU.RSQ"}, []), "log2": ({"MUFU.LG2"}, []), "exp2": ({"MUFU.EX2"}, []),
    "sin": ({"MUFU.SIN"}, ["FMUL.RZ"]),
    "ffma_shared": ({"FFMA"}, ["LDS"]),
}
LOOP_CONTROL = re.compile(r"^(BRA|U?ISETP(\.\S+)?|UIADD3(\.\S+)?|VIADD|UMOV|NOP|IADD3|IADD3\.X|IMAD\.X|LOP3\.LUT)$")
UNROLL = 64

# Split into functions (cuobjdump: "Function : NAME"; nvdisasm: "NAME:" after .type NAME,@function).
funcs, name = {}, None
for line in text.splitlines():
    m = re.search(r"Function : (\S+)", line) or re.match(r"^(gp_latency_\w+):\s*$", line)
    if m:
        name = m.group(1); funcs[name] = []; continue
    if name is not None:
        funcs[name].append(line)

INS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
def parse(lines):
    ins, labels, pending = [], {}, []
    for line in lines:
        lm = LABEL.match(line)
        if lm: pending.append(lm.group(1)); continue
        m = INS.search(line)
        if not m: continue
        addr = int(m.group(1), 16)
        for l in pending: labels[l] = len(ins)
        pending = []
        ins.append((addr, m.group(3), m.group(4).strip()))
    return ins, labels

failures = 0
for op, (chain, companions) in EXPECT.items():
    fname = "gp_latency_" + op
    if fname not in funcs:
        print(f"FAIL {op:12s} kernel {fname} not found in the disassembly"); failures += 1; continue
    ins, labels = parse(funcs[fname])
    by_addr = {a: i for i, (a, _, _) in enumerate(ins)}
    best = None
    for i, (a, mn, ops) in enumerate(ins):
        if mn != "BRA": continue
        t = re.search(r"(\.L_x_\d+)|(0x[0-9a-f]+)", ops)
        if not t: continue
        j = labels.get(t.group(1)) if t.group(1) else by_addr.get(int(t.group(2), 16))
        if j is None or j > i: continue
        body = ins[j:i + 1]
        n = sum(1 for _, m2, _ in body if m2 in chain)
        if best is None or n > best[0]: best = (n, body)
    if best is None or best[0] == 0:
        print(f"FAIL {op:12s} no loop holding {'/'.join(sorted(chain))}"); failures += 1; continue
    body = best[1]
    counts = Counter(m2 for _, m2, _ in body)
    problems = []

    def regs(operands):
        return [r.split(".")[0].lstrip("-|") for r in (x.strip() for x in operands.split(","))]

    # Follow the dependency: every chain instruction must read the register the previous one wrote,
    # directly or through its companion (sin: MUFU.SIN reads FMUL.RZ, which reads the previous result).
    live, via, steps, linked, chain_ids = None, set(), 0, 0, set()
    for k, (_, m2, o) in enumerate(body):
        r = regs(o)
        if m2 in companions and live is not None and live in r[1:]:
            via.add(r[0]); chain_ids.add(k)
        elif m2 in chain:
            if live is None or live in r[1:] or via & set(r[1:]):
                steps += 1; linked += live is not None; live = r[0]; via = set(); chain_ids.add(k)
    if steps % UNROLL:
        problems.append(f"{steps} dependent chain instructions, not a multiple of {UNROLL}")
    for c in companions:
        if counts.get(c, 0) != steps:
            problems.append(f"{counts.get(c, 0)} {c} for {steps} chain steps")
    others = Counter()
    for k, (_, m2, o) in enumerate(body):
        if k in chain_ids or m2 in companions: continue
        if LOOP_CONTROL.match(m2) and (m2 not in chain or re.search(r"0x|UR|P\d", o)): continue
        others[m2] += 1
    if others:
        problems.append("other instructions in the loop: " + ", ".join(f"{k} x{v}" for k, v in others.items()))
    reg = "a dependent chain"
    summary = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
    if problems:
        failures += 1
        print(f"FAIL {op:12s} {'; '.join(problems)}  [{summary}]")
    else:
        print(f"ok   {op:12s} {steps} x {'/'.join(sorted(chain))} in {reg} per loop  [{summary}]")
print(f"check_sass: {len(EXPECT) - failures}/{len(EXPECT)} chains pass")
sys.exit(1 if failures else 0)
EOF
