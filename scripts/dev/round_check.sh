#!/usr/bin/env bash
# One development round's checks on a GPU machine that a reference run does not cover, in one call:
#   1. build (the README's build step); 2. the new families' GPU tests (tensor forms, cuBLASLt GEMMs, GEMV);
#   3. exec.tensor with its premise counters (scripts/dev/tensor_check.sh, without ncu);
#   4. kernels.gemm_lt, then PyTorch's matmul for the same types in the same call (gemm_lt_check.py);
#   5. gpu-benches' gpu-l2-cache beside our walk=blocks L2 reads, when its source was carried in .peer/.
#   scripts/dev/round_check.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: round_check.sh OUTDIR}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
start=$(date +%s)
stamp() { echo "[round +$(( $(date +%s) - start ))s] $*"; }
status=0

stamp build
bash scripts/build.sh > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }

stamp "GPU tests of the new families"
build/tests/gpuprobe_gpu_tests --gtest_filter='ExecTensor.*:GemmLt*:Gemv*' > "$OUT/gpu_tests.log" 2>&1 || status=1
grep -E '^\[  (PASSED|FAILED)|tests? ran|exec.tensor \]' "$OUT/gpu_tests.log"

stamp "exec.tensor"
bash scripts/dev/tensor_check.sh "$OUT/tensor" --no-ncu > "$OUT/tensor_check.log" 2>&1 || status=1
grep -E 'n:256|m:16/n:8/k:16|m:8/n:8|gpuprobe exit' "$OUT/tensor/tensor_table.txt" "$OUT/tensor_check.log" | cut -c1-210

stamp "kernels.gemm_lt and PyTorch"
build/gpuprobe --benchmark_filter='^kernels\.gemm_lt/' --benchmark_out="$OUT/gemm_lt.json" \
  --benchmark_out_format=json > "$OUT/gemm_lt.log" 2>&1
echo "gpuprobe exit $?"
python3 scripts/dev/gemm_lt_check.py --compare "$OUT/gemm_lt.json" 2>&1 | tee "$OUT/gemm_lt_vs_torch.txt"

if [ -f .peer/gpu-benches/gpu-l2-cache/main.cu ]; then
  stamp "L2 against gpu-l2-cache"
  bash scripts/dev/peer_l2.sh .peer/gpu-benches "$OUT/peer" > "$OUT/peer_l2.log" 2>&1
  tail -40 "$OUT/peer_l2.log"
fi
stamp done
exit $status
