"""Resolving an attack: a generator that yields Decisions and is sent answers.

Theory of operation. ``Engine.start`` builds a context and returns a
:class:`Resolution`, a small sans-I/O driver around a generator. The generator
walks the ruleset's steps in order. Before a step with an ``Ask`` it collects
the options (the ruleset's own and every pack's); if there are any and no
answer was given in advance, it yields a :class:`Decision` and waits. Then it
calls the step's hook (packs first, the ruleset's ``trylast`` implementation
last, wrappers around them). After the hook: nested resolutions the step asked
for run, a requested jump is checked against the step's ``goto`` list, and
``ctx.end`` stops the cycle. A roll for a token whose owner rolls real dice
(``physical``) with no faces entered yet stops the run (:class:`FacesNeeded`):
the faces are asked for as a decision like any other, and the run starts
again from the first step with the answers given so far and the faces (hooks
are pure, so it comes back to the same roll). The finished resolution is a plain record; nothing
here touches a clock, a socket, a database or ``random``. Whoever drives it —
the socket server, the CLI, a test, the odds engine — supplies the seed or the
scripted dice and answers the decisions.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Generator, Iterable, Mapping
from itertools import chain
from operator import attrgetter
from typing import Any

import pluggy

from ..errors import InvalidRequest, PluginError, SnapshotMutation, UnknownRuleset, VTTError
from .context import AttackContext, EndCycle, SkipItem, TraceEntry, context_class
from .dice import Dice, FacesNeeded, Physical, dice_text
from .steps import Answer, Ask, Decision, Option, Param, Ruleset, Step
from .tokens import _ATOMS, Token, thaw

__all__ = ["Engine", "Resolution", "Policy", "parse_answer"]

Policy = Callable[[Decision], "Answer | str | None"]


_PLAIN_ANSWERS: dict[str, Answer] = {}


def _plain_answer(option: str) -> Answer:
    """The answer choosing ``option`` with no values (immutable, so shared)."""
    answer = _PLAIN_ANSWERS.get(option)
    if answer is None:
        answer = Answer(option=option)
        if len(_PLAIN_ANSWERS) < 10_000:
            _PLAIN_ANSWERS[option] = answer
    return answer


def _with_params(option: str, params: Any) -> Answer:
    """The answer choosing ``option`` with ``params`` (``None``: none); params that are not an object are refused."""
    if params is None:
        return _plain_answer(option)
    if not isinstance(params, Mapping):
        raise InvalidRequest("answer params must be an object", details={"params": ["Not a valid mapping type."]})
    return Answer(option=option, params=dict(params)) if params else _plain_answer(option)


def parse_answer(value: Any) -> Answer:
    """An answer from wire/CLI form: ``"parry"`` or ``{"option": "parry", "params": {...}}``."""
    if isinstance(value, Answer):
        return value
    if isinstance(value, str) and value:
        return _plain_answer(value)
    if isinstance(value, Mapping) and isinstance(value.get("option"), str):
        return _with_params(value["option"], value.get("params"))
    raise InvalidRequest(
        "an answer is an option id or {option, params}", details={"answer": ["Not a valid answer."]}
    )


def _in_order(
    plain: tuple[tuple[Callable[[AttackContext], Any], str], ...],
    wrappers: tuple[tuple[Callable[[AttackContext], Any], str], ...],
) -> Callable[[AttackContext], Any]:
    """A hook's caller: its plain implementations and its new-style wrappers ``(function, plugin)``,
    each in pluggy's order, called as pluggy documents it, each one's plugin named on the
    context while it runs.

    Every wrapper runs to its ``yield`` before the first plain implementation; the plain
    implementations' non-None results are collected; then each wrapper, innermost first, is
    sent the result (or thrown the exception) and what it returns is the result.
    """

    def collect(ctx: AttackContext) -> list[Any]:
        result = []
        try:
            for function, plugin in plain:
                ctx._plugin = plugin
                value = function(ctx)
                if value is not None:
                    result.append(value)
        finally:
            ctx._plugin = None
        return result

    call = collect
    for function, plugin in reversed(wrappers):  # the innermost wraps the plain implementations
        call = _wrapped(function, plugin, call)
    return call


def _wrapped(
    function: Callable[[AttackContext], Any], plugin: str, inner: Callable[[AttackContext], Any]
) -> Callable[[AttackContext], Any]:
    """The caller ``inner`` wrapped by a new-style wrapper of ``plugin``: run to its ``yield``, then
    sent what ``inner`` returns (or thrown what it raises); what the wrapper returns is the result."""

    def call(ctx: AttackContext) -> Any:
        ctx._plugin = plugin
        gen = function(ctx)
        try:
            next(gen)
        except StopIteration:
            raise RuntimeError(f"hook wrapper {function.__name__} did not yield") from None
        try:
            result = inner(ctx)
        except BaseException as exc:
            ctx._plugin = plugin
            try:
                gen.throw(exc)
            except StopIteration as stop:
                return stop.value
            finally:
                ctx._plugin = None
        else:
            ctx._plugin = plugin
            try:
                gen.send(result)
            except StopIteration as stop:
                return stop.value
            finally:
                ctx._plugin = None
        gen.close()
        raise RuntimeError(f"hook wrapper {function.__name__} yielded twice")

    return call


class _Compiled:
    """A step with its hooks looked up once per ruleset (the step plan).

    ``call`` and ``options`` are the hooks' callers, functions of the context (see ``Engine._caller``). What the step's decision needs on every
    resolution is worked out here once: who decides (``who``: a function of the
    context, ``None`` for the GM), the decline option's id, and the options
    offered so far (``offers``, see :func:`_offer`).
    """

    __slots__ = (
        "step", "name", "title", "ask", "hook_name", "options_hook", "call", "options", "options_plugin", "children",
        "who", "decline", "offers", "repeat", "more", "walk", "plugin",
    )  # fmt: skip

    def __init__(
        self, step: Step, hook_name: str, call: Any, plugin: str | None, options: tuple[Any, str | None], children: tuple[_Compiled, ...]
    ):
        self.step = step
        self.name = step.name
        self.title = step.title
        ask = self.ask = step.ask
        self.hook_name = hook_name
        self.options_hook = f"{hook_name.removesuffix(step.name)}{ask.name}_options" if ask else ""
        self.call = call
        #: The plugin named while ``call`` runs: its one implementation's (``None``: it names them itself).
        self.plugin = plugin
        #: The options hook's caller and, when it is its one implementation, that one's plugin.
        self.options, self.options_plugin = options
        self.children = children
        self.who = _who(ask.who) if ask else None
        self.decline = ask.decline.id if ask and ask.decline is not None else None
        self.repeat = bool(ask and ask.repeat)
        #: Anything to do after the hook besides what the context asks for (child steps, a repeat).
        self.more = bool(children) or self.repeat
        #: The options offered here, by what was offered (they are frozen, so shared): see ``_offer``.
        self.offers: dict[tuple[int, ...], _Offer] = {}
        #: What the step loop reads on every step, in one tuple (one attribute read instead of six).
        self.walk = (self.name, self.title, ask, step, call, plugin, self.more)


def _who(who: str | Callable[[AttackContext], str | None]) -> Callable[[AttackContext], str | None] | None:
    """The function of the context naming a decision's decider (``None``: the GM)."""
    if callable(who):
        return who
    if who == "attacker":
        return _attacker_id
    if who == "defender":
        return _defender_id
    if who == "item":
        return attrgetter("item")
    return None


