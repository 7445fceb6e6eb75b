#!/usr/bin/env bash
# Issue-44 round on one GPU (development, not the user's path): the SGEMM kernels' correctness, the split-k
# sweep that sets the dispatch rule, and every kernels.sgemm shape against cuBLAS, in one call.
#   scripts/dev/sgemm_round.sh OUTDIR [STEP...]
# STEPs (default: all, in this order):
#   build   the README's build step;
#   test    the SGEMM GPU tests (gpuprobe_gpu_tests --gtest_filter='Sgemm*'): every implementation against a
#           double reference, all transpositions, irregular and split-k shapes, C poisoned;
#   lab     lab/sgemm_variants (built here, -DGPUPROBE_BUILD_LAB=ON): kSmall at split-k 1, 2, 4, 8 and kTuned at 2 and 4 beside kTuned, kAuto
#           and cuBLAS, at the sizes under one wave of 128 x 128 tiles (and 2048), NN and TN;
#   bench   gpuprobe --samples=5 on every kernels.sgemm entry (ours and cuBLAS in the same call, SM clock
#           and board power per entry) -> OUTDIR/sgemm.json;
#   ncu     Nsight Compute beside cuBLAS at NN 4096 and 1024: time, SM clock, issue slots, stalls per
#           issued instruction, shared wavefronts (the figures of docs/perf/sgemm.md's gap analysis).
# $DEADLINE (seconds from the start, default 570): no step starts after it.
cd "$(dirname "$0")/../.."
source scripts/dev/round_lib.sh
round_start sgemm "build test lab bench ncu" "$@"
pack() { tar czf "$OUT/sgemm.tgz" -C "$OUT" sgemm; }
B=${BUILD_DIR:-build}
for step in "${steps[@]}"; do
  (( $(left) > 20 )) || { stamp "$step: no time left"; continue; }
  stamp "$step"
  case "$step" in
    build)
      bash scripts/build.sh > "$OUT/sgemm/build.log" 2>&1 || { tail -40 "$OUT/sgemm/build.log"; pack; exit 1; } ;;
    test)
      timeout -k 5 "$(left)" "$B/tests/gpuprobe_gpu_tests" --gtest_filter='Sgemm*' > "$OUT/sgemm/test.log" 2>&1
      echo "SGEMM GPU tests: exit $?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|Failure|error" "$OUT/sgemm/test.log" | head -30 ;;
    lab)
      BUILD_TARGETS=sgemm_variants_lab bash scripts/build.sh -DGPUPROBE_BUILD_LAB=ON > "$OUT/sgemm/build_lab.log" 2>&1 ||
        { tail -40 "$OUT/sgemm/build_lab.log"; pack; continue; }
      for t in nn tn; do
        sizes="512 768 1000 1024 1536 2048"; [ $t = tn ] && sizes="512 1024 2048"
        timeout -k 5 "$(left)" "$B/lab/sgemm_variants/sgemm_variants" --trans=$t --samples=20 --only=split $sizes \
          > "$OUT/sgemm/lab_$t.log" 2>&1; echo "lab $t: exit $?"
        grep -vE "^  ours_tuned_|^implementations|^  (small|tuned)_split[0-9] +[a-z]" "$OUT/sgemm/lab_$t.log" | tail -60
      done ;;
    bench)
      timeout -k 5 "$(left)" "$B/gpuprobe" --samples=5 --benchmark_filter='^kernels\.sgemm/' \
        --benchmark_out="$OUT/sgemm/sgemm.json" --benchmark_out_format=json > "$OUT/sgemm/bench.log" 2>&1
      echo "bench: exit $?"
      python3 scripts/dev/sgemm_table.py "$OUT/sgemm/sgemm.json" | tee "$OUT/sgemm/table.md" ;;
    ncu)
      timeout -k 5 "$(left)" bash scripts/dev/sgemm_ncu.sh "$OUT/sgemm/ncu" "$B" 2>&1 | tail -40 ;;
    *) echo "sgemm_round.sh: unknown step $step" >&2; exit 2 ;;
  esac
  pack
done
stamp done
