#!/usr/bin/env bash
# Configures and builds everything into ./build (override with BUILD_DIR). Extra arguments go to
# CMake's configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=90 (default: the GPUs present, else sm_90).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
[ -f "$BUILD_DIR/CMakeCache.txt" ] && generator=()
cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
# BUILD_TARGETS (space-separated): only those targets, e.g. gpuprobe (the main job needs no tests).
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
