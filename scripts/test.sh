#!/usr/bin/env bash
# The test command: every C++ test (GPU tests skip without a GPU), the analysis package's tests and
# the scripts' tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure "$@"
if [ -d analysis/tests ]; then
  # tests/scripts: main_job.sh's exits and messages (it runs $BUILD_DIR/gpuprobe where one is built).
  BUILD_DIR=$BUILD_DIR python3 -m pytest -q analysis/tests tests/scripts
fi
