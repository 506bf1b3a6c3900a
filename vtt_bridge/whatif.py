"""What-if replay: a logged attack run again under its recorded dice, with something changed.

The attack's audit entry holds its record (ruleset, attacker, targets,
declaration, seed, every decision and its answer, the plugins it ran with) and
the request it came from (scripted dice, if any). The tokens as they were just
before it are the audit log folded up to it (:func:`~vtt_bridge.state.replay`).
So the same attack can run again, the same dice coming up in the same order,
with a pack enabled or disabled, a Charm added or removed, or a question
answered differently — and the two records compared step by step. Nothing here
writes anything: applying a what-if is the caller's business (a new attack).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .engine.resolution import parse_answer
from .engine.tokens import Token
from .errors import InvalidRequest, NotFound
from .state.records import AuditEntry, token_from_dict
from .state.replay import replay

__all__ = ["WhatIf", "find_attack", "pair_steps", "plan_what_if", "run_what_if", "tokens_before", "what_if"]

MAX_CHANGES = 50  # packs, Charms or answers one what-if may change


def find_attack(entries: Sequence[AuditEntry], attack: str) -> AuditEntry:
    """The ``attack`` entry of a table's audit log by its attack id (``atk-...``) or its audit
    number (``seq``); an attack that was undone can still be asked about."""
    for entry in entries:
        if entry.kind == "attack" and (entry.ref == attack or str(entry.seq) == attack):
            return entry
    raise NotFound(f"no attack {attack!r} in the table's log", details={"attack": attack})


def tokens_before(entries: Iterable[AuditEntry], seq: int) -> dict[str, Token]:
    """The table's tokens just before audit entry ``seq`` (the log folded up to it)."""
    return {tid: token_from_dict(data) for tid, data in replay(e for e in entries if e.seq < seq).items()}


class WhatIf:
    """The original record and the what-if one, their steps paired, and what differs.

    :ivar original: the logged attack's record.
    :ivar record: the what-if's record (nothing applied).
    :ivar packs: the packs the what-if ran with (installed packs, rulesets aside).
    :ivar request: what applying it sends as a new attack (ruleset, attacker, targets,
        declaration, seed or dice, answers).
    :ivar steps: ``[(original step or None, what-if step or None, same)]`` in order.
    :ivar outcome: ``{key: (original, what-if)}`` for every outcome value that differs.
    :ivar dropped: Charms left out of the declaration because their pack is disabled.
    """

    __slots__ = ("attack", "original", "record", "packs", "request", "steps", "outcome", "dropped", "changed")

    def __init__(self, **values: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, values[name])

    @property
    def same(self) -> bool:
        return not self.outcome and all(same for _, _, same in self.steps)

    def to_dict(self) -> dict[str, Any]:
        """The wire form (``attack.whatif``'s reply)."""
        return {
            "attack": self.attack,
            "changed": self.changed,
            "packs": list(self.packs),
            "dropped": list(self.dropped),
            "original": self.original,
            "whatif": self.record,
            "steps": [
                {"original": a is not None and i, "whatif": b is not None and j, "same": same}
                for (a, b, same), (i, j) in zip(self.steps, _indices(self.steps), strict=True)
            ],
            "outcome": {key: {"original": a, "whatif": b} for key, (a, b) in self.outcome.items()},
            "same": self.same,
            "request": self.request,
        }


def _indices(pairs: Sequence[tuple[Any, Any, bool]]) -> list[tuple[int, int]]:
    out, i, j = [], 0, 0
    for a, b, _ in pairs:
        out.append((i, j))
        i += a is not None
        j += b is not None
    return out


