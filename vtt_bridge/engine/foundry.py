"""Foundry VTT roll JSON for recorded rolls, meaning to Foundry what the rules did.

Built only when a resolution is serialized. The shape follows Foundry's
``Roll#toJSON``: ``class``, ``formula``, ``terms`` (``Die`` and ``PoolTerm``
terms with ``results``, ``OperatorTerm``/``NumericTerm`` between them),
``total``, ``evaluated`` (on the roll; a term without it is read as evaluated, as
Foundry's ``RollTerm.fromData`` does). ``Roll.fromData`` rebuilds it, and Foundry's own
reading of the terms (each term's total from its active results, ``count``
where set) gives the same ``total`` the engine recorded.

How a recorded :class:`~vtt_bridge.engine.dice.Roll` reads in Foundry:

- **Success pools** (``target`` set): ``Nd10cs>=7``, one term per die size. Each
  result carries ``success`` and ``count``; a face counting twice (Exalted's
  non-damage 10, ``double``) has ``count: 2`` and the term the ``dbl10``
  modifier, which the vtt-bridge Foundry module registers so that Foundry's own
  evaluation of the formula counts as the rules do.
- **Highest-die pools** (``Dice.pool`` without a target: the highest die is what
  counts): ``3d6kh`` for one die size, ``{1d10,1d8}kh`` (a ``PoolTerm``) for a
  mixed pool; the total is the highest die, not the sum.
- **Sums** (no target): ``2d6 + 7``; dice set aside are ``discarded`` and, when
  they are the lowest, the term says ``dlN``.
- **A die the player chose to reroll** is a result with ``rerolled: true,
  active: false``, followed later in the same term by its replacement; the term
  gets no ``r`` modifier (in Foundry ``r`` means "reroll on a face", which the
  rules never did), and ``number`` is the dice first thrown.
- **Extra dice** added after the throw (GODSGLOOM's critical die) are a term of
  their own: ``4d6cs>=3 + 1d6cs>=3``.
- **A superseded roll** (every die rerolled as a new roll, or the whole roll set
  aside for a better one) keeps its dice count (``2d6 + 7``, never ``0d6``), its
  results all inactive, and ``options.superseded: true``.
"""

from __future__ import annotations

from typing import Any

from .dice import Roll

__all__ = ["roll_to_foundry"]

_PLUS = {"class": "OperatorTerm", "options": {}, "operator": "+"}


def _operator(op: str) -> dict[str, Any]:
    return {"class": "OperatorTerm", "options": {}, "operator": op}


def _origins(roll: Roll) -> tuple[int, list[int]]:
    """How many dice were first thrown, and for each face the die it stands for.

    A first-thrown die stands for itself; a replacement for the die it replaced
    (followed back to the first throw); an extra die (``Dice.add``) for itself.
    """
    appended = roll.appended or ()
    first = len(roll.faces) - len(appended)
    root = list(range(len(roll.faces)))
    for k, source in enumerate(appended):
        if source >= 0:
            root[first + k] = root[source]
    return first, root


def _result(roll: Roll, index: int, kept: bool) -> dict[str, Any]:
    face = roll.faces[index]
    out: dict[str, Any] = {"result": face, "active": True}
    how = roll.inactive.get(index) if roll.inactive else None
    if how is not None:
        out["active"] = False
        out[how] = True
    elif not kept:
        out["active"] = False
        out["discarded"] = True
    if roll.target is not None:
        if face >= roll.target:
            out["success"] = True
            out["count"] = 2 if face == roll.double else 1
        else:
            out["success"] = False
            out["count"] = 0
    return out


def _highest_index(roll: Roll, picks: list[int]) -> int | None:
    best = None
    for i in picks:
        if roll.is_active(i) and (best is None or roll.faces[i] > roll.faces[best]):
            best = i
    return best


def _modifiers(roll: Roll, picks: list[int], *, keep_highest: bool) -> list[str]:
    if keep_highest:
        return ["kh"]
    mods: list[str] = []
    if roll.target is not None:
        mods.append(f"cs>={roll.target}")
        if roll.double is not None and roll.double >= roll.target:
            mods.append(f"dbl{roll.double}")
        return mods
    # A sum: dice set aside that are exactly the lowest of the dice standing read as Foundry's dl.
    inactive = roll.inactive or {}
    discarded = sorted(roll.faces[i] for i in picks if inactive.get(i) == "discarded")
    standing = sorted(roll.faces[i] for i in picks if inactive.get(i) != "rerolled")
    if discarded and len(discarded) < len(standing) and standing[: len(discarded)] == discarded:
        mods.append(f"dl{len(discarded)}")
    return mods


