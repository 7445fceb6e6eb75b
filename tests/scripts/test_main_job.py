"""scripts/main_job.sh on bad input and failed steps: the exit code and the one line that say how it
ended, no stale result presented as new, no write into committed data. CPU only: the real gpuprobe
is used where its answer does not depend on a GPU (flag checks, "no usable GPU" where there is
none), a stand-in script where a GPU run has to succeed or fail."""
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "analysis", "tests"))
import synth  # noqa: E402

BUILD_DIR = os.path.join(REPO, os.environ.get("BUILD_DIR", "build"))  # relative: to the checkout
GPUPROBE = os.path.join(BUILD_DIR, "gpuprobe")
needs_gpuprobe = pytest.mark.skipif(not os.access(GPUPROBE, os.X_OK), reason=f"{GPUPROBE} not built")


def main_job(*args, env=None, timeout=600):
    e = dict(os.environ, BUILD_DIR=BUILD_DIR)
    e.update(env or {})
    return subprocess.run(["bash", "scripts/main_job.sh", *args], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=timeout)


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def git_status(path):
    """The checkout's state under `path`, ignored files included, except reports/local/: other tests
    (run in parallel by pytest-xdist) create and remove their folders there while this one runs."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--", path], cwd=REPO,
                         capture_output=True, text=True).stdout
    return "".join(line for line in out.splitlines(keepends=True) if not line[3:].startswith("reports/local"))


def has_gpu():
    if not os.access(GPUPROBE, os.X_OK):
        return False
    return subprocess.run([GPUPROBE, "--benchmark_list_tests"], capture_output=True).returncode == 0


def small_results(gpu_name):
    doc = synth.synth_results(noise=0.01, families=["exec.latency", "baseline.memcpy_d2d"])
    doc["context"]["gpu_name"] = gpu_name
    return doc


FAKE = """#!/usr/bin/env bash
# Stands in for gpuprobe: FAKE_MODE says how the measuring run ends.
out=""
for a in "$@"; do
  case "$a" in
    --benchmark_list_tests) exit 0 ;;
    --benchmark_out=*) out=${a#*=} ;;
    --counters=*) counters=1 ;;
  esac
done
if [ "$FAKE_MODE" = crash ] || { [ "$FAKE_MODE" = counters-crash ] && [ -n "${counters:-}" ]; }; then
  head -c 300 "$FAKE_RESULTS" > "$out.partial"
  echo "gpuprobe: kernels.symv/n:64: CUDA error cudaErrorIllegalAddress (an illegal memory access)" >&2
  exit 1
