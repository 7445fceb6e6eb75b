#!/usr/bin/env bash
# The test command: every C++ test (GPU tests skip without a GPU) and the analysis package's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure "$@"
if [ -d analysis/tests ]; then
  python3 -m pytest -q analysis/tests
fi
