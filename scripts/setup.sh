#!/usr/bin/env bash
# Checks what the build, the tests and the main job need, as tools and libraries found the way the
# build finds them (not as Debian package names), and installs what is missing where it can.
#
#   required  CMake >= 3.25, a C++17 compiler, the CUDA toolkit (nvcc), Google Benchmark and
#             GoogleTest (as CMake's find_package finds them), Python >= 3.9 with numpy, matplotlib,
#             jinja2 and pytest
#   optional  PAPI with its SDE library (the PAPI counter backend), NCCL (the collective probes and
#             the multi-GPU NCCL reduction), Chromium + chromedriver + Selenium (the report's browser
#             test, skipped without them)
#
#   scripts/setup.sh [--with-optional]
#
# Installs: as root where apt-get works (Debian, Ubuntu) the missing required libraries and tools,
# without recommended packages; with pip the missing Python packages (`pip install -e
# "analysis[test]"`: pytest, pytest-xdist, selenium). The optional parts (PAPI, Chromium and
# chromedriver from apt, NCCL's nvidia-nccl-cu13 wheel, about 300 MB) only with --with-optional:
# without it they are named with how to get them. Elsewhere (no root, no apt, apt reaching nothing,
# conda) it names each missing part and how to get it.
# Exit codes: 0 every required part is present (a missing optional part is a warning); 1 a required
# part is missing (the last line names them); 2 a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
with_optional=0
for arg in "$@"; do
  case "$arg" in
    --with-optional) with_optional=1 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "setup: usage error: unknown argument $arg (scripts/setup.sh [--with-optional])" >&2; exit 2 ;;
  esac
done

say() { echo "setup: $*" >&2; }

# ---- the checks: each sets found[PART]=1 when present --------------------------------------------
declare -A found=()
check_all() {
  found=()
  local cxx nvcc v
  command -v cmake >/dev/null 2>&1 && v=$(cmake --version 2>/dev/null | sed -n '1s/[^0-9]*\([0-9]*\.[0-9]*\).*/\1/p') &&
    [ -n "$v" ] && [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -1)" = 3.25 ] && found[cmake]=1
  cxx=${CXX:-}
  [ -n "$cxx" ] || cxx=$(command -v c++ || command -v g++ || command -v clang++ || true)
  [ -n "$cxx" ] && command -v "$cxx" >/dev/null 2>&1 && found[cxx]=1
  nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$nvcc" ] && found[cuda]=1
  # Google Benchmark, GoogleTest, NCCL, PAPI: asked of CMake itself (the build's own find_package and
  # FindNCCL.cmake) where CMake and a compiler are here; else pkg-config and the usual headers.
  local probe out
  if [ -n "${found[cmake]:-}" ] && [ -n "${found[cxx]:-}" ] && probe=$(mktemp -d); then
    cat > "$probe/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(setup_probe LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$PWD/cmake")
find_package(benchmark QUIET)
find_package(GTest QUIET)
find_package(NCCL QUIET)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PAPI QUIET papi)
endif()
find_library(SDE_LIBRARY sde)
find_path(SDE_INCLUDE sde_lib.h)
set(papi 0)
if(PAPI_FOUND AND SDE_LIBRARY AND SDE_INCLUDE)
  set(papi 1)
