"""scripts/profile_app.sh with a fake `ncu` on PATH that records its arguments and writes a SYNTHETIC
export (analysis/tests/ncu_synth.py): what reaches ncu, what lands in OUTDIR, and the usage errors."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "analysis"))
sys.path.insert(0, os.path.join(REPO, "analysis", "tests"))

from gpuprobe_analysis import ncu_metrics  # noqa: E402
from ncu_synth import synthetic_raw_csv  # noqa: E402

FAKE_NCU = r'''#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0.0 (fake)")
elif args == ["--query-metrics"]:
    print("Device NVIDIA H100 80GB HBM3 (GH100)\n" + "-" * 40 + "\nMetric Name  Metric Description")
    lacking = set(os.environ.get("FAKE_NCU_LACKS", "").split(","))
    for name in os.environ["FAKE_NCU_HAS"].split(","):
        if name.split(".")[0] not in lacking:
            print(f"{name.split('.')[0]}  # of something")
elif "-i" in args:
    sys.stdout.write(open(os.environ["FAKE_NCU_CSV"]).read())
else:
    out = args[args.index("-o") + 1]
    open(out + ".ncu-rep", "wb").write(b"fake report")
    print("==PROF== Connected to process 1 (fake)")
    sys.exit(int(os.environ.get("FAKE_NCU_EXIT", "0")))
'''


@pytest.fixture
def fake(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text(FAKE_NCU.replace("{python}", sys.executable))
    ncu.chmod(0o755)
    csv_path = tmp_path / "synthetic.csv"
    csv_path.write_text(synthetic_raw_csv(3, nvtx=lambda i: ("step",)))
    log = tmp_path / "ncu.log"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_NCU_LOG": str(log), "FAKE_NCU_CSV": str(csv_path),
           "FAKE_NCU_HAS": ncu_metrics.metric_list(),
           "PYTHON": sys.executable, "HOME": str(tmp_path)}
    return tmp_path, env, log


def run(args, env):
    return subprocess.run(["bash", os.path.join(REPO, "scripts", "profile_app.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=120)


def calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def profile_call(log):
    return next(c for c in calls(log) if "-o" in c)


def test_every_option_passes_through(fake):
    tmp, env, log = fake
    out = tmp / "out"
    r = run(["-o", str(out), "--kernel", "gemm|attn", "--launch-skip", "5", "--launch-count", "40",
             "--replay-mode", "application", "--cache-control", "none", "--nvtx-include", "step/",
             "--nvtx-include", "fwd/", "--", "python3", "train.py", "--epochs", "1"], env)
    assert r.returncode == 0, r.stderr
    c = profile_call(log)
    assert c[-4:] == ["python3", "train.py", "--epochs", "1"]
    opts = c[:-4]
    pairs = {(opts[i], opts[i + 1]) for i in range(len(opts) - 1)}
    for p in [("--target-processes", "all"), ("--clock-control", "none"), ("--replay-mode", "application"),
              ("--cache-control", "none"), ("-k", "regex:gemm|attn"), ("-s", "5"), ("-c", "40"),
              ("--nvtx-include", "step/"), ("--nvtx-include", "fwd/"), ("-o", str(out / "profile"))]:
        assert p in pairs, p
    assert "--nvtx" in opts
    export = next(c for c in calls(log) if "-i" in c)
    assert export == ["-i", str(out / "profile.ncu-rep"), "--page", "raw", "--csv", "--print-units", "base"]
    assert (out / "profile.csv").read_text().startswith("==PROF==")
    cmd = (out / "profile.cmd").read_text()
    for line in ("clock_control: none", "replay_mode: application", "cache_control: none",
                 "kernel_filter: regex:gemm|attn", "launch_skip: 5", "launch_count: 40", "nvtx_include: step/ fwd/",
                 "ncu_version: Version 2099.1.0.0 (fake)"):
        assert line in cmd, line
    assert "3 launches of 3 kernels on NVIDIA H100 80GB HBM3" in r.stdout


def test_defaults_and_the_clock_always_free(fake):
    tmp, env, log = fake
    r = run(["-o", str(tmp / "out"), "--", "./app"], env)
    assert r.returncode == 0, r.stderr
    c = profile_call(log)
    assert c[c.index("--clock-control") + 1] == "none"
    assert c[c.index("--replay-mode") + 1] == "kernel" and c[c.index("--cache-control") + 1] == "all"
    assert "-k" not in c and "-s" not in c and "-c" not in c and "--nvtx-include" not in c


def test_metric_list_is_the_declaration(fake):
    tmp, env, log = fake
    assert run(["-o", str(tmp / "out"), "--", "./app"], env).returncode == 0
    c = profile_call(log)
    assert c[c.index("--metrics") + 1].split(",") == [m.name for m in ncu_metrics.METRICS]


def test_no_ncu(fake):
    tmp, env, _ = fake
    env = dict(env, PATH="/usr/bin:/bin")
    r = run(["-o", str(tmp / "out"), "--", "./app"], env)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "ncu not found" in r.stderr


def test_ncu_from_the_environment(fake):
    tmp, env, log = fake
    env = dict(env, NCU=str(tmp / "bin" / "ncu"), PATH="/usr/bin:/bin")
    assert run(["-o", str(tmp / "out"), "--", "./app"], env).returncode == 0
    assert calls(log)


@pytest.mark.parametrize("args, says", [
    (["-o", "X", "./app"], "unknown option './app'"),
    (["-o", "X"], "no -- before the command"),
    (["-o", "X", "--"], "no command after --"),
    (["--", "./app"], "no -o OUTDIR"),
    (["-o", "X", "--launch-count", "many", "--", "./app"], "whole number"),
    (["-o", "X", "--replay-mode", "app-range", "--", "./app"], "--replay-mode is kernel, application or range"),
    (["-o", "X", "--cache-control", "some", "--", "./app"], "--cache-control is all or none"),
    (["-o"], "-o needs a value"),
])
def test_usage_errors(fake, args, says):
    _, env, log = fake
    r = run(args, env)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
    assert not calls(log)


def test_a_failing_ncu_without_report(fake):
    tmp, env, _ = fake
    bad = tmp / "bin" / "ncu"
    bad.write_text("#!/bin/sh\n[ \"$1\" = --version ] && exit 0\necho '==ERROR== Failed to find metric' >&2\nexit 1\n")
    r = run(["-o", str(tmp / "out"), "--", "./app"], env)
    assert r.returncode == 1 and "wrote no" in r.stderr


def test_an_export_that_does_not_read(fake):
    tmp, env, _ = fake
    (tmp / "synthetic.csv").write_text("")
    r = run(["-o", str(tmp / "out"), "--", "./app"], env)
    assert r.returncode == 1 and "empty file" in r.stderr and "Traceback" not in r.stderr


def test_metrics_the_gpu_lacks_are_left_out_named_and_counted_as_none(fake):
    # An A100 has no wgmma (hgmma) paths: ncu would refuse the whole run for one unknown name.
    tmp, env, log = fake
    lacking = [m.name for m in ncu_metrics.METRICS if "_hgmma_" in m.name]
    env["FAKE_NCU_LACKS"] = ",".join(n.split(".")[0] for n in lacking)
    r = run(["-o", str(tmp / "out"), "--", "app"], env)
    assert r.returncode == 0, r.stderr
    asked = profile_call(log)[profile_call(log).index("--metrics") + 1].split(",")
    assert lacking and not set(lacking) & set(asked)
    assert set(asked) | set(lacking) == {m.name for m in ncu_metrics.METRICS}
    assert "counted as none: " + ",".join(lacking) in r.stderr
    cmd = (tmp / "out" / "profile.cmd").read_text()
    assert "absent_metrics: " + ",".join(lacking) in cmd
    from gpuprobe_analysis import ncu
    p = ncu.read_profile(str(tmp / "out" / "profile.csv"))
    assert any(n.startswith("metrics this GPU does not have") and lacking[0] in n for n in p.notes)
