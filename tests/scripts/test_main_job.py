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
    return subprocess.run(["git", "status", "--porcelain", "--ignored", "--", path], cwd=REPO,
                          capture_output=True, text=True).stdout


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


def test_report_only_writes_the_report_elsewhere(tmp_path):
    """The committed H200 reference (.json.gz files) seen without a GPU; the checkout stays as it was."""
    if not os.path.exists(os.path.join(REPO, "reports", "h200", "results.json.gz")):
        pytest.skip("no committed H200 reference in this checkout")
    before = git_status("reports")
    r = main_job("--report-only", "reports/h200", "-o", str(tmp_path / "h200"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "h200" / "report.html").exists()
    assert last_line(r.stdout) == (f"main_job: report of reports/h200/counters.json.gz reports/h200/results.json.gz: "
                                   f"open {tmp_path}/h200/report.html")
    assert git_status("reports") == before


def test_report_only_into_a_new_ignored_folder_under_reports(tmp_path):
    """The README's command on a fresh clone: reports/local/ does not exist yet, and its nearest existing
    folder, reports/, holds tracked files; an ignored path is still no committed data."""
    import shutil
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
