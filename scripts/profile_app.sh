#!/usr/bin/env bash
# Profiles an application's kernels under Nsight Compute with the metrics gpuprobe's reader declares
# (analysis/gpuprobe_analysis/ncu_metrics.py), ready for the report's "Application kernels" verdict.
#
#   scripts/profile_app.sh -o OUTDIR [--kernel REGEX] [--launch-skip N] [--launch-count N]
#                          [--replay-mode kernel|application|range] [--cache-control all|none]
#                          [--nvtx-include RANGE]... -- CMD ARGS...
#
# Runs  ncu --target-processes all --clock-control none --nvtx --replay-mode M --cache-control C
#           [-k regex:REGEX] [-s N] [-c N] [--nvtx-include RANGE]... --metrics <declared list>
#           -f -o OUTDIR/profile CMD ARGS...
# then exports OUTDIR/profile.csv (ncu -i OUTDIR/profile.ncu-rep --page raw --csv --print-units base) and
# reads it back once. Only the declared metrics the GPU has are asked for (ncu --query-metrics, kept in
# OUTDIR/query-metrics.txt); the others are named, and counted as none. OUTDIR/profile.cmd records the
# command, the ncu version and the conditions (clock, replay, cache control, filters, absent metrics), which
# the reader turns into the report's notes on how the profile was taken; OUTDIR/profile.log is ncu's own output.
# --clock-control none always: the ceilings were measured at the clock the GPU chooses, so the kernels
# must run at it too (ncu's default locks the clock to base). Defaults, as ncu's: kernel replay, caches
# flushed before each replay pass (--cache-control all). docs/app-profiling.md says what each choice does.
# The ncu binary: $NCU, else ncu on PATH. Exit codes: 0 done; 1 ncu or the export failed, or the export
# does not read; 2 a usage error or no ncu (one line on stderr).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "profile_app: $*; usage: scripts/profile_app.sh -o OUTDIR [--kernel REGEX] [--launch-skip N]" \
  "[--launch-count N] [--replay-mode kernel|application|range] [--cache-control all|none]" \
  "[--nvtx-include RANGE]... -- CMD ARGS..." >&2; exit 2; }

out="" ; kernel="" ; skip="" ; count="" ; replay=kernel ; cache=all ; nvtx_include=() ; seen_sep=0
value() { [ $# -ge 2 ] || usage "$1 needs a value"; }
count_arg() { [[ "$2" =~ ^[0-9]+$ ]] || usage "$1 takes a whole number, not '$2'"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --) seen_sep=1; shift; break ;;
    -o|--output) value "$@"; out=$2; shift 2 ;;
    --kernel) value "$@"; kernel=$2; shift 2 ;;
    --launch-skip) value "$@"; count_arg "$1" "$2"; skip=$2; shift 2 ;;
    --launch-count) value "$@"; count_arg "$1" "$2"; count=$2; shift 2 ;;
    --replay-mode) value "$@"; case "$2" in kernel|application|range) replay=$2 ;;
                     *) usage "--replay-mode is kernel, application or range, not '$2'" ;; esac; shift 2 ;;
    --cache-control) value "$@"; case "$2" in all|none) cache=$2 ;;
                       *) usage "--cache-control is all or none, not '$2'" ;; esac; shift 2 ;;
    --nvtx-include) value "$@"; nvtx_include+=("$2"); shift 2 ;;
    *) usage "unknown option '$1' (the command to profile goes after --)" ;;
  esac