fi
[ "$FAKE_MODE" = silent ] && exit 0
cp "$FAKE_RESULTS" "$out"
"""


@pytest.fixture
def fake(tmp_path):
    exe = tmp_path / "fake-gpuprobe"
    exe.write_text(FAKE)
    exe.chmod(0o755)
    fresh = synth.write(str(tmp_path / "fresh.json"), small_results("Fresh GPU"))
    out = tmp_path / "out"
    out.mkdir()
    # What an earlier run left: it must never be reported as this run's.
    synth.write(str(out / "results.json"), small_results("Stale GPU"))
    synth.write(str(out / "counters.json"), small_results("Stale GPU"))
    (out / "report").mkdir()
    (out / "report" / "report.html").write_text("stale report")

    def run(mode):
        return main_job(str(out), "--no-build", env={"GPUPROBE": str(exe), "FAKE_MODE": mode, "FAKE_RESULTS": fresh})
    return run, out


def test_unknown_option_is_a_usage_error():
    r = main_job("--bogus")
    assert r.returncode == 2
    assert r.stderr == "main_job.sh: unknown option --bogus (--help lists them)\n"


def test_output_option_without_report_only_is_a_usage_error(tmp_path):
    r = main_job(str(tmp_path), "-o", str(tmp_path / "x"))
    assert r.returncode == 2
    assert "-o is for --report-only" in r.stderr


@needs_gpuprobe
@pytest.mark.parametrize("flag,message", [
    ("--device=abc", "main_job: gpuprobe: usage error: --device needs an integer, got 'abc'"),
    ("--exclude=(", "main_job: gpuprobe: usage error: --exclude="),
])
def test_wrong_gpuprobe_flag_fails_before_any_gpu_is_needed(tmp_path, flag, message):
    r = main_job(str(tmp_path), "--no-build", flag)
    assert r.returncode == 2, r.stdout + r.stderr
    assert last_line(r.stderr).startswith(message), r.stderr
    assert "nothing measured" not in r.stdout and not (tmp_path / "report").exists()


@needs_gpuprobe
@pytest.mark.skipif(has_gpu(), reason="a GPU is present: the job would measure it")
def test_without_a_gpu_nothing_is_measured_nor_reported(tmp_path):
    stale = synth.write(str(tmp_path / "results.json"), small_results("Stale GPU"))
    before = open(stale).read()
    r = main_job(str(tmp_path), "--no-build")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "main_job: nothing measured: gpuprobe: no usable GPU: " in r.stdout
    assert last_line(r.stdout) == ("main_job: to see a report of committed results without a GPU: bash "
                                   "scripts/main_job.sh --report-only reports/h100 -o reports/local/h100-report")
    assert not (tmp_path / "report").exists()  # the old results are not reported as this run's
    assert open(stale).read() == before  # nor removed: nothing replaced them


def test_failed_gpuprobe_run_fails_the_job_and_leaves_nothing_stale(fake):
    run, out = fake
    r = run("crash")
    assert r.returncode == 1
    assert last_line(r.stderr).startswith(
        "main_job: FAILED: gpuprobe exit 1: gpuprobe: kernels.symv/n:64: CUDA error cudaErrorIllegalAddress"), r.stderr
    assert not (out / "results.json").exists() and not (out / "counters.json").exists()
    assert not (out / "report").exists()
    assert (out / "results.json.partial").exists()


def test_gpuprobe_that_writes_no_file_fails_the_job(fake):
    run, out = fake
    r = run("silent")
    assert r.returncode == 1
    assert last_line(r.stderr).startswith("main_job: FAILED: gpuprobe exit 0: no results.json written"), r.stderr
    assert not (out / "report").exists()


def test_failed_counter_runs_fail_the_job(fake):
    run, out = fake
    r = run("counters-crash")  # both counter runs (premises, then the kernels' counters) crash
    assert r.returncode == 1
    line = last_line(r.stderr)
    assert line.startswith("main_job: FAILED: premises run: gpuprobe: kernels.symv/n:64: CUDA error"), r.stderr
    assert "; counters run: gpuprobe: kernels.symv/n:64: CUDA error" in line, r.stderr
    assert not (out / "counters.json").exists() and not (out / "premises.json").exists()


def test_successful_run_reports_only_its_own_results(fake):
    run, out = fake
    r = run("ok")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "removing the previous run's results.json counters.json report" in r.stdout
    assert json.load(open(out / "results.json"))["context"]["gpu_name"] == "Fresh GPU"
    md = (out / "report" / "report.md").read_text()
    assert "Fresh GPU" in md and "Stale GPU" not in md
    assert last_line(r.stdout).endswith(f"open {out}/report/report.html")
    # The early level fits ran beside the counter passes (their log stays); their cache is gone.
    assert (out / "prefit.log").exists() and not (out / ".fit-cache").exists()


@pytest.mark.parametrize("args", [
    ["reports/h100"],
    ["reports/h100/new-run"],
    ["--report-only", "reports/h100", "-o", "reports/h100"],
    ["--report-only", "reports/h100", "-o", "reports/h100/report"],
    ["--report-only", "reports/h200", "-o", "reports/h200/another-report"],
])
def test_committed_reference_folders_are_never_written(args):
    if not os.path.isdir(os.path.join(REPO, "reports", "h100")):
        pytest.skip("no committed reference in this checkout")
    before = git_status("reports")
    r = main_job(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "which holds files tracked by git (committed data); choose another folder" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert git_status("reports") == before


@pytest.mark.parametrize("folder", ["reports/h100", "reports/h100/report", "reports", "reports/local/x", ".",
                                    "analysis/tests/new", "/tmp"])
def test_main_job_and_the_analysis_refuse_the_same_folders(tmp_path, folder):
    """One rule: main_job.sh's verdict on an output folder is gpuprobe_analysis.outputs' (the CLI's)."""
    sys.path.insert(0, os.path.join(REPO, "analysis"))
    from gpuprobe_analysis.outputs import refuse_tracked_output
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        why = refuse_tracked_output(folder)
    finally:
        os.chdir(cwd)
    r = main_job("--report-only", str(tmp_path), "-o", folder)
    if why:
        assert r.returncode == 2 and r.stderr == f"main_job.sh: -o {why}\n", r.stderr
    else:  # accepted, then stopped for want of results
        assert r.returncode == 1 and "no results.json" in r.stderr, r.stderr
    assert (why is None) == (folder in ("reports/local/x", "/tmp"))


def test_report_only_writes_the_report_elsewhere(tmp_path):
    """A reference folder as reports/h200 holds it (premises, counters and results as .json.gz) seen without
    a GPU: the files read in that order, the report written elsewhere, the folder left as it was. Small
    synthetic files: the script's handling is the point here; the committed references' own reports are
    built by test_report.py (H100) and the report audit."""
    import gzip
    ref = tmp_path / "h200"
    ref.mkdir()
    for name in ("premises", "counters", "results"):
        with gzip.open(ref / f"{name}.json.gz", "wt") as fh:
            json.dump(small_results("NVIDIA H200"), fh)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in ref.iterdir())
    r = main_job("--report-only", str(ref), "-o", str(tmp_path / "report"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "report" / "report.html").exists()
    # The counter runs first, then the timed results.
    inputs = [f"{ref}/{f}.json.gz" for f in ("premises", "counters", "results")]
    assert last_line(r.stdout) == f"main_job: report of {' '.join(inputs)}: open {tmp_path}/report/report.html"
    assert sorted((p.name, p.stat().st_mtime_ns) for p in ref.iterdir()) == before


def test_report_only_into_a_new_ignored_folder_under_reports(tmp_path):
    """The README's command on a fresh clone: reports/local/ does not exist yet, and its nearest existing
    folder, reports/, holds tracked files; an ignored path is still no committed data."""
    import uuid
    src = tmp_path / "src"
    src.mkdir()
    synth.write(str(src / "results.json"), small_results("Small GPU"))
    top = os.path.join("reports", "local", f"test-{uuid.uuid4().hex[:8]}")
    try:
        r = main_job("--report-only", str(src), "-o", os.path.join(top, "sub", "report"))
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.path.exists(os.path.join(REPO, top, "sub", "report", "report.html"))
    finally:
        shutil.rmtree(os.path.join(REPO, top), ignore_errors=True)


def test_report_only_on_a_foreign_file_fails(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(
        {"context": {"executable": "./bm"}, "benchmarks": [{"name": "BM_x", "run_type": "iteration",
                                                            "iterations": 1, "real_time": 1.0}]}))
    r = main_job("--report-only", str(tmp_path), "-o", str(tmp_path / "rep"))
    assert r.returncode == 1
    assert "not a gpuprobe result file" in r.stderr
    assert last_line(r.stderr).startswith("main_job: FAILED: the analysis could not report on"), r.stderr


def test_report_only_without_results_fails(tmp_path):
    r = main_job("--report-only", str(tmp_path), "-o", str(tmp_path / "rep"))
    assert r.returncode == 1
    assert last_line(r.stderr) == f"main_job: FAILED: no results.json, results.json.gz or counters.json in {tmp_path} to report on"


def test_default_output_folder_is_ignored_by_git():
    r = subprocess.run(["git", "check-ignore", "-q", "reports/local/results.json"], cwd=REPO)
    if r.returncode == 128:
        pytest.skip("not a git checkout")
    assert r.returncode == 0


NO_GPU = """#!/bin/sh
echo "gpuprobe: no usable GPU: no CUDA-capable device is detected (stand-in)" >&2
exit 2
"""


@pytest.fixture
def fresh_clone(tmp_path):
    """A fresh clone of this checkout's commit (no reports/local/ in it), with this working tree's
    main_job.sh, .gitignore and outputs.py (the code under test), and a stand-in gpuprobe on a machine
    without a GPU."""
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=REPO, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", REPO, str(clone)], check=True)
    copied = ["scripts/main_job.sh", ".gitignore", "analysis/gpuprobe_analysis/outputs.py"]
    for f in copied:
        shutil.copyfile(os.path.join(REPO, f), clone / f)
    subprocess.run(["git", "-C", str(clone), "add", *copied], check=True)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
                    "the working tree's main_job.sh", "--allow-empty"], check=True)
    assert not (clone / "reports" / "local").exists()
    exe = tmp_path / "no-gpu-gpuprobe"
    exe.write_text(NO_GPU)
    exe.chmod(0o755)

    def run(*args):
        return subprocess.run(["bash", "scripts/main_job.sh", *args], cwd=clone, capture_output=True, text=True,
                              env=dict(os.environ, GPUPROBE=str(exe)), timeout=120)
    return clone, run


