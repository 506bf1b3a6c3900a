"""Installing a distribution for one test, without pip: a ``.dist-info`` on ``sys.path``.

``importlib.metadata`` (and so pluggy's entry-point loading) finds it exactly
as it finds a pip-installed pack; the install test does the real thing once.
"""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

# The plugins this project installs itself; blocked where a test wants only its own packs.
BUILTINS = sorted(
    ep.name for ep in importlib.metadata.distribution("vtt-bridge").entry_points if ep.group == "vtt_bridge"
)


@pytest.fixture
def install(tmp_path, monkeypatch):
    """``install("vtt-kit-packs", "1.2.3", duel="tests.kit.packs.duel_rules", ...)``."""

    def install(name: str, version: str, **entry_points: str) -> None:
        info = tmp_path / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        lines = ["[vtt_bridge]", *(f"{ep} = {module}" for ep, module in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.invalidate_caches()

    return install