done
[ -n "$out" ] || usage "no -o OUTDIR"
[ "$seen_sep" = 1 ] || usage "no -- before the command to profile"
[ $# -gt 0 ] || usage "no command after --"

NCU=${NCU:-ncu}
ncu_path=$(command -v "$NCU" 2>/dev/null) ||
  { echo "profile_app: ncu not found ('$NCU'); install Nsight Compute or set NCU=/path/to/ncu" >&2; exit 2; }
PY=${PYTHON:-python3}
metrics=$(PYTHONPATH="$REPO/analysis${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m gpuprobe_analysis.ncu_metrics) && [ -n "$metrics" ] ||
  { echo "profile_app: cannot read the metric list (python3 -m gpuprobe_analysis.ncu_metrics failed)" >&2; exit 1; }

mkdir -p "$out" || { echo "profile_app: cannot create $out" >&2; exit 1; }
# Only the declared metrics this GPU has: ncu refuses a whole run for one name it does not know (the tensor
# paths differ by architecture). The rest are recorded in profile.cmd, and the reader counts them as none.
absent=""
if "$NCU" --query-metrics > "$out/query-metrics.txt" 2>&1; then
  metrics=$(PYTHONPATH="$REPO/analysis${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m gpuprobe_analysis.ncu_metrics --query "$out/query-metrics.txt") &&
    absent=$(PYTHONPATH="$REPO/analysis${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m gpuprobe_analysis.ncu_metrics --query "$out/query-metrics.txt" --absent) ||
    { echo "profile_app: cannot read $out/query-metrics.txt" >&2; exit 1; }
  [ -n "$absent" ] && echo "profile_app: metrics this GPU does not have (ncu --query-metrics), counted as none: $absent" >&2
else
  echo "profile_app: ncu --query-metrics failed (see $out/query-metrics.txt): asking for every declared metric" >&2
fi
args=(--target-processes all --clock-control none --nvtx --replay-mode "$replay" --cache-control "$cache")
[ -n "$kernel" ] && args+=(-k "regex:$kernel")
[ -n "$skip" ] && args+=(-s "$skip")
[ -n "$count" ] && args+=(-c "$count")
for r in "${nvtx_include[@]}"; do args+=(--nvtx-include "$r"); done
args+=(--metrics "$metrics" -f -o "$out/profile")

quoted() { local s="" a; for a in "$@"; do s+=" $(printf '%q' "$a")"; done; echo "${s# }"; }
version=$("$NCU" --version 2>/dev/null | tail -n 1)
{
  echo "command: $(quoted "$ncu_path" "${args[@]}" "$@")"
  echo "export: $(quoted "$ncu_path" -i "$out/profile.ncu-rep" --page raw --csv --print-units base)"
  echo "ncu_version: ${version:-unknown}"
  echo "clock_control: none"
  echo "replay_mode: $replay"
  echo "cache_control: $cache"
  echo "nvtx: on"
  [ ${#nvtx_include[@]} -gt 0 ] && echo "nvtx_include: ${nvtx_include[*]}"
  [ -n "$kernel" ] && echo "kernel_filter: regex:$kernel"
  [ -n "$skip" ] && echo "launch_skip: $skip"
  [ -n "$count" ] && echo "launch_count: $count"
  [ -n "$absent" ] && echo "absent_metrics: $absent"
  echo "profiled_at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$out/profile.cmd"

"$NCU" "${args[@]}" "$@" 2>&1 | tee "$out/profile.log"
rc=${PIPESTATUS[0]}
if [ ! -s "$out/profile.ncu-rep" ]; then
  echo "profile_app: ncu wrote no $out/profile.ncu-rep (exit $rc; its output: $out/profile.log)" >&2; exit 1
fi
[ "$rc" = 0 ] || echo "profile_app: ncu exited $rc (the application's status, or a profiling error: see $out/profile.log); exporting what it recorded" >&2
"$NCU" -i "$out/profile.ncu-rep" --page raw --csv --print-units base > "$out/profile.csv" ||
  { echo "profile_app: the export failed: $NCU -i $out/profile.ncu-rep --page raw --csv --print-units base" >&2; exit 1; }
PYTHONPATH="$REPO/analysis${PYTHONPATH:+:$PYTHONPATH}" "$PY" - "$out/profile.csv" <<'PY' || exit 1
import sys
from gpuprobe_analysis import ncu
try:
    p = ncu.read_profile(sys.argv[1])
except ncu.ProfileError as e:
    print(f"profile_app: {e}", file=sys.stderr)
    sys.exit(1)
kernels = len({l.kernel for l in p.launches})
print(f"profile_app: {sys.argv[1]}: {len(p.launches)} launches of {kernels} kernels on {p.device}"
      + (f"; missing metrics: {', '.join(sorted(p.missing))}" if p.missing else ""))
PY
