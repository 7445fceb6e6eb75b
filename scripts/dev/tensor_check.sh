#!/usr/bin/env bash
# A GPU-machine check of exec.tensor (for development, not the user's path), in one command:
#   1. build gpuprobe and the GPU tests; 2. the tensor instructions' correctness test (every form against a
#   double reference); 3. the tensor entries with the premise counters (application replay); 4. the SASS
#   of one kernel per instruction family (cuobjdump: HMMA / IMMA / DMMA / HGMMA / QGMMA / IGMMA, and what
#   mma.sync on fp8 becomes); 5. Nsight Compute on two throughput entries, with the tensor pipe's
#   instruction and operation counters beside gpuprobe's count, at the GPU's own clock.
#   scripts/dev/tensor_check.sh OUTDIR [--no-ncu]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: tensor_check.sh OUTDIR [--no-ncu]}
ncu_check=1
[ "${2:-}" = --no-ncu ] && ncu_check=0
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build} NCCL_NVLS_ENABLE=0
start=$(date +%s)
stamp() { echo "[tensor_check +$(( $(date +%s) - start ))s] $*"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
  --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

stamp build
if ! BUILD_TARGETS="gpuprobe gpuprobe_gpu_tests" bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 \
     > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; exit 1
fi

stamp "correctness of every form"
build/tests/gpuprobe_gpu_tests --gtest_filter='ExecTensor.*' > "$OUT/tensor_test.log" 2>&1
test_rc=$?
tail -25 "$OUT/tensor_test.log"

stamp "tensor entries with premise counters"
build/gpuprobe --counters=premise,replay=application --benchmark_filter='^exec\.tensor' \
  --benchmark_out="$OUT/tensor.json" --benchmark_out_format=json > "$OUT/tensor.log" 2>&1
echo "gpuprobe exit $?" | tee -a "$OUT/tensor.log"
python3 - "$OUT/tensor.json" <<'PY' | tee "$OUT/tensor_table.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    lab = dict(p.split("=", 1) for p in b.get("label", "").split(";") if "=" in p)
    n = b["name"].replace("exec.tensor", "").replace("/instr:", " ").replace("/precision:", " ")
    if b["name"].startswith("exec.tensor_latency"):
        print(f'{n:75s} {b.get("value_median", 0):8.1f} cyc')
    else:
        print(f'{n:75s} {b.get("value_median", 0)/1e3:8.1f} TF  {b.get("flops_per_clk_per_sm", 0):7.0f}/clk '
              f'{b.get("fraction_of_theoretical", 0):5.3f} {b.get("sm_clock_kernel_mhz", 0):5.0f}MHz '
              f'{b.get("power_w", 0):4.0f}W w{b.get("warps_per_sm", 0):.0f}/{b.get("min_warps_per_sm", 0):.0f} '
              f'prem {b.get("premise_ratio", float("nan")):.3f} {lab.get("premise", "-")[:40]}')
PY

stamp "SASS"
cuobjdump -sass build/gpuprobe > "$OUT/sass.txt" 2>/dev/null
for k in mma_throughput_kernelINS0_10MmaE4M3F32 mma_throughput_kernelINS0_9MmaF16F32 mma_throughput_kernelINS0_6MmaF64 \
         mma_throughput_kernelINS0_8MmaS8S32 Wgmma_bf16_f32_n256_smem Wgmma_e4m3_f32_n256_smem Wgmma_s8_s32_n256_reg; do
  echo "== $k"
  awk -v k="$k" '/Function :/ {on = index($0, k) && index($0, "throughput")} on' "$OUT/sass.txt" \
    | grep -oE '(HMMA|IMMA|DMMA|HGMMA|QGMMA|IGMMA|F2FP|HADD2|WARPGROUP)[A-Z0-9_.]*' | sort | uniq -c | head
done | tee "$OUT/sass_summary.txt"

if ((ncu_check)) && command -v ncu >/dev/null; then
  stamp "ncu"
  metrics=sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tensor_op_imma.sum,sm__inst_executed_pipe_tensor_op_dmma.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp8.sum,sm__ops_path_tensor_src_fp64.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
  timeout 240 ncu --clock-control none --metrics "$metrics" -k regex:'throughput_kernel' -c 6 \
    build/gpuprobe --benchmark_filter='^exec\.tensor/instr:(wgmma/precision:(bf16|e4m3)/acc:f32/a:smem/m:64/n:256|mma/precision:(bf16|f64|e4m3)).*data:random' \
    --benchmark_min_warmup_time=0 > "$OUT/ncu.txt" 2>&1
  grep -E 'throughput_kernel|sm__|gpu__' "$OUT/ncu.txt" | head -80
fi
stamp done
exit $test_rc
