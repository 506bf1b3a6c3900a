from __future__ import annotations

import itertools

import pytest

from vtt_bridge.state import RedisStore, SQLiteStore

from .redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url():
    with redis_server() as url:
        yield url


_prefixes = itertools.count()


@pytest.fixture(params=["sqlite", "redis"])
async def store(request, tmp_path):
    if request.param == "sqlite":
        made = SQLiteStore(tmp_path / "store.sqlite")
    else:
        url = request.getfixturevalue("redis_url")
        made = RedisStore(url, prefix=f"test{next(_prefixes)}:")
    await made.open()
    yield made
    await made.close()