def _attacker_id(ctx: AttackContext) -> str:
    return ctx.attacker.id  # (a dotted attrgetter looks both names up generically, in C: dearer)


def _defender_id(ctx: AttackContext) -> str | None:
    return ctx.defender.id


OFFER_CACHE = 256  # per step: the same options are offered again and again
DECISION_CACHE = 64  # per offer: the same question (key, decider, default) is asked again and again


class _Offer:
    """Options offered at a step, flattened and grouped once while the same ones come back.

    Options are looked up by identity (packs and rulesets offer module-level
    constants), and the entry keeps them alive, so an id cannot be reused.

    :ivar options: every option offered, in order (kept alive for the lookup).
    :ivar group: when no option names its own token, the decider's options with
        the decline option appended; else ``None`` (grouped on every call).
    :ivar ids: the ids in ``group``.
    :ivar default: the ask's own default for ``group`` when it is not a function.
    :ivar decisions: ``(key, token, default)`` → the :class:`Decision` made for them.
    """

    __slots__ = ("options", "group", "ids", "plain", "default", "decisions")

    def __init__(self, ask: Ask, options: list[Option]) -> None:
        self.options = options
        self.group: tuple[Option, ...] | None = None
        self.ids: frozenset[str] = frozenset()
        #: The ids in ``group`` of options taking no values (a given answer naming one is valid as
        #: it is): made on first need (see :meth:`Resolution._default`).
        self.plain: frozenset[str] | None = None
        self.default: str | None = None
        self.decisions: dict[tuple[str, str | None, str], Decision] = {}
        if all(o.token is None for o in options):
            group = self.group = _with_decline(ask, options)
            self.ids = frozenset(o.id for o in group)
            if not callable(ask.default):
                self.default = ask.default or (ask.decline.id if ask.decline is not None else group[0].id)


def _with_decline(ask: Ask, options: list[Option]) -> tuple[Option, ...]:
    decline = ask.decline
    if decline is not None and not any(o.id == decline.id for o in options):
        return (*options, decline)
    return tuple(options)


_flatten = chain.from_iterable


def _after(
    steps: tuple[_Compiled, ...], i: int, compiled: _Compiled, ctx: AttackContext, answer: Answer | None, repeats: int, jumps: int
) -> tuple[int, int, int]:
    """Where a step sequence goes after step ``i`` asked for more (a repeat, a jump, child steps):
    ``(next step, repeats, jumps)``."""
    target = ctx._goto
    if target is None:
        if (
            answer is not None
            and compiled.repeat
            and answer.option != compiled.decline
            and repeats + 1 < compiled.ask.max_repeats
        ):
            return i, repeats + 1, jumps  # the same step again: ask, then its hook
        return i + 1, 0, jumps
    ctx._goto = None
    jumps += 1
    if jumps > 100:
        raise InvalidRequest("too many jumps back in one sequence", details={"step": compiled.name})
    return next(j for j, c in enumerate(steps) if c.name == target), 0, jumps


def _lean_default(compiled: _Compiled, ctx: AttackContext, offered: list[list[Option]]) -> Answer | None:
    """``Resolution._default`` untraced with no answers given, for options not in the step's cache.

    ``None`` when an option names its own token (grouping is needed: the general way).
    """
    options = list(_flatten(filter(None, offered)))
    for option in options:
        if option.token is not None:
            return None
    ask = compiled.ask
    group = _with_decline(ask, options)
    default = ask.default(ctx, group) if callable(ask.default) else ask.default
    if not default:
        default = compiled.decline or group[0].id  # both in the group
    elif not any(o.id == default for o in group):
        raise ValueError(f"decision {ask.name!r}: default {default!r} is not an option")
    answer = _PLAIN_ANSWERS.get(default) or _plain_answer(default)
    ctx.answers[ask.name] = answer
    return answer


def _finish(asking: Generator[Decision, Any, Any]) -> Any:
    """What a generator of the resolution (``_ask``, ``_child``) returns when it cannot wait
    (every decision answered where it is asked)."""
    try:
        next(asking)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("a decision waited for an answer in a run that answers every decision where it is asked")


def _lookup(offered: list[list[Option]]) -> tuple[int, ...]:
    """What identifies an offer: the ids of the options (one list of them per implementation)."""
    return tuple(map(id, _flatten(filter(None, offered))))


def _offer(compiled: _Compiled, lookup: tuple[int, ...], offered: list[list[Option]]) -> _Offer:
    """The step's :class:`_Offer` for what its options hook returned, made on first sight."""
    offers = compiled.offers
    offer = offers.get(lookup)
    if offer is None:
        if len(offers) >= OFFER_CACHE:
            offers.clear()
        offer = offers[lookup] = _Offer(compiled.ask, list(_flatten(filter(None, offered))))
    return offer


def _decision(compiled: _Compiled, offer: _Offer, key: str, token: str | None, options: tuple[Option, ...], default: str) -> Decision:
    """The step's decision for these options, made once and shared while the same question comes back."""
    decisions = offer.decisions if options is offer.group else None
    if decisions is not None:
        decision = decisions.get((key, token, default))
        if decision is not None:
            return decision
    ask = compiled.ask
    decision = Decision(
        key=key,
        name=ask.name,
        step=compiled.name,
        prompt=ask.prompt,
        token=token,
        options=options,
        default=default,
        timeout=ask.timeout,
    )
    if decisions is not None:
        if len(decisions) >= DECISION_CACHE:
            decisions.clear()
        decisions[(key, token, default)] = decision
    return decision


