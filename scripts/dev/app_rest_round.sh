#!/usr/bin/env bash
# Issue-42 items that need a GPU after the first round (development, not the user's path), in one call:
#   scripts/dev/app_rest_round.sh OUTDIR [STEP...]
# STEPs (default: all, in this order):
#   build     the README's build step;
#   examples  the worked examples (examples/apps), profiled by scripts/profile_app.sh and judged by
#             gpuprobe-analyze app against the committed reference of this GPU model (reports/h100 or h200);
#   ncurep    each example's .ncu-rep read through NVIDIA's ncu_report and compared with its raw-CSV export
#             (scripts/dev/ncu_rep_check.py);
#   lt_none, lt_all   the cuBLASLt entries of the cross-check profiled with ncu's --cache-control none / all
#             (the DRAM bytes of an isolated, flushed launch against ours).
# $DEADLINE (seconds from the start, default 570): no step starts after it, and each is stopped by it.
# Writes OUTDIR/app.tgz (no .ncu-rep but fft_sort's, the reader's recorded fixture).
cd "$(dirname "$0")/../.."
source scripts/dev/round_lib.sh
round_start app "build examples ncurep lt_none lt_all" "$@"
pack() { tar czf "$OUT/app.tgz" -C "$OUT" --exclude='transformer_step/profile.ncu-rep' --exclude='crosscheck*/ncu/profile.ncu-rep' app; }
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H100*) DEVICE=reports/h100 ;; *H200*) DEVICE=reports/h200 ;; *) echo "no committed reference for this GPU"; exit 1 ;;
esac
for step in "${steps[@]}"; do
  (( $(left) > 30 )) || { stamp "$step: no time left"; continue; }
  stamp "$step"
  case "$step" in
    build)
      bash scripts/build.sh > "$OUT/app/build.log" 2>&1 || { tail -30 "$OUT/app/build.log"; pack; exit 1; } ;;
    examples)
      for ex in transformer_step:profiled_step fft_sort:profiled_run; do
        name=${ex%%:*}; range=${ex#*:}
        (( $(left) > 40 )) || { stamp "example $name: no time left"; continue; }
        timeout -k 10 "$(( $(left) - 15 ))" bash scripts/profile_app.sh -o "$OUT/app/$name" --nvtx-include "$range/" -- \
          python3 "examples/apps/$name.py" > "$OUT/app/$name.log" 2>&1; echo "profile_app $name: exit $?"
        tail -3 "$OUT/app/$name.log"
        PYTHONPATH=analysis timeout 60 python3 -m gpuprobe_analysis app "$OUT/app/$name/profile.csv" --device "$DEVICE" \
          -o "$OUT/app/$name/verdict" --top 10 2>&1 | tail -25
      done ;;
    ncurep)
      python3 scripts/dev/ncu_rep_check.py "$OUT/app/fft_sort" "$OUT/app/transformer_step" 2>&1 | tee "$OUT/app/ncu_rep_check.log" ;;
    lt_none|lt_all)
      cache=${step#lt_}
      CACHE_CONTROL=$cache timeout -k 10 "$(left)" bash scripts/dev/app_crosscheck.sh "$OUT/app/crosscheck_lt_$cache" "$DEVICE" -- \
        --benchmark_filter='^kernels\.gemm_lt/.*n:4096/' 2>&1 | tail -30 ;;
    *) echo "app_rest_round.sh: unknown step $step" >&2; exit 2 ;;
  esac
  pack
done
stamp done
