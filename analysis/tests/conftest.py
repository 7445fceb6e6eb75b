import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)  # synth.py
sys.path.insert(0, os.path.dirname(HERE))  # the package, also when not pip-installed

import synth  # noqa: E402


@pytest.fixture(scope="session")
def synth_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    return synth.write(str(d / "results.json"), synth.synth_results(noise=0.01, seed=3))


@pytest.fixture(scope="session")
def full_report(synth_file, tmp_path_factory):
    from gpuprobe_analysis.cli import main
    out = tmp_path_factory.mktemp("report")
    assert main(["report", synth_file, "-o", str(out)]) == 0
    return str(out)