class _Plan:
    __slots__ = ("ruleset", "steps", "context_class", "_untraced", "packs", "setup_name")

    def __init__(self, ruleset: Ruleset, steps: tuple[_Compiled, ...], packs: Mapping[str, str | None] | None = None):
        self.ruleset = ruleset
        self.steps = steps
        #: ``{plugin: version}`` the plan's attacks run with (their records' ``packs``).
        self.packs = dict(packs or {})
        self.context_class = context_class(ruleset)
        self._untraced: type[AttackContext] | None = None
        #: What a fault in the ruleset's ``setup`` names as its hook.
        self.setup_name = f"{ruleset.id} setup"

    @property
    def untraced_class(self) -> type[AttackContext]:
        """For resolutions keeping no trace: the working numbers are plain slots (made on first need)."""
        cls = self._untraced
        if cls is None:
            cls = self._untraced = context_class(self.ruleset, traced=False)
        return cls


class Engine:
    """Resolves attacks for the rulesets a plugin manager knows.

    :param hook: the plugin manager's hook relay (``pm.hook``).
    :param rulesets: ruleset id → :class:`Ruleset`.
    :param plugin_of: module name → plugin name, for tracing who changed what.
    :param packs_of: ruleset id → ``{plugin: version}`` its attacks run with, named in each
        record (``packs``); the host says (``Host.ruleset_packs``).

    Each hook has one caller per plan (see :meth:`_caller`). Which plugin a change
    or a note comes from is the innermost hook implementation on the stack
    (:attr:`hook_plugins`, filled in as rulesets are planned).
    """

    def __init__(
        self,
        hook: Any,
        rulesets: Mapping[str, Ruleset],
        plugin_of: Callable[[str], str | None] = lambda m: None,
        *,
        packs_of: Callable[[str], Mapping[str, str | None]] | None = None,
    ) -> None:
        self.hook = hook
        self.packs_of = packs_of
        self.rulesets = dict(rulesets)
        self.plugin_of = plugin_of
        #: The code of every planned hook implementation → its plugin's name (see ``AttackContext``);
        #: the engine's step loop → "" (where looking for one stops).
        self.hook_plugins: dict[Any, str] = {Resolution._run.__code__: "", Resolution._resolve.__code__: ""}
        self._plans: dict[str, _Plan] = {}
        self._monitors = 0

    def ruleset(self, ruleset_id: str) -> Ruleset:
        try:
            return self.rulesets[ruleset_id]
        except KeyError:
            raise UnknownRuleset(
                f"no ruleset {ruleset_id!r} is installed",
                details={"ruleset": ruleset_id, "installed": sorted(self.rulesets)},
            ) from None

    def plan(self, ruleset_id: str) -> _Plan:
        plan = self._plans.get(ruleset_id)
        if plan is None:
            ruleset = self.ruleset(ruleset_id)
            packs = self.packs_of(ruleset_id) if self.packs_of is not None else None
            plan = self._plans[ruleset_id] = _Plan(ruleset, self._compile(ruleset, ruleset.steps), packs)
        return plan

    def _compile(self, ruleset: Ruleset, steps: Iterable[Step]) -> tuple[_Compiled, ...]:
        out = []
        for step in steps:
            name = f"{ruleset.id}_{step.name}"
            options = self._caller(f"{ruleset.id}_{step.ask.name}_options") if step.ask else (None, None)
            call, plugin = self._caller(name)
            out.append(_Compiled(step, name, call, plugin, options, self._compile(ruleset, step.steps)))
        return tuple(out)

    def _caller(self, name: str) -> tuple[Callable[[AttackContext], Any], str | None]:
        """The one caller of hook ``name`` for the plan, a function of the context, and the plugin
        the step loop names while it runs (``None``: the caller names each implementation's).

        Implementations taking ``ctx`` — plain ones and new-style wrappers — are
        called by :func:`_in_order`, in pluggy's order and as pluggy documents it,
        without its per-call bookkeeping (a resolution calls 15-40 hooks); a hook
        with one plain implementation is called as it is, its plugin returned (the
        step loop puts an options hook's one result in a list). With an old-style
        hookwrapper, a ``firstresult`` spec, another signature or a monitor
        watching (:meth:`monitored`), pluggy's own caller. Either way the implementations'
        code is noted with their plugins (:attr:`hook_plugins`).
        """
        caller = getattr(self.hook, name)
        impls = caller.get_hookimpls()
        for impl in impls:
            code = getattr(impl.function, "__code__", None)
            if code is not None:
                self.hook_plugins[code] = impl.plugin_name
        spec = caller.spec
        if (
            self._monitors
            or (spec is not None and spec.opts.get("firstresult"))
            or any(impl.hookwrapper or tuple(impl.argnames) != ("ctx",) for impl in impls)
        ):
            return (lambda ctx: caller(ctx=ctx)), None
        if len(impls) == 1 and not impls[0].wrapper:
            return impls[0].function, impls[0].plugin_name
        in_order = impls[::-1]  # pluggy's list runs from last called to first
        plain = tuple((impl.function, impl.plugin_name) for impl in in_order if not impl.wrapper)
        wrappers = tuple((impl.function, impl.plugin_name) for impl in in_order if impl.wrapper)
        return _in_order(plain, wrappers), None

    def monitored(self) -> Callable[[], None]:
        """Call every hook through pluggy from now on, so its hook-call monitors see each call;
        returns the function that undoes it (``Host.monitor``)."""
        self._monitors += 1
        self._plans.clear()
        done = False

        def undo() -> None:
            nonlocal done
            if not done:
                done = True
                self._monitors -= 1
                self._plans.clear()

        return undo

    def start(
        self,
        ruleset_id: str,
        tokens: Mapping[str, Token],
        *,
        attacker: str,
        targets: list[str],
        declaration: Mapping[str, Any],
        seed: int | None = None,
        dice: list[int] | None = None,
        answers: Mapping[str, Any] | None = None,
        trace: bool = True,
        physical: Iterable[str] | None = None,
        faces: Iterable[list[int] | None] | None = None,
    ) -> Resolution:
        """Begin resolving an attack. ``declaration`` must already be validated.

        Give ``seed`` or scripted ``dice``; ``answers`` maps decision keys (or
        names) to pre-given answers, a list for a decision asked repeatedly.
        ``trace=False`` keeps no trace (no step entries, so the record's
        ``steps`` is empty, and when run without a policy no decision log):
        for callers that read only the outcome and the changes, such as the
        odds' Monte Carlo runs. Hooks run the same.

        ``physical``: the tokens whose owners roll real dice; each of their rolls
        is a ``faces`` decision to them (see :meth:`Resolution.answer`) unless
        ``faces`` already holds it (a replay: one entry per such roll, in order,
        the faces or ``None`` for a roll the bridge made; the record's ``physical``).
        """
        plan = self._plans.get(ruleset_id) or self.plan(ruleset_id)
        given = self._check(plan.ruleset, attacker, targets, answers)  # queues of its own: no copy needed
        hands = Physical(physical, _entered(faces)) if physical else None
        return Resolution(self, plan, tokens, attacker, targets, declaration, Dice(seed, dice, hands), given, trace)

    def starter(
        self,
        ruleset_id: str,
        tokens: Mapping[str, Token],
        *,
        attacker: str,
        targets: list[str],
        declaration: Mapping[str, Any],
        answers: Mapping[str, Any] | None = None,
        trace: bool = True,
    ) -> Callable[[int | None, list[int] | None], Resolution]:
        """:meth:`start`'s checks and answers done once: a function ``(seed, dice)`` starting one
        resolution of this attack per call (the odds' Monte Carlo runs start thousands)."""
        plan = self._plans.get(ruleset_id) or self.plan(ruleset_id)
        given = self._check(plan.ruleset, attacker, targets, answers)

        def begin(seed: int | None = None, dice: list[int] | None = None) -> Resolution:
            # Each resolution takes its given answers from its own queues.
            queues = {key: queue[:] for key, queue in given.items()} if given else {}
            return Resolution(self, plan, tokens, attacker, targets, declaration, Dice(seed, dice), queues, trace)

        return begin

    @staticmethod
    def _check(ruleset: Ruleset, attacker: str, targets: list[str], answers: Mapping[str, Any] | None) -> dict[str, list[Answer]]:
        """:meth:`start`'s checks of the attack; the given answers parsed, a queue per key."""
        n = len(targets)
        if not ruleset.min_targets <= n <= ruleset.max_targets:
            raise InvalidRequest(
                f"{ruleset.id} attacks take {ruleset.min_targets}-{ruleset.max_targets} targets, got {n}",
                details={"targets": [f"Expected {ruleset.min_targets}-{ruleset.max_targets} targets."]},
            )
        if attacker in targets:
            raise InvalidRequest("a token cannot attack itself", details={"targets": ["Contains the attacker."]})
        given: dict[str, list[Answer]] = {}
        if answers:
            for key, value in answers.items():
                values = value if isinstance(value, list) else [value]
                given[key] = [parse_answer(v) for v in values]
        return given


