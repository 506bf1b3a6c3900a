"""Rulesets, steps, decisions: the data that describes an attack sequence.

A ruleset is a tuple of steps in rulebook order. A step is called as the hook
``<ruleset>_<step>``; a step may loop its child steps over items (every model
under a template), ask a decision before its hook runs, and name the steps it
may jump back to. Which step may follow which is therefore data: the engine
refuses any other jump.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import InvalidRequest
from .tokens import FrozenDict

if TYPE_CHECKING:  # pragma: no cover
    from marshmallow import Schema

    from .context import AttackContext

__all__ = ["Answer", "Ask", "Decision", "Declarable", "Option", "Param", "Ruleset", "Step", "check_params", "params_schema"]

_PARAM_TYPES = ("integer", "number", "boolean", "string")
#: The longest string a ``string`` parameter takes (answers and declarations are
#: stored and broadcast: a free-text parameter must not carry a novel).
STRING_MAX = 200


_NOT_A = {
    "integer": "Not a valid integer.",
    "number": "Not a valid number.",
    "boolean": "Not a valid boolean.",
    "string": "Not a valid string.",
}


def _is(kind: str, value: Any) -> bool:
    t = type(value)
    if kind == "integer":
        return t is int
    if kind == "number":
        return (t is int or t is float) and value == value and value not in (float("inf"), float("-inf"))
    if kind == "boolean":
        return t is bool
    return t is str


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """A typed value an option or a declarable carries (``{"dice": Param("integer", ...)}``).

    On the wire it is a JSON Schema property (:meth:`to_schema`); every value a
    client sends for it passes :meth:`validate` before any hook sees it.

    :ivar type: ``"integer"``, ``"number"``, ``"boolean"`` or ``"string"``.
    :ivar label: the field's label in a form (JSON Schema ``title``).
    :ivar minimum, maximum: inclusive bounds of a number (``None``: open).
    :ivar default: the value a hook should assume when it is not given.
    :ivar choices: the only values allowed (JSON Schema ``enum``).
    :ivar description: a longer help text.
    :ivar required: the value must be given (most parameters have a default instead).
    """

    type: str
    label: str = ""
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: Any = None
    choices: tuple[Any, ...] | None = None
    description: str = ""
    required: bool = False

    def __init__(self, type: str, label: str = "", *, minimum=None, maximum=None, default=None,
                 choices=None, description: str = "", required: bool = False) -> None:  # fmt: skip
        if type not in _PARAM_TYPES:
            raise ValueError(f"a Param's type is one of {', '.join(_PARAM_TYPES)}, not {type!r}")
        setattr_ = object.__setattr__
        setattr_(self, "type", type)
        setattr_(self, "label", label)
        setattr_(self, "minimum", minimum)
        setattr_(self, "maximum", maximum)
        setattr_(self, "default", default)
        setattr_(self, "choices", tuple(choices) if choices is not None else None)
        setattr_(self, "description", description)
        setattr_(self, "required", required)
        if minimum is not None and maximum is not None and minimum > maximum:
            raise ValueError(f"Param {label!r}: minimum {minimum} is above maximum {maximum}")
        if default is not None and self.problem(default) is not None:
            raise ValueError(f"Param {label!r}: default {default!r}: {self.problem(default)}")

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (a message), or ``None`` when it is valid."""
        kind = self.type
        if not _is(kind, value):
            return _NOT_A[kind]
        if self.choices is not None and value not in self.choices:
            return f"Must be one of: {', '.join(str(c) for c in self.choices)}."
        if kind == "string":
            if len(value) > STRING_MAX:
                return f"Longer than {STRING_MAX} characters."
            return None
        if kind in ("integer", "number"):
            low, high = self.minimum, self.maximum
            if (low is not None and value < low) or (high is not None and value > high):
                if low is not None and high is not None:
                    return f"Must be between {low} and {high}."
                if low is not None:
                    return f"Must be at least {low}."
                return f"Must be at most {high}."
        return None

    def validate(self, value: Any, *, name: str = "value") -> Any:
        """``value`` if it is valid; else ``InvalidRequest`` naming ``name`` in its details."""
        problem = self.problem(value)
        if problem is not None:
            raise InvalidRequest(f"{name}: {problem}", details={name: [problem]})
        return value

    def to_schema(self) -> dict[str, Any]:
        """This parameter as a JSON Schema property."""
        out: dict[str, Any] = {"type": self.type}
        if self.label:
            out["title"] = self.label
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.type == "string":
            out["maxLength"] = STRING_MAX
        if self.default is not None:
            out["default"] = self.default
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.description:
            out["description"] = self.description
        return out