def test_readme_command_on_a_fresh_clone_writes_into_the_new_ignored_folder(fresh_clone):
    """bash scripts/main_job.sh reports/local on a fresh clone: reports/local/ does not exist yet and
    its nearest existing folder, reports/, holds tracked files."""
    clone, run = fresh_clone
    r = run("reports/local", "--no-build")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "main_job: nothing measured: gpuprobe: no usable GPU: " in r.stdout
    assert (clone / "reports" / "local" / "gpu-check.log").exists()
    assert subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout == ""


def test_refusal_advice_names_folders_that_are_accepted(fresh_clone):
    """Each folder the refusal suggests is accepted, on a fresh clone too (before reports/local/ exists)."""
    clone, run = fresh_clone
    # -o naming the ignored folder itself, before it exists: accepted, then stopped for want of results.
    empty = clone.parent / "empty"
    empty.mkdir()
    r = run("--report-only", str(empty), "-o", "reports/local")
    assert r.returncode == 1 and "no results.json" in r.stderr, r.stderr
    if not (clone / "reports" / "h100" / "results.json.gz").exists():
        pytest.skip("no committed H100 reference in this checkout")
    r = run("reports/h100", "--no-build")
    assert r.returncode == 2
    assert r.stderr == ("main_job.sh: OUTDIR reports/h100 would write into reports/h100, which holds files tracked by "
                        "git (committed data); choose another folder, e.g. reports/local/h100 (ignored by git); a "
                        "report of the results in reports/h100: --report-only reports/h100 -o "
                        "reports/local/h100-report\n")
    r = run("--report-only", str(empty), "-o", "reports/local/h100-report")
    assert r.returncode == 1 and "no results.json" in r.stderr, r.stderr
    assert not (clone / "reports" / "local").exists()
    r = run("reports/local/h100", "--no-build")
    assert r.returncode == 0 and "nothing measured" in r.stdout, r.stdout + r.stderr


