"""Building the plugin host: load plugins, register rulesets, validate.

:func:`make_host` is the factory (nothing is loaded at import time). It loads
every distribution in the ``vtt_bridge`` entry-point group — this one's
built-in rulesets included, exactly like a third-party pack — plus any module
paths given for development, honours a block list, optionally traces every
hook call, registers each ruleset's step hookspecs, and refuses a plugin that
implements a hook no ruleset declares.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import orjson
import pluggy
from marshmallow import Schema, ValidationError

from . import hookspecs
from .engine.resolution import Engine, Resolution
from .engine.steps import Ruleset
from .engine.tokens import Token, freeze
from .errors import InvalidRequest, PluginValidationError, UnknownRuleset

__all__ = ["Host", "PluginInfo", "make_host", "ENTRY_POINT_GROUP", "BLOCK_ENV", "TRACE_ENV"]

log = logging.getLogger("vtt_bridge.plugins")

ENTRY_POINT_GROUP = "vtt_bridge"
BLOCK_ENV = "VTT_BRIDGE_BLOCK_PLUGINS"
TRACE_ENV = "VTT_BRIDGE_TRACE_HOOKS"
PLUGINS_ENV = "VTT_BRIDGE_PLUGINS"
DECLARATION_CACHE = 1024  # validated declarations kept per host


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginInfo:
    """What ``vtt-bridge plugins`` shows for one loaded plugin."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": list(self.hooks),
        }


