"""Building highest_die attacks for the tests: combatants, scripted dice, answers."""

from __future__ import annotations

from functools import cache
from typing import Any

from vtt_bridge import Host, Resolution, Token, make_host

BLADE = {"id": "blade", "name": "Blade", "dice": [8, 8, 6]}
STAFF = {"id": "staff", "name": "Staff", "dice": [6, 6, 6]}
BOW = {"id": "bow", "name": "Bow", "dice": [8, 6], "range": "ranged"}


@cache
def host() -> Host:
    return make_host(plugins=["vtt_highest_die"], entry_points=False, environ={})


def fighter(*weapons: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A combatant with Body d6 (its only soak die) and the given weapons."""
    system: dict[str, Any] = {"body": [6], "weapons": list(weapons)}
    system.update(fields)
    return system


def attacker(**fields: Any) -> dict[str, Any]:
    """Attacks with a Blade: d8 d8 d6, Damage +0, normal, melee."""
    return fighter(BLADE, **fields)


def defender(**fields: Any) -> dict[str, Any]:
    """Parries and counters with a Staff (d6 d6 d6); Dodge falls back on its Body d6."""
    return fighter(STAFF, **fields)


def start(
    a: dict[str, Any] | None = None,
    d: dict[str, Any] | None = None,
    *,
    others: dict[str, dict[str, Any]] | None = None,
    declaration: dict[str, Any] | None = None,
    dice: list[int] | None = None,
    seed: int | None = None,
    answers: dict[str, Any] | None = None,
) -> Resolution:
    h = host()
    systems = {"a": a or attacker(), "d": d or defender(), **(others or {})}
    tokens = {
        token_id: Token(token_id, token_id.title(), "highest_die", h.load_system("highest_die", system))
        for token_id, system in systems.items()
    }
    return h.start(
        "highest_die", tokens, attacker="a", targets=["d"], declaration=declaration or {},
        dice=dice, seed=seed, answers=answers,
    )


def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
    res = start(*args, **kwargs)
    res.run()
    return res.record


def step(record: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [s for s in record["steps"] if s["step"] == name]
    return found


def changes(record: dict[str, Any], name: str) -> dict[str, tuple[Any, Any]]:
    return {c["number"]: (c["from"], c["to"]) for c in step(record, name)["changes"]}


def conditions(record: dict[str, Any], token_id: str) -> list[str]:
    return record["changes"][token_id]["after"]["conditions"]
