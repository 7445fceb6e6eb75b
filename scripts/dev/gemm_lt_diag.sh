#!/usr/bin/env bash
# Diagnosis round for kernels.gemm_lt on a GPU machine (development tool): which cuBLASLt FP8 setups run
# (lab/experiments/cublaslt_fp8/variants.cu), the GEMM GPU tests, which algorithm our entries and
# PyTorch's calls run (cuBLASLt's own API log), our entries beside PyTorch's in alternating rounds
# (scripts/dev/gemm_lt_check.py), and the latency invariants (tests/gpu_probe_invariants.py).
# Everything lands in OUTDIR/diag.tgz.
#   scripts/dev/gemm_lt_diag.sh OUTDIR [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gemm_lt_diag.sh OUTDIR [ROUNDS]}
ROUNDS=${2:-3}
D="$OUT/diag"
mkdir -p "$D"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
start=$(date +%s)
stamp() { echo "[diag +$(( $(date +%s) - start ))s] $*"; }
pack() { tar czf "$OUT/diag.tgz" -C "$OUT" diag; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$D/gpu.txt"

stamp "FP8 variants"
nvcc -O2 -std=c++17 -arch=native lab/experiments/cublaslt_fp8/variants.cu -lcublasLt -o "$D/variants" 2>&1 | tail -3
timeout 120 "$D/variants" 8192 > "$D/variants.txt" 2>&1; echo "variants exit $?"
grep -E "^[A-Za-z]|candidate 0|nullptr" "$D/variants.txt"
rm -f "$D/variants"

stamp build
BUILD_TARGETS="gpuprobe gpuprobe_gpu_tests" bash scripts/build.sh > "$D/build.log" 2>&1 || { tail -30 "$D/build.log"; pack; exit 1; }

stamp "GEMM GPU tests"
build/tests/gpuprobe_gpu_tests --gtest_filter='GemmLt*' > "$D/gpu_tests.log" 2>&1; echo "gpu tests exit $?"
grep -E '^\[  (PASSED|FAILED|SKIPPED)|SKIPPED|FAILED' "$D/gpu_tests.log" | head -20

stamp "algorithms: ours and PyTorch's (cuBLASLt, 64 MiB workspace), one call each at 8192"
algos() { grep -h "\[Trace\]\[cublasLtMatmul\]" "$@" 2>/dev/null | sed -E 's/.*Adesc=\[type=([^ ]*).*Ddesc=\[type=([^ ]*).*(algo=\[[^]]*\]).*workSpaceSizeInBytes=([0-9]*).*/\1 -> \2 \3 ws=\4/' | sort | uniq -c; }
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$D/ours_%i.lt.log" timeout 120 build/gpuprobe --samples=1 \
  --benchmark_filter='^kernels\.gemm_lt/.*/data:random/n:8192/' > "$D/ours_algos.log" 2>&1
echo "-- ours"; algos "$D"/ours_*.lt.log
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$D/torch_%i.lt.log" timeout 120 python3 scripts/dev/gemm_lt_check.py \
  --samples 1 --warmup 1 --warmup-seconds 0 --blas cublaslt --workspace-mib 64 > "$D/torch_algos.log" 2>&1
echo "-- PyTorch"; algos "$D"/torch_*.lt.log
rm -f "$D"/*.lt.log

stamp "ours and PyTorch alternating, $ROUNDS rounds, PyTorch through cuBLASLt with our workspace"
timeout 300 python3 scripts/dev/gemm_lt_check.py --gpuprobe build/gpuprobe --rounds "$ROUNDS" --blas cublaslt \
  --workspace-mib 64 --json > "$D/vs_torch_lt.json" 2> "$D/vs_torch_lt.err"; echo "exit $?"
python3 - "$D/vs_torch_lt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    print(f"{r['precision']:5} torch {r['tflops']:8.1f} ours {r.get('ours_tflops', float('nan')):8.1f} "
          f"ratio {r.get('torch_over_ours', float('nan')):.3f} rounds {[round(x, 3) for x in r.get('round_ratios', [])]} "
          f"{r['sm_clock_mhz']} MHz {r['power_w']} W")
PY
stamp "PyTorch's default path (cuBLAS), one round"
timeout 200 python3 scripts/dev/gemm_lt_check.py --gpuprobe build/gpuprobe --rounds 1 2>&1 | tee "$D/vs_torch_default.txt"
pack

stamp "latency invariants"
timeout 300 python3 tests/gpu_probe_invariants.py build/gpuprobe > "$D/invariants.txt" 2>&1; echo "invariants exit $?"
tail -5 "$D/invariants.txt"
pack
stamp done