def _recorded_answers(record: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every recorded choice (a decision someone answered, or answered in advance), a list per
    key in the order they were asked. A question that took the rules' default (no answer,
    a timeout, a disconnect) takes the default again: it may differ in the what-if."""
    out: dict[str, list[Any]] = {}
    for decision in record.get("decisions") or ():
        answer = decision.get("answer")
        if decision.get("how") not in ("answered", "given"):
            continue
        if isinstance(answer, Mapping) and isinstance(decision.get("key"), str):
            out.setdefault(decision["key"], []).append(dict(answer))
    return out


def _faces(record: Mapping[str, Any]) -> list[int]:
    """Every face the record's rolls show, in the order they were rolled (nested attacks too)."""
    faces: list[int] = []

    def walk(steps: Iterable[Mapping[str, Any]]) -> None:
        for step in steps:
            for roll in step.get("rolls") or ():
                for term in roll.get("terms") or ():
                    for result in term.get("results") or ():
                        faces.append(int(result["result"]))
            for child in step.get("children") or ():
                walk(child.get("steps") or ())

    walk(record.get("steps") or ())
    return faces


def _step_key(step: Mapping[str, Any]) -> tuple[Any, Any]:
    return (step.get("step"), step.get("item"))


def _comparable(step: Mapping[str, Any], decisions: Mapping[str, Any]) -> Any:
    """What a step shows: its changes, notes, rolls' faces and totals, its answers."""
    return (
        [(c["number"], c["from"], c["to"], c.get("plugin")) for c in step.get("changes") or ()],
        [(n["text"], n.get("plugin")) for n in step.get("notes") or ()],
        [(r.get("formula"), r.get("total"), [[x["result"] for x in t.get("results", ())] for t in r.get("terms", ())]) for r in step.get("rolls") or ()],
        [decisions.get(k, {}).get("answer") for k in step.get("decisions") or ()],
        step.get("ended"),
        [c.get("outcome") for c in step.get("children") or ()],
    )


def pair_steps(original: Mapping[str, Any], other: Mapping[str, Any]) -> list[tuple[Any, Any, bool]]:
    """The two records' steps side by side: the same step (name and item) on one line, a step
    only one of them reached alone; ``same`` says whether the line shows no difference."""
    left, right = list(original.get("steps") or ()), list(other.get("steps") or ())
    ld = {d["key"]: d for d in original.get("decisions") or ()}
    rd = {d["key"]: d for d in other.get("decisions") or ()}
    matcher = difflib.SequenceMatcher(a=[_step_key(s) for s in left], b=[_step_key(s) for s in right], autojunk=False)
    out: list[tuple[Any, Any, bool]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for a, b in zip(left[i1:i2], right[j1:j2], strict=True):
                out.append((a, b, _comparable(a, ld) == _comparable(b, rd)))
        else:
            out.extend((a, None, False) for a in left[i1:i2])
            out.extend((None, b, False) for b in right[j1:j2])
    return out


def _outcome_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)}


