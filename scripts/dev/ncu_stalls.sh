#!/usr/bin/env bash
# Where a kernel's issue slots go: Nsight Compute's warp-stall breakdown (warps stalled per issued
# instruction, by reason), issue efficiency and shared-memory wavefronts, for one launch of the
# kernels of one gpuprobe entry. For the question "why is this compute-bound kernel at 79 % of
# its issue slots" (docs/perf/sgemm.md) without the minutes of a full `--set full` profile.
#
#   scripts/dev/ncu_stalls.sh ENTRY_RE [KERNEL_RE] [LAUNCH_SKIP]
#
# ENTRY_RE selects gpuprobe entries (--benchmark_filter); KERNEL_RE (default: any) the kernel; the
# first LAUNCH_SKIP (default 5: past the settle and warm-up launches) matching launches are skipped
# and the next one is profiled. Clocks are left as the GPU chooses (--clock-control none), as in
# every timed figure of ours. Prints one tab-separated line per metric: entry, kernel, metric, value
# (kernel names and ncu's numbers hold commas).
set -euo pipefail
cd "$(dirname "$0")/../.."
entry=${1:?usage: ncu_stalls.sh ENTRY_RE [KERNEL_RE] [LAUNCH_SKIP]}
kernel=${2:-.}
skip=${3:-5}
GPUPROBE=${GPUPROBE:-${BUILD_DIR:-build-gpu}/gpuprobe}
reasons="barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle
  membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait"
metrics="smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active"
metrics+=",smsp__inst_executed.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
metrics+=",smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
metrics+=",l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
for r in $reasons; do metrics+=",smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
ncu --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 --metrics "$metrics" \
  --csv --page raw "$GPUPROBE" --benchmark_filter="$entry" > "$raw" 2>&1 || { tail -20 "$raw" >&2; exit 1; }
python3 - "$raw" "$entry" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if len(rows) < 3:
    sys.exit("ncu_stalls: no profiled kernel in the output")
head, values = rows[0], rows[2:]  # rows[1] holds the units
for v in values:
    rec = dict(zip(head, v))
    name = rec.get("Kernel Name", "?")[:90]
    for k in head:
        if "__" in k:
            print(f'{sys.argv[2]}\t{name}\t{k}\t{rec[k]}')
EOF
