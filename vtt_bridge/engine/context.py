"""The attack context: what every step hook reads and changes.

A context holds read-only token snapshots, the validated declaration, the
answers given so far, the ruleset's working numbers, the trace, and the
pending token changes. Each ruleset gets its own slotted subclass whose
working numbers are traced properties, so ``ctx.attack_pool += 2`` is recorded
with the plugin that did it and a stray attribute fails loudly.
"""

from __future__ import annotations

import keyword
import sys
from collections.abc import Callable, Mapping
from operator import attrgetter
from types import FunctionType
from typing import Any, Generic, TypeVar

from ..errors import IllegalTransition, InvalidRequest, NotFound
from .dice import Dice, Roll
from .foundry import roll_to_foundry
from .steps import Answer, Ruleset
from .tokens import _ATOMS, FrozenDict, Token, freeze, thaw

__all__ = ["AttackContext", "Changes", "EndCycle", "SkipItem", "StashKey", "TraceEntry"]

T = TypeVar("T")


class EndCycle(BaseException):
    """Raised by ``ctx.end``: the attack cycle is over (a miss, Hardness...).

    A ``BaseException`` on purpose: ``except Exception`` in a plugin cannot swallow it.
    """


class SkipItem(BaseException):
    """Raised by ``ctx.skip``: the sub-sequence for the current item is over."""


class StashKey(Generic[T]):
    """A typed key for a plugin's per-attack state in ``ctx.stash``."""

    __slots__ = ("name",)

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StashKey({self.name!r})"


class TraceEntry:
    """One executed step: its rolls, the numbers that changed and why, notes, nested attacks.

    Most steps change little: each list is the class's shared empty tuple until
    its first entry (see ``add``), and ``ended`` is ``None`` until the step ends
    the cycle. An entry stores only what it sets (no ``__slots__``: an unset field
    reads the class's default).
    """

    rolls: list[Roll] | tuple[()] = ()
    changes: list[tuple[str, Any, Any, str | None]] | tuple[()] = ()
    notes: list[tuple[str, str | None]] | tuple[()] = ()
    children: list[Any] | tuple[()] = ()
    ended: str | None = None
    decisions: list[str] | tuple[()] = ()

    def __init__(self, step: str, title: str, item: str | None = None) -> None:
        self.step = step
        self.title = title
        self.item = item

    def add(self, field: str, value: Any) -> None:
        """Append to one of the entry's lists (``changes``, ``notes``, ``children``, ``decisions``)."""
        items = getattr(self, field)
        if items:
            items.append(value)
        else:
            setattr(self, field, [value])

    def to_dict(self) -> dict[str, Any]:
        """The step's wire form (read-only: it may be shared, see below)."""
        changes, notes, item = self.changes, self.notes, self.item
        if self.rolls or self.children:
            return self._to_dict()
        # A step that rolled and nested nothing reads the same on every attack that went the
        # same way there: its wire form is made once and shared, read-only like every part of a
        # record. It is looked up by what the step holds when every value in it is a string, an
        # int or None, which compare equal only when they are written alike (1 == True == 1.0
        # are not); else it is made here.
        for _, old, new, _ in changes:
            if type(old) not in _EXACT or type(new) not in _EXACT:
                return self._to_dict()
        for text, _ in notes:
            if type(text) is not str:
                return self._to_dict()
        if type(item) not in _EXACT:
            return self._to_dict()
        # One flat tuple: changes are 4-tuples, notes 2-tuples, decisions strings, so it reads one way only.
        key = (self.step, self.title, item, self.ended, *changes, *notes, *self.decisions)
        out = _STEPS.get(key)
        if out is None:
            if len(_STEPS) >= _STEP_CACHE:
                _STEPS.clear()
            out = _STEPS[key] = self._to_dict()
        return out

    def _to_dict(self) -> dict[str, Any]:
        rolls, changes, notes = self.rolls, self.changes, self.notes
        out: dict[str, Any] = {
            "step": self.step,
            "title": self.title,
            "rolls": [_roll_json(roll) for roll in rolls] if rolls else _EMPTY,
            "changes": [
                {"number": n, "from": a if type(a) in _ATOMS else thaw(a), "to": b if type(b) in _ATOMS else thaw(b), "plugin": p}
                for n, a, b, p in changes
            ]
            if changes
            else _EMPTY,
            "notes": [{"text": t, "plugin": p} for t, p in notes] if notes else _EMPTY,
        }
        if self.item is not None:
            out["item"] = self.item
        if self.decisions:
            out["decisions"] = list(self.decisions)
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        if self.ended is not None:
            out["ended"] = self.ended
        return out


