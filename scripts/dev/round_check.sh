#!/usr/bin/env bash
# One development round on a GPU machine, in one call (for development, not the user's path):
#   1. build (the README's build step);
#   2. the new families' GPU tests (tensor forms, cuBLASLt GEMMs);
#   3. kernels.gemm_lt beside PyTorch's matmul for the same types, alternating (gemm_lt_check.py), and
#      PyTorch's rate from idle into the steady state (--series); the TLB granule check if present;
#   4. gpu-benches' gpu-l2-cache beside our walk=blocks L2 reads, when its source was carried in .peer/;
#   5. the main job (scripts/dev/device_session.sh --no-tests): results, premises, counters, report;
#   6. fleet mode on this GPU, idle and beside a second process (scripts/dev/fleet_check.sh);
#   7. with --sm80: a build for sm_80 alone, its GPU tests and what it leaves out (scripts/dev/sm80_check.sh).
# Everything lands in OUTDIR as few files: console.log, main.tgz (the main job's files), checks.tgz.
#   scripts/dev/round_check.sh OUTDIR [--no-fleet] [--sm80]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: round_check.sh OUTDIR [--no-fleet] [--sm80]}
fleet=1 sm80=0
for arg in "${@:2}"; do
  case "$arg" in
    --no-fleet) fleet=0 ;;
    --sm80) sm80=1 ;;
    *) echo "round_check.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT/checks"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
start=$(date +%s)
stamp() { echo "[round +$(( $(date +%s) - start ))s] $*"; }
pack() { tar czf "$OUT/checks.tgz" -C "$OUT" checks; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/checks/gpu.txt"

stamp build
bash scripts/build.sh > "$OUT/checks/build.log" 2>&1 || { tail -30 "$OUT/checks/build.log"; pack; exit 1; }

stamp "GPU tests of the new families"
build/tests/gpuprobe_gpu_tests --gtest_filter='ExecTensor.*:GemmLt*' > "$OUT/checks/gpu_tests.log" 2>&1
grep -E '^\[  (PASSED|FAILED)|exec.tensor \]' "$OUT/checks/gpu_tests.log"

stamp "PyTorch's GEMMs from idle into the steady state: the rate of each 10 ms batch over 3 s"
timeout 60 python3 scripts/dev/gemm_lt_check.py --series 3 --precisions bf16,f16,e4m3 > "$OUT/checks/gemm_series.txt" 2>&1
stamp "kernels.gemm_lt beside PyTorch on our entries' schedule: per type ours then PyTorch's, 3 rounds; PyTorch through cuBLASLt with our workspace (same algorithms)"
timeout 300 python3 scripts/dev/gemm_lt_check.py --gpuprobe build/gpuprobe --rounds 3 --blas cublaslt --workspace-mib 64 \
  2>&1 | tee "$OUT/checks/gemm_lt_vs_torch_lt.txt"

if [ -f scripts/dev/tlb_granule.sh ]; then
  stamp "TLB granule: driver granularity, VMM mappings in order and scrambled (lab/experiments/tlb_16mib.md)"
  timeout 150 bash scripts/dev/tlb_granule.sh "$OUT/checks/tlb_granule" > "$OUT/checks/tlb_granule.log" 2>&1
  tail -25 "$OUT/checks/tlb_granule.log"
fi

if [ -f .peer/gpu-benches/gpu-l2-cache/main.cu ]; then
  stamp "L2 against gpu-l2-cache"
  timeout 120 bash scripts/dev/peer_l2.sh .peer/gpu-benches "$OUT/checks/peer" > "$OUT/checks/peer_l2.log" 2>&1
  tail -30 "$OUT/checks/peer_l2.log"
fi
pack

stamp "main job"
bash scripts/dev/device_session.sh "$OUT/main" --no-tests --budget=300 > "$OUT/checks/session.log" 2>&1
tail -12 "$OUT/main/job.log"
for f in results premises counters; do [ -f "$OUT/main/$f.json" ] && gzip -f "$OUT/main/$f.json"; done
tar czf "$OUT/main.tgz" -C "$OUT" main && rm -rf "$OUT/main"

if ((fleet)); then
  stamp "fleet"
  timeout 240 bash scripts/dev/fleet_check.sh "$OUT/checks/fleet" > "$OUT/checks/fleet.log" 2>&1
  tail -25 "$OUT/checks/fleet.log"
fi
if ((sm80)); then
  stamp "sm_80 build on this GPU: GPU tests and the families left out"
  timeout 1500 bash scripts/dev/sm80_check.sh "$OUT/checks/sm80" 2>&1 | tee "$OUT/checks/sm80.log" | tail -40
fi
pack; rm -rf "$OUT/checks"
stamp done
