"""Helpers for the warmachine_mk3 tests: tokens built through the ruleset's schema,
hosts with only the plugins a test names, attacks with scripted dice."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from vtt_bridge import Token, make_host

from vtt_warmachine_mk3.schemas import System

RULESET = "warmachine_mk3"
HEAVY_GRID = [".----L", "----LL", "---MMC", "---MCC", "----RR", ".----R"]

FIST = {"name": "Fist", "kind": "melee", "RNG": 0.5, "PS": 14}
HAMMER = {"name": "Hammer", "kind": "melee", "RNG": 2, "POW": 6, "critical": "Critical Knockdown"}
CANNON = {"name": "Cannon", "kind": "ranged", "RNG": 10, "POW": 12}
BOMBARD = {"name": "Bombard", "kind": "ranged", "RNG": 10, "POW": 13, "AOE": 3}
FLAMER = {"name": "Flamer", "kind": "ranged", "RNG": 8, "POW": 12, "spray": True}
BOLT = {"name": "Bolt", "kind": "magic", "RNG": 10, "POW": 12}


@lru_cache(maxsize=None)
def _host(extra: tuple[Any, ...], pack: bool):
    plugins = ["vtt_warmachine_mk3", *(["vtt_warmachine_abilities"] if pack else []), *extra]
    return make_host(plugins=plugins, entry_points=False, environ={})


def host(*extra: Any, pack: bool = False):
    """A host with the ruleset, optionally the abilities pack, and test packs (cached)."""
    return _host(tuple(extra), pack)


def model(token_id: str, *, owner: str | None = None, name: str | None = None, **system: Any) -> Token:
    """A token whose ``system`` went through the ruleset's schema (defaults filled in)."""
    loaded = System().load(system)
    return Token(token_id, name or token_id.title(), RULESET, loaded, ownership={owner: 3} if owner else {})


def at(x: float, y: float) -> dict[str, float]:
    return {"x": float(x), "y": float(y)}


def jack(token_id: str = "jack", *, owner: str = "alice", **system: Any) -> Token:
    base = dict(kind="warjack", MAT=7, RAT=5, DEF=12, ARM=18, STR=11, base=50, grid=HEAVY_GRID, focus=3,
                position=at(0, 0), weapons=[FIST, HAMMER, CANNON, BOMBARD, FLAMER])
    return model(token_id, owner=owner, **{**base, **system})


def grunt(token_id: str, *, owner: str = "bob", **system: Any) -> Token:
    base = dict(kind="warrior", MAT=6, RAT=6, DEF=12, ARM=14, base=30, boxes=1, position=at(0, 1.5))
    return model(token_id, owner=owner, **{**base, **system})


def tokens(*many: Token) -> dict[str, Token]:
    return {t.id: t for t in many}


def attack(
    table: dict[str, Token],
    *,
    attacker: str = "jack",
    target: str = "a",
    weapon: str = "Cannon",
    dice: list[int] | None = None,
    answers: dict[str, Any] | None = None,
    packs: tuple[Any, ...] = (),
    pack: bool = False,
    **declaration: Any,
):
    """Start an attack (not yet run): ``res.run()`` for the record, or drive it."""
    return host(*packs, pack=pack).start(
        RULESET,
        table,
        attacker=attacker,
        targets=[target],
        declaration={"weapon": weapon, **declaration},
        dice=dice if dice is not None else [],
        answers=answers,
    )


def run(table: dict[str, Token], **kw: Any) -> dict[str, Any]:
    """Resolve an attack with the rules' defaults for every decision; the record as a dict."""
    res = attack(table, **kw)
    res.run()
    return res.record


def steps(record: dict[str, Any]) -> list[str]:
    """The steps the card shows, ``name[item]`` inside the loops."""
    return [s["step"] + (f"[{s['item']}]" if s.get("item") else "") for s in record["steps"]]


def step(record: dict[str, Any], name: str, item: str | None = None, nth: int = 0) -> dict[str, Any]:
    found = [s for s in record["steps"] if s["step"] == name and (item is None or s.get("item") == item)]
    return found[nth]


def faces(roll: dict[str, Any]) -> list[int]:
    return [r["result"] for t in roll["terms"] if t["class"] == "Die" for r in t["results"]]


def active(roll: dict[str, Any]) -> list[int]:
    return [r["result"] for t in roll["terms"] if t["class"] == "Die" for r in t["results"] if r["active"]]


def after(record: dict[str, Any], token_id: str) -> dict[str, Any]:
    """The token's system after the attack (unchanged tokens: not in the record)."""
    return record["changes"][token_id]["after"]
