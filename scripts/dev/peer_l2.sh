#!/usr/bin/env bash
# RRZE gpu-benches' gpu-l2-cache (the peer of memory.l2_bandwidth walk=blocks: 1024-thread blocks, block b
# reading 8 KiB piece b mod blockRun of each of 32 rows), built with nvcc from a given source folder and
# run, printing its table; then, when build/gpuprobe exists, our walk=blocks read entries in the same
# call, so that the two are compared at matched working sets (issue 32 item 5).
#   scripts/dev/peer_l2.sh [PEER_DIR] [OUTDIR]
# PEER_DIR (default .peer/gpu-benches) holds gpu-l2-cache/main.cu and the headers it includes
# (MeasurementSeries.hpp, dtime.hpp, gpu-error.h, gpu-metrics/). The peer's source is never committed.
# Where gpu-metrics/cuda_metrics/Eval.hpp is missing (the CUPTI host helpers), the build uses a stub
# gpu-metrics.hpp whose DRAM and L2 columns read 0: the timed column (Eff. bw) is the peer's own.
# NO_RUN=1: build only (the CPU machine's compile check). ARCH: nvcc -arch (default native, or sm_90
# with NO_RUN). The peer's data set column is in KiB (blockRun x 256 KiB); ours names bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
PEER=${1:-.peer/gpu-benches}
OUT=${2:-$(mktemp -d)}
[ -f "$PEER/gpu-l2-cache/main.cu" ] || { echo "peer_l2.sh: no $PEER/gpu-l2-cache/main.cu" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$PEER"/. "$work"/
if [ ! -f "$work/gpu-metrics/cuda_metrics/Eval.hpp" ]; then
  mkdir -p "$work/gpu-metrics"
  cat > "$work/gpu-metrics/gpu-metrics.hpp" <<'STUB'
// Stub of gpu-benches' CUPTI metric helpers: counters read 0, the timing is untouched.
#pragma once
#include <vector>
inline void initMeasureMetric() {}
inline void measureDRAMBytesStart() {}
inline void measureL2BytesStart() {}
inline std::vector<double> measureDRAMBytesStop() { return {0.0, 0.0}; }
inline std::vector<double> measureL2BytesStop() { return {0.0, 0.0}; }
STUB
  echo "peer_l2.sh: CUPTI helpers absent: DRAM and L2 columns are 0 (stub)" >&2
fi
arch=${ARCH:-$([ -n "${NO_RUN:-}" ] && echo sm_90 || echo native)}
(cd "$work/gpu-l2-cache" && nvcc -std=c++17 -O3 -arch="$arch" -include iostream -o "$OUT/gpu-l2-cache" main.cu \
   -lcuda $([ -f "$work/gpu-metrics/cuda_metrics/Eval.hpp" ] && echo "-lcupti -lnvperf_host -lnvperf_target"))
echo "built $OUT/gpu-l2-cache"
[ -n "${NO_RUN:-}" ] && exit 0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
echo "== gpu-l2-cache (data set in KiB; Eff. bw = 100000 blocks x 256 KiB / best of 7 wall times)"
timeout "${PEER_TIMEOUT:-300}" "$OUT/gpu-l2-cache" | tee "$OUT/peer_l2.txt"
if [ -x "${BUILD_DIR:-build}/gpuprobe" ]; then
  echo "== gpuprobe memory.l2_bandwidth read_cg walk=blocks (same call)"
  "${BUILD_DIR:-build}/gpuprobe" --benchmark_filter='^memory\.l2_bandwidth/kernel:read_cg/walk:blocks/' \
    --benchmark_out="$OUT/ours_l2_blocks.json" --benchmark_out_format=json > "$OUT/ours_l2_blocks.log" 2>&1
  python3 - "$OUT/ours_l2_blocks.json" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["benchmarks"]:
    fp = e.get("footprint")
    if fp:
        print(f"{fp / 1024:>10.0f} KiB {e.get('value_median', float('nan')):>10.0f} GB/s  cv {e.get('value_cv', 0):.3f}")
PY
fi
