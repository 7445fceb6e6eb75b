#!/usr/bin/env bash
# The checks of the counters work in one command, each step under its own time limit:
# counters GPU tests, the roofline set on the reference entries (user and kernel replay), the ncu
# cross-check, and a 100-entry sweep with and without counters (what counters cost).
#   scripts/dev/counters_check.sh OUTDIR [--no-build] [--skip-ref] [--skip-ncu] [--skip-sweep]
# (--skip-ref: no counters GPU tests and no roofline reference entries)
# Writes its logs and results into OUTDIR.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: counters_check.sh OUTDIR [--no-build] [--skip-ref] [--skip-ncu] [--skip-sweep]}
shift
build=1 ; reference=1 ; ncu=1 ; sweep=1
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;; --skip-ref) reference=0 ;; --skip-ncu) ncu=0 ;; --skip-sweep) sweep=0 ;;
    *) echo "counters_check.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
export BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
start=$(date +%s)
stamp() { echo "[counters_check +$(( $(date +%s) - start ))s] $*"; }
G="$BUILD_DIR/gpuprobe"

if ((build)); then
  stamp build
  bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/counters_build.log 2>&1 ||
    { tail -30 /tmp/counters_build.log; stamp "BUILD FAILED"; exit 1; }
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
ldconfig -p | grep -c nvperf_host | sed 's/^/ld.so.cache entries for libnvperf_host: /'

if ((reference)); then
  stamp "GPU tests (Counters.*)"
  timeout 150 "$BUILD_DIR/tests/gpuprobe_gpu_tests" --gtest_filter='Counters.*' > "$OUT/tests.log" 2>&1
  echo "tests exit $?"; grep -E "^\s+(range|kernel|512|axpy|--counters)|OK|FAILED|SKIPPED|Failure|counters:" "$OUT/tests.log" | head -40

  ref='^(baseline\.memcpy_d2d/size:1073741824|memory\.occupancy/kernel:copy/vector:16/store:default/footprint:1073741824/blocks_per_sm:8|kernels\.sgemm/impl:(ours_tuned|cublas_pedantic)/trans:nn/m:2048/n:2048/k:2048|kernels\.(gemv|symv)/impl:[a-z_]*/precision:s/[a-z]*:[a-z]*/(m:16384/)?n:16384)/'
  stamp "roofline, user replay"
  timeout 150 "$G" --counters=roofline --benchmark_filter="$ref" --benchmark_out="$OUT/roofline_user.json" \
    --benchmark_out_format=json 2>&1 | grep -E "^gpuprobe|^[a-z]" | cut -c1-160
  stamp "roofline, application replay"
  timeout 150 "$G" --counters=roofline,replay=application --benchmark_filter="$ref" \
    --benchmark_out="$OUT/roofline_application.json" --benchmark_out_format=json 2>&1 | grep -E "^gpuprobe" | cut -c1-160
  stamp "roofline, kernel replay"
  timeout 100 "$G" --counters=roofline,replay=kernel --benchmark_filter="$ref" --samples=3 \
    --benchmark_out="$OUT/roofline_kernel.json" --benchmark_out_format=json 2>&1 | grep -E "^gpuprobe" | cut -c1-200
  python3 - "$OUT/roofline_user.json" "$OUT/roofline_application.json" "$OUT/roofline_kernel.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    try: bs = json.load(open(path))["benchmarks"]
    except Exception as e: print(path, "unreadable:", e); continue
    print(path.rsplit("/", 1)[-1])
    for b in bs:
        w = b.get("bytes_per_sample", 0)
        rd, wr = b.get("dram__bytes_read.sum"), b.get("dram__bytes_write.sum")
        print(f"  {b['name'][:90]}\n    dram read {rd} write {wr} (Work bytes {w}) ffma {b.get('sm__sass_thread_inst_executed_op_ffma_pred_on.sum')}"
              f" fp32 {b.get('gpuprobe__fp32_flop')} time {b.get('gpu__time_duration.sum')} ns ranges {b.get('gpuprobe__counter_ranges')}"
              f" replays {b.get('gpuprobe__counter_replays')} clock {b.get('sm__cycles_elapsed.avg.per_second')}")
PY
fi

if ((ncu)); then
  stamp "ncu cross-check"
  timeout 170 bash scripts/dev/ncu_crosscheck.sh "$OUT/ncu" --limit=4 2>&1 | tail -30
fi
if ((sweep)); then
  stamp "sweep: 100 entries, uninstrumented, roofline (application replay), roofline (user replay)"
  timeout 200 bash scripts/counter_sweep.sh --kernels=memory.stride,memory.bandwidth --filter='vector:16|stride' \
    --limit=100 --baseline --sets='roofline;roofline,replay=user' --out=/tmp/sweep.json -- --samples=5 2>&1 |
    grep -vE "\] [0-9]+/" | tail -12
  cp /tmp/sweep.json "$OUT/sweep.json" 2>/dev/null
  python3 - /tmp/sweep.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
secs = json.loads(d["context"]["counter_sweep_seconds"])
replay = sum(b.get("gpuprobe__counter_replays", 0) * b.get("time_median_s", 0) for b in d["benchmarks"])
allowance = 2 * secs["none"] + replay
print(f"sweep: {len(d['benchmarks'])} entries; wall {secs}; GPU time of the counter replays ~{replay:.2f} s; "
      f"application passes {d['context'].get('counters_application_pass_seconds[roofline]', '?')} s")
for label in [k for k in secs if k != "none"]:
    added = secs[label] - secs["none"]
    print(f"sweep: {label}: counters added {added:.2f} s; allowance 2 x uninstrumented + replays = {allowance:.2f} s: "
          f"{'met' if added <= allowance else 'NOT met'}")
PY
fi
stamp done
