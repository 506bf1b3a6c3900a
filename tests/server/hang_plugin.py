"""A misbehaving test pack for the ``duel`` ruleset: its roll hook never returns.

Loaded by module path, as a pack under development is (``--plugin
tests.server.hang_plugin``). It hangs only for attackers whose id says so,
so the same server resolves every other attack normally:

- ``spin…``: a busy loop (holds a CPU, never releases the GIL for long);
- ``sleep…``: blocks in ``time.sleep`` (a stuck network call, a deadlock);
- ``exit…``: raises ``SystemExit`` (which ends a process, unless caught);
- ``exact…``: its exact odds model (``vtt_bridge_exact_odds``) never returns.
"""

from __future__ import annotations

import time

from vtt_bridge import hookimpl


@hookimpl
def duel_roll(ctx) -> None:
    attacker = ctx.attacker.id
    if attacker.startswith("spin"):
        while True:
            pass
    if attacker.startswith("exit"):
        raise SystemExit(3)
    if attacker.startswith("sleep"):
        while True:
            time.sleep(3600)


@hookimpl
def vtt_bridge_exact_odds(ruleset, request):
    if request.attacker.startswith("exact"):
        while True:
            pass
    return None
