"""``attack.odds`` on a budget.

Odds are pure computation, but all of it is hook code: the probe resolution
that validates the request, the ruleset's exact model, and up to 20,000 Monte
Carlo resolutions. So nothing of it runs in the server process: each request
is computed in a resolver process forked for it (:meth:`.workers.Resolvers.odds`),
which the server kills when it is no longer wanted. A hook that never returns
there costs that one request; every table's echoes and attacks go on, and the
next odds request gets a fresh process. Three bounds apply:

- **per user**: at most ``per_user`` odds requests of one user on one table
  run at once; another is answered ``rate_limited`` (``details.retry_after``);
- **per server**: at most ``concurrency`` computations run at once; the rest
  wait their turn, so odds never crowd out the resolutions of every table
  (the wait is bounded: each user has at most ``per_user`` waiting);
- **time**: a Monte Carlo run stops ``budget`` seconds after its turn came
  and reports the samples it ran (``notes`` says so). Anything still running
  ``grace`` seconds later (a stuck hook, an exact model too slow) is killed
  and answered ``plugin_timeout``. The process is killed as soon as the
  requester disconnects, and the result dropped.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..errors import RateLimited
from .session import Caller
from .tables import TableRuntime
from .workers import Resolvers

__all__ = ["OddsRunner"]


class OddsRunner:
    """The bounds above, around :meth:`Resolvers.odds`.

    :ivar running: odds requests being computed or waiting their turn, by ``(table, user)``.
    """

    def __init__(
        self, *, budget: float = 2.0, per_user: int = 1, concurrency: int = 1, grace: float = 1.0
    ) -> None:
        self.budget = budget
        self.per_user = per_user
        self.grace = grace
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self.running: Counter[tuple[str, str]] = Counter()

    async def run(
        self,
        resolvers: Resolvers,
        caller: Caller,
        runtime: TableRuntime,
        request: Mapping[str, Any],
        tokens: Mapping[str, Token],
    ) -> dict[str, Any]:
        who = (caller.table, caller.user)
        if self.running[who] >= self.per_user:
            raise RateLimited(
                f"{caller.user} already has {self.running[who]} odds request(s) running; wait for the answer",
                details={"limit": "odds_per_user", "per_user": self.per_user, "retry_after": self.budget},
            )
        self.running[who] += 1
        departure = runtime.departure(caller.sid)
        try:
            async with self._slots:
                if departure.done():
                    return {"odds": None}  # nobody is left to read it
                odds = await resolvers.odds(
                    tokens, request, budget=self.budget, gone=departure, grace=self.grace
                )
        finally:
            runtime.forget(caller.sid, departure)
            self.running[who] -= 1
            if not self.running[who]:
                del self.running[who]
        return {"odds": odds}
