#!/usr/bin/env bash
# The pre-Hopper code paths on whatever GPU is present (issue 43, item 5): a build for sm_80 only, which the
# driver JIT-compiles from its compute_80 PTX for the GPU present, so that a Hopper runs the code an A100
# would. Runs the GPU tests (ctest -L gpu) and lists what registration leaves out, one line per family
# ("FAMILY: ... left out ..."): wgmma (no sm_90a code in the binary), mma.sync f64 m16 and fp8 (compiled out
# of sm_80 code), and whatever else the device lacks.
#   scripts/dev/sm80_check.sh OUTDIR
# OUTDIR gets build.log, ctest.log, left_out.txt (gpuprobe's registration notes) and the GPU tests' log.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: sm80_check.sh OUTDIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
export NCCL_NVLS_ENABLE=0
BUILD=${SM80_BUILD_DIR:-build-sm80}
status=0
BUILD_DIR=$BUILD bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=80 > "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
grep -E "gpuprobe:|wgmma" "$OUT/build.log" | head -20
# What the binary says it runs, and what it leaves out (printed before the entries are listed).
"$BUILD/gpuprobe" --quick --benchmark_list_tests=true > "$OUT/entries.txt" 2> "$OUT/left_out.txt" || status=1
echo "== registration notes (left out, one line per family and reason):"
cat "$OUT/left_out.txt"
echo "== entries registered: $(wc -l < "$OUT/entries.txt")"
(cd "$BUILD" && ctest -L gpu --output-on-failure --timeout 900) > "$OUT/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Passed|Failed|Skipped|exec.tensor \]" "$OUT/ctest.log" | tail -20
exit $status
