#!/usr/bin/env bash
# Multi-GPU figures and checks on a GPU machine with 2 or more GPUs (our routine, not the user's path):
#   1. build (skipped when up to date); 2. topology; 3. the multi-GPU GPU tests; 4. the P2P matrix,
#   the NCCL collectives and the multi-GPU SYMV/GEMV entries; 5. PyTorch's all-reduce as the peer of
#   the collectives; 6. the probed GPU's DRAM and L2 read ceilings with their premises; 7. a report.
#   scripts/dev/multigpu_run.sh OUTDIR [--no-tests] [--filter=RE] [--report-with=FILE]...
# Writes OUTDIR/multigpu.json.gz, ceilings.json.gz, ceiling_premises.json.gz, report.tgz and logs.tgz (tests.txt, torch_allreduce.json, topo.txt, the logs).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: multigpu_run.sh OUTDIR [--no-tests] [--filter=RE] [--report-with=FILE]...}
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
tests=1
filter='^(transfer\.(p2p|p2p_latency|p2p_chase|collective)|kernels\.(symv|gemv)_mgpu(_sytrd|_trailing)?)/'
report_with=()
for a in "$@"; do
  case "$a" in
    --no-tests) tests=0 ;;
    --filter=*) filter=${a#*=} ;;
    --report-with=*) report_with+=("${a#*=}") ;;
    *) echo "multigpu_run: unknown option $a" >&2; exit 2 ;;
  esac
done
# NVLink multicast stays off on the lent machines (and in every child process).
export BUILD_DIR=${BUILD_DIR:-build} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export PYTHONPATH="$PWD/analysis${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
stamp() { echo "[multigpu_run +$(( $(date +%s) - start ))s] $*"; }

stamp build
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUPROBE_BUILD_LAB=ON > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$OUT/topo.txt" 2>&1

if ((tests)); then
  stamp "multi-GPU GPU tests"
  timeout 300 "$BUILD_DIR/tests/gpuprobe_gpu_tests" --gtest_filter="${GPU_TEST_FILTER:-P2p*:TransferSmCopy*:Collective*:*Mgpu*:*MultiGpu*}" \
    > "$OUT/tests.txt" 2>&1
  echo "gpu tests exit $?" >> "$OUT/tests.txt"
  tail -5 "$OUT/tests.txt"
fi

if [ -x "$BUILD_DIR/lab/sgemm_variants/sgemm_variants" ]; then
  stamp "lab: SGEMM variants' checks against cuBLAS"
  timeout 120 "$BUILD_DIR/lab/sgemm_variants/sgemm_variants" > "$OUT/sgemm_variants.txt" 2>&1
  echo "sgemm_variants exit $?" >> "$OUT/sgemm_variants.txt"
fi

stamp "gpuprobe $filter"
timeout 420 "$BUILD_DIR/gpuprobe" --benchmark_filter="$filter" --benchmark_out="$OUT/multigpu.json" \
  --benchmark_out_format=json > "$OUT/multigpu.log" 2>&1
echo "gpuprobe exit $?" | tee -a "$OUT/multigpu.log"
grep '^gpuprobe:' "$OUT/multigpu.log" | head -20

# The probed GPU's DRAM and L2 read ceilings, which the multi-GPU bound divides by, measured in the
# same call, and their premises checked by the counters (as the main job does for every ceiling).
ceilings='^memory\.bandwidth/kernel:read/vector:16/footprint:(1073741824|2147483648|4294967296)/|^memory\.l2_bandwidth/kernel:read_cg/walk:own_slice/'
stamp "ceilings for the bound: $ceilings"
timeout 120 "$BUILD_DIR/gpuprobe" --benchmark_filter="$ceilings" --benchmark_out="$OUT/ceilings.json" \
  --benchmark_out_format=json > "$OUT/ceilings.log" 2>&1
echo "gpuprobe exit $?" >> "$OUT/ceilings.log"
timeout 120 "$BUILD_DIR/gpuprobe" --counters=premise,replay=application --samples=1 --benchmark_filter="$ceilings" \
  --benchmark_out="$OUT/ceiling_premises.json" --benchmark_out_format=json > "$OUT/ceiling_premises.log" 2>&1
echo "gpuprobe exit $?" >> "$OUT/ceiling_premises.log"

if [ -f scripts/dev/torch_allreduce.py ]; then
  stamp "peer: PyTorch all-reduce"
  timeout 180 python3 scripts/dev/torch_allreduce.py > "$OUT/torch_allreduce.json" 2> "$OUT/torch_allreduce.log"
  echo "torch exit $?" >> "$OUT/torch_allreduce.log"
fi

stamp report
inputs=("${report_with[@]}")
# The counter run first: the last file's entry is used, completed by the earlier files' counters.
for f in ceiling_premises ceilings multigpu; do [ -f "$OUT/$f.json" ] && inputs+=("$OUT/$f.json"); done
python3 -m gpuprobe_analysis report "${inputs[@]}" -o "$OUT/report" > "$OUT/report.log" 2>&1
echo "report exit $?" >> "$OUT/report.log"
[ -d "$OUT/report" ] && tar czf "$OUT/report.tgz" -C "$OUT" report && rm -rf "$OUT/report"
for f in ceiling_premises ceilings multigpu; do [ -f "$OUT/$f.json" ] && gzip -f "$OUT/$f.json"; done
# Few files come back from a lent machine: the logs and small outputs travel in one archive.
(cd "$OUT" && tar czf logs.tgz --remove-files ./*.log ./*.txt ./torch_allreduce.json 2>/dev/null)
stamp done