def _calling_module() -> str:
    """The module of the innermost frame outside the engine: the code that called the context API."""
    frame = sys._getframe(0)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not name.startswith("vtt_bridge.engine."):
            return name
        frame = frame.f_back
    return ""


#: A step's empty ``rolls``, ``changes`` or ``notes`` in its wire form: one list shared by
#: every record, read-only like every part of a record (see ``Record``).
_EMPTY: list[Any] = []
#: Steps' wire forms by what they hold (see ``TraceEntry.to_dict``), bounded.
_STEPS: dict[tuple[Any, ...], dict[str, Any]] = {}
_STEP_CACHE = 1024
#: The types whose values are equal only when they are the same JSON.
_EXACT = frozenset({str, int, type(None)})


def _roll_json(roll: Roll) -> dict[str, Any]:
    """A roll's Foundry roll JSON, built once per state of the roll.

    A step's entry may be serialized more than once (its step is broadcast as
    it finishes, then the whole record): the roll's JSON is kept on the roll
    with what it was built from, and built again only if the roll changed
    since (a die rerolled, added or discarded). Read-only, like the record.
    """
    inactive = roll.inactive
    state = (
        roll.label,
        roll.sides,
        len(roll.faces),
        roll.target,
        roll.double,
        roll.modifier,
        tuple(inactive.items()) if inactive else None,
    )
    cached = roll._wire
    if cached is not None and cached[0] == state:
        return cached[1]
    wire = roll_to_foundry(roll)
    roll._wire = (state, wire)
    return wire


class Changes:
    """Pending token changes of a whole resolution tree (nested attacks share it)."""

    __slots__ = ("tokens", "patches", "writers", "_frozen", "_merged")

    def __init__(self, tokens: Mapping[str, Token]) -> None:
        self.tokens = tokens
        self.patches: dict[str, dict[str, Any]] = {}
        #: token id → ``{field: (plugin, step)}`` of each field's last write, the last written last:
        #: to name the plugin that left a token invalid (``Host.changed_token``).
        self.writers: dict[str, dict[str, tuple[str | None, str | None]]] = {}
        #: The patches' read-only form, in the patches' order; a value written since the
        #: last read is ``_STALE`` and frozen on the next read (never, if none follows).
        self._frozen: dict[str, dict[str, Any]] = {}
        #: token id → what ``current`` returned for it (the snapshot's own ``system`` while the
        #: token has no pending change), until the next write to that token.
        self._merged: dict[str, Mapping[str, Any]] = {}

    def current(self, token_id: str) -> Mapping[str, Any]:
        """The token's system data with every pending change applied (merged once per change)."""
        merged = self._merged.get(token_id)
        if merged is not None:
            return merged
        try:
            base = self.tokens[token_id].system
        except KeyError:
            raise NotFound(f"no token {token_id!r} in this attack", details={"token": token_id}) from None
        frozen = self._frozen.get(token_id)
        if not frozen:
            self._merged[token_id] = base
            return base
        if _STALE in frozen.values():
            patch = self.patches[token_id]
            for key, value in frozen.items():
                if value is _STALE:
                    frozen[key] = freeze(patch[key])
        merged = self._merged[token_id] = FrozenDict({**base, **frozen})
        return merged

    def set(
        self, token_id: str, fields: Mapping[str, Any], writer: tuple[str | None, str | None] = (None, None)
    ) -> None:
        """Write ``fields`` of a token's pending change; ``writer`` is ``(plugin, step)`` (see :attr:`writers`)."""
        patch = self.patches.get(token_id)
        if patch is None:
            if token_id not in self.tokens:
                raise NotFound(f"no token {token_id!r} in this attack", details={"token": token_id})
            patch = self.patches[token_id] = {}
            frozen = self._frozen[token_id] = {}
            wrote = self.writers[token_id] = {}
        else:
            frozen = self._frozen[token_id]
            wrote = self.writers[token_id]
        self._merged.pop(token_id, None)
        for key, value in fields.items():
            wrote.pop(key, None)  # re-inserted: the last written comes last
            wrote[key] = writer
            if type(value) in _ATOMS:
                patch[key] = frozen[key] = value
            else:
                patch[key] = thaw(value)
                frozen[key] = _STALE

    def diff(self) -> dict[str, dict[str, Any]]:
        """``{token_id: {"before": system, "after": system}}`` for every changed token.

        ``before`` is the snapshot's shared plain form (see :meth:`Token.plain`);
        ``after`` shares its unchanged parts. Both are read-only by convention.
        """
        out = {}
        for token_id, patch in self.patches.items():
            before = self.tokens[token_id].plain()
            if not patch.items() <= before.items():  # some field written differs from before
                out[token_id] = {"before": before, "after": {**before, **patch}}
        return out


