"""``vtt-bridge serve`` runs its event loop on uvloop when installed, else asyncio's own."""

from __future__ import annotations

import sys
import traceback

import pytest

from vtt_bridge.server.runner import run


async def _fails() -> None:
    raise ValueError("a hook went wrong")


@pytest.mark.parametrize("uvloop_installed", [False, True])
def test_an_error_in_the_loop_carries_no_unrelated_import_error(monkeypatch, uvloop_installed):
    """Issue 27: every resolver traceback ended with ``ModuleNotFoundError: uvloop`` when
    uvloop was not installed, because the server ran inside the ``except ImportError``."""
    if uvloop_installed:
        pytest.importorskip("uvloop")
    else:
        monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    with pytest.raises(ValueError) as caught:
        run(_fails())
    assert caught.value.__context__ is None
    text = "".join(traceback.format_exception(caught.value))
    assert "ModuleNotFoundError" not in text and "During handling" not in text, text
