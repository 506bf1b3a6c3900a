"""The link's own connection (one Redis): commands written together arrive exactly, replies in order."""

from __future__ import annotations

import asyncio

from vtt_bridge.state.redis_link import Link, RedisReplyError


async def test_commands_written_together_arrive_exactly_and_answer_in_order(redis_url):
    link = Link(redis_url)
    await link.open()
    try:
        values = ["plain", "déjà vu ⚔", "a\r\nSET x y\r\n", "", "x" * 100_000]
        # Queued in one turn of the loop: they go out as one write.
        await asyncio.gather(*(link.call("SET", f"linktest:{n}", v) for n, v in enumerate(values)))
        await link.call("SET", "linktest:bytes", b"\x00\xff\r\n")
        await link.call("SET", "linktest:numbers", 12)
        got = await asyncio.gather(
            *(link.call("GET", f"linktest:{n}") for n in range(len(values))),
            link.call("INCRBYFLOAT", "linktest:numbers", 0.5),
            link.call("HSET", "linktest:hash", "a", 1, "b", "two"),
            link.call("HGETALL", "linktest:hash"),
            link.call("STRLEN", "linktest:bytes"),
            return_exceptions=True,
        )
        assert got[: len(values)] == values
        assert got[len(values):] == [12.5, 2, {"a": "1", "b": "two"}, 4]  # redis-py's own conversions
        # An error reply answers its own command only; the others in the same write go on.
        wrong, fine = await asyncio.gather(
            link.call("INCR", "linktest:hash"), link.call("GET", "linktest:0"), return_exceptions=True
        )
        assert isinstance(wrong, RedisReplyError) and "WRONGTYPE" in str(wrong)
        assert fine == "plain"
    finally:
        await link.close()