#: A pending value not yet frozen for reading (see :class:`Changes`).
_STALE = object()

# Which plugin a module belongs to: filled in by the host, read by the context.
PluginOf = Callable[[str], "str | None"]


def _no_plugin(module: str) -> str | None:
    return None


class AttackContext:
    """State of one attack being resolved. Hooks receive it as ``ctx``.

    Read: ``ruleset``, ``attacker``, ``defender``, ``targets``, ``declaration``,
    ``item``, ``kind``, ``outcome``, ``stash``, ``dice``; ``ctx.answer(name)``,
    ``ctx.declared(charm)``, ``ctx.token(id)``, ``ctx.current(id)``.
    Change: the ruleset's working numbers, ``ctx.outcome``, ``ctx.stash``, and
    tokens only through ``ctx.update``. Control: ``ctx.end``, ``ctx.skip``,
    ``ctx.goto``, ``ctx.nest``, ``ctx.note`` (``ctx.tracing`` says whether notes are kept).
    """

    __slots__ = (
        "ruleset",
        "tokens",
        "attacker",
        "defender",
        "targets",
        "declaration",
        "dice",
        "answers",
        "outcome",
        "stash",
        "kind",
        "parent",
        "path",
        "item",
        "trace",
        "changes",
        "ended",
        "end_reason",
        "_entry",
        "_control",
        "_goto",
        "_step",
        "_nested",
        "_plugin_of",
        "_hooks",
        "_plugin",
        "_current",
    )

    _NUMBERS: tuple[str, ...] = ()

    def __init__(
        self,
        ruleset: Ruleset,
        tokens: Mapping[str, Token],
        attacker: str,
        targets: list[str],
        declaration: Mapping[str, Any],
        dice: Dice,
        answers: Mapping[str, Answer] | None = None,
        changes: Changes | None = None,
        kind: str = "attack",
        parent: AttackContext | None = None,
        plugin_of: PluginOf = _no_plugin,
        hook_plugins: Mapping[Any, str] | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.tokens = tokens
        try:
            self.attacker = tokens[attacker]
            self.targets = tuple(map(tokens.__getitem__, targets))
        except KeyError:
            missing = next(t for t in (attacker, *targets) if t not in tokens)
            raise NotFound(f"no token {missing!r}", details={"token": missing}) from None
        #: The first (usually only) target.
        self.defender = self.targets[0] if self.targets else None
        self.declaration = declaration if type(declaration) is FrozenDict else freeze(declaration)
        self.dice = dice
        self.answers: dict[str, Answer] = dict(answers) if answers else {}
        self.outcome: dict[str, Any] = {}
        self.stash: dict[StashKey[Any], Any] = {}
        self.kind = kind
        self.parent = parent
        self.path = (parent.path + (kind,)) if parent is not None else ()
        self.item: str | None = None
        self.trace: list[TraceEntry] = []
        self.changes = changes = changes if changes is not None else Changes(tokens)
        self._current = changes._merged
        self.ended = False
        self.end_reason: str | None = None
        self._entry: TraceEntry | None = None
        #: A jump or a nested attack was asked for in this step (``_goto``, ``_nested``).
        self._control = False
        self._goto: str | None = None
        self._step: Any = None
        self._nested: list[dict[str, Any]] | tuple[()] = ()
        if parent is not None:  # a nested attack blames plugins as its parent does
            plugin_of, hook_plugins = parent._plugin_of, parent._hooks
        self._plugin_of = plugin_of
        #: The code of each hook implementation → its plugin (``Engine.hook_plugins``).
        self._hooks: Mapping[Any, str] = hook_plugins if hook_plugins is not None else {}
        #: The plugin whose hook implementation the engine's caller is running, if it names one.
        self._plugin: str | None = None
        self._zero()

    def _zero(self) -> None:
        """Set the ruleset's working numbers to 0 (each context class its own: see :func:`_zeroing`)."""

    # -- reading -------------------------------------------------------------

    @property
    def is_counterattack(self) -> bool:
        return "counterattack" in self.path

    def token(self, token_id: str) -> Token:
        try:
            return self.tokens[token_id]
        except KeyError:
            raise NotFound(f"no token {token_id!r} in this attack", details={"token": token_id}) from None

    def current(self, token_id: str) -> Mapping[str, Any]:
        """A token's system data with this resolution's pending changes applied."""
        merged = self._current.get(token_id)  # what the pending changes gave last time
        return merged if merged is not None else self.changes.current(token_id)

    def answer(self, name: str) -> Answer | None:
        """The answer to decision ``name``, or ``None`` when it was not asked."""
        return self.answers.get(name)

    def declared(self, charm: str) -> Mapping[str, Any] | None:
        """The declaration's entry for ``charm`` in its ``charms`` list, if declared."""
        for use in self.declaration.get("charms", ()):
            if use.get("id") == charm:
                return use
        return None

    # -- changing ------------------------------------------------------------

    def _writer(self) -> str | None:
        """The plugin changing the context when the engine's caller names none (``_plugin``): the
        innermost hook implementation on the stack (called through pluggy), else (a ruleset's
        ``setup``, ``who`` or ``each``) the plugin of the calling module."""
        hooks = self._hooks
        frame = sys._getframe(1)
        while frame is not None:
            plugin = hooks.get(frame.f_code)
            if plugin is not None:
                # "": the engine's step loop, reached without passing a hook implementation.
                return plugin or self._plugin_of(_calling_module())
            frame = frame.f_back
        return self._plugin_of(_calling_module())

    def update(self, token_id: str, **fields: Any) -> None:
        """Set fields of a token's ``system``; applied atomically when the attack commits."""
        changes = self.changes
        plugin = self._plugin
        if plugin is None:
            plugin = self._writer()
        step = self._step
        changes.set(token_id, fields, (plugin, step.name if step is not None else None))

    @property
    def tracing(self) -> bool:
        """Whether this resolution keeps a trace: ``False`` in the odds' Monte Carlo runs and probes.

        Notes and number changes are dropped when it is ``False`` (and before the
        first step, in a ruleset's ``setup``); test it before building a costly
        note (``if ctx.tracing: ctx.note(", ".join(...))``). The engine's context
        classes answer it with a class attribute (see :func:`context_class`).
        """
        return self._entry is not None

    def note(self, text: str, /, *args: Any, **fields: Any) -> None:
        """Add a line to the current step's entry on the chat card.

        With arguments, ``text`` is a :meth:`str.format` template filled in only
        when the trace is kept (not in the odds' Monte Carlo runs)::

            ctx.note("{} parries with {weapon}", defender.name, weapon=weapon["name"])

        Without, ``text`` is the line as it is (braces and all).
        """
        entry = self._entry
        if entry is not None:
            if args or fields:
                text = text.format(*args, **fields)
            plugin = self._plugin
            if plugin is None:
                plugin = self._writer()
            if entry.notes:
                entry.notes.append((text, plugin))
            else:
                entry.notes = [(text, plugin)]

    def end(self, reason: str) -> None:
        """End the attack cycle here (a miss, Hardness...). Does not return."""
        self.ended = True
        self.end_reason = reason
        raise EndCycle(reason)

    def skip(self, reason: str) -> None:
        """End the sub-sequence for the current item only (outside a loop: the cycle)."""
        if self.item is None:
            self.end(reason)
        raise SkipItem(reason)

    def goto(self, step: str) -> None:
        """Continue at ``step`` after this one; the step must list it in ``goto``."""
        current = self._step
        if current is None or step not in current.goto:
            raise IllegalTransition(
                f"step {getattr(current, 'name', None)!r} may not go to {step!r}",
                details={"step": getattr(current, "name", None), "goto": step, "allowed": list(getattr(current, "goto", ()))},
            )
        self._goto = step
        self._control = True

    def nest(
        self,
        *,
        kind: str,
        attacker: str,
        targets: list[str],
        declaration: Mapping[str, Any],
        ruleset: str | None = None,
    ) -> None:
        """Resolve another attack right after this step (a counterattack).

        It shares dice and pending changes with this one; its record appears
        in this step's trace entry and in ``ctx.outcome["children"]``.
        """
        if kind in self.path and kind == "counterattack":
            raise InvalidRequest("no counterattack against a counterattack", details={"kind": kind})
        if not self._nested:
            self._nested = []
        self._control = True
        self._nested.append(
            {"kind": kind, "attacker": attacker, "targets": list(targets), "declaration": declaration, "ruleset": ruleset}
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.attacker.id} -> {[t.id for t in self.targets]}>"


_CLASSES: dict[tuple[str, tuple[str, ...]], type[AttackContext]] = {}


def _set_number(self: AttackContext, value: Any) -> None:
    """The template of a traced number's setter (see :func:`_number`): ``_NUMBER_SLOT`` stands
    for the number's hidden slot, ``_NUMBER`` for its name."""
    old = self._NUMBER_SLOT  # type: ignore[attr-defined]
    self._NUMBER_SLOT = value  # type: ignore[attr-defined]
    entry = self._entry
    if entry is not None and old != value:
        plugin = self._plugin
        if plugin is None:
            plugin = self._writer()
        changes = entry.changes
        if changes:
            changes.append((_NUMBER, old, value, plugin))
        else:
            entry.changes = [(_NUMBER, old, value, plugin)]


_NUMBER = ""  # (the template's own: each number's setter reads its name from its own globals)


def _number(slot: str, name: str) -> property:
    """The traced property of number ``name``, its value kept in the hidden slot ``slot``.

    Read through an ``attrgetter`` (a getter that is a Python function costs a
    frame on every read, and the numbers are read far more often than written);
    written by a copy of :func:`_set_number` naming ``slot`` (``CodeType.replace``)
    and ``name``: a plain attribute store, with no source to compile per number.
    """
    template = _set_number.__code__
    code = template.replace(co_names=tuple(slot if n == "_NUMBER_SLOT" else n for n in template.co_names))
    setter = FunctionType(code, {"_NUMBER": name}, f"set_{name}")
    return property(attrgetter(slot), setter, doc=f"working number {name!r}, every change traced")


def _zeroing(slots: tuple[str, ...]) -> Callable[[AttackContext], None]:
    """A context class's ``_zero``: ``slots`` (checked identifiers) set to 0 in one assignment statement."""
    namespace: dict[str, Any] = {}
    exec(f"def _zero(self):\n    {' = '.join(f'self.{s}' for s in slots)} = 0\n", namespace)  # noqa: S102 - checked identifiers only
    return namespace["_zero"]


def context_class(ruleset: Ruleset, *, traced: bool = True) -> type[AttackContext]:
    """The slotted context subclass carrying ``ruleset.numbers`` as traced properties.

    ``traced=False`` gives the class for resolutions that keep no trace (the
    odds' Monte Carlo runs): its numbers are plain slots, read and written as
    any attribute, so a hook's ``ctx.attack_pool += 2`` costs what a plain
    attribute does. Hooks see the same names and values either way.
    """
    if not traced:
        return _untraced_class(ruleset)
    key = (ruleset.id, ruleset.numbers)
    cls = _CLASSES.get(key)
    if cls is None:
        slots = tuple(f"_n{i}" for i in range(len(ruleset.numbers)))
        # Every step of a resolution with this class keeps a trace: a plain attribute, not a property.
        namespace: dict[str, Any] = {"__slots__": slots, "_NUMBERS": ruleset.numbers, "tracing": True}
        if slots:
            namespace["_zero"] = _zeroing(slots)
        for slot, name in zip(slots, ruleset.numbers):
            if hasattr(AttackContext, name):
                raise ValueError(f"ruleset {ruleset.id!r}: number {name!r} clashes with a context attribute")
            namespace[name] = _number(slot, name)
        cls = type(f"{ruleset.id.title().replace('_', '')}Context", (AttackContext,), namespace)
        _CLASSES[key] = cls
    return cls


_UNTRACED: dict[tuple[str, tuple[str, ...]], type[AttackContext]] = {}


def _untraced_class(ruleset: Ruleset) -> type[AttackContext]:
    """:func:`context_class` for untraced resolutions: the traced class's numbers as plain slots, zero at the start."""
    key = (ruleset.id, ruleset.numbers)
    cls = _UNTRACED.get(key)
    if cls is None:
        traced = context_class(ruleset)
        numbers = ruleset.numbers
        if all(n.isidentifier() and not keyword.iskeyword(n) for n in numbers) and numbers:
            _zero = _zeroing(numbers)  # (the names are checked identifiers)
        else:

            def _zero(self: AttackContext) -> None:
                for name in numbers:
                    setattr(self, name, 0)

        cls = type(
            f"Untraced{traced.__name__}",
            (AttackContext,),
            {
                "__slots__": numbers,
                "_NUMBERS": numbers,
                "_zero": _zero,
                "__qualname__": f"Untraced{traced.__name__}",
                # No step of such a resolution keeps a trace: a plain attribute, not a property.
                "tracing": False,
            },
        )
        _UNTRACED[key] = cls
    return cls
