"""``attack.odds`` on a budget.

Odds are pure computation (exact models, or up to 20,000 Monte Carlo
resolutions), so they run in a worker thread, never on the event loop, and
under three bounds:

- **per user**: at most ``per_user`` odds requests of one user on one table
  run at once; another is answered ``rate_limited`` (``details.retry_after``);
- **per server**: at most ``concurrency`` computations run at once; the rest
  wait their turn, so odds never crowd out the resolutions and echoes of every
  table (the wait is bounded: each user has at most ``per_user`` waiting);
- **time**: a Monte Carlo run stops ``budget`` seconds after its turn came
  and reports the samples it ran (``notes`` says so); it also stops as soon
  as the requester disconnects, and its result is dropped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..errors import RateLimited
from ..odds import compute_odds
from .session import Caller
from .tables import TableRuntime

__all__ = ["OddsRunner"]


class OddsRunner:
    def __init__(self, *, budget: float = 2.0, per_user: int = 1, concurrency: int = 1) -> None:
        self.budget = budget
        self.per_user = per_user
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._running: Counter[tuple[str, str]] = Counter()

    async def run(
        self, host: Any, caller: Caller, runtime: TableRuntime, request: Mapping[str, Any], tokens: Mapping[str, Token]
    ) -> dict[str, Any]:
        who = (caller.table, caller.user)
        if self._running[who] >= self.per_user:
            raise RateLimited(
                f"{caller.user} already has {self._running[who]} odds request(s) running; wait for the answer",
                details={"limit": "odds_per_user", "per_user": self.per_user, "retry_after": self.budget},
            )
        self._running[who] += 1
        gone = threading.Event()
        deadline = float("inf")  # set when its turn comes
        departure = runtime.departure(caller.sid)
        departure.add_done_callback(lambda _f: gone.set())

        def stop() -> bool:
            return gone.is_set() or time.monotonic() > deadline

        try:
            async with self._slots:
                if gone.is_set():
                    return {"odds": None}  # nobody is left to read it
                deadline = time.monotonic() + self.budget
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    None,
                    lambda: compute_odds(
                        host, request, tokens, mc_samples=request["samples"], method=request["method"], stop=stop
                    ),
                )
        finally:
            gone.set()  # a task cancelled while waiting stops its thread at the next sample
            runtime.forget(caller.sid, departure)
            self._running[who] -= 1
            if not self._running[who]:
                del self._running[who]
        return {"odds": result.to_dict()}