def _entered(faces: Iterable[Any] | None) -> list[list[int] | None]:
    """Recorded faces for a replay, checked to be lists of whole numbers (or ``None``)."""
    out: list[list[int] | None] = []
    for entry in faces or ():
        if entry is not None and (not isinstance(entry, list) or not all(type(f) is int for f in entry)):
            raise InvalidRequest("recorded faces are lists of whole numbers", details={"faces": ["Not a valid list."]})
        out.append(entry)
    return out


#: The answer to a faces question letting the bridge roll (its default, taken on timeout).
LET_ROLL = Option(id="roll", label="Let the bridge roll")
FACES_MAX = 200  # dice in one physical roll: no pool is bigger; a longer answer is refused


def _faces_question(need: FacesNeeded, ctx: AttackContext | None) -> Decision:
    """The question asking ``need``'s token's owner for the faces of their real dice."""
    text = dice_text(need.number, need.sides)
    name = ""
    if ctx is not None and need.token in ctx.tokens:
        name = f" ({ctx.tokens[need.token].name})"
    sizes = need.sides if isinstance(need.sides, int) else list(need.sides)
    enter = Option(
        id="enter",
        label="Enter the faces",
        detail=text,
        params={
            "faces": Param(
                "string",
                "Faces",
                required=True,
                description=f"{need.number} numbers, one per die, as the dice show them ({text})",
            )
        },
    )
    return Decision(
        key=f"faces-{need.index + 1}",
        name="faces",
        step=need.step,
        prompt=f"Your {need.label} roll{name}, {text}: roll real dice and enter the faces",
        token=need.token,
        options=(enter, LET_ROLL),
        default=LET_ROLL.id,
        dice={"label": need.label, "number": need.number, "sides": sizes},
    )


def check_faces(decision: Decision, answer: Answer) -> Answer:
    """A faces question's answer with its faces as a list of whole numbers, each checked
    against its die (count and range); refused with the problem named otherwise.

    The faces may come as a list (``[7, 3, 10]``) or as text (``"7 3 10"``, commas too).
    """
    if answer.option != "enter":
        return decision.check(answer)
    unknown = sorted(set(answer.params) - {"faces"})
    if unknown:
        raise InvalidRequest(
            f"option 'enter' of {decision.key!r}: {unknown[0]}: Unknown parameter.",
            details={"params": {name: ["Unknown parameter. Known: faces."] for name in unknown}},
        )
    dice = decision.dice or {}
    number = dice.get("number", 0)
    sides = dice.get("sides", 0)
    given = answer.params.get("faces")
    if isinstance(given, str) and len(given) <= FACES_MAX * 4:
        words = given.replace(",", " ").split()
        faces = [int(w) if w.isdigit() else w for w in words]
    elif isinstance(given, list) and len(given) <= FACES_MAX:
        faces = list(given)
    else:
        faces = None
    problems: list[str] = []
    if faces is None:
        problems.append("The faces are a list of numbers, one per die.")
    else:
        for i, face in enumerate(faces):
            size = sides if isinstance(sides, int) else (sides[i] if i < len(sides) else 0)
            if type(face) is not int or not 1 <= face <= size:
                problems.append(f"Die {i + 1} shows {face!r}: a d{size} shows 1-{size}.")
        if len(faces) != number:
            problems.insert(0, f"{number} faces needed ({dice_text(number, sides if isinstance(sides, int) else tuple(sides))}), {len(faces)} given.")
    if problems:
        raise InvalidRequest(
            f"the faces for {decision.key!r}: {problems[0]}", details={"params": {"faces": problems}}
        )
    return Answer(option="enter", params={"faces": faces})