def test_a_failing_suite_does_not_hide_the_other(tmp_path):
    """test.sh runs pytest after a failed ctest, and fails when either failed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "ran"
    (bin_dir / "ctest").write_text(f"#!/bin/sh\necho ctest >> {log}\nexit 8\n")
    (bin_dir / "python3").write_text(f"#!/bin/sh\necho \"python3 $*\" >> {log}\nexit ${{PYTEST_EXIT:-0}}\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    r = subprocess.run(["bash", "scripts/test.sh"], cwd=REPO, env=env, capture_output=True, text=True)
    assert r.returncode == 1
    # (the fake python3 also answers test.sh's probe for pytest-xdist, so the suite runs on every core)
    assert log.read_text().splitlines() == ["ctest", "python3 -c import xdist",
                                            "python3 -m pytest -q --rootdir=. -p pytest_progress --durations=15 "
                                            "-n auto analysis/tests tests/scripts"]
    assert last_line(r.stderr) == "test.sh: FAILED: ctest (exit 8)"
    log.unlink()
    r = subprocess.run(["bash", "scripts/test.sh"], cwd=REPO, env=dict(env, PYTEST_EXIT="1"), capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert last_line(r.stderr) == "test.sh: FAILED: ctest (exit 8) pytest (exit 1)"


@needs_gpuprobe
@pytest.mark.skipif(has_gpu(), reason="a GPU is present: the job would measure it")
def test_a_build_with_nothing_to_do_says_it_is_done(tmp_path):
    """The build tool counts only the steps it finds out of date, so its progress can stop at
    "build 33 %": the job says in words that the build ended."""
    r = main_job(str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    done = f"  build done: {BUILD_DIR}/gpuprobe is up to date"
    assert done in lines, r.stdout
    assert all(not line.startswith("  build ") for line in lines[lines.index(done) + 1:]), r.stdout


FAKE_CMAKE = """#!/usr/bin/env bash
# Stands in for cmake: the configure step prints its notes; the build makes BUILD_DIR/gpuprobe (a
# stand-in without a GPU) only where it is missing, as a build with nothing to do leaves it alone.
if [ "$1" = --build ]; then
  if [ -e "$2/gpuprobe" ]; then echo "ninja: no work to do."; exit 0; fi
  echo "[1/2] Building CXX object main.cpp.o"
  printf '#!/bin/sh\\necho "gpuprobe: no usable GPU: no CUDA-capable device is detected (stand-in)" >&2\\nexit 2\\n' \\
    > "$2/gpuprobe"
  chmod +x "$2/gpuprobe"
  echo "[2/2] Linking CXX executable gpuprobe"
  exit 0
