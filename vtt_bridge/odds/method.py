"""Which method gives the odds: the ruleset's exact model, or Monte Carlo.

The rule. The odds are **exact** when both hold:

1. the ruleset's plugin answers ``vtt_bridge_exact_odds`` for this request
   (it returns ``None`` for requests it cannot model: a declaration it does not
   know, an answer it does not understand);
2. every plugin *other than the one providing the ruleset* that implements any
   of the ruleset's hooks (a step hook or a decision's options hook) is either
   named in the model's ``accounts_for`` for this request — by its plugin name
   (the entry point's name) or its module's name (``vtt_godsgloom_momentum``),
   so the claim holds however the pack was loaded — or **inert here**: every
   :class:`~vtt_bridge.Declarable` it lists for the ruleset says ``inert`` and
   the request declares none of them. An inert pack promises to change nothing
   at the rules' default answers unless declared; answers that pick a pack's
   option are the exact model's to refuse (it returns ``None`` for answers it
   does not model) — or **probed**: every one of those hooks is in the model's
   ``probed`` set, the hooks the model runs for real (through
   ``OddsRequest.probe``) before the first die it convolves. A pack's Charm
   that acts only there (adds dice to the pool, points to a DV) is in the
   model's working numbers, so its odds stay exact whoever wrote it.

Otherwise the attack is resolved N times through the real pipeline (Monte
Carlo). Point 2 is deliberately blunt: the host cannot know what a pack's hook
does after the probe (a reroll, damage added after soak), so a pack that is
merely loaded there is enough to switch to Monte Carlo — unless the exact model
says it has taken that pack into account. A model may do
so per request: "the Excellencies pack changes nothing unless an Excellency is
declared or chosen" is a claim the agreement tests check against the real
pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from ..errors import InvalidRequest, PluginError, VTTError
from .model import ExactOdds, OddsRequest
from .result import Method

__all__ = ["Choice", "choose_method", "exact_model", "foreign_plugins", "inert_here", "ruleset_owner"]

Prefer = Literal["auto", "exact", "monte_carlo"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """The method chosen, why, and the exact model's answer when there is one.

    :ivar exact: the exact model's answer, when there is one (also when it is
        not used: its ``unit`` still names the damage measure).
    :ivar plugins: plugins other than the ruleset's own implementing its hooks,
        mapped to those hooks.
    """

    method: Method
    reason: str
    exact: ExactOdds | None
    plugins: dict[str, tuple[str, ...]]


def ruleset_owner(host: Any, ruleset_id: str) -> str | None:
    """The name of the plugin that provides ``ruleset_id``."""
    for impl in host.pm.hook.vtt_bridge_rulesets.get_hookimpls():
        for ruleset in impl.function() or ():
            if ruleset.id == ruleset_id:
                return impl.plugin_name
    return None


def foreign_plugins(host: Any, ruleset_id: str) -> dict[str, tuple[str, ...]]:
    """Plugins other than the ruleset's own implementing any of its hooks → those hooks."""
    owner = ruleset_owner(host, ruleset_id)
    found: dict[str, list[str]] = {}
    for hook_name in host.ruleset(ruleset_id).hook_names():
        for plugin in host.call_order(hook_name):
            if plugin != owner:
                found.setdefault(plugin, []).append(hook_name)
    return {plugin: tuple(hooks) for plugin, hooks in sorted(found.items())}


def exact_model(host: Any, request: OddsRequest) -> ExactOdds | None:
    """Ask the plugins for an exact model of ``request`` (``None``: there is none)."""
    caller = getattr(host.pm.hook, "vtt_bridge_exact_odds", None)
    if caller is None or not caller.get_hookimpls():
        return None
    try:
        answer = caller(ruleset=request.ruleset, request=request)
    except VTTError:
        raise  # a refusal from the pipeline a model probed: the request's fault, reported as is
    except BaseException as exc:  # a model's bug (SystemExit too) is reported like any plugin's
        raise PluginError(
            f"the exact odds model for {request.ruleset} failed: {type(exc).__name__}: {exc}",
            details={"hook": "vtt_bridge_exact_odds", "ruleset": request.ruleset, "exception": type(exc).__name__},
        ) from exc
    if answer is not None and answer.outcomes.total() != 1:
        raise PluginError(
            f"the exact odds model for {request.ruleset} returned probabilities summing to "
            f"{answer.outcomes.total()}, not 1",
            details={"hook": "vtt_bridge_exact_odds", "ruleset": request.ruleset},
        )
    unit = host.ruleset(request.ruleset).damage_unit
    if answer is not None and answer.unit is not None and answer.unit != unit:
        raise PluginError(
            f"the exact odds model for {request.ruleset} counts damage in {answer.unit!r}, "
            f"the ruleset in {unit!r}",
            details={"hook": "vtt_bridge_exact_odds", "ruleset": request.ruleset},
        )
    return answer


def _accounted(host: Any, plugin: str, accounts_for: frozenset[str]) -> bool:
    """Is ``plugin`` named in ``accounts_for``, by plugin name or by its module's name?"""
    if plugin in accounts_for:
        return True
    obj = host.pm.get_plugin(plugin)
    module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
    return module in accounts_for


def inert_here(host: Any, plugin: str, request: OddsRequest) -> bool:
    """Does ``plugin`` promise to leave this attack alone: all its declarables inert, none declared?"""
    declarables = getattr(host, "declarables", None)
    if declarables is None:
        return False
    mine = [d for d in declarables(request.ruleset) if d.plugin == plugin]
    return bool(mine) and all(d.inert for d in mine) and all(request.declared(d.id) is None for d in mine)


def choose_method(host: Any, request: OddsRequest, *, prefer: Prefer = "auto") -> Choice:
    """Apply the rule above; ``prefer`` forces one method (``"exact"`` fails if unavailable)."""
    plugins = foreign_plugins(host, request.ruleset)
    exact = exact_model(host, request)
    if prefer == "monte_carlo":
        return Choice(method="monte_carlo", reason="Monte Carlo was asked for", exact=exact, plugins=plugins)
    reason: str
    if exact is None:
        reason = f"no exact model covers this {request.ruleset} attack"
    else:
        named = [p for p in plugins if _accounted(host, p, exact.accounts_for)]
        inert = [p for p in plugins if p not in named and inert_here(host, p, request)]
        probed = [p for p in plugins if p not in named and p not in inert and set(plugins[p]) <= exact.probed]
        unaccounted = [p for p in plugins if p not in named and p not in inert and p not in probed]
        if not unaccounted:
            reason = f"the {request.ruleset} exact model covers this attack"
            if named:
                reason += f" (it accounts for {', '.join(named)})"
            if inert:
                reason += f" ({', '.join(inert)}: installed, nothing of it declared)"
            if probed:
                reason += f" ({', '.join(probed)}: acts only before the first roll, which the model runs for real)"
            return Choice(method="exact", reason=reason, exact=exact, plugins=plugins)
        first = unaccounted[0]
        after = [h for h in plugins[first] if h not in exact.probed]
        reason = (
            f"plugin {first} implements {', '.join(after)}, which the exact model does not account for"
        )
        if len(unaccounted) > 1:
            reason += f" (also: {', '.join(unaccounted[1:])})"
    if prefer == "exact":
        raise InvalidRequest(f"exact odds are not available: {reason}", details={"method": [reason]})
    return Choice(method="monte_carlo", reason=reason, exact=exact, plugins=plugins)
