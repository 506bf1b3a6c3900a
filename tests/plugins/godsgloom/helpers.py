"""Building GODSGLOOM attacks for the tests: two units, scripted dice, answers."""

from __future__ import annotations

from functools import cache
from typing import Any

from vtt_bridge import Host, Resolution, Token, make_host


@cache
def host(*packs: str) -> Host:
    """The ruleset alone (no entry points), plus the named pack modules."""
    return make_host(plugins=["vtt_godsgloom", *packs], entry_points=False, environ={})


def unit(**fields: Any) -> dict[str, Any]:
    """A unit: statline 3🟥 2🟦, Guard 2🟥 2🟦, 5 health, unless told otherwise."""
    system: dict[str, Any] = {
        "statline": {"attack": 3, "defence": 2},
        "guard": {"attack": 2, "defence": 2},
        "health": {"current": 5, "max": 5},
    }
    system.update(fields)
    return system


def start(
    attacker: dict[str, Any] | None = None,
    defender: dict[str, Any] | None = None,
    *,
    declaration: dict[str, Any] | None = None,
    dice: list[int] | None = None,
    seed: int | None = None,
    answers: dict[str, Any] | None = None,
    packs: tuple[str, ...] = (),
) -> Resolution:
    h = host(*packs)
    tokens = {
        "a": Token("a", "Attacker", "godsgloom", h.load_system("godsgloom", attacker or unit()), ownership={"alice": 3}),
        "d": Token("d", "Defender", "godsgloom", h.load_system("godsgloom", defender or unit()), ownership={"bob": 3}),
    }
    return h.start(
        "godsgloom", tokens, attacker="a", targets=["d"], declaration=declaration or {},
        dice=dice, seed=seed, answers=answers,
    )


def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Resolve with the rules' default for every decision not given; the record."""
    res = start(*args, **kwargs)
    res.run()
    return res.record


def rolls(record: dict[str, Any]) -> dict[str, list[tuple[int, bool]]]:
    """Every roll on the card by its label: (face, counts) for each die, rerolled ones included."""
    out = {}
    for step in record["steps"]:
        for roll in step["rolls"]:
            results = [r for term in roll["terms"] if term["class"] == "Die" for r in term["results"]]
            out[roll["options"]["flavor"]] = [(r["result"], r["active"]) for r in results]
    return out


def active(record: dict[str, Any], label: str) -> list[int]:
    """The dice of one colour as they stand at the end, read from the card.

    ATC.10's roll (``label``) as judged there, then each later roll of that colour
    under the step that made it: a Pool Reroll replaces every die, ``die N reroll``
    the die at position N, a critical extra die is added.
    """
    standing: list[int] = []
    for step in record["steps"]:
        for roll in step["rolls"]:
            flavor = roll["options"]["flavor"]
            if flavor != label and not flavor.startswith(label + " "):
                continue
            new = [r["result"] for t in roll["terms"] if t["class"] == "Die" for r in t["results"] if r["active"]]
            rest = flavor[len(label) :].strip()
            if not rest:
                standing = new
            elif rest == "Pool Reroll":
                assert len(new) == len(standing)
                standing = new
            elif rest.startswith("die ") and rest.endswith(" reroll"):
                (face,) = new
                standing[int(rest.split()[1]) - 1] = face
            else:
                assert rest == "critical extra die", flavor
                standing = standing + new
    return standing


def steps(record: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [s for s in record["steps"] if s["step"] == name]


def changes(record: dict[str, Any], name: str) -> dict[str, tuple[Any, Any]]:
    """Working numbers changed at a step: name -> (first value, last value)."""
    out: dict[str, tuple[Any, Any]] = {}
    for step in steps(record, name):
        for change in step["changes"]:
            first = out.get(change["number"], (change["from"], None))[0]
            out[change["number"]] = (first, change["to"])
    return out


def after(record: dict[str, Any], token_id: str) -> dict[str, Any]:
    """A token's system after the attack (unchanged tokens are absent from the changes)."""
    return record["changes"][token_id]["after"]
