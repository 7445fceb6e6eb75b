#!/usr/bin/env bash
# Compiles every CUDA source (product and tests; lab/ has its own CI build) for the architectures besides
# sm_90 that gpuprobe supports (docs/architectures.md), without linking: a family that stops compiling on
# any of them fails CI. The sm_90 build (scripts/build.sh) covers 90 and sm_90a.
#   scripts/dev/arch_compile_check.sh [BUILD_DIR]     (default build-archs; JOBS as scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-archs}
ARCHS="80;86;89;100;120"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
[ -f "$BUILD/CMakeCache.txt" ] && generator=()
# The configure log inside the build folder (ignored by git): a file beside it would change the source tree
# the main build embeds (cmake/source_revision.cmake), and so relink it.
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" > "$BUILD/configure.log" 2>&1 ||
  { tail -20 "$BUILD/configure.log"; exit 1; }
start=$(date +%s)
if [ -f "$BUILD/build.ninja" ]; then
  # Ninja: the CUDA objects alone (no host-only source, no link).
  objects=$(ninja -C "$BUILD" -t targets all | sed -n 's/^\(.*\.cu\.o\): .*/\1/p' | grep -v '^lab/' || true)
  [ -n "$objects" ] || { echo "arch_compile_check: no CUDA objects found in $BUILD" >&2; exit 1; }
  # shellcheck disable=SC2086
  ninja -C "$BUILD" -j "${JOBS:-$(nproc)}" $objects
  what="$(echo "$objects" | wc -l) CUDA sources"
else
  # Other generators: the libraries and the GPU tests (their host sources and links too).
  cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target gpuprobe_probes gpuprobe_gpu_tests
  what="the probes and the GPU tests"
fi
echo "arch_compile_check: $what compiled for sm_${ARCHS//;/, sm_} in $(( $(date +%s) - start )) s"
