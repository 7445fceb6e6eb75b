#!/usr/bin/env bash
# Installs the build and analysis dependencies on Debian 12 (no-op for what is already there).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
# chromium + chromium-driver: the report's browser test (analysis/tests/test_browser.py) opens the
# HTML in headless Chromium; a browser build downloaded by a test tool would not be reachable in CI.
for pkg in cmake g++ libbenchmark-dev libgtest-dev libpapi-dev chromium chromium-driver; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    echo "setup: missing Debian packages: ${need[*]} (install them as root)" >&2
    exit 1
  fi
fi
# NCCL (PyPI wheel, headers and library): the build finds it (cmake/FindNCCL.cmake) and builds the
# collective probes and the multi-GPU NCCL reduction; without it those are left out.
python3 -c "import nvidia.nccl" 2>/dev/null || python3 -m pip install -q nvidia-nccl-cu13 ||
  echo "setup: the NCCL wheel could not be installed: the build will leave the collective probes out" >&2
if [ -f analysis/pyproject.toml ]; then
  python3 -m pip install -q -e "analysis[test]"
fi