def _module_name(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return type(plugin).__module__


class Host:
    """The loaded plugins, their rulesets and the engine that resolves attacks."""

    def __init__(self, pm: pluggy.PluginManager, rulesets: Mapping[str, Ruleset], *, traced: bool = False) -> None:
        self.pm = pm
        self.rulesets = dict(rulesets)
        self._modules: dict[str, str] = {}
        for name, plugin in pm.list_name_plugin():
            if plugin is not None and name is not None:
                self._modules.setdefault(_module_name(plugin), name)
        self._plugin_cache: dict[str, str | None] = {}
        self._schemas: dict[tuple[str, str], Schema] = {}
        self._declarations: dict[tuple[str, bytes], Mapping[str, Any]] = {}
        self.traced = traced
        self.engine = Engine(pm.hook, self.rulesets, self.plugin_of)

    # -- introspection -------------------------------------------------------

    def plugin_of(self, module: str) -> str | None:
        """The plugin a module belongs to (its own module or a submodule of its package)."""
        try:
            return self._plugin_cache[module]
        except KeyError:
            pass
        found = self._modules.get(module)
        if found is None:
            best = ""
            for mod, name in self._modules.items():
                package = mod.rpartition(".")[0] or mod
                if (module.startswith(package + ".") or module == package) and len(package) > len(best):
                    best, found = package, name
        self._plugin_cache[module] = found
        return found

    def plugins(self) -> list[PluginInfo]:
        dists = {id(plugin): dist for plugin, dist in self.pm.list_plugin_distinfo()}
        out = []
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None or plugin is hookspecs:
                continue
            dist = dists.get(id(plugin))
            hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(plugin) or ()))
            out.append(
                PluginInfo(
                    name=name,
                    module=_module_name(plugin),
                    distribution=dist.project_name if dist is not None else None,
                    version=dist.version if dist is not None else None,
                    hooks=hooks,
                )
            )
        return sorted(out, key=lambda p: p.name)

    def call_order(self, hook_name: str) -> list[str]:
        """Plugin names implementing a hook, in the order pluggy calls them."""
        caller = getattr(self.pm.hook, hook_name, None)
        if caller is None:
            return []
        impls = caller.get_hookimpls()
        wrappers = [i.plugin_name for i in reversed(impls) if i.wrapper or i.hookwrapper]
        plain = [i.plugin_name for i in reversed(impls) if not (i.wrapper or i.hookwrapper)]
        return wrappers + plain

    def ruleset(self, ruleset_id: str) -> Ruleset:
        return self.engine.ruleset(ruleset_id)

    def monitor(self, before: Any, after: Any) -> Any:
        """Watch every hook call from now on (tracing, ``vtt_bridge.testing.HookRecorder``).

        ``before(hook_name, hook_impls, kwargs)`` and ``after(outcome, hook_name,
        hook_impls, kwargs)`` as in pluggy's ``add_hookcall_monitoring``; the
        engine reports the step hooks it runs directly, pluggy the rest.
        Returns a function that stops watching.
        """
        undo_pm = self.pm.add_hookcall_monitoring(before, after)
        undo_engine = self.engine.add_monitor(before, after)

        def undo() -> None:
            undo_pm()
            undo_engine()

        return undo

    # -- validation ----------------------------------------------------------

    def _schema(self, ruleset_id: str, which: str) -> Schema:
        key = (ruleset_id, which)
        schema = self._schemas.get(key)
        if schema is None:
            ruleset = self.ruleset(ruleset_id)
            cls = ruleset.token_schema if which == "token" else ruleset.declaration_schema
            schema = self._schemas[key] = cls()
        return schema

    def load_declaration(self, ruleset_id: str, data: Any) -> dict[str, Any]:
        """Validate an attack declaration; ``invalid_request`` with field messages if bad."""
        return self._load(ruleset_id, "declaration", data)

    def _declaration(self, ruleset_id: str, data: Any) -> Mapping[str, Any]:
        """A validated, frozen declaration, from a bounded cache of recent ones.

        Players send the same few declarations again and again, and marshmallow
        costs tens of microseconds per load; the cached value is the frozen form
        the engine reads anyway, so nobody can change it.
        """
        try:
            key = (ruleset_id, orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
        except TypeError:
            return freeze(self.load_declaration(ruleset_id, data))
        cache = self._declarations
        loaded = cache.get(key)
        if loaded is None:
            loaded = freeze(self.load_declaration(ruleset_id, data))
            if len(cache) >= DECLARATION_CACHE:
                del cache[next(iter(cache))]  # the oldest
            cache[key] = loaded
        return loaded

    def load_system(self, ruleset_id: str, data: Any) -> dict[str, Any]:
        """Validate a token's ``system`` data against the ruleset's token schema."""
        return self._load(ruleset_id, "token", data)

    def _load(self, ruleset_id: str, which: str, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise InvalidRequest(f"the {which} must be an object", details={which: ["Not a valid mapping type."]})
        try:
            return self._schema(ruleset_id, which).load(data)
        except ValidationError as err:
            raise InvalidRequest(f"invalid {which} for {ruleset_id}", details={which: err.messages}) from None

    def dump_system(self, ruleset_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
        return self._schema(ruleset_id, "token").dump(data)

    # -- resolving -----------------------------------------------------------

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
    ) -> Resolution:
        """Validate the declaration and begin a resolution (see :class:`Resolution`)."""
        loaded = self._declaration(ruleset_id, declaration)
        for token_id in (attacker, *targets):
            token = tokens.get(token_id)
            if token is None:
                from .errors import NotFound

                raise NotFound(f"no token {token_id!r}", details={"token": token_id})
            if token.ruleset != ruleset_id:
                raise InvalidRequest(
                    f"token {token_id!r} belongs to ruleset {token.ruleset!r}, not {ruleset_id!r}",
                    details={"token": token_id},
                )
        return self.engine.start(
            ruleset_id,
            tokens,
            attacker=attacker,
            targets=targets,
            declaration=loaded,
            seed=seed,
            dice=dice,
            answers=answers,
        )


def _traced(kwargs: Mapping[str, Any]) -> str:
    """Hook arguments for the trace log; a context shows its item and working numbers."""
    parts = []
    for key, value in kwargs.items():
        numbers = getattr(value, "_NUMBERS", None)
        if numbers is not None:
            shown = " ".join(f"{n}={getattr(value, n)!r}" for n in numbers)
            item = f" item={value.item!r}" if value.item is not None else ""
            parts.append(f"{key}={value!r}{item} {shown}".rstrip())
        else:
            parts.append(f"{key}={value!r}")
    return ", ".join(parts)


def _trace_calls(host: Host) -> None:
    """Log every hook call: plugins in call order, arguments (a context's numbers), result."""
    trace_log = logging.getLogger("vtt_bridge.hooks")

    def before(hook_name, hook_impls, kwargs):
        trace_log.info(
            "call %s plugins=%s args: %s", hook_name, [i.plugin_name for i in reversed(hook_impls)], _traced(kwargs)
        )

    def after(outcome, hook_name, hook_impls, kwargs):
        exc = outcome.exception
        if exc is not None:
            trace_log.info("done %s raised %r; args: %s", hook_name, exc, _traced(kwargs))
        else:
            trace_log.info("done %s result=%r; args: %s", hook_name, outcome.get_result(), _traced(kwargs))

    host.monitor(before, after)


def _import_plugin(name: str) -> ModuleType:
    """Import a plugin by module path; like ``python -m``, also from the current directory."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        top = name.partition(".")[0]
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, here)
        try:
            return importlib.import_module(name)
        except ImportError:
            sys.path.remove(here)
            raise


def make_host(
    *,
    plugins: Iterable[str | object] = (),
    block: Iterable[str] = (),
    entry_points: bool = True,
    trace: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> Host:
    """Build the plugin manager and the host.

    :param plugins: extra plugins: module paths (``"my_pack.hooks"``) or objects.
    :param block: plugin names not to load (added to ``$VTT_BRIDGE_BLOCK_PLUGINS``).
    :param entry_points: load the ``vtt_bridge`` entry-point group.
    :param trace: log every hook call; default from ``$VTT_BRIDGE_TRACE_HOOKS``.
    """
    env = os.environ if environ is None else environ
    pm = pluggy.PluginManager("vtt_bridge")
    pm.add_hookspecs(hookspecs)
    blocked = {b.strip() for b in env.get(BLOCK_ENV, "").split(",") if b.strip()} | set(block)
    for name in blocked:
        pm.set_blocked(name)
    if entry_points:
        try:
            pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        except ImportError as exc:
            raise PluginValidationError(f"a plugin failed to import: {exc}", details={"error": str(exc)}) from exc
    extra = [p for p in env.get(PLUGINS_ENV, "").split(",") if p.strip()] + list(plugins)
    for plugin in extra:
        if isinstance(plugin, str):
            name = plugin.strip()
            if pm.is_blocked(name) or pm.has_plugin(name):
                continue
            try:
                module = _import_plugin(name)
            except ImportError as exc:
                raise PluginValidationError(
                    f"cannot import plugin {name!r}: {exc}", details={"plugin": name}
                ) from exc
            if pm.is_registered(module):
                continue  # installed and also named for development: load it once
            pm.register(module, name=name)
        else:
            pm.register(plugin, name=getattr(plugin, "__name__", None) or type(plugin).__name__)

    rulesets: dict[str, Ruleset] = {}
    owners: dict[str, str] = {}
    for impl in reversed(pm.hook.vtt_bridge_rulesets.get_hookimpls()):
        for ruleset in impl.function() or ():
            if ruleset.id in rulesets:
                raise PluginValidationError(
                    f"ruleset {ruleset.id!r} is provided by both {owners[ruleset.id]} and {impl.plugin_name}",
                    details={"ruleset": ruleset.id, "plugins": [owners[ruleset.id], impl.plugin_name]},
                )
            rulesets[ruleset.id] = ruleset
            owners[ruleset.id] = impl.plugin_name
            try:
                pm.add_hookspecs(ruleset.hookspecs)
            except pluggy.PluginValidationError as exc:
                raise PluginValidationError(
                    f"plugin {exc.plugin!r}: {exc}", details={"plugin": getattr(exc, "plugin", None)}
                ) from exc
            missing = [h for h in ruleset.hook_names() if not hasattr(pm.hook, h) or getattr(pm.hook, h).spec is None]
            if missing:
                raise PluginValidationError(
                    f"ruleset {ruleset.id!r} declares steps without hookspecs: {', '.join(missing)}",
                    details={"ruleset": ruleset.id, "hooks": missing},
                )
    _refuse_unknown_hooks(pm)
    traced = trace if trace is not None else env.get(TRACE_ENV, "") not in ("", "0", "false")
    host = Host(pm, rulesets, traced=traced)
    if traced:
        _trace_calls(host)
    return host


def _refuse_unknown_hooks(pm: pluggy.PluginManager) -> None:
    known = [name for name, caller in vars(pm.hook).items() if getattr(caller, "spec", None) is not None]
    for name, caller in list(vars(pm.hook).items()):
        if getattr(caller, "spec", None) is not None:
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook:
                continue
            near = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise PluginValidationError(
                f"plugin {impl.plugin_name!r} implements {name!r}, which no installed ruleset declares{hint}",
                details={"plugin": impl.plugin_name, "hook": name, "suggestion": near[0] if near else None},
            )