def _die_term(roll: Roll, sides: int, picks: list[int], number: int, *, keep_highest: bool) -> dict[str, Any]:
    modifiers = _modifiers(roll, picks, keep_highest=keep_highest)
    kept = _highest_index(roll, picks) if keep_highest else None
    results = [_result(roll, i, not keep_highest or i == kept) for i in picks]
    return {
        "class": "Die",
        "options": {},
        "number": number,
        "faces": sides,
        "modifiers": modifiers,
        "results": results,
    }


def _pool_term(roll: Roll, picks: list[int]) -> dict[str, Any]:
    """A mixed highest-die pool: ``{1d10,1d8}kh``, one inner roll per die."""
    kept = _highest_index(roll, picks)
    inner, results, exprs = [], [], []
    for i in picks:
        sides = roll.die_sides(i)
        die = _die_term(roll, sides, [i], 1, keep_highest=False)
        face = roll.faces[i]
        expr = _term_formula(die)
        inner.append({
            "class": "Roll", "options": {}, "formula": expr,
            "terms": [die], "total": face if roll.is_active(i) else 0, "evaluated": True,
        })
        exprs.append(expr)
        result: dict[str, Any] = {"result": face, "active": i == kept}
        if i != kept:
            result["discarded"] = True
        results.append(result)
    return {
        "class": "PoolTerm",
        "options": {},
        "terms": exprs,
        "modifiers": ["kh"],
        "rolls": inner,
        "results": results,
        "isDeterministic": False,
    }


def _term_formula(t: dict[str, Any]) -> str:
    """A term as Foundry writes it (terms carry no formula of their own in Foundry's JSON)."""
    cls = t["class"]
    if cls == "OperatorTerm":
        return f" {t['operator']} "
    if cls == "NumericTerm":
        return str(t["number"])
    if cls == "PoolTerm":
        return "{" + ",".join(t["terms"]) + "}" + "".join(t["modifiers"])
    return f"{t['number']}d{t['faces']}" + "".join(t["modifiers"])


def _formula(terms: list[dict[str, Any]]) -> str:
    return "".join(_term_formula(t) for t in terms)


# Per (sides, target, double): each face's result dict and the successes it
# counts (both keyed by face), the term's modifiers, and per label and number of
# dice the roll's shape (see ``_shape``). Records share the result dicts, the
# modifiers and the options read-only, as they share every other part (see
# ``_success_pool``).
_FACES: dict[tuple[int, int, int | None], tuple[dict[int, Any], dict[int, int], list[str], dict[tuple[str, int], Any]]] = {}
# Per label: a roll's ``options`` (``{"flavor": label}``), shared the same way.
_FLAVORS: dict[str, dict[str, str]] = {}
_NO_OPTIONS: dict[str, Any] = {}
_TABLES = 256


def _faces(sides: int, target: int, double: int | None) -> tuple[dict[int, Any], dict[int, int], list[str], dict[tuple[str, int], Any]]:
    results: dict[int, Any] = {}
    counts: dict[int, int] = {}
    for face in range(1, sides + 1):
        if face >= target:
            count = 2 if face == double else 1
            results[face] = {"result": face, "active": True, "success": True, "count": count}
        else:
            count = 0
            results[face] = {"result": face, "active": True, "success": False, "count": 0}
        counts[face] = count
    modifiers = [f"cs>={target}", f"dbl{double}"] if double is not None and double >= target else [f"cs>={target}"]
    if len(_FACES) >= _TABLES:
        _FACES.clear()
    table = _FACES[(sides, target, double)] = (results, counts, modifiers, {})
    return table


def _flavor(label: str) -> dict[str, str]:
    if len(_FLAVORS) >= _TABLES:
        _FLAVORS.clear()
    options = _FLAVORS[label] = {"flavor": label}
    return options


def _success_pool(roll: Roll, target: int) -> dict[str, Any]:
    """The common roll, written out directly: one die size, every die thrown once and still counting.

    The same JSON the general path below builds for it (``Nd10cs>=7dbl10``, one
    ``Die`` term), without grouping the dice or looking up how each one ended:
    each face's result dict, the modifiers list, the formula and the
    ``options`` are made once per die size, target, double (number of dice,
    label) and shared, read-only, by every roll that shows them.
    """
    sides, faces = roll.sides, roll.faces
    if sides > 100:  # a face table per size is for dice, not for d1000s
        return _success_results(roll, target)
    table = _FACES.get((sides, target, roll.double)) or _faces(sides, target, roll.double)
    results, counts, modifiers, shapes = table
    number = len(faces)
    label = roll.label
    shape = shapes.get((label, number)) or _shape(shapes, label, number, sides, modifiers)
    # Copies of the shape's two dicts (their keys in place), with this roll's results and total.
    die = shape[1].copy()
    die["results"] = list(map(results.__getitem__, faces))
    out = shape[0].copy()
    out["terms"] = [die]
    out["total"] = sum(map(counts.__getitem__, faces))
    return out