class Resolution:
    """Drives one resolution: ``advance()`` until it returns ``None``, answering decisions.

    >>> res = engine.start("exalted2e", tokens, attacker="a", targets=["b"], declaration={}, seed=1)
    >>> while (decision := res.advance()) is not None:
    ...     res.answer("parry")          # or res.default("timeout")
    >>> res.record["outcome"]
    """

    __slots__ = (
        "engine", "traced", "plan", "tokens", "dice", "given", "decisions", "ctx", "pending", "result",
        "_gen", "_send", "_auto", "_hands", "__weakref__",
    )  # fmt: skip

    def __init__(self, engine, plan, tokens, attacker, targets, declaration, dice, given, trace=True):
        self.engine = engine
        self.traced = trace
        self.plan = plan
        self.tokens = tokens
        self.dice = dice
        self.given = given
        self.decisions: list[tuple[Decision, Answer, str]] = []
        ctx_cls = plan.context_class if trace else plan.untraced_class
        # By position: a keyword call to a class builds a dict of the keywords on every resolution.
        self.ctx: AttackContext = ctx_cls(plan.ruleset, tokens, attacker, targets, declaration, dice, None, None, "attack", None, engine.plugin_of, engine.hook_plugins)
        self.pending: Decision | None = None
        self.result: Record | None = None
        #: The generator ``advance`` drives, made on its first call (``run`` without a policy needs none).
        self._gen: Generator[Decision, tuple[Answer, str], Record] | None = None
        self._send: tuple[Answer, str] | None = None
        self._auto = False
        #: With physical dice: what a run from the start needs (see :meth:`_again`).
        self._hands: _Hands | None = None
        if dice.physical is not None:
            self._hands = _Hands((attacker, targets, declaration), given)
            dice.physical.log = self.decisions

    # -- driver API ----------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.result is not None

    @property
    def record(self) -> dict[str, Any] | None:
        """The finished resolution in wire form (built on first access)."""
        return self.result.to_dict() if self.result is not None else None

    def advance(self) -> Decision | None:
        """Run until the next decision (returned) or the end (``None``; see :attr:`record`)."""
        if self.result is not None:
            return None
        if self.pending is not None and self._send is None:
            return self.pending
        if self._hands is not None:
            return self._advance_by_hand(self._hands)
        if self._gen is None:
            self._gen = self._top(self.plan, self.ctx)
        if self._send is None:
            # ``None`` once the run is over (``_top`` kept its record): nothing is raised to end it.
            self.pending = next(self._gen, None)
        else:
            sent, self._send = self._send, None
            try:
                self.pending = self._gen.send(sent)
            except StopIteration:
                self.pending = None
        return self.pending

    def _advance_by_hand(self, hands: _Hands) -> Decision | None:
        """:meth:`advance` with physical dice: a faces question may stop the run, which then
        starts again from the first step (answers so far replayed, the faces entered)."""
        while True:
            if self._send is not None and self.pending is not None and self.pending.dice is not None and self._gen is None:
                (answer, how), self._send = self._send, None
                self._again(hands, self.pending, answer, how)
            if self._gen is None:
                self._gen = self._top(self.plan, self.ctx)
            try:
                if self._send is None:
                    pending = next(self._gen)
                else:
                    sent, self._send = self._send, None
                    hands.sent.append(sent)
                    pending = self._gen.send(sent)
                while pending is not None and hands.replay:
                    pending = self._gen.send(hands.replay.pop(0))
            except StopIteration:  # the run is over: ``_top`` kept its record
                self.pending = None
                return None
            except FacesNeeded as need:
                self._gen = None
                question = _faces_question(need, self.dice.physical.ctx if self.dice.physical else None)
                self.pending = question
                given = self._given(question.key, question.name) if self.given else None
                if given is not None:
                    self._send = (check_faces(question, given), "given")
                elif self._auto:
                    self._send = (_plain_answer(question.default), "default")
                else:
                    return question
                continue
            self.pending = pending
            return pending

    def _again(self, hands: _Hands, question: Decision, answer: Answer, how: str) -> None:
        """Start the run over with the faces just answered (or ``None``: the bridge rolls)."""
        old = self.dice.physical
        assert old is not None
        faces = list(answer.params["faces"]) if answer.option == "enter" else None
        physical = Physical(old.tokens, [*old.entered, faces])
        physical.questions = [*old.questions, (question, answer, how)]
        self.decisions = physical.log = []
        self.dice = self.dice.fresh(physical)
        attacker, targets, declaration = hands.start
        plan, engine = self.plan, self.engine
        ctx_cls = plan.context_class if self.traced else plan.untraced_class
        self.ctx = ctx_cls(plan.ruleset, self.tokens, attacker, targets, declaration, self.dice, None, None, "attack", None, engine.plugin_of, engine.hook_plugins)
        self.given = {key: queue[:] for key, queue in hands.given.items()}
        hands.replay = list(hands.sent)
        self.pending = None

    def answer(self, option: Any, params: Mapping[str, Any] | None = None, *, how: str = "answered") -> None:
        """Answer the pending decision. An option not offered is refused and changes nothing."""
        decision = self._require_pending()
        try:
            if params is None:
                answer = parse_answer(option)
            elif isinstance(option, str):
                answer = _with_params(option, params)
            else:
                raise InvalidRequest("an answer's option is an option id", details={"option": ["Not a valid string."]})
            if decision.dice is not None:
                answer = check_faces(decision, answer)
            else:
                decision.check(answer)
        except InvalidRequest as exc:
            raise InvalidRequest(exc.message, details={"answer": exc.details}) from None
        self._send = (answer, how)

    def default(self, reason: str = "default") -> None:
        """Take the rules' default for the pending decision (timeout, disconnect...)."""
        decision = self._require_pending()
        self._send = (_plain_answer(decision.default), reason)

    def run(self, policy: Policy | None = None) -> Record:
        """Drive to the end synchronously: ``policy(decision)`` answers, ``None`` → default.

        With no policy at all every decision takes the rules' default where it
        is asked, without a round trip through this driver (the record is the
        same: each such answer says ``how: "default"``).
        """
        if policy is None and self.pending is None and self._send is None:
            self._auto = True  # every decision answered where it is asked: ``advance`` runs to the end
        while (decision := self.advance()) is not None:
            choice = policy(decision) if policy is not None else None
            if choice is None:
                self.default("default")
            else:
                self.answer(choice)
        assert self.result is not None
        return self.result

    def _require_pending(self) -> Decision:
        if self.pending is None or self._send is not None:
            raise InvalidRequest("no decision is waiting for an answer", details={})
        return self.pending

    # -- the steps -----------------------------------------------------------
    #
    # One step loop, ``_run``, a generator yielding each decision that waits for
    # an answer (the server's driver). A run that answers every decision where it
    # is asked (``run()`` without a policy: the CLI, the tests, the odds) is the
    # same generator, which then never yields: its decisions take the rules'
    # default on the spot (``_default``), or the given answers (``_ask``).

    def _setup(self, plan: _Plan, ctx: AttackContext) -> None:
        setup = plan.ruleset.setup
        if setup is not None:
            self._guard(setup, ctx, plan.setup_name, "setup")

    def _top(self, plan: _Plan, ctx: AttackContext) -> Generator[Decision, tuple[Answer, str], None]:
        """The top-level run: its record is kept as :attr:`result`, so the generator ends returning
        nothing (``advance``'s ``next`` then needs no ``StopIteration`` to catch)."""
        self.result = yield from self._resolve(plan, ctx)

    def _resolve(self, plan: _Plan, ctx: AttackContext) -> Generator[Decision, tuple[Answer, str], Record]:
        self._setup(plan, ctx)
        try:
            yield from self._run(plan.steps, ctx)
        except EndCycle:
            pass
        return self._record(ctx, top=ctx.parent is None)

    def _run(self, steps: tuple[_Compiled, ...], ctx: AttackContext) -> Generator[Decision, tuple[Answer, str], None]:
        """Walk ``steps``: before each, its decision (if any options are offered); then its hook;
        then what it asked for (nested attacks, child steps per item, a repeat or a jump)."""
        dice = self.dice
        rolls = dice.rolls
        physical = dice.physical
        trace = ctx.trace if self.traced else None
        # Answered on the spot by the rules' default, unless decisions wait for answers or,
        # traced, given answers are checked and logged (``_ask`` never waits in such a run).
        on_the_spot = self._auto and not (trace is not None and self.given)
        entry: TraceEntry | None = None
        i, count, jumps, repeats = 0, len(steps), 0, 0
        while i < count:
            compiled = steps[i]
            name, title, ask, step, call, plugin, more = compiled.walk
            if trace is not None:
                entry = ctx._entry = TraceEntry(name, title, ctx.item)
                trace.append(entry)
            answer = None
            if ask is not None:
                options_plugin = compiled.options_plugin
                try:
                    if ask.when is not None and not ask.when(ctx):
                        offered = ()  # not asked here: no options hook runs
                    else:
                        if options_plugin is None:
                            offered = compiled.options(ctx)
                        else:  # its one implementation, as it is
                            ctx._plugin = options_plugin
                            offered = [compiled.options(ctx) or ()]
                            ctx._plugin = None
                        if ask.combine is not None:  # the ruleset's last word on what was offered
                            offered = ask.combine(ctx, offered)
                except (EndCycle, SkipItem, FacesNeeded):
                    ctx._plugin = None
                    raise
                except BaseException as exc:
                    ctx._plugin = None
                    raise self._fault(exc, compiled.options_hook, name) from exc
                if any(offered):
                    try:
                        if on_the_spot:
                            answer = self._default(compiled, ctx, entry, offered)
                        else:
                            answer = yield from self._ask(compiled, ctx, entry, offered)
                    except (EndCycle, SkipItem, GeneratorExit, VTTError):
                        raise
                    except BaseException as exc:  # the ruleset's ``who`` or ``default`` function
                        raise self._fault(exc, compiled.options_hook, name) from exc
                else:
                    ctx.answers.pop(ask.name, None)
            dice.step = name
            ctx._step = step
            first = len(rolls)
            ctx._plugin = plugin
            if physical is not None:
                physical.ctx = ctx
            try:
                call(ctx)
            except FacesNeeded:
                raise
            except (EndCycle, SkipItem) as end:
                ctx._plugin = None
                if entry is not None:
                    entry.ended = str(end)
                    entry.rolls = rolls[first:]
                raise
            except BaseException as exc:  # SystemExit and KeyboardInterrupt too: a pack never ends the process
                ctx._plugin = None
                raise self._fault(exc, compiled.hook_name, name) from exc
            ctx._plugin = None
            if entry is not None and len(rolls) != first:
                entry.rolls = rolls[first:]
            if ctx._control or more:
                # Nested attacks asked for, child steps, a repeated decision or a jump back.
                if ctx._nested:
                    nested, ctx._nested = ctx._nested, ()
                    for request in nested:
                        plan, child = self._nested(ctx, request)
                        saved_step = dice.step
                        record = yield from self._resolve(plan, child)
                        dice.step = saved_step
                        if physical is not None:
                            physical.ctx = ctx
                        self._adopt(ctx, entry, record)
                if compiled.children:
                    outer = ctx.item
                    for item in self._items(compiled, ctx):
                        ctx.item = item
                        try:
                            yield from self._run(compiled.children, ctx)
                        except SkipItem:
                            pass  # that item's sub-sequence is over; the next one starts
                    ctx.item = outer
                ctx._control = False
                i, repeats, jumps = _after(steps, i, compiled, ctx, answer, repeats, jumps)
                continue
            i += 1

    def _nested(self, parent: AttackContext, request: dict[str, Any]) -> tuple[_Plan, AttackContext]:
        """The plan and context of a nested attack ``parent`` asked for (``ctx.nest``)."""
        plan = self.engine.plan(request["ruleset"] or parent.ruleset.id)
        child = (plan.context_class if self.traced else plan.untraced_class)(
            plan.ruleset,
            parent.tokens,
            request["attacker"],
            request["targets"],
            request["declaration"],
            self.dice,
            changes=parent.changes,
            kind=request["kind"],
            parent=parent,
        )
        return plan, child

    @staticmethod
    def _adopt(ctx: AttackContext, entry: TraceEntry | None, record: Record) -> None:
        """A finished nested attack joins its step's trace entry and the outcome's ``children``."""
        if entry is not None:
            entry.add("children", record)
        ctx.outcome.setdefault("children", []).append(record.ctx.outcome)

    def _items(self, compiled: _Compiled, ctx: AttackContext) -> Iterable[Any]:
        """What a step with child steps runs them for (``Step.each``; once, with no item, without it)."""
        each = compiled.step.each
        return self._guard(each, ctx, compiled.hook_name, compiled.name) if each is not None else (None,)

    # -- decisions -----------------------------------------------------------
    #
    # A step's options hook returns one list per implementation. Options naming
    # their own token (Shield Guard's guarding model) go to that token's owner,
    # the others to the decider (``Ask.who``): one decision per group, each with
    # the decline option appended, until one is answered with something other
    # than declining. ``_default`` answers every group with the rules' default
    # on the spot; ``_ask`` (a generator) also takes given answers and yields
    # the decisions that need a round trip.

    def _groups(self, compiled: _Compiled, offer: _Offer, decider: str | None) -> list[tuple[str | None, tuple[Option, ...]]]:
        if offer.group is not None:
            return [(decider, offer.group)]
        groups: dict[str | None, list[Option]] = {}
        for option in offer.options:
            token = option.token
            groups.setdefault(token if token is not None else decider, []).append(option)
        return [(token, _with_decline(compiled.ask, group)) for token, group in groups.items()]

    def _default_of(self, ask: Ask, ctx: AttackContext, offer: _Offer, options: tuple[Option, ...]) -> str:
        """The rules' default among ``options`` (the ask's own, else decline, else the first)."""
        if options is offer.group and offer.default is not None:
            return offer.default
        default = ask.default(ctx, options) if callable(ask.default) else ask.default
        if not default:
            default = ask.decline.id if ask.decline is not None else options[0].id
        return default

    def _decider(self, compiled: _Compiled, ctx: AttackContext) -> str | None:
        who = compiled.who
        return who(ctx) if who is not None else None

    def _default(self, compiled: _Compiled, ctx: AttackContext, entry: TraceEntry | None, offered: list[list[Option]]) -> Answer:
        """Answer the step's decision with the rules' default, as ``_ask`` would with no answer given."""
        ask = compiled.ask
        lookup = tuple(map(id, _flatten(filter(None, offered))))  # _lookup(offered), inline
        offers = compiled.offers
        offer = offers.get(lookup)
        if offer is None:
            if entry is None and not self.given and len(offers) >= OFFER_CACHE:
                # Untraced, and options vary more than the cache holds (dice faces): answered
                # without making (and soon dropping) an offer; the cache keeps the first ones.
                answer = _lean_default(compiled, ctx, offered)
                if answer is not None:
                    return answer
            offer = _offer(compiled, lookup, offered)
        group = offer.group
        if group is None:
            if self.given:  # untraced with answers given: the general way (it never waits here)
                return _finish(self._ask(compiled, ctx, entry, offered))
            who = compiled.who
            return self._defaults(compiled, ctx, entry, offer, who(ctx) if who is not None else None)
        default = offer.default
        if default is None:
            default = ask.default(ctx, group) or compiled.decline or group[0].id
        answer = _PLAIN_ANSWERS.get(default) or _plain_answer(default)
        if entry is not None:
            who = compiled.who
            decider = who(ctx) if who is not None else None
            key = ask.name if not ctx.path and ctx.item is None else self._key(ctx, ask.name)
            decision = offer.decisions.get((key, decider, default)) or _decision(compiled, offer, key, decider, group, default)
            self.decisions.append((decision, answer, "default"))
            if entry.decisions:
                entry.decisions.append(key)
            else:
                entry.decisions = [key]
        elif self.given:
            # Untraced with answers given (the odds' fixed choices): as ``_ask`` would, without the
            # generator; the question is made only when a given answer needs more than a look-up.
            key = ask.name if not ctx.path and ctx.item is None else self._key(ctx, ask.name)
            if default not in offer.ids:
                raise ValueError(f"decision {key!r}: default {default!r} is not an option")
            given = self._given(key, ask.name)
            if given is not None:
                plain = offer.plain
                if plain is None:
                    plain = offer.plain = frozenset(o.id for o in group if not o.params)
                if given.params or given.option not in plain:
                    who = compiled.who
                    decision = _decision(compiled, offer, key, who(ctx) if who is not None else None, group, default)
                    try:
                        decision.check(given)
                    except InvalidRequest as exc:
                        raise InvalidRequest(
                            f"the given answer to {key!r}: {exc.message}", details={"answers": {key: exc.details}}
                        ) from None
                answer = given
        elif default not in offer.ids:
            # Untraced (the odds): nobody reads the question, so it is not made; its default is still checked.
            raise ValueError(f"decision {ask.name!r}: default {default!r} is not an option")
        ctx.answers[ask.name] = answer
        return answer

    def _defaults(
        self, compiled: _Compiled, ctx: AttackContext, entry: TraceEntry | None, offer: _Offer, decider: str | None
    ) -> Answer:
        """:meth:`_default` for options that go to more than one participant (one decision each)."""
        ask = compiled.ask
        key = self._key(ctx, ask.name) if entry is not None else ""
        for token, options in self._groups(compiled, offer, decider):
            default = self._default_of(ask, ctx, offer, options)
            answer = _plain_answer(default)
            if entry is not None:
                self.decisions.append((_decision(compiled, offer, key, token, options, default), answer, "default"))
                entry.add("decisions", key)
            elif not any(o.id == default for o in options):
                raise ValueError(f"decision {key!r}: default {default!r} is not an option")
            if answer.option != compiled.decline:
                break
        ctx.answers[ask.name] = answer
        return answer

    def _ask(self, compiled: _Compiled, ctx: AttackContext, entry: TraceEntry | None, offered: list[list[Option]]):
        ask: Ask = compiled.ask
        offer = _offer(compiled, _lookup(offered), offered)
        groups = self._groups(compiled, offer, self._decider(compiled, ctx))
        answer: Answer | None = None
        # Untraced and answered without a round trip (the odds), with no answers
        # given: nothing reads the decision's key, so it is not built.
        asked = self.traced or not self._auto
        key = self._key(ctx, ask.name) if asked or self.given else ""
        for token, opts in groups:
            default = self._default_of(ask, ctx, offer, opts)
            # Untraced and answered without a round trip (the odds): nobody reads
            # the question, so it is not made; its default is still checked.
            decision = _decision(compiled, offer, key, token, opts, default) if asked else None
            if decision is None and not any(o.id == default for o in opts):
                raise ValueError(f"decision {key!r}: default {default!r} is not an option")
            given = self._given(key, ask.name) if self.given else None
            if given is not None:
                try:
                    (decision or _decision(compiled, offer, key, token, opts, default)).check(given)
                except InvalidRequest as exc:
                    raise InvalidRequest(
                        f"the given answer to {key!r}: {exc.message}", details={"answers": {key: exc.details}}
                    ) from None
                answer, how = given, "given"
            elif self._auto:
                answer, how = _plain_answer(default), "default"
            else:
                answer, how = yield decision
            if decision is not None:
                self.decisions.append((decision, answer, how))
            if entry is not None:
                entry.add("decisions", key)
            if len(groups) == 1 or answer.option != compiled.decline:
                break
        ctx.answers[ask.name] = answer
        return answer

    def _key(self, ctx: AttackContext, name: str) -> str:
        if not ctx.path and ctx.item is None:
            return name
        key = "/".join((*ctx.path, name))
        if ctx.item is not None:
            key += f"[{ctx.item}]"
        return key

    def _given(self, key: str, name: str) -> Answer | None:
        for k in (key, name):
            queue = self.given.get(k)
            if queue:
                return queue.pop(0)
        return None

    def _guard(self, call: Callable[..., Any], ctx: AttackContext, hook: str, step: str) -> Any:
        """Call a hook; a plugin's exception becomes a ``plugin_error`` naming plugin and hook."""
        try:
            return call(ctx)
        except (EndCycle, SkipItem, FacesNeeded):
            raise
        except BaseException as exc:
            raise self._fault(exc, hook, step) from exc

    def _fault(self, exc: BaseException, hook: str, step: str) -> Exception:
        """What a hook's exception becomes: client faults stay, plugin bugs become ``plugin_error``."""
        if isinstance(exc, VTTError) and not (
            isinstance(exc, SnapshotMutation) or exc.code in ("illegal_transition", "internal")
        ):
            exc.details.setdefault("hook", hook)
            exc.details.setdefault("step", step)
            return exc
        return self._plugin_error(exc, hook, step)

    def _plugin_error(self, exc: BaseException, hook: str, step: str) -> PluginError:
        """A ``plugin_error`` naming the plugin: the innermost plugin module in the traceback,
        else the plugin of the innermost hook implementation there."""
        plugin = running = None
        hooks = self.engine.hook_plugins
        for frame, _ in traceback.walk_tb(exc.__traceback__):
            name = self.engine.plugin_of(frame.f_globals.get("__name__", ""))
            if name is not None:
                plugin = name
            running = hooks.get(frame.f_code) or running
        if plugin is None:
            plugin = running
        return PluginError(
            f"plugin {plugin or '?'} failed in hook {hook}: {type(exc).__name__}: {exc}",
            details={"plugin": plugin, "hook": hook, "step": step, "exception": type(exc).__name__},
        )

    def _record(self, ctx: AttackContext, *, top: bool) -> Record:
        return Record(ctx, self if top else None)


