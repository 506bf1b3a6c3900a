"""Suite-wide settings.

In CI (``VTT_BRIDGE_REQUIRE_ALL=1``, set by ``.ci/run``) every real component —
redis-server, nginx, Node, Chromium — is installed, so a skipped test means something
did not run that must: the session fails.
"""

from __future__ import annotations

import os

import pytest

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("VTT_BRIDGE_REQUIRE_ALL") and _skipped and session.exitstatus == 0:
        session.exitstatus = 1
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"FAILED: {len(_skipped)} test(s) skipped in CI, where nothing may skip:", red=True)
            for nodeid in _skipped[:20]:
                tr.write_line(f"  {nodeid}")