def _shape(
    shapes: dict[tuple[str, int], Any], label: str, number: int, sides: int, modifiers: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The roll dict and the ``Die`` term of a success pool of ``number`` dice labelled ``label``,
    everything but the results and the total filled in (those two are placeholders)."""
    if len(shapes) >= _TABLES:
        shapes.clear()
    roll = {
        "class": "Roll",
        "options": _FLAVORS.get(label) or _flavor(label),
        "formula": f"{number}d{sides}{''.join(modifiers)}",
        "terms": None,
        "total": 0,
        "evaluated": True,
    }
    die = {"class": "Die", "options": _NO_OPTIONS, "number": number, "faces": sides, "modifiers": modifiers, "results": None}
    shape = shapes[(label, number)] = (roll, die)
    return shape


def _success_results(roll: Roll, target: int) -> dict[str, Any]:
    """:func:`_success_pool` for a big die: each result made here."""
    double = roll.double
    results = []
    total = 0
    for face in roll.faces:
        if face >= target:
            count = 2 if face == double else 1
            total += count
            results.append({"result": face, "active": True, "success": True, "count": count})
        else:
            results.append({"result": face, "active": True, "success": False, "count": 0})
    modifiers = [f"cs>={target}", f"dbl{double}"] if double is not None and double >= target else [f"cs>={target}"]
    number, sides = len(results), roll.sides
    return {
        "class": "Roll",
        "options": {"flavor": roll.label},
        "formula": f"{number}d{sides}{''.join(modifiers)}",
        "terms": [
            {"class": "Die", "options": {}, "number": number, "faces": sides, "modifiers": modifiers, "results": results}
        ],
        "total": total,
        "evaluated": True,
    }


def roll_to_foundry(roll: Roll) -> dict[str, Any]:
    """Return the Foundry roll JSON of one recorded roll (see the module docstring).

    A roll asked for from real dice says so as Foundry's dice fulfilment does:
    each die term of faces entered by hand has ``method: "manual"``, and the
    roll's ``options.physical`` says how it was fulfilled (``"entered"``, or
    ``"rolled"`` when the bridge rolled because no faces came).
    """
    out = _plain_roll(roll)
    if roll.physical is None:
        return out
    out = {**out, "options": {**out["options"], "physical": roll.physical}}
    if roll.physical == "entered":
        out["terms"] = [
            {**term, "method": "manual"} if term["class"] in ("Die", "PoolTerm") else term for term in out["terms"]
        ]
    return out


def _plain_roll(roll: Roll) -> dict[str, Any]:
    target = roll.target
    if target is not None and roll.faces and roll.appended is None and not roll.inactive and type(roll.sides) is int:
        return _success_pool(roll, target)
    first, root = _origins(roll)
    keep_highest = roll.target is None and not isinstance(roll.sides, int)
    terms: list[dict[str, Any]] = []
    if keep_highest and len(set(roll.sides)) > 1:
        terms.append(_pool_term(roll, list(range(len(roll.faces)))))
        total = roll.highest
    else:
        # Group the faces into terms: dice first thrown by size, then extra dice by size.
        groups: dict[tuple[bool, int], list[int]] = {}
        for i in range(len(roll.faces)):
            groups.setdefault((root[i] >= first, roll.die_sides(i)), []).append(i)
        for (_, sides), picks in sorted(groups.items(), key=lambda kv: kv[0][0]):
            number = sum(1 for i in picks if root[i] == i)
            if terms:
                terms.append(dict(_PLUS))
            terms.append(_die_term(roll, sides, picks, number, keep_highest=keep_highest))
        total = roll.highest if keep_highest else roll.total
        if roll.modifier and roll.target is None and not keep_highest:
            terms.append(_operator("+" if roll.modifier > 0 else "-"))
            terms.append({"class": "NumericTerm", "options": {}, "number": abs(roll.modifier)})
    if not terms:
        terms.append({"class": "NumericTerm", "options": {}, "number": 0})
    options: dict[str, Any] = {"flavor": roll.label}
    if roll.faces and not roll.active:
        options["superseded"] = True
    return {
        "class": "Roll",
        "options": options,
        "formula": _formula(terms),
        "terms": terms,
        "total": total,
        "evaluated": True,
    }
