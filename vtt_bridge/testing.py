"""The pack author's test kit: build tokens, resolve an attack, read its trace.

Everything here runs in-process, with no server and no store: a pack's test
builds a host with the pack loaded, resolves one attack with scripted dice and
answers given in advance, and asserts on the step-by-step trace::

    from vtt_bridge.testing import resolve

    def test_the_fang_adds_one_raw_damage():
        res = resolve(
            "exalted2e",
            {"anoria": {...}, "soldier": {...}},     # token id -> system data
            declaration={"charms": [{"id": "serpent-sting-fang"}]},
            dice=[10] * 10 + [7] * 30,                # scripted faces, used in order
            answers={"defense": "dodge"},             # decisions answered in advance
            plugins=["vtt_pack_example"],            # the pack, by module path
        )
        res.assert_changed("raw_damage", by="vtt_pack_example", delta=+1)

The kit names no ruleset: it works for whichever rulesets are installed.
Hosts it builds ignore the ``VTT_BRIDGE_*`` environment variables unless given
``environ=os.environ``, so a test does not change with the shell it runs in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .engine.resolution import Record, Resolution
from .engine.steps import Answer, Decision
from .engine.tokens import Token, thaw
from .plugins import Host, make_host

__all__ = [
    "Asked",
    "Change",
    "HookCall",
    "HookRecorder",
    "Result",
    "StepView",
    "host",
    "make_token",
    "policy",
    "resolve",
    "sample_tokens",
    "tokens",
]


# -------------------------------------------------------------------------
# Hosts and tokens
# -------------------------------------------------------------------------


def host(
    *plugins: str | object,
    block: Iterable[str] = (),
    entry_points: bool = True,
    environ: Mapping[str, str] | None = None,
) -> Host:
    """A fresh host: the installed plugins plus ``plugins`` (module paths or objects).

    A module path that is also installed through its entry point is loaded once,
    under its entry point name.

    :param block: plugin names not to load.
    :param entry_points: load the installed plugins (``False``: only ``plugins``).
    :param environ: the environment ``VTT_BRIDGE_*`` settings are read from;
        by default none are.
    """
    return make_host(
        plugins=list(plugins),
        block=list(block),
        entry_points=entry_points,
        environ={} if environ is None else environ,
    )


def make_token(
    ruleset: str,
    token_id: str,
    system: Mapping[str, Any],
    *,
    name: str | None = None,
    ownership: Mapping[str, int] | None = None,
    flags: Mapping[str, Any] | None = None,
    host: Host | None = None,
) -> Token:
    """One token snapshot, its ``system`` and ``flags`` validated as the server validates them.

    Schema defaults are filled in; a bad field raises ``InvalidRequest`` with
    marshmallow's messages, exactly as the server would refuse it. ``flags``
    is ``{plugin name: data}`` for the packs that keep data on tokens.
    """
    h = host if host is not None else _default_host()
    loaded = h.load_system(ruleset, system)
    return Token(token_id, name or token_id, ruleset, loaded, ownership=ownership, flags=h.load_flags(ruleset, flags))


def tokens(
    ruleset: str,
    data: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
    *,
    host: Host | None = None,
) -> dict[str, Token]:
    """Validated token snapshots from plain data, keyed by id.

    ``data`` is either a mapping ``{token_id: system}`` (or ``{token_id:
    {"name": ..., "system": {...}, "ownership": {...}, "flags": {...}}}``), or a
    list of full token dicts with an ``"id"`` (the shape of a request file's ``tokens``).
    """
    h = host if host is not None else _default_host()
    out: dict[str, Token] = {}
    if isinstance(data, Mapping):
        items = [(token_id, value) for token_id, value in data.items()]
    else:
        items = [(value["id"], value) for value in data]
    for token_id, value in items:
        if isinstance(value, Token):
            out[token_id] = value
            continue
        full = "system" in value
        out[token_id] = make_token(
            value.get("ruleset", ruleset) if full else ruleset,
            token_id,
            value["system"] if full else value,
            name=value.get("name") if full else None,
            ownership=value.get("ownership") if full else None,
            flags=value.get("flags") if full else None,
            host=h,
        )
    return out


def sample_tokens(ruleset: str, *, host: Host | None = None) -> dict[str, Token]:
    """The ruleset's own demo tokens (``Ruleset.sample_tokens``), validated."""
    h = host if host is not None else _default_host()
    make = h.ruleset(ruleset).sample_tokens
    if make is None:
        raise LookupError(f"ruleset {ruleset!r} ships no sample tokens")
    return tokens(ruleset, make(), host=h)


_DEFAULT: list[Host] = []


def _default_host() -> Host:
    if not _DEFAULT:
        _DEFAULT.append(host())
    return _DEFAULT[0]


# -------------------------------------------------------------------------
# Answering decisions
# -------------------------------------------------------------------------


def policy(
    answers: Mapping[str, Any] | None = None,
    *,
    default: str | Callable[[Decision], Any] | None = None,
    strict: bool = False,
) -> Callable[[Decision], Any]:
    """A decision policy for ``Resolution.run``: answers by key or name, then a default.

    :param answers: ``{decision key or name: option id}``; a list answers a
        decision asked repeatedly, one item per time it is asked.
    :param default: for a decision not in ``answers``: ``None`` takes the rules'
        default, ``"first"`` / ``"last"`` the first or last option offered, a
        function ``decision -> option id`` decides itself.
    :param strict: fail (``AssertionError``) on a decision ``answers`` does not cover.
    """
    queues = {k: list(v) if isinstance(v, list) else [v] for k, v in (answers or {}).items()}

    def decide(decision: Decision) -> Any:
        for key in (decision.key, decision.name):
            queue = queues.get(key)
            if queue:
                return queue.pop(0)
        if strict:
            raise AssertionError(
                f"decision {decision.key!r} ({decision.prompt}) was asked but not answered; "
                f"options: {', '.join(o.id for o in decision.options)}"
            )
        if default is None:
            return None
        if default == "first":
            return decision.options[0].id
        if default == "last":
            return decision.options[-1].id
        if callable(default):
            return default(decision)
        return default

    return decide


# -------------------------------------------------------------------------
# Resolving
# -------------------------------------------------------------------------


def resolve(
    ruleset: str,
    tokens: Mapping[str, Any] | Iterable[Mapping[str, Any]],
    *,
    attacker: str | None = None,
    targets: Sequence[str] | None = None,
    declaration: Mapping[str, Any] | None = None,
    dice: Sequence[int] | None = None,
    seed: int | None = None,
    answers: Mapping[str, Any] | None = None,
    policy: Callable[[Decision], Any] | None = None,
    strict: bool = False,
    plugins: Iterable[str | object] = (),
    block: Iterable[str] = (),
    host: Host | None = None,
) -> Result:
    """Resolve one attack in-process and return its :class:`Result`.

    :param tokens: token snapshots, or plain data as :func:`tokens` takes it.
    :param attacker: the attacking token; default: the first token.
    :param targets: the targets; default: the second token.
    :param declaration: the attack declaration (validated; schema defaults apply).
    :param dice: scripted faces, used in order; running out is ``DiceExhausted``.
    :param seed: seed the dice instead (default ``0`` when no ``dice`` are given).
    :param answers: answers given in advance, by decision key or name
        (``{"defense": "parry"}``); a list answers a repeated decision in turn.
    :param policy: answers the decisions ``answers`` does not cover (see
        :func:`policy`); default: the rules' default, recorded as such.
    :param strict: fail on any decision left to the rules' default.
    :param plugins, block: as for :func:`host`, when no ``host`` is given.
    :param host: the host to resolve with (e.g. one a :class:`HookRecorder` watches).

    Errors are raised as the server would report them: ``PluginError`` when a
    hook raised, ``InvalidRequest`` for a bad declaration, and so on.
    """
    plugins, block = list(plugins), list(block)
    if host is None:
        host = _build_host(*plugins, block=block) if plugins or block else _default_host()
    elif plugins or block:
        raise TypeError("give either host= or plugins=/block=, not both")
    toks = _tokens(ruleset, tokens, host=host)
    ids = list(toks)
    if attacker is None:
        attacker = ids[0]
    if targets is None:
        targets = [i for i in ids if i != attacker][:1]
    if dice is None and seed is None:
        seed = 0
    res = host.start(
        ruleset,
        toks,
        attacker=attacker,
        targets=list(targets),
        declaration=declaration or {},
        seed=seed,
        dice=list(dice) if dice is not None else None,
        answers=answers,
    )
    decide = policy
    if strict:
        decide = _strictly(policy)
    res.run(decide)
    return Result(res.result, host=host, resolution=res)


def _strictly(inner: Callable[[Decision], Any] | None) -> Callable[[Decision], Any]:
    def decide(decision: Decision) -> Any:
        choice = inner(decision) if inner is not None else None
        if choice is None:
            raise AssertionError(
                f"decision {decision.key!r} ({decision.prompt}) was left to the rules' default; "
                f"options: {', '.join(o.id for o in decision.options)}"
            )
        return choice

    return decide


# The names ``resolve`` takes as parameters, for use inside it.
_build_host, _tokens = host, tokens


# -------------------------------------------------------------------------
# Reading the result
# -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One traced change of a working number: which step, from what to what, by whom.

    :ivar kind: the (nested) attack it happened in: ``"attack"``, ``"counterattack"``...
    :ivar plugin: the plugin whose code made the change (``None``: the host).
    """

    step: str
    item: str | None
    number: str
    before: Any
    after: Any
    plugin: str | None
    kind: str = "attack"

    @property
    def delta(self) -> Any:
        """``after - before`` for numbers; ``None`` otherwise."""
        try:
            return self.after - self.before
        except TypeError:
            return None

    def __str__(self) -> str:
        where = self.step + (f"[{self.item}]" if self.item else "")
        if self.kind != "attack":
            where = f"{self.kind}/{where}"
        return f"{where}: {self.number} {self.before!r} -> {self.after!r} by {self.plugin or 'the host'}"


@dataclass(frozen=True, slots=True)
class Asked:
    """A decision as it was put, and how it was answered (``given``, ``answered``, ``default``...)."""

    decision: Decision
    answer: Answer
    how: str

    @property
    def key(self) -> str:
        """The decision's key (``"defense"``, ``"counterattack/defense"``)."""
        return self.decision.key

    @property
    def options(self) -> list[str]:
        """The ids of the options offered, in order."""
        return [o.id for o in self.decision.options]

    @property
    def chosen(self) -> str:
        """The id of the option taken."""
        return self.answer.option


class StepView:
    """One executed step of the trace: its rolls, changes, notes and nested attacks."""

    __slots__ = ("_entry", "_result")

    def __init__(self, entry: Any, result: Result) -> None:
        self._entry = entry
        self._result = result

    @property
    def name(self) -> str:
        """The step's name (its hook is ``<ruleset>_<name>``)."""
        return self._entry.step

    @property
    def title(self) -> str:
        """As the chat card shows it ("7. Raw damage")."""
        return self._entry.title

    @property
    def item(self) -> str | None:
        """The item (target) this run of the step was for, in a per-item loop."""
        return self._entry.item

    @property
    def rolls(self) -> list[Any]:
        """The :class:`~vtt_bridge.Roll` objects rolled in this step."""
        return list(self._entry.rolls)

    @property
    def faces(self) -> list[list[int]]:
        """Every roll's faces, in order (rerolled and discarded dice included)."""
        return [list(r.faces) for r in self._entry.rolls]

    @property
    def changes(self) -> list[Change]:
        """The working numbers this step changed, in order, each with the plugin that did it."""
        kind = self._result.kind
        return [
            Change(step=self.name, item=self.item, number=n, before=thaw(a), after=thaw(b), plugin=p, kind=kind)
            for n, a, b, p in self._entry.changes
        ]

    @property
    def notes(self) -> list[tuple[str, str | None]]:
        """``(text, plugin)`` for each note added to this step's card entry."""
        return list(self._entry.notes)

    @property
    def decisions(self) -> list[str]:
        """Keys of the decisions asked before this step's hook ran."""
        return list(self._entry.decisions)

    @property
    def ended(self) -> str | None:
        """Why the cycle ended in this step, if it did."""
        return self._entry.ended

    @property
    def children(self) -> list[Result]:
        """Nested resolutions run after this step (counterattacks)."""
        return [Result(child, host=self._result.host) for child in self._entry.children]

    def value(self, number: str) -> Any:
        """The number's value after this step changed it (``KeyError`` if it did not)."""
        found = [c for c in self.changes if c.number == number]
        if not found:
            raise KeyError(f"step {self.name!r} did not change {number!r}")
        return found[-1].after

    def __repr__(self) -> str:
        return f"<StepView {self.title!r}{f' [{self.item}]' if self.item else ''}>"


class Result:
    """A finished resolution, read step by step.

    ``record`` is the wire form a VTT client receives; the rest are views of it
    made for assertions. Methods whose name starts with ``assert_`` raise
    ``AssertionError`` with the attack's chat card in the message.
    """

    def __init__(self, record: Record, *, host: Host, resolution: Resolution | None = None) -> None:
        self._rec = record
        self.host = host
        self.resolution = resolution

    # -- the whole attack ------------------------------------------------------

    @property
    def record(self) -> dict[str, Any]:
        """The wire form: steps, rolls as Foundry roll JSON, decisions, token changes."""
        return self._rec.to_dict()

    @property
    def ctx(self) -> Any:
        """The finished attack context (for anything the views here do not cover)."""
        return self._rec.ctx

    @property
    def kind(self) -> str:
        """``"attack"``, or the kind of a nested attack (``"counterattack"``)."""
        return self._rec.ctx.kind

    @property
    def outcome(self) -> dict[str, Any]:
        """What the ruleset reported: ``hit``, ``damage``, ``conditions`` and its own keys."""
        return thaw({k: v for k, v in self._rec.outcome.items() if k != "children"})

    @property
    def hit(self) -> bool | None:
        """``outcome["hit"]``."""
        return self._rec.outcome.get("hit")

    @property
    def damage(self) -> Any:
        """``outcome["damage"]``: the ruleset's main damage measure dealt to the first target."""
        return self._rec.outcome.get("damage")

    @property
    def ended(self) -> str | None:
        """Why the cycle ended early (a miss, Hardness...), or ``None``."""
        return self._rec.ended

    @property
    def numbers(self) -> dict[str, Any]:
        """The ruleset's working numbers as the attack left them."""
        ctx = self._rec.ctx
        return {name: thaw(getattr(ctx, name)) for name in ctx.ruleset.numbers}

    def card(self) -> str:
        """The chat card, as ``vtt-bridge resolve`` prints it."""
        from .cli.card import render

        return render(self.record)

    # -- steps -----------------------------------------------------------------

    @property
    def steps(self) -> list[StepView]:
        """Every executed step, in the order it ran (a step run twice appears twice)."""
        return [StepView(e, self) for e in self._rec.ctx.trace]

    def step(self, name: str, *, item: str | None = None, nth: int = 0) -> StepView:
        """The ``nth`` run of step ``name`` (for ``item``, in a per-item loop)."""
        found = [s for s in self.steps if s.name == name and (item is None or s.item == item)]
        if len(found) <= nth:
            ran = ", ".join(s.name + (f"[{s.item}]" if s.item else "") for s in self.steps)
            raise AssertionError(f"step {name!r} (item {item!r}, run {nth}) did not run; steps run: {ran}")
        return found[nth]

    def ran(self, name: str) -> bool:
        """Whether step ``name`` ran at all."""
        return any(s.name == name for s in self.steps)

    def rolls(self, step: str | None = None) -> list[list[int]]:
        """The faces of every roll, in order; only those of ``step`` if given."""
        return [faces for s in self.steps if step is None or s.name == step for faces in s.faces]

    # -- who changed what ------------------------------------------------------

    def _walk(self) -> Iterator[StepView]:
        for view in self.steps:
            yield view
            for child in view.children:
                yield from child._walk()

    @property
    def changes(self) -> list[Change]:
        """Every traced change of a working number, nested attacks included, in order."""
        return [c for view in self._walk() for c in view.changes]

    def _is(self, plugin: str | None, by: str | None) -> bool:
        """Whether ``plugin`` is ``by``: its name, or the module it was registered as."""
        if by is None or plugin == by:
            return True
        if plugin is None:
            return False
        registered = self.host.pm.get_plugin(plugin)
        return registered is not None and getattr(registered, "__name__", type(registered).__module__) == by

    def changes_by(self, plugin: str) -> list[Change]:
        """The changes made by ``plugin``: its name (an entry point's name) or its module."""
        return [c for c in self.changes if c.plugin is not None and self._is(c.plugin, plugin)]

    def changed(self, number: str, *, by: str | None = None, step: str | None = None) -> list[Change]:
        """Changes of ``number``, optionally only those by ``by`` and in ``step``."""
        return [
            c
            for c in self.changes
            if c.number == number and (step is None or c.step == step) and (by is None or self._is(c.plugin, by))
        ]

    def assert_changed(
        self,
        number: str,
        *,
        by: str | None = None,
        step: str | None = None,
        delta: Any = None,
        to: Any = None,
    ) -> list[Change]:
        """Assert that ``by`` changed ``number`` (in ``step``), by ``delta`` in all, ending at ``to``.

        Returns the matching changes. On failure the message lists every change
        of ``number`` and the attack's chat card.
        """
        found = self.changed(number, by=by, step=step)
        problem = None
        if not found:
            problem = (
                f"{number!r} was not changed" + (f" by {by}" if by else "") + (f" in step {step!r}" if step else "")
            )
        elif delta is not None:
            total = sum(c.delta for c in found)
            if total != delta:
                problem = f"{number!r} changed by {total:+}, expected {delta:+}"
        if problem is None and to is not None and found[-1].after != to:
            problem = f"{number!r} ended at {found[-1].after!r}, expected {to!r}"
        if problem is not None:
            every = [str(c) for c in self.changes if c.number == number] or ["(none)"]
            raise AssertionError(
                problem + "\nchanges of " + repr(number) + ":\n  " + "\n  ".join(every) + "\n\n" + self.card()
            )
        return found

    # -- decisions and tokens --------------------------------------------------

    @property
    def decisions(self) -> list[Asked]:
        """Every decision put, in order, with its answer and how it was reached."""
        if self.resolution is None:
            return []
        return [Asked(d, a, how) for d, a, how in self.resolution.decisions]

    def decision(self, key: str) -> Asked:
        """The decision with this key (or, failing that, the first with this name)."""
        for asked in self.decisions:
            if asked.key == key:
                return asked
        for asked in self.decisions:
            if asked.decision.name == key:
                return asked
        put = ", ".join(a.key for a in self.decisions) or "none"
        raise AssertionError(f"decision {key!r} was not put; decisions put: {put}")

    @property
    def token_changes(self) -> dict[str, dict[str, Any]]:
        """``{token_id: {"before": system, "after": system}}`` for every changed token."""
        return self._rec.changes

    def token_after(self, token_id: str) -> dict[str, Any]:
        """A token's ``system`` as it would be committed."""
        return thaw(self._rec.ctx.changes.current(token_id))

    def __repr__(self) -> str:
        ctx = self._rec.ctx
        return f"<Result {ctx.ruleset.id} {ctx.attacker.id} -> {[t.id for t in ctx.targets]} {self.outcome}>"


# -------------------------------------------------------------------------
# Recording hook calls
# -------------------------------------------------------------------------


class HookCall:
    """One hook call: the plugins it ran (in call order), its arguments, its result."""

    __slots__ = ("hook", "plugins", "kwargs", "result", "exception")

    def __init__(self, hook: str, plugins: tuple[str, ...], kwargs: Mapping[str, Any]) -> None:
        self.hook = hook
        self.plugins = plugins
        self.kwargs = dict(kwargs)
        self.result: Any = None
        self.exception: BaseException | None = None

    @property
    def ctx(self) -> Any:
        """The attack context the hook was called with."""
        return self.kwargs.get("ctx")

    def __repr__(self) -> str:
        return f"<HookCall {self.hook} plugins={list(self.plugins)}>"


class HookRecorder:
    """Records every hook call a host makes, in order (like pytest's ``HookRecorder``).

    ::

        h = host("my_pack")
        with HookRecorder(h) as calls:
            resolve("exalted2e", toks, host=h, dice=[...])
        calls.assert_order("exalted2e_attack_roll", "exalted2e_raw_damage")
        assert calls.get("exalted2e_raw_damage")[0].plugins[0] == "my_pack"
    """

    def __init__(self, host: Host) -> None:
        self.calls: list[HookCall] = []
        self._open: list[HookCall] = []
        self._undo: Callable[[], None] | None = host.monitor(self._before, self._after)

    def _before(self, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        call = HookCall(hook_name, tuple(i.plugin_name for i in reversed(hook_impls)), kwargs)
        self.calls.append(call)
        self._open.append(call)

    def _after(self, outcome: Any, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        call = self._open.pop()
        call.exception = outcome.exception
        if outcome.exception is None:
            call.result = outcome.get_result()

    @property
    def hooks(self) -> list[str]:
        """The names of the hooks called, in order."""
        return [c.hook for c in self.calls]

    def get(self, hook: str) -> list[HookCall]:
        """The calls of one hook, in order."""
        return [c for c in self.calls if c.hook == hook]

    def assert_called(self, hook: str, times: int | None = None) -> list[HookCall]:
        """Assert the hook was called (exactly ``times`` times, if given); returns its calls."""
        calls = self.get(hook)
        if not calls or (times is not None and len(calls) != times):
            expected = f"{times} time(s)" if times is not None else "at least once"
            raise AssertionError(
                f"{hook} was called {len(calls)} time(s), expected {expected}; calls: {', '.join(self.hooks) or 'none'}"
            )
        return calls

    def assert_not_called(self, hook: str) -> None:
        """Assert the hook was never called."""
        if self.get(hook):
            raise AssertionError(f"{hook} was called {len(self.get(hook))} time(s)")

    def assert_order(self, *hooks: str) -> None:
        """Assert these hooks were called in this order (other calls may come between)."""
        position = 0
        recorded = self.hooks
        for hook in hooks:
            try:
                position = recorded.index(hook, position) + 1
            except ValueError:
                raise AssertionError(
                    f"{hook} was not called after {' -> '.join(hooks[: hooks.index(hook)]) or 'the start'}; "
                    f"calls: {', '.join(recorded) or 'none'}"
                ) from None

    def clear(self) -> None:
        """Forget the calls recorded so far."""
        self.calls.clear()

    def close(self) -> None:
        """Stop recording (the calls recorded so far stay)."""
        if self._undo is not None:
            self._undo()
            self._undo = None

    def __enter__(self) -> HookRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
