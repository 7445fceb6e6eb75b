#!/usr/bin/env bash
# The test command: every C++ test (GPU tests skip without a GPU), the analysis package's tests and
# the scripts' tests. Both suites run whatever the other's outcome (one failure must not hide the
# other's); the exit code is non-zero when either failed, and the last line names which.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
failed=()
ctest --test-dir "$BUILD_DIR" --output-on-failure "$@" || failed+=("ctest (exit $?)")
if [ -d analysis/tests ]; then
  # tests/scripts: main_job.sh's exits and messages (it runs $BUILD_DIR/gpuprobe where one is built).
  # With pytest-xdist (analysis[test]; scripts/setup.sh installs it) the tests run on every core;
  # without it, serially. tests/pytest_progress.py prints a line per finished test file and at least
  # one a minute instead of rows of dots; --durations names the slowest tests at the end. --rootdir=.:
  # every test named by its path from the checkout (tests/scripts' too, outside analysis/).
  parallel=()
  python3 -c "import xdist" 2>/dev/null && parallel=(-n auto)
  BUILD_DIR=$BUILD_DIR PYTHONPATH="tests${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest -q --rootdir=. -p pytest_progress --durations=15 "${parallel[@]}" analysis/tests tests/scripts ||
    failed+=("pytest (exit $?)")
fi
if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