endif()
message(STATUS "setup-probe: benchmark=\${benchmark_FOUND} gtest=\${GTest_FOUND} nccl=\${NCCL_FOUND} papi=\${papi}")
EOF
    out=$(CXX=$cxx cmake -S "$probe" -B "$probe/build" 2>/dev/null | sed -n 's/^-- setup-probe: //p')
    rm -rf "$probe"
    for kv in $out; do
      case "${kv#*=}" in 1|ON|TRUE|True|true) found[${kv%%=*}]=1 ;; esac
    done
  else
    local inc
    for inc in /usr/include /usr/local/include ${CONDA_PREFIX:+$CONDA_PREFIX/include}; do
      [ -f "$inc/benchmark/benchmark.h" ] && found[benchmark]=1
      [ -f "$inc/gtest/gtest.h" ] && found[gtest]=1
      [ -f "$inc/nccl.h" ] && found[nccl]=1
      [ -f "$inc/papi.h" ] && [ -f "$inc/sde_lib.h" ] && found[papi]=1
    done
    pkg-config --exists benchmark 2>/dev/null && found[benchmark]=1
    pkg-config --exists gtest 2>/dev/null && found[gtest]=1
  fi
  python3 -c "import nvidia.nccl" 2>/dev/null && found[nccl]=1
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    found[python]=1
    python3 -c "import numpy, matplotlib, jinja2" 2>/dev/null && found[pymodules]=1
    python3 -c "import pytest" 2>/dev/null && found[pytest]=1
    python3 -c "import xdist" 2>/dev/null && found[xdist]=1
    python3 -c "import selenium" 2>/dev/null && found[selenium]=1
  fi
  { command -v chromium || command -v chromium-browser; } >/dev/null 2>&1 && found[chromium]=1
  command -v chromedriver >/dev/null 2>&1 && found[chromedriver]=1
}

# ---- what each part is and how to get it ---------------------------------------------------------
required=(cmake cxx cuda benchmark gtest python pymodules pytest xdist)
optional=(papi nccl chromium chromedriver selenium)
declare -A what=(
  [cmake]="CMake >= 3.25"  [cxx]="a C++17 compiler"  [cuda]="the CUDA toolkit (nvcc)"
  [benchmark]="Google Benchmark (CMake package 'benchmark')"  [gtest]="GoogleTest (CMake package 'GTest')"
  [python]="Python >= 3.9 (python3)"  [pymodules]="the Python packages numpy, matplotlib, jinja2"
  [pytest]="the Python package pytest"
  [xdist]="the Python package pytest-xdist (the tests on every core)"
  [papi]="PAPI with its SDE library (the PAPI counter backend)"
  [nccl]="NCCL (the collective probes and the multi-GPU NCCL reduction)"
  [chromium]="Chromium (the report's browser test)"  [chromedriver]="chromedriver (the report's browser test)"
  [selenium]="the Python package selenium (the report's browser test)"
)
# The Debian/Ubuntu package that provides a part ("" where apt is not the way).
declare -A deb=(
  [cmake]=cmake [cxx]=g++ [benchmark]=libbenchmark-dev [gtest]=libgtest-dev [python]=python3
  [papi]=libpapi-dev [chromium]=chromium [chromedriver]=chromium-driver
)
declare -A other=(
  [cmake]="pip install 'cmake>=3.25', or conda install -c conda-forge cmake"
  [cxx]="conda install -c conda-forge cxx-compiler"
  [cuda]="install the CUDA 13 toolkit (or 12.4 and newer, README, Toolkits and architectures; https://developer.nvidia.com/cuda-downloads) into /usr/local/cuda, or put its nvcc on PATH (or in CUDACXX)"
  [benchmark]="conda install -c conda-forge benchmark, or build github.com/google/benchmark and add its prefix to CMAKE_PREFIX_PATH"
  [gtest]="conda install -c conda-forge gtest, or build github.com/google/googletest and add its prefix to CMAKE_PREFIX_PATH"
  [python]="conda install python"
  [pymodules]="python3 -m pip install -e 'analysis[test]' (where pip says externally-managed-environment: first python3 -m venv .venv && . .venv/bin/activate), or apt-get install --no-install-recommends python3-numpy python3-matplotlib python3-jinja2 (as root), or conda install numpy matplotlib jinja2"
  [pytest]="python3 -m pip install pytest (in the same environment), or apt-get install --no-install-recommends python3-pytest (as root), or conda install pytest"
  [xdist]="python3 -m pip install pytest-xdist (in the same environment), or apt-get install --no-install-recommends python3-pytest-xdist (as root), or conda install pytest-xdist"
  [papi]="conda install -c conda-forge papi (the build asks pkg-config for 'papi')"
  [nccl]="python3 -m pip install nvidia-nccl-cu13, or -DNCCL_ROOT=<dir> at build time"
  [chromium]="any Chromium or Chrome named chromium on PATH"
  [chromedriver]="the chromedriver of that browser's version, on PATH"
  [selenium]="python3 -m pip install selenium"
)
missing() { local p; for p in "$@"; do [ -n "${found[$p]:-}" ] || echo "$p"; done; }
advice() {  # PART: how to get it, apt first where it applies
  local p=$1 how=""
  [ -n "${deb[$p]:-}" ] && how="apt-get install --no-install-recommends ${deb[$p]} (as root)"
  [ -n "${other[$p]:-}" ] && how="${how:+$how, or }${other[$p]}"
  echo "$how"
}