def _params(params: Any, owner: str) -> Mapping[str, Param]:
    """``{name: Param}`` from what an option or declarable was given.

    A plain string (the old form, deprecated) is a free ``string`` parameter labelled with it.
    """
    if not params:
        return _NO_PARAMS
    if not isinstance(params, Mapping):
        raise ValueError(f"{owner}: params is a mapping of names to Param")
    out = {}
    for name, param in params.items():
        if isinstance(param, str):
            param = Param("string", label=param)
        elif not isinstance(param, Param):
            raise ValueError(f"{owner}: param {name!r} is not a Param")
        out[str(name)] = param
    return FrozenDict(out)


_NO_PARAMS: Mapping[str, Param] = FrozenDict()


def params_schema(params: Mapping[str, Param]) -> dict[str, Any]:
    """The JSON Schema object of a set of parameters (an option's or a declarable's)."""
    return {
        "type": "object",
        "properties": {name: p.to_schema() for name, p in params.items()},
        "required": [name for name, p in params.items() if p.required],
        "additionalProperties": False,
    }


def check_params(params: Mapping[str, Param], given: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The valid values of ``given`` and the problems (``{name: [message]}``; empty: all valid).

    Names ``params`` does not declare are problems ("Unknown parameter."), and so
    is a required one that is missing.
    """
    if not isinstance(given, Mapping):
        return {}, {"_schema": ["Not a valid mapping type."]}
    values: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, value in given.items():
        param = params.get(name) if type(name) is str else None
        if param is None:
            known = ", ".join(params) or "none"
            errors[str(name)] = [f"Unknown parameter; this one takes: {known}."]
            continue
        problem = param.problem(value)
        if problem is None:
            values[name] = value
        else:
            errors[name] = [problem]
    for name, param in params.items():
        if param.required and name not in given:
            errors[name] = ["Missing data for required field."]
    return values, errors


_SCHEMAS: dict[int, tuple[Mapping[str, Param], dict[str, Any]]] = {}


def _schema_of(params: Mapping[str, Param]) -> dict[str, Any]:
    """``params_schema(params)``, made once per parameter set (options are made once and reused)."""
    cached = _SCHEMAS.get(id(params))
    if cached is not None and cached[0] is params:
        return cached[1]
    schema = params_schema(params)
    if len(_SCHEMAS) < 10_000:
        _SCHEMAS[id(params)] = (params, schema)
    return schema


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One answer a participant may give to a decision.

    :ivar id: stable id sent back as the answer (``"parry"``, ``"die:3"``).
    :ivar label: text shown to the player.
    :ivar token: the token whose owner picks this option, when not the decision's
        usual decider (Shield Guard's guarding model).
    :ivar params: the values an answer choosing this option may carry, each a
        typed :class:`Param` (``{"dice": Param("integer", minimum=0, maximum=20)}``);
        an answer carrying any other value, or one of the wrong type or out of
        range, is refused before a hook sees it. (A plain string instead of a
        ``Param`` still works and means a free text value; deprecated.)
    :ivar plugin: which plugin offered it, when that plugin names itself (shown to
        players so a pack's option can be told from the rules' own).
    :ivar detail: what choosing it means, in a few words, where the rules know
        (``"DV 4"``, ``"helps 42%"``); shown beside the label.
    :ivar counts_as: for a pack's option, the id of the ruleset's own option it
        stands for (a Parry Charm's option ``counts_as="parry"``); a ruleset that
        must know which of its own options was meant reads it, and may refuse a
        pack option without one.
    """

    id: str
    label: str
    token: str | None = None
    params: Mapping[str, Param] = field(default_factory=dict)
    plugin: str | None = None
    detail: str | None = None
    counts_as: str | None = None

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str):
            raise ValueError("an option needs a string id")
        object.__setattr__(self, "params", _params(self.params, f"option {self.id!r}"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.token is not None:
            out["token"] = self.token
        if self.params:
            out["params"] = _schema_of(self.params)
        if self.plugin is not None:
            out["plugin"] = self.plugin
        if self.detail is not None:
            out["detail"] = self.detail
        if self.counts_as is not None:
            out["counts_as"] = self.counts_as
        return out


DECLARABLE_KINDS = ("charm", "ability", "option")
#: The id of every decision's decline option (``Ask.decline``), whatever the ruleset.
DECLINE = "decline"


@dataclass(frozen=True, slots=True, kw_only=True)
class Declarable:
    """Something an attacker may declare, as a plugin describes it (``vtt_bridge_declarables``).

    :ivar id: the id in ``declaration.charms`` (``{"id": "first-excellency", "dice": 3}``).
    :ivar label: its name as players see it.
    :ivar plugin: the plugin that implements it (its entry-point name).
    :ivar kind: ``"charm"`` or ``"ability"``: declared in ``declaration.charms``;
        ``"option"``: listed so players know it, but chosen at a decision (an
        option), never declared.
    :ivar params: the values a declaration of it carries, each a typed :class:`Param`.
    :ivar description: what it does, in a line or two.
    :ivar inert: an attack that declares none of this plugin's declarables is not
        changed by the plugin at the rules' default answers, so the exact odds
        stay exact while it is installed and not declared.
    """

    id: str
    label: str
    plugin: str
    kind: str = "charm"
    params: Mapping[str, Param] = field(default_factory=dict)
    description: str = ""
    inert: bool = True

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str):
            raise ValueError("a declarable needs a string id")
        if self.kind not in DECLARABLE_KINDS:
            raise ValueError(f"declarable {self.id!r}: kind is one of {', '.join(DECLARABLE_KINDS)}")
        object.__setattr__(self, "params", _params(self.params, f"declarable {self.id!r}"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "plugin": self.plugin,
            "kind": self.kind,
            "description": self.description,
            "inert": self.inert,
            "params": _schema_of(self.params),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """The answer to a decision: an option id and any values it carries."""

    option: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"option": self.option}
        if self.params:
            out["params"] = dict(self.params)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """A decision a step gives a participant before its hook runs.

    Its options come from the hook ``<ruleset>_<name>_options``; the ruleset's
    own implementation offers the rules' options and packs add theirs. With no
    options the decision is not asked at all.

    :ivar name: the decision's name, also the key of its answer (``"defense"``).
    :ivar who: ``"attacker"``, ``"defender"``, ``"gm"``, or a function of the
        context returning the deciding token's id (``None`` for the GM).
    :ivar prompt: the question as shown to the player.
    :ivar default: the rules' default: an option id, or a function
        ``(ctx, options) -> option id``.
    :ivar decline: an option appended whenever other options are offered, for
        decisions whose options come only from packs ("keep the roll", "no
        counterattack"). Its id is always ``"decline"`` (:data:`DECLINE`), in
        every ruleset, so a client or a GM's pre-given answer can say "no" the
        same way everywhere; its label says what declining means here.
    :ivar repeat: ask again after the hook ran, until the answer is ``decline``
        (single-die rerolls taken one at a time).
    :ivar timeout: seconds to wait for an answer; ``None`` uses the table's setting.
    :ivar when: a function of the context saying whether the decision may be asked
        here at all (``None``: always). When it returns false no options hook runs
        and nothing is asked, whoever would have offered options: a rule that
        withdraws every option ("no counterattack against a counterattack")
        without a wrapper around the options hook.
    :ivar combine: a function ``(ctx, offered) -> offered`` given what the options
        hook returned (a list of options per implementation, after every wrapper)
        and returning the options to ask with, in the same form; ``None`` (the
        default) asks with the options as offered. The ruleset's own last word on
        a decision's options, such as merging a pack's option into its own option
        of the same id; packs wrap the options hook instead (``wrapper=True``).
    """

    name: str
    prompt: str
    who: str | Callable[[AttackContext], str | None] = "defender"
    default: str | Callable[[AttackContext, tuple[Option, ...]], str] = ""
    decline: Option | None = None
    repeat: bool = False
    max_repeats: int = 50
    timeout: float | None = None
    when: Callable[[AttackContext], bool] | None = None
    combine: Callable[[AttackContext, list[list[Option]]], list[list[Option]]] | None = None

    def __post_init__(self) -> None:
        if self.decline is not None and self.decline.id != DECLINE:
            raise ValueError(
                f"decision {self.name!r}: a decline option's id is {DECLINE!r} in every ruleset, "
                f"not {self.decline.id!r} (its label says what declining means)"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A question put to one participant; the engine yields it and waits.

    :ivar key: unique within the resolution (``"defense"``,
        ``"counterattack/defense"``, ``"boost_attack[w2]"``); pre-given answers
        are looked up by key, then by name.
    :ivar token: the token whose owner decides; ``None`` means the GM.
    """

    key: str
    name: str
    step: str
    prompt: str
    token: str | None
    options: tuple[Option, ...]
    default: str
    timeout: float | None = None
    #: For a question asking for the faces of real dice: ``{"label", "number", "sides"}``
    #: (``sides`` a list of sizes for a mixed pool); ``None`` for every other question.
    dice: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not any(o.id == self.default for o in self.options):
            raise ValueError(f"decision {self.key!r}: default {self.default!r} is not an option")

    def option(self, option_id: str) -> Option | None:
        for o in self.options:
            if o.id == option_id:
                return o
        return None

    def check(self, answer: Answer) -> Answer:
        """``answer`` if it names one of the options and only that option's valid params.

        Otherwise ``InvalidRequest`` with details ``{"option": [...]}`` or
        ``{"params": {name: [...]}}``; nothing a hook could see has changed.
        """
        option = self.option(answer.option)
        if option is None:
            raise InvalidRequest(
                f"{answer.option!r} is not an option of {self.key!r}",
                details={"option": [f"Must be one of: {', '.join(o.id for o in self.options)}."]},
            )
        if answer.params or option.params:
            _, errors = check_params(option.params, answer.params)
            if errors:
                first = next(iter(errors))
                raise InvalidRequest(
                    f"option {option.id!r} of {self.key!r}: {first}: {errors[first][0]}",
                    details={"params": errors},
                )
        return answer

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "step": self.step,
            "prompt": self.prompt,
            "token": self.token,
            "options": [o.to_dict() for o in self.options],
            "default": self.default,
            "timeout": self.timeout,
            **({"dice": dict(self.dice)} if self.dice is not None else {}),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One numbered event of the rulebook, called as the hook ``<ruleset>_<name>``.

    :ivar name: hook suffix, named after the step (``"attack_roll"``).
    :ivar title: as the chat card shows it ("3. Attack roll").
    :ivar ask: the decision asked before the hook runs, if any.
    :ivar each: for a step with ``steps``: a function of the context returning
        the items (token ids) to run the child steps for, one after another;
        ``ctx.item`` holds the current one.
    :ivar steps: child steps, run after this step's own hook.
    :ivar goto: names of earlier sibling steps this step may send the sequence
        back to with ``ctx.goto`` (Warmachine: "return to step b").
    """

    name: str
    title: str
    ask: Ask | None = None
    each: Callable[[AttackContext], list[str]] | None = None
    steps: tuple[Step, ...] = ()
    goto: tuple[str, ...] = ()

    def walk(self):
        yield self
        for child in self.steps:
            yield from child.walk()


@dataclass(frozen=True, kw_only=True)
class Ruleset:
    """A tabletop ruleset's attack sequence and the schemas of its data.

    :ivar id: stable id, also the prefix of its hooks (``"exalted2e"``).
    :ivar steps: the sequence in rulebook order.
    :ivar hookspecs: the module declaring one hookspec per step (and per decision's
        options hook), registered with the plugin manager at start-up.
    :ivar token_schema: marshmallow schema of a token's ``system`` data.
    :ivar declaration_schema: marshmallow schema of the attack declaration.
    :ivar numbers: the working numbers a context of this ruleset carries
        (``"attack_pool"``, ``"dv"``); every change to one is traced.
    :ivar setup: called once with the fresh context before step one.
    :ivar sample_tokens: tokens for the demo table and the examples.
    :ivar min_targets, max_targets: how many targets a declaration may name.
    :ivar damage_unit: what ``outcome["damage"]`` counts ("health levels",
        "damage points", "wounds"): the unit the odds report, exact or Monte Carlo.
    """

    id: str
    title: str
    steps: tuple[Step, ...]
    hookspecs: ModuleType
    token_schema: type[Schema]
    declaration_schema: type[Schema]
    numbers: tuple[str, ...] = ()
    setup: Callable[[AttackContext], None] | None = None
    sample_tokens: Callable[[], list[dict[str, Any]]] | None = None
    min_targets: int = 1
    max_targets: int = 1
    description: str = ""
    damage_unit: str = "damage"

    def all_steps(self) -> list[Step]:
        return [s for top in self.steps for s in top.walk()]

    def hook_names(self) -> list[str]:
        """Every hook this ruleset declares: one per step, one per decision's options."""
        names = []
        for step in self.all_steps():
            names.append(f"{self.id}_{step.name}")
            if step.ask is not None:
                names.append(f"{self.id}_{step.ask.name}_options")
        return names
