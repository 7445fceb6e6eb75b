#!/usr/bin/env bash
# A GPU-machine check of the ceiling probes' premises, with the independent cross-checks beside them
# (for development, not the user's path):
#   1. build; 2. the ceiling-defining entries under --counters=premise (application replay);
#   3. ncu on the L2 probe's kernel (independent counters, and the units' % of peak that say what
#      limits it); 4. RRZE gpu-benches' gpu-l2-cache, when its source was carried in .peer/ (never
#      committed); 5. the pointer-chase placement experiment.
#   scripts/dev/premise_check.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: premise_check.sh OUTDIR}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build} NCCL_NVLS_ENABLE=0
start=$(date +%s)
stamp() { echo "[premise_check +$(( $(date +%s) - start ))s] $*"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu.txt" 2>&1

stamp build
if ! bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUPROBE_BUILD_LAB=ON > "$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; exit 1
fi

stamp "ceiling entries with premise counters"
filter=${PREMISE_FILTER:-'^memory\.(l2_bandwidth|l1_peak|shared_bandwidth)/|^exec\.throughput_peak|^memory\.bandwidth/kernel:(read|read_cg|write|copy)/vector:16/'}
build/gpuprobe --counters=premise,replay=application --benchmark_filter="$filter" \
  --benchmark_out="$OUT/premise.json" --benchmark_out_format=json > "$OUT/premise.log" 2>&1
echo "gpuprobe exit $?" >> "$OUT/premise.log"
python3 - "$OUT/premise.json" <<'PY' | tee "$OUT/premise_table.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    lab = dict(p.split("=", 1) for p in b.get("label", "").split(";") if "=" in p)
    if "premise_level" not in lab and not b["name"].startswith("memory.l2_bandwidth"):
        continue
    print(f'{b["name"]:70s} {b.get("value_median", 0):10.1f} {lab.get("premise_level", "-"):7s} '
          f'ratio {b.get("premise_ratio", float("nan")):.3f} {lab.get("premise", "-")[:90]}')
PY

if [ -z "${ONLY_L2:-}" ]; then
stamp "random chains at small footprints (placements) and the GPU invariants' latency rule"
build/gpuprobe --quick --benchmark_filter='^memory\.latency/pattern:random/load:(ca|cg)/' \
  --benchmark_out="$OUT/latency_quick.json" --benchmark_out_format=json > /dev/null 2> "$OUT/latency_quick.log"
python3 - "$OUT/latency_quick.json" <<'PY' | tee -a "$OUT/premise_table.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for load in ("ca", "cg"):
    pts = sorted((b["footprint"], b["value_median"], b.get("placements", 1)) for b in d["benchmarks"]
                 if f"/load:{load}/" in b["name"])
    print(load, " ".join(f"{int(f)}:{v:.1f}(x{int(p)})" for f, v, p in pts[:12]))
PY

fi
stamp "ncu on the L2 probe (read at 4 MiB and 16 MiB, write and copy at 16 MiB)"
metrics=lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,lrc__xbar2lrc_requests_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,l1tex__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed,l1tex__m_l1tex2xbar_write_bytes.sum.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_ltcfabric.sum,lts__d_sectors_fill_sysmem.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,lts__t_bytes.sum.peak_sustained,l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
for f in ${NCU_ENTRIES:-'kernel:read_cg/walk:shared/loads:8/footprint:16777216/' 'kernel:read_cg/walk:own_slice/loads:4/footprint:17301504/' 'kernel:read_cg/walk:own_slice/loads:8/footprint:34603008/'}; do
  timeout 120 ncu --clock-control none -k regex:l2_kernel --launch-skip 3 --launch-count 1 --metrics "$metrics" \
    build/gpuprobe --benchmark_filter="^memory\.l2_bandwidth/$f" 2>&1 | grep -vE '^==PROF==' | tail -30
done > "$OUT/ncu_l2.txt" 2>&1

if [ -n "${NCU_BREAKDOWN:-}" ]; then
  stamp "ncu: what limits the L2 read (unit breakdown) on $NCU_BREAKDOWN"
  timeout 120 ncu --clock-control none -k regex:l2_kernel --launch-skip 3 --launch-count 1 \
    --metrics breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lrc__lrc2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum,lts__cycles_elapsed.avg.per_second \
    build/gpuprobe --benchmark_filter="^memory\.l2_bandwidth/$NCU_BREAKDOWN" 2>&1 | grep -vE '^==PROF==' | tail -60 > "$OUT/ncu_breakdown.txt"
fi
if [ -f .peer/gpu-benches/gpu-l2-cache/main.cu ]; then
  stamp "peer: gpu-benches gpu-l2-cache"
  [ -x /tmp/gpu-l2-cache ] || (cd .peer/gpu-benches && nvcc -std=c++17 -O3 -arch=sm_90 -include iostream -o /tmp/gpu-l2-cache gpu-l2-cache/main.cu) \
    > "$OUT/peer_l2.txt" 2>&1 && timeout 100 /tmp/gpu-l2-cache >> "$OUT/peer_l2.txt" 2>&1
  echo "peer exit $?" >> "$OUT/peer_l2.txt"
  # The peer's own kernel under ncu at each launch-skip in PEER_NCU_SKIP (315: its 4 MB point, 672:
  # 15 MB): the bytes its loads brought from the L2 against its count, and the L2-to-crossbar busy.
  for skip in ${PEER_NCU_SKIP:-}; do
    echo "== peer sumKernel, launch-skip $skip"
    timeout 150 ncu --clock-control none -k regex:sumKernel --launch-skip "$skip" --launch-count 1 \
      --metrics gpu__time_duration.sum,l1tex__t_bytes.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,lrc__xbar2gpc_sectors_op_read.sum,lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lrc__lrc2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
      /tmp/gpu-l2-cache 2>&1 | grep -E "sumKernel|gpu__|l1tex__|lts__|lrc__|launch__"
  done > "$OUT/peer_ncu.txt" 2>&1
fi

if [ -z "${ONLY_L2:-}" ]; then
stamp "GPU invariants (gpuprobe --quick on the memory probes)"
timeout 300 python3 tests/gpu_probe_invariants.py build/gpuprobe > "$OUT/invariants.txt" 2>&1
echo "invariants exit $?" >> "$OUT/invariants.txt"

stamp "chase placement experiment"
chase=$BUILD_DIR/lab/experiments/chase_placement
if [ -x "$chase" ]; then
  timeout 60 "$chase" > "$OUT/chase_placement.txt" 2>&1
else
  echo "no $chase (lab/ is built with -DGPUPROBE_BUILD_LAB=ON): placement experiment skipped" | tee "$OUT/chase_placement.txt"
fi
fi
stamp done
cat "$OUT/premise_table.txt"; tail -5 "$OUT/invariants.txt"