# Wire forms made once for values that come back again and again: the host's
# cached declarations and the engine's shared decisions. Keyed by identity, each
# entry holding its value (so an id is not reused while it is cached, and a hit
# is the very object), bounded. Records share these dicts: like every record's
# parts, they are read-only.
_WIRE_CACHE = 1024
_THAWED: dict[int, tuple[Any, dict[str, Any]]] = {}
_WIRES: dict[tuple[int, int, str], dict[str, Any]] = {}
_HELD: dict[tuple[int, int, str], tuple[Decision, Answer]] = {}
_ID = attrgetter("id")
_STEP_DICT = TraceEntry.to_dict


def _thawed(declaration: Mapping[str, Any]) -> dict[str, Any]:
    hit = _THAWED.get(id(declaration))
    if hit is not None and hit[0] is declaration:
        return hit[1]
    plain = thaw(declaration)
    if len(_THAWED) >= _WIRE_CACHE:
        _THAWED.clear()
    _THAWED[id(declaration)] = (declaration, plain)
    return plain


def _wires(decisions: list[tuple[Decision, Answer, str]]) -> list[dict[str, Any]]:
    """A record's entry for each decision: the decision's wire form, its answer and how it came."""
    return [
        _WIRES.get((id(decision), id(answer), how)) or _wire(decision, answer, how) for decision, answer, how in decisions
    ]


