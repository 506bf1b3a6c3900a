from __future__ import annotations

import pytest

from vtt_bridge.server import BridgeServer, ServerConfig

from . import duel_plugin
from .kit import seat_table


def config(tmp_path, **overrides) -> ServerConfig:
    values = dict(
        port=0,
        db=str(tmp_path / "bridge.sqlite"),
        decision_timeout=0.5,
        plugins=(duel_plugin.rules(),),
        entry_points=False,
        static_dir=None,
        shutdown_grace=1.0,
        # A python-socketio client's disconnect() reads as a dropped connection;
        # the tests of waiting for a reconnect (test_restart.py) set their own.
        reconnect_grace=0.0,
    )
    values.update(overrides)
    return ServerConfig(**values)


@pytest.fixture
async def server(tmp_path):
    async with BridgeServer(config(tmp_path)) as running:
        yield running


@pytest.fixture
async def seat(server):
    seat = await seat_table(server)
    yield seat
    await seat.close()
