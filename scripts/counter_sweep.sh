#!/usr/bin/env bash
# Counter sweep in one command: kernels x implementations x sizes x precisions x metric sets -> one
# JSON file, progress on the terminal. Options: scripts/counter_sweep.sh --help (counter_sweep.py).
#   scripts/counter_sweep.sh --sets='roofline;memory' --kernels=sgemm --sizes=2048 --out=sweep.json
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -u scripts/counter_sweep.py --gpuprobe="${GPUPROBE:-${BUILD_DIR:-build}/gpuprobe}" "$@"
