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

if TYPE_CHECKING:  # pragma: no cover
    from marshmallow import Schema

    from .context import AttackContext

__all__ = ["Answer", "Ask", "Decision", "Option", "Ruleset", "Step"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One answer a participant may give to a decision.

    :ivar id: stable id sent back as the answer (``"parry"``, ``"die:3"``).
    :ivar label: text shown to the player.
    :ivar token: the token whose owner picks this option, when not the decision's
        usual decider (Shield Guard's guarding model).
    :ivar params: names and descriptions of extra values the answer may carry
        (``{"motes": "motes to spend"}``).
    :ivar plugin: which plugin offered it, when that plugin names itself (shown to
        players so a pack's option can be told from the rules' own).
    """

    id: str
    label: str
    token: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    plugin: str | None = None

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str):
            raise ValueError("an option needs a string id")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.token is not None:
            out["token"] = self.token
        if self.params:
            out["params"] = dict(self.params)
        if self.plugin is not None:
            out["plugin"] = self.plugin
        return out


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
        decisions whose options come only from packs ("no", "done").
    :ivar repeat: ask again after the hook ran, until the answer is ``decline``
        (single-die rerolls taken one at a time).
    :ivar timeout: seconds to wait for an answer; ``None`` uses the table's setting.
    """

    name: str
    prompt: str
    who: str | Callable[[AttackContext], str | None] = "defender"
    default: str | Callable[[AttackContext, tuple[Option, ...]], str] = ""
    decline: Option | None = None
    repeat: bool = False
    max_repeats: int = 50
    timeout: float | None = None


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

    def __post_init__(self) -> None:
        if not any(o.id == self.default for o in self.options):
            raise ValueError(f"decision {self.key!r}: default {self.default!r} is not an option")

    def option(self, option_id: str) -> Option | None:
        for o in self.options:
            if o.id == option_id:
                return o
        return None

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
