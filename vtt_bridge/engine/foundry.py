"""Foundry VTT roll JSON for recorded rolls.

Built only when a resolution is serialized. The shape follows Foundry's
``Roll#toJSON``: ``class``, ``formula``, ``terms`` (``Die`` terms with
``results`` and ``OperatorTerm``/``NumericTerm`` between them), ``total``,
``evaluated``.
"""

from __future__ import annotations

from typing import Any

from .dice import Roll

__all__ = ["roll_to_foundry"]


def _result(roll: Roll, index: int, face: int) -> dict[str, Any]:
    out: dict[str, Any] = {"result": face, "active": True}
    how = roll.inactive.get(index) if roll.inactive else None
    if how is not None:
        out["active"] = False
        out[how] = True
    if roll.target is not None:
        if face >= roll.target:
            out["success"] = True
            out["count"] = 2 if face == roll.double else 1
        else:
            out["success"] = False
            out["count"] = 0
    return out


def _modifiers(roll: Roll) -> list[str]:
    mods: list[str] = []
    if roll.inactive and "rerolled" in roll.inactive.values():
        mods.append("r")
    if roll.target is not None:
        # A doubled face (Exalted's 10) has no Foundry modifier; its result carries count 2.
        mods.append(f"cs>={roll.target}")
    return mods


def _die_term(roll: Roll, faces: int, picks: list[int]) -> dict[str, Any]:
    modifiers = _modifiers(roll)
    results = [_result(roll, i, roll.faces[i]) for i in picks]
    number = sum(1 for i in picks if not (roll.inactive and roll.inactive.get(i) == "rerolled"))
    return {
        "class": "Die",
        "options": {},
        "evaluated": True,
        "number": number,
        "faces": faces,
        "modifiers": modifiers,
        "results": results,
        "formula": f"{number}d{faces}" + "".join(modifiers),
    }


def roll_to_foundry(roll: Roll) -> dict[str, Any]:
    """Return the Foundry roll JSON of one recorded roll."""
    if isinstance(roll.sides, int):
        groups = {roll.sides: list(range(len(roll.faces)))}
    else:
        groups = {}
        for i, s in enumerate(roll.sides):
            groups.setdefault(s, []).append(i)
    terms: list[dict[str, Any]] = []
    for faces, picks in groups.items():
        if terms:
            terms.append({"class": "OperatorTerm", "options": {}, "evaluated": True, "operator": "+"})
        terms.append(_die_term(roll, faces, picks))
    if roll.modifier:
        op = "+" if roll.modifier > 0 else "-"
        terms.append({"class": "OperatorTerm", "options": {}, "evaluated": True, "operator": op})
        terms.append({"class": "NumericTerm", "options": {}, "evaluated": True, "number": abs(roll.modifier)})
    if not terms:
        terms.append({"class": "NumericTerm", "options": {}, "evaluated": True, "number": 0})
    formula = " ".join(
        t["formula"] if t["class"] == "Die" else t["operator"] if t["class"] == "OperatorTerm" else str(t["number"])
        for t in terms
    )
    return {
        "class": "Roll",
        "options": {"flavor": roll.label},
        "dice": [],
        "formula": formula,
        "terms": terms,
        "total": roll.total,
        "evaluated": True,
    }
