import copy
import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)  # synth.py
sys.path.insert(0, os.path.dirname(HERE))  # the package, also when not pip-installed

import synth  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def session_fit_cache(tmp_path_factory):
    """One level-fit cache for the test session (levels.py, $GPUPROBE_FIT_CACHE, shared by pytest-xdist's
    workers): the curves several tests fit (h100_subset's profile and report, the synthetic report) are
    fitted once. A cached fit is the one a fresh fit gives (test_fit_cache.py), keyed on its inputs and on
    levels.py's source, and the folder is new each session, so no test sees a fit of other code."""
    from gpuprobe_analysis import levels
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    old = os.environ.get(levels.FIT_CACHE_ENV)
    os.environ[levels.FIT_CACHE_ENV] = str(shared / "fit-cache")
    yield
    if old is None:
        os.environ.pop(levels.FIT_CACHE_ENV, None)
    else:
        os.environ[levels.FIT_CACHE_ENV] = old


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


H100_SUBSET = os.path.join(HERE, "data", "h100_subset.json")


@pytest.fixture(scope="session")
def _h100_subset_profile():
    from gpuprobe_analysis import results
    from gpuprobe_analysis.sections import device_profile
    return device_profile(results.load([H100_SUBSET]))


@pytest.fixture
def h100_subset_profile(_h100_subset_profile):
    """device_profile of tests/data/h100_subset.json, computed once per session (its level fits take
    seconds) and copied for each test, so that no test sees what another changed."""
    return copy.deepcopy(_h100_subset_profile)


REPO = os.path.dirname(os.path.dirname(HERE))
H100_REFERENCE_FILES = [p for p in (os.path.join(REPO, "reports", "h100", f"{n}.json.gz")
                                    for n in ("premises", "counters", "results")) if os.path.exists(p)]


@pytest.fixture(scope="session")
def h100_reference_report(tmp_path_factory):
    """The committed H100 reference's report (reports/h100, as main_job.sh --report-only reads it), built
    once per session for every test that reads it: (its build_report output, the folder)."""
    if not H100_REFERENCE_FILES:
        pytest.skip("no committed H100 result files under reports/h100/")
    from gpuprobe_analysis import results
    from gpuprobe_analysis.report import build_report
    out = tmp_path_factory.mktemp("h100-report")
    return build_report(results.load(H100_REFERENCE_FILES), str(out)), str(out)
