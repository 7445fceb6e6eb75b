"""scripts/setup.sh where it cannot install: no apt (the GPU image: cmake from pip, apt reaching
nothing), no root, a required part missing. Each run sees only the commands a test puts on its PATH
(links to this machine's own tools, fakes of `id` and `apt-get`), so a hidden tool is really absent."""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = ["bash", "sh", "env", "cmake", "c++", "g++", "gcc", "cc", "as", "ld", "make", "ninja", "pkg-config", "sed",
         "sort", "head", "mktemp", "cat", "rm", "dirname", "uname", "grep", "tr", "ls", "nvcc", "chromium",
         "chromedriver"]
MODULES = ["numpy", "matplotlib", "jinja2", "pytest", "xdist", "selenium", "gpuprobe_analysis"]


def importable(name):
    return subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True).returncode == 0


# With a Python package missing, setup.sh would run pip: not in a test.
pytestmark = pytest.mark.skipif(not all(map(importable, MODULES)),
                                reason="a Python package setup.sh checks for is missing here")


def setup_run(tmp_path, hide=(), uid=None, apt_exit=None, args=()):
    """setup.sh on a PATH of this machine's tools less `hide`; `uid` fakes `id -u`; `apt_exit`
    (None: no apt-get) fakes an apt-get that records its arguments and exits so."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        path = shutil.which(tool, path=os.environ["PATH"] + ":/usr/local/cuda/bin")
        if path and tool not in hide:
            os.symlink(path, bin_dir / tool)
    os.symlink(sys.executable, bin_dir / "python3")
    apt_log = tmp_path / "apt.log"
    if uid is not None:
        (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    elif shutil.which("id"):
        os.symlink(shutil.which("id"), bin_dir / "id")
    if apt_exit is not None:
        (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {apt_log}\nexit {apt_exit}\n')
    for f in bin_dir.iterdir():
        if not f.is_symlink():
            f.chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/tmp"), "PIP_NO_INDEX": "1",
           "CUDACXX": os.path.join(bin_dir, "nvcc") if "nvcc" not in hide else ""}
    r = subprocess.run(["bash", "scripts/setup.sh", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return r, (apt_log.read_text() if apt_log.exists() else "")


def needs(*tools):
    absent = [t for t in tools if not shutil.which(t, path=os.environ["PATH"] + ":/usr/local/cuda/bin")]
    return pytest.mark.skipif(bool(absent), reason=f"not on this machine: {absent}")


@needs("cmake", "nvcc")
def test_without_apt_and_without_an_optional_part_it_warns_and_succeeds(tmp_path):
    r, _ = setup_run(tmp_path, hide={"chromium", "chromedriver"})
    assert r.returncode == 0, r.stderr
    assert ("setup: optional, missing: Chromium (the report's browser test): apt-get install --no-install-recommends "
            "chromium (as root), or any Chromium or Chrome named chromium on PATH") in r.stderr.splitlines()
    assert "REQUIRED" not in r.stderr and "installing with apt-get" not in r.stderr
    assert r.stderr.splitlines()[-1] == "setup: every required part is present (optional parts missing: see above)"


@needs("nvcc")
def test_a_missing_required_tool_is_named_with_how_to_get_it(tmp_path):
    r, _ = setup_run(tmp_path, hide={"cmake"})
    assert r.returncode == 1, r.stderr
    assert ("setup: REQUIRED, missing: CMake >= 3.25: apt-get install --no-install-recommends cmake (as root), "
            "or pip install 'cmake>=3.25', or conda install -c conda-forge cmake") in r.stderr.splitlines()
    last = r.stderr.splitlines()[-1]
    assert last.startswith("setup: FAILED: required parts missing: CMake >= 3.25"), last


@needs("cmake", "nvcc")
def test_as_root_apt_reaching_nothing_costs_only_the_optional_part(tmp_path):
    r, apt = setup_run(tmp_path, hide={"chromium", "chromedriver"}, uid=0, apt_exit=100, args=["--with-optional"])
    assert r.returncode == 0, r.stderr
    assert apt.splitlines() == ["update -qq", "install -y -qq --no-install-recommends chromium chromium-driver"], apt
    assert "setup: apt-get could not install chromium chromium-driver (exit 100)" in r.stderr.splitlines()
    assert "optional, missing: chromedriver (the report's browser test)" in r.stderr


@needs("cmake", "nvcc")
def test_without_root_apt_is_never_called(tmp_path):
    r, apt = setup_run(tmp_path, hide={"chromium", "chromedriver", "cmake"}, uid=1000, apt_exit=0)
    assert r.returncode == 1, r.stderr
    assert apt == ""
    assert "REQUIRED, missing: CMake >= 3.25: apt-get install --no-install-recommends cmake (as root)" in r.stderr


@needs("cmake", "nvcc")
def test_as_root_the_optional_parts_are_installed_only_when_asked(tmp_path):
    """As root, setup.sh installed Chromium (and PAPI, NCCL) without asking: now only with --with-optional."""
    r, apt = setup_run(tmp_path, hide={"chromium", "chromedriver"}, uid=0, apt_exit=0)
    assert r.returncode == 0, r.stderr
    assert apt == "", apt
    assert "setup: optional, missing: Chromium (the report's browser test)" in r.stderr
    assert ("setup: the optional parts are installed only when asked: bash scripts/setup.sh --with-optional"
            in r.stderr.splitlines())
    (tmp_path / "again").mkdir()
    r, apt = setup_run(tmp_path / "again", hide={"chromium", "chromedriver"}, uid=0, apt_exit=0,
                       args=["--with-optional"])
    assert apt.splitlines() == ["update -qq", "install -y -qq --no-install-recommends chromium chromium-driver"], apt


def test_an_unknown_argument_is_a_usage_error(tmp_path):
    r = subprocess.run(["bash", "scripts/setup.sh", "--with-optinal"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == "setup: usage error: unknown argument --with-optinal (scripts/setup.sh [--with-optional])\n"
