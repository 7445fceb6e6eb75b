"""One rule for where a command may write (outputs.py): never into a folder holding files tracked by git.
Every gpuprobe-analyze command that writes refuses such a folder before it writes anything; main_job.sh
asks the same function (tests/scripts/test_main_job.py)."""
import json
import os
import subprocess
import sys

import pytest

from gpuprobe_analysis import cli
from gpuprobe_analysis.outputs import refuse_tracked_output, tracked_folder
from fleet_sim import make_fleet

HERE = os.path.dirname(os.path.abspath(__file__))
SUBSET = os.path.join(HERE, "data", "h100_subset.json")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git checkout: committed/ holds a tracked file, local/ is ignored, fresh/ is untracked."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode:
        pytest.skip("no git")
    root = tmp_path / "repo"
    (root / "committed" / "sub").mkdir(parents=True)
    (root / "committed" / "data.json").write_text("{}")
    (root / "fresh").mkdir()
    (root / ".gitignore").write_text("/local/\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "committed/data.json", ".gitignore"], check=True)
    subprocess.run(git + ["commit", "-qm", "data"], check=True)
    monkeypatch.chdir(root)
    return root


def test_the_rule(repo):
    assert tracked_folder("committed") == "committed"
    assert tracked_folder("committed/report") == "committed"  # a new folder inside committed data
    assert tracked_folder("committed/sub") == "committed"  # inside committed data, below the root
    assert tracked_folder("local/x/report") is None  # ignored, though nothing of it exists yet
    assert tracked_folder("fresh/report") is None
    assert tracked_folder(".") == "."  # the checkout's root holds .gitignore
    assert tracked_folder(str(repo / "committed")) == str(repo / "committed")
    why = refuse_tracked_output("committed/report")
    assert why == ("committed/report would write into committed, which holds files tracked by git (committed "
                   "data); choose another folder, e.g. reports/local/report (ignored by git)")
    assert refuse_tracked_output(str(repo.parent / "elsewhere")) is None  # outside any checkout


def test_module_command_gives_the_verdict(repo):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    r = subprocess.run([sys.executable, "-m", "gpuprobe_analysis.outputs", "committed/new"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 1 and r.stdout.splitlines() == [refuse_tracked_output("committed/new"), "committed"]
    r = subprocess.run([sys.executable, "-m", "gpuprobe_analysis.outputs", "local/new"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0 and r.stdout == ""


@pytest.mark.parametrize("command", ["report", "profile", "compare", "fleet"])
def test_every_writing_command_refuses_a_tracked_folder(repo, command, capsys):
    """`gpuprobe-analyze report ... -o reports/h100/report` rewrote committed files and exited 0."""
    out = repo / "committed"
    if command == "fleet":
        make_fleet(str(repo / "fresh" / "fleet"), gpus=8, faults=[], busy=0)
        argv = ["fleet", str(repo / "fresh" / "fleet"), "-o", "committed"]
    elif command == "compare":
        argv = ["compare", SUBSET, SUBSET, "-o", "committed/compare.md", "--no-summary"]
    else:
        argv = [command, SUBSET, "-o", "committed"]
    before = sorted(os.listdir(out))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "which holds files tracked by git (committed data)" in err and "nothing written" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(os.listdir(out)) == before
    assert (out / "data.json").read_text() == "{}"


def test_an_ignored_folder_is_written(repo):
    import synth
    small = synth.write(str(repo / "fresh" / "r.json"), synth.synth_results(families=["exec.latency"]))
    assert cli.main(["profile", small, "-o", "local/p"]) == 0
    assert json.loads((repo / "local" / "p" / "device-profile.json").read_text())


def without_counter_checks(path, out):
    """The result file as a run without counters writes it: no premise check on any entry."""
    doc = json.load(open(path))
    for e in doc["benchmarks"]:
        for k in ("premise_ok", "premise_ratio"):
            e.pop(k, None)
        e["label"] = ";".join(t for t in e.get("label", "").split(";") if not t.startswith("premise="))
    out.write_text(json.dumps(doc))
    return str(out)


def test_profile_on_the_terminal_says_its_ceilings_are_unverified(tmp_path, capsys, h100_subset_profile):
    """A run without counters: `profile` printed its ceilings without saying that nothing checked their
    premises; now the premise verdict stands next to them, and each unverified ceiling is marked."""
    assert cli.main(["profile", without_counter_checks(SUBSET, tmp_path / "r.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("bandwidth ceilings:"))
    assert "L2 " in lines[i] and "(unverified)" in lines[i], lines[i]
    assert lines[i + 1] == "premises: ceilings UNVERIFIED: no counter run checked the probes' premises", lines[i + 1]
    # Checked by counters (the subset as it is): verified, and the failed entries counted.
    cli._print_profile(h100_subset_profile)
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("bandwidth ceilings:"))
    assert "(unverified)" not in lines[i]
    assert lines[i + 1].startswith("premises: ceilings verified by the counters; 23 of 108 entries whose premise failed")
