#!/usr/bin/env bash
# Per-kernel duration and DRAM traffic of the kernels of one gpuprobe entry, with the caches left
# as the previous launch left them (--cache-control none: ncu otherwise flushes the L2 before each
# kernel, which makes an L2-resident reduction read its partials from DRAM and turns its figure
# into something the real pipeline never runs) and the clocks as the GPU chooses
# (--clock-control none, as in every timed figure of ours). For questions such as "of SYMV's
# 1415 us, how much is the main kernel, how much the reduction kernel" (docs/perf/symv.md).
#
#   scripts/dev/ncu_kernel_times.sh ENTRY_RE [KERNEL_RE=.] [LAUNCH_SKIP=6] [LAUNCH_COUNT=4]
#
# Prints one tab-separated line per profiled launch: entry, kernel (first 80 characters), then
# metric=value pairs. ncu serialises the launches, so a programmatic dependent (PDL) kernel's
# overlap with the kernel before it is not in these durations: the gated call time of the entry
# minus the sum of its kernels' durations is that overlap less the gaps between them.
# Caveat: these metrics take more than one pass, and ncu's kernel replay saves and restores the
# memory a kernel writes between passes, which can push lines out of the L2. On the H100 SYMV's
# reduction kernel then read its 25 MB of partials from DRAM (the pipeline finds most in the L2)
# and GEMV T double 2048 read 29 MB from DRAM: for L2-resident data a duration here is an upper
# bound; compare the entry's gated time.
set -euo pipefail
cd "$(dirname "$0")/../.."
entry=${1:?usage: ncu_kernel_times.sh ENTRY_RE [KERNEL_RE] [LAUNCH_SKIP] [LAUNCH_COUNT]}
kernel=${2:-.}
skip=${3:-6}
count=${4:-4}
GPUPROBE=${GPUPROBE:-${BUILD_DIR:-build-gpu}/gpuprobe}
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
metrics+=",dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct"
metrics+=",smsp__warps_active.avg.per_cycle_active,sm__cycles_elapsed.avg.per_second"
metrics+=",smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
ncu --clock-control none --cache-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count "$count" \
  --metrics "$metrics" --csv --page raw "$GPUPROBE" --benchmark_filter="$entry" > "$raw" 2>&1 ||
  { tail -20 "$raw" >&2; exit 1; }
python3 - "$raw" "$entry" "$metrics" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if len(rows) < 3:
    sys.exit("ncu_kernel_times: no profiled kernel in the output")
head, values = rows[0], rows[2:]  # rows[1] holds the units
for v in values:
    rec = dict(zip(head, v))
    # --page raw also holds every device attribute: keep the metrics asked for, in their order
    pairs = [f'{k.replace(".avg.pct_of_peak_sustained_elapsed", "%").replace(".sum", "")}={rec[k]}'
             for k in sys.argv[3].split(",") if k in rec]
    print(sys.argv[2], rec.get("Kernel Name", "?")[:80], *pairs, sep="\t")
EOF