check_all

# ---- installing where it can ---------------------------------------------------------------------
can_apt=0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then can_apt=1; fi
apt_updated=0
apt_install() {  # PARTS...: the Debian packages of those that have one
  local pkgs=() p
  for p in "$@"; do [ -n "${deb[$p]:-}" ] && pkgs+=("${deb[$p]}"); done
  ((${#pkgs[@]})) || return 0
  say "installing with apt-get: ${pkgs[*]}"
  if ((!apt_updated)); then
    apt-get update -qq || say "apt-get update failed (exit $?)"
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" ||
    say "apt-get could not install ${pkgs[*]} (exit $?)"
}
if ((can_apt)); then
  # Required parts first, optional ones apart: an optional package apt cannot find must not cost a
  # required one.
  mapfile -t need < <(missing "${required[@]}")
  ((${#need[@]})) && apt_install "${need[@]}"
  want=()
  ((with_optional)) && mapfile -t want < <(missing papi chromium chromedriver)
  ((${#want[@]})) && apt_install "${want[@]}"
  ((${#need[@]} + ${#want[@]})) && check_all
fi
pip_ran=0
if [ -n "${found[python]:-}" ]; then
  # The analysis package: installed from this checkout (its command, gpuprobe-analyze, with its
  # dependencies) only where no copy is installed. The scripts run it from this checkout anyway
  # (PYTHONPATH), so another checkout's installation is left alone.
  if [ -z "${found[pymodules]:-}" ] || [ -z "${found[pytest]:-}" ] || [ -z "${found[xdist]:-}" ] ||
     [ -z "${found[selenium]:-}" ] || ! python3 -c "import gpuprobe_analysis" 2>/dev/null; then
    say "installing the analysis package and its Python dependencies: python3 -m pip install -e 'analysis[test]'"
    python3 -m pip install -q -e "analysis[test]" || say "pip could not install analysis[test] (exit $?)"
    pip_ran=1
  fi
  if [ -z "${found[nccl]:-}" ] && ((with_optional)); then
    say "installing NCCL: python3 -m pip install nvidia-nccl-cu13 (about 300 MB)"
    python3 -m pip install -q nvidia-nccl-cu13 || say "pip could not install nvidia-nccl-cu13 (exit $?)"
    pip_ran=1
  fi
  ((pip_ran)) && check_all
fi

# ---- what is still missing -----------------------------------------------------------------------
mapfile -t need < <(missing "${required[@]}")
mapfile -t want < <(missing "${optional[@]}")
for p in "${want[@]}"; do say "optional, missing: ${what[$p]}: $(advice "$p")"; done
if ((${#want[@]})) && ((!with_optional)) && { ((can_apt)) || [ -n "${found[python]:-}" ]; }; then
  say "the optional parts are installed only when asked: bash scripts/setup.sh --with-optional"
fi
for p in "${need[@]}"; do say "REQUIRED, missing: ${what[$p]}: $(advice "$p")"; done
if ((${#need[@]})); then
  names=()
  for p in "${need[@]}"; do names+=("${what[$p]}"); done
  say "FAILED: required parts missing: $(IFS=';'; echo "${names[*]}" | sed 's/;/; /g')"
  exit 1
fi
say "every required part is present${want:+ (optional parts missing: see above)}"
exit 0