def plan_what_if(
    host: Any,
    entry: AuditEntry,
    *,
    enable: Iterable[str] = (),
    disable: Iterable[str] = (),
    answers: Mapping[str, Any] | None = None,
    add_charms: Iterable[Mapping[str, Any]] = (),
    remove_charms: Iterable[str] = (),
    table_packs: Sequence[str] | None = None,
) -> dict[str, Any]:
    """What re-running attack ``entry`` with the changes takes: a plain dict (it travels to the
    process that runs the hooks, :func:`run_what_if`) holding the packs, the attack request
    (declaration, answers, seed or dice) and what changed. No hook runs here.

    :param host: the host of every installed plugin (``make_host()``).
    :param enable: packs to enable on top of those it ran with (``--with``).
    :param disable: packs to disable (``--without``); their Charms leave the declaration.
    :param answers: decision key → answer, replacing what was answered there.
    :param add_charms: Charm uses to add to the declaration (``{"id": ..., params}``).
    :param remove_charms: Charm ids to take out of the declaration.
    :param table_packs: the packs of a record older than pack sets (it names none).
    """
    enable, disable = list(enable), list(disable)
    add_charms, remove_charms = [dict(c) for c in add_charms], list(remove_charms)
    if len(enable) + len(disable) + len(add_charms) + len(remove_charms) + len(answers or {}) > MAX_CHANGES:
        raise InvalidRequest(f"a what-if changes at most {MAX_CHANGES} things", details={})
    base = host.installed
    for field, names in (("with", enable), ("without", disable)):
        base.check_packs(names, field=field)
    both = sorted(set(enable) & set(disable))
    if both:
        raise InvalidRequest(f"{both[0]!r} is both enabled and disabled", details={"with": both, "without": both})
    record = entry.data.get("attack")
    if not isinstance(record, Mapping) or not isinstance(record.get("steps"), list):
        raise NotFound(f"attack {entry.ref!r} has no record to replay", details={"attack": entry.ref})
    request = entry.data.get("request") if isinstance(entry.data.get("request"), Mapping) else {}
    installed = base.packs()
    ran = record.get("packs")
    packs = [p for p in installed if p in ran] if isinstance(ran, Mapping) else list(table_packs or installed)
    packs = [p for p in installed if (p in packs or p in enable) and p not in disable]

    declaration = dict(record.get("declaration") or {})
    # Declarables as the host loaded them (no hook runs): those of the rulesets and of the packs.
    on = set(packs) | set(base.ruleset_plugins())
    known = {d.id for d in base.declarables(record["ruleset"]) if d.plugin in on}
    charms = list(declaration.get("charms") or ())
    dropped = [c.get("id") for c in charms if c.get("id") not in known and c.get("id") not in remove_charms]
    charms = [c for c in charms if c.get("id") in known and c.get("id") not in remove_charms] + add_charms
    if charms:
        declaration["charms"] = charms
    else:
        declaration.pop("charms", None)

    given = _recorded_answers(record)
    for key, value in (answers or {}).items():
        parse_answer(value)  # a malformed answer is refused here
        given[key] = [value] if not isinstance(value, list) else list(value)
    if record.get("dice") == "seeded":
        dice: dict[str, Any] = {"seed": record.get("seed")}
    elif isinstance(request.get("dice"), list):
        dice = {"dice": list(request["dice"])}
    else:  # rolled for real (physical dice): the faces as the record shows them
        dice = {"dice": _faces(record)}
    return {
        "attack": entry.ref,
        "packs": packs,
        "dropped": dropped,
        "changed": {
            "with": enable,
            "without": disable,
            "answers": dict(answers or {}),
            "add_charms": add_charms,
            "remove_charms": remove_charms,
        },
        "request": {
            "ruleset": record["ruleset"],
            "attacker": record["attacker"],
            "targets": list(record["targets"]),
            "declaration": declaration,
            "answers": given,
            **dice,
        },
    }


def run_what_if(host: Any, plan: Mapping[str, Any], record: Mapping[str, Any], tokens: Mapping[str, Token]) -> WhatIf:
    """Run a planned what-if (:func:`plan_what_if`) of ``record`` on ``tokens`` (the table's just
    before it): every hook runs here, every question not answered takes the rules' default."""
    request = plan["request"]
    res = host.installed.for_packs(plan["packs"]).start(
        request["ruleset"],
        tokens,
        attacker=request["attacker"],
        targets=list(request["targets"]),
        declaration=request["declaration"],
        seed=request.get("seed"),
        dice=request.get("dice"),
        answers=request["answers"],
    )
    new = res.run().to_dict()
    return WhatIf(
        attack=plan["attack"],
        original=dict(record),
        record=new,
        packs=tuple(plan["packs"]),
        request=dict(request),
        steps=pair_steps(record, new),
        outcome=_outcome_diff(record.get("outcome") or {}, new.get("outcome") or {}),
        dropped=tuple(plan["dropped"]),
        changed=plan["changed"],
    )


def what_if(host: Any, entries: Sequence[AuditEntry], attack: str, **changes: Any) -> WhatIf:
    """Run logged ``attack`` (its id or audit number) of a table's audit log ``entries``
    (oldest first) again with ``changes`` (see :func:`plan_what_if`); nothing is applied."""
    entry = find_attack(entries, attack)
    plan = plan_what_if(host, entry, **changes)
    return run_what_if(host, plan, entry.data["attack"], tokens_before(entries, entry.seq))