def _wire(decision: Decision, answer: Answer, how: str) -> dict[str, Any]:
    key = (id(decision), id(answer), how)
    if len(_WIRES) >= _WIRE_CACHE:
        _WIRES.clear()
        _HELD.clear()
    wire = _WIRES[key] = {**decision.to_dict(), "answer": answer.to_dict(), "how": how}
    _HELD[key] = (decision, answer)
    return wire


def _outcome(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome's plain copy for the record (nested attacks' outcomes are their own records')."""
    plain = outcome.copy() if type(outcome) is dict else dict(outcome)
    if "children" in plain:
        del plain["children"]
    for key, value in outcome.items():
        if type(value) not in _ATOMS and key != "children":
            plain[key] = thaw(value)
    return plain


class _Hands:
    """What a resolution with physical dice keeps to run again from the first step.

    :ivar start: ``(attacker, targets, declaration)`` as the resolution began.
    :ivar given: the given answers' queues as they began (each run takes from copies).
    :ivar sent: every answer sent to a waiting decision so far, in order.
    :ivar replay: the answers a new run still has to be sent before it waits again.
    """

    __slots__ = ("start", "given", "sent", "replay")

    def __init__(self, start: tuple[str, list[str], Mapping[str, Any]], given: dict[str, list[Answer]]) -> None:
        self.start = start
        self.given = {key: queue[:] for key, queue in given.items()}
        self.sent: list[tuple[Answer, str]] = []
        self.replay: list[tuple[Answer, str]] = []


class Record:
    """A finished resolution. Cheap to make; :meth:`to_dict` builds the wire form.

    :ivar outcome: what the ruleset reported (``hit``, damage...).
    :ivar ended: why the cycle ended early, or ``None``.
    """

    __slots__ = ("ctx", "dice", "decisions", "packs", "_dict", "_changes")

    def __init__(self, ctx: AttackContext, resolution: Resolution | None) -> None:
        self.ctx = ctx
        # What the top-level record shows of its resolution, held directly: a
        # record pointing back at its resolution (which holds the record) would
        # be a reference cycle only the garbage collector could free.
        if resolution is not None:
            self.dice: Dice | None = resolution.dice
            self.decisions: list[tuple[Decision, Answer, str]] = resolution.decisions
            self.packs: dict[str, str | None] = resolution.plan.packs
        else:
            self.dice = None
            self.decisions = []
            self.packs = {}
        self._dict: dict[str, Any] | None = None
        self._changes: dict[str, dict[str, Any]] | None = None

    @property
    def outcome(self) -> dict[str, Any]:
        return self.ctx.outcome

    @property
    def ended(self) -> str | None:
        return self.ctx.end_reason

    @property
    def changes(self) -> dict[str, dict[str, Any]]:
        """``{token_id: {"before": system, "after": system}}`` for every changed token."""
        if self._changes is None:
            self._changes = self.ctx.changes.diff()
        return self._changes

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self.to_dict() == other.to_dict()
        return self.to_dict() == other

    def to_dict(self) -> dict[str, Any]:
        if self._dict is not None:
            return self._dict
        ctx = self.ctx
        dice = self.dice
        out: dict[str, Any] = {
            "ruleset": ctx.ruleset.id,
            "kind": ctx.kind,
            "attacker": ctx.attacker.id,
            "targets": list(map(_ID, ctx.targets)),
            "declaration": _thawed(ctx.declaration),
            "steps": [_STEP_DICT(entry) for entry in ctx.trace],
            "outcome": _outcome(ctx.outcome),
            "ended": ctx.end_reason,
        }
        if dice is not None:  # a top-level record: its dice, decisions and token changes too
            out["seed"] = dice.seed
            out["dice"] = "scripted" if dice.scripted else "seeded"
            out["dice_used"] = dice.used
            if dice.physical is not None:
                out["physical"] = {"tokens": sorted(dice.physical.tokens), "faces": list(dice.physical.entered)}
            out["decisions"] = _wires(self.decisions) if self.decisions else []
            out["changes"] = self.changes
            out["packs"] = self.packs  # the plugins (and versions) it ran with: a replay knows
        self._dict = out
        return out
