"""pytest plugin (scripts/test.sh loads it with -p): progress a reader can follow instead of rows of
dots. One line per test file when its last test ends (its count, failures, the time so far), and a
line at least once a minute while tests finish ("412 of 702 tests done"); failures and skips keep
their letters. With pytest-xdist the controller prints (the workers only run the tests)."""
from __future__ import annotations

import time
from typing import Dict, Iterable

import pytest

HEARTBEAT_S = 60.0


class Progress:
    def __init__(self, config: pytest.Config):
        self.config = config
        self.start = self.last = time.monotonic()
        self.total: Dict[str, int] = {}
        self.done: Dict[str, int] = {}
        self.failed: Dict[str, int] = {}

    @staticmethod
    def _file(nodeid: str) -> str:
        # A test outside the rootdir has no path in its id (scripts/test.sh passes --rootdir=.).
        return nodeid.split("::")[0] or "(outside the rootdir)"

    def _count(self, nodeids: Iterable[str]) -> None:
        for nodeid in nodeids:
            f = self._file(nodeid)
            self.total[f] = self.total.get(f, 0) + 1

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.total:
            self._count(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        if not self.total:  # every worker collects the same tests
            self._count(ids)

    def _say(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line)
        self.last = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # One count per test: its call, or its setup where the setup failed or skipped it.
        if not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        f = self._file(report.nodeid)
        self.done[f] = self.done.get(f, 0) + 1
        if report.failed:
            self.failed[f] = self.failed.get(f, 0) + 1
        now = time.monotonic()
        finished, total = sum(self.done.values()), sum(self.total.values())
        if self.done[f] == self.total.get(f):
            bad = f", {self.failed[f]} failed" if self.failed.get(f) else ""
            self._say(f"  {f}: {self.done[f]} tests{bad} ({now - self.start:.0f} s; {finished} of {total} done)")
        elif now - self.last >= HEARTBEAT_S:
            self._say(f"  ... {finished} of {total} tests done ({now - self.start:.0f} s)")

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport):
        # A passed test prints nothing of its own: the file lines above say how far the run is.
        if report.when == "call" and report.passed:
            return "passed", "", "PASSED"
        return None


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Progress(config), "gpuprobe-progress")