fi
mkdir -p "${@: -3:1}" 2>/dev/null
echo "-- The CXX compiler identification is GNU 12.2.0"
echo "-- gpuprobe: NCCL not found: collective probes and the multi-GPU NCCL reduction left out"
echo "-- gpuprobe: MPI not found: fleet mode reads its ranks from the launcher's environment"
echo "-- gpuprobe: PAPI backend OFF (pkg-config papi: )"
echo "-- Configuring done"
"""


def test_the_build_says_built_or_up_to_date_truthfully_and_shows_the_configure_notes(tmp_path):
    """A fresh build printed "build done: build/gpuprobe is up to date", and the configure notes (NCCL,
    PAPI, MPI) were only in build.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text(FAKE_CMAKE)
    (bin_dir / "cmake").chmod(0o755)
    build = tmp_path / "build"
    build.mkdir()
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "BUILD_DIR": str(build)}
    first = main_job(str(tmp_path / "out1"), env=dict(env, GPUPROBE=str(build / "gpuprobe")))
    assert first.returncode == 0, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    assert f"  build done: built {build}/gpuprobe" in lines, first.stdout
    for note in ("NCCL not found: collective probes", "MPI not found: fleet mode", "PAPI backend OFF"):
        assert any(line.startswith("  configure: ") and note in line for line in lines), (note, first.stdout)
    assert not any("CXX compiler identification" in line for line in lines)
    again = main_job(str(tmp_path / "out2"), env=dict(env, GPUPROBE=str(build / "gpuprobe")))
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"  build done: {build}/gpuprobe is up to date" in again.stdout.splitlines(), again.stdout
