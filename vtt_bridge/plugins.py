"""Building the plugin host: load plugins, register rulesets, validate.

:func:`make_host` is the factory (nothing is loaded at import time). It loads
every distribution in the ``vtt_bridge`` entry-point group — this one's
built-in rulesets included, exactly like a third-party pack — plus any module
paths given for development, honours a block list, optionally traces every
hook call, registers each ruleset's step hookspecs, and refuses a plugin that
implements a hook no ruleset declares.
"""

from __future__ import annotations

import dataclasses
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
from marshmallow import Schema, ValidationError, fields, validate

from . import hookspecs
from .engine.resolution import Engine, Resolution
from .engine.steps import Declarable, Ruleset, check_params
from .engine.tokens import Token, freeze, thaw
from .errors import InvalidRequest, PluginError, PluginValidationError

__all__ = ["Host", "PluginInfo", "make_host", "ENTRY_POINT_GROUP", "BLOCK_ENV", "TRACE_ENV"]

log = logging.getLogger("vtt_bridge.plugins")

ENTRY_POINT_GROUP = "vtt_bridge"
BLOCK_ENV = "VTT_BRIDGE_BLOCK_PLUGINS"
TRACE_ENV = "VTT_BRIDGE_TRACE_HOOKS"
PLUGINS_ENV = "VTT_BRIDGE_PLUGINS"
DECLARATION_CACHE = 1024  # validated declarations kept per host
LEAN_SCHEMAS = 256  # token schemas with unchanged fields taken as they are (Host.changed_token), per host


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

    def __init__(
        self,
        pm: pluggy.PluginManager,
        rulesets: Mapping[str, Ruleset],
        *,
        traced: bool = False,
        dists: Mapping[int, tuple[str, str | None]] | None = None,
        installed: Host | None = None,
    ) -> None:
        self.pm = pm
        self._dists = dict(dists or {})
        self.rulesets = dict(rulesets)
        #: The host of every installed plugin this one is a pack set of (itself when it is that host).
        self.installed: Host = installed if installed is not None else self
        self._views: dict[frozenset[str], Host] = {}
        self._ruleset_packs: dict[str, dict[str, str | None]] = {}
        self._owners: dict[str, str] | None = None
        self._modules: dict[str, str] = {}
        for name, plugin in pm.list_name_plugin():
            if plugin is not None and name is not None:
                self._modules.setdefault(_module_name(plugin), name)
        self._plugin_cache: dict[str, str | None] = {}
        self._schemas: dict[tuple[str, str], Schema] = {}
        self._lean: dict[tuple[str, frozenset[str]], Schema] = {}
        self._containers: dict[str, list[tuple[str, str, fields.Field]]] = {}
        self._declarations: dict[tuple[str, bytes], Mapping[str, Any]] = {}
        self._declarables: dict[str, dict[str, Declarable]] = {}
        self._flags: dict[str, dict[str, Schema]] = {}
        self.traced = traced
        self.engine = Engine(pm.hook, self.rulesets, self.plugin_of, packs_of=self.ruleset_packs)

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

    def _distributions(self) -> dict[str, tuple[str | None, str | None]]:
        """Each loaded plugin's distribution name and version (``None`` for a plugin registered
        by hand), by plugin name in the order they were registered."""
        dists = {id(plugin): _named(dist) for plugin, dist in self.pm.list_plugin_distinfo()}
        dists.update(self._dists)
        return {
            name: dists.get(id(plugin), (None, None))
            for name, plugin in self.pm.list_name_plugin()
            if plugin is not None and plugin is not hookspecs
        }

    def plugins(self) -> list[PluginInfo]:
        """The loaded plugins in the order they were registered (see :func:`make_host`)."""
        dists = self._distributions()
        out = []
        for name, plugin in self.pm.list_name_plugin():
            if name not in dists:
                continue
            distribution, version = dists[name]
            hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(plugin) or ()))
            out.append(
                PluginInfo(
                    name=name,
                    module=_module_name(plugin),
                    distribution=distribution,
                    version=version,
                    hooks=hooks,
                )
            )
        return out

    def call_order(self, hook_name: str) -> list[str]:
        """Plugin names implementing a hook, in the order pluggy calls them."""
        caller = getattr(self.pm.hook, hook_name, None)
        if caller is None:
            return []
        impls = caller.get_hookimpls()
        wrappers = [i.plugin_name for i in reversed(impls) if i.wrapper or i.hookwrapper]
        plain = [i.plugin_name for i in reversed(impls) if not (i.wrapper or i.hookwrapper)]
        return wrappers + plain

    # -- packs: the plugins a table may enable or disable -------------------

    def ruleset_plugins(self) -> tuple[str, ...]:
        """The plugins that provide rulesets: always on, at every table."""
        return tuple(dict.fromkeys(impl.plugin_name for impl in self.pm.hook.vtt_bridge_rulesets.get_hookimpls()))

    def packs(self) -> tuple[str, ...]:
        """The packs this host runs (every loaded plugin that provides no ruleset), in registration order."""
        owners = set(self.ruleset_plugins())
        return tuple(
            name
            for name, plugin in self.pm.list_name_plugin()
            if plugin is not None and plugin is not hookspecs and name not in owners
        )

    def check_packs(self, packs: Iterable[Any], *, field: str = "packs") -> tuple[str, ...]:
        """``packs`` as installed pack names in registration order; an unknown one is an
        ``invalid_request`` naming it (and the installed ones) at ``field``."""
        if isinstance(packs, (str, bytes)) or not isinstance(packs, Iterable):
            raise InvalidRequest(f"{field} is a list of pack names", details={field: ["Not a valid list."]})
        installed = self.installed.packs()
        wanted = list(packs)
        for name in wanted:
            if not isinstance(name, str) or name not in installed:
                near = difflib.get_close_matches(name, installed, n=1) if isinstance(name, str) else []
                hint = f"; did you mean {near[0]!r}?" if near else ""
                if isinstance(name, str) and name in self.installed.ruleset_plugins():
                    message = f"{name!r} provides a ruleset: rulesets are always on"
                else:
                    message = f"no installed pack {name!r}{hint}; installed: {', '.join(installed) or 'none'}"
                short = "A ruleset, always on." if "ruleset" in message else "Not an installed pack."
                raise InvalidRequest(message, details={field: [short], "pack": name})
        return tuple(name for name in installed if name in set(wanted))

    def for_packs(self, packs: Iterable[str] | None) -> Host:
        """The host running the rulesets with only ``packs`` of the installed packs enabled.

        ``None`` (or every installed pack) is the host of every installed plugin.
        Each pack set's host is made once and kept (its own plugin manager of the
        same plugin objects, in the same order, so its own step plans, declarables
        and flag schemas): a table's attacks and odds run through it, and a forked
        resolver inherits the ones already made. An unknown pack is an ``invalid_request``.
        """
        base = self.installed
        if packs is None:
            return base
        enabled = frozenset(base.check_packs(packs))
        if enabled == frozenset(base.packs()):
            return base
        view = base._views.get(enabled)
        if view is None:
            view = base._views[enabled] = base._subset(enabled)
        return view

    def _subset(self, enabled: frozenset[str]) -> Host:
        owners = set(self.ruleset_plugins())
        pm = pluggy.PluginManager("vtt_bridge")
        pm.add_hookspecs(hookspecs)
        for ruleset in self.rulesets.values():
            pm.add_hookspecs(ruleset.hookspecs)
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None or plugin is hookspecs:
                continue
            if name in owners or name in enabled:
                pm.register(plugin, name=name)
        host = Host(pm, self.rulesets, traced=self.traced, dists=self._dists, installed=self)
        # What the plugins declare was loaded (and checked) with every installed plugin: the
        # pack set's is that, of its own plugins, without calling their hooks again.
        on = owners | enabled
        for ruleset_id in self.rulesets:
            host._declarables[ruleset_id] = {
                k: d for k, d in self._declarable_map(ruleset_id).items() if d.plugin in on
            }
            host._flags[ruleset_id] = {p: s for p, s in self.flag_schemas(ruleset_id).items() if p in on}
        if self.traced:
            _trace_calls(host)
        return host

    def _owner(self, ruleset_id: str) -> str:
        """The plugin that provides ``ruleset_id`` (asked of every installed plugin once)."""
        owners = self._owners
        if owners is None:
            owners = self._owners = {
                ruleset.id: impl.plugin_name
                for impl in self.pm.hook.vtt_bridge_rulesets.get_hookimpls()
                for ruleset in impl.function() or ()
            }
        return str(owners.get(ruleset_id))

    def ruleset_packs(self, ruleset_id: str) -> dict[str, str | None]:
        """``{plugin: version}`` of the plugins an attack of ``ruleset_id`` runs with here: the
        ruleset's own and every enabled pack with a step hook or a declarable for it (what
        each attack record names under ``packs``)."""
        found = self._ruleset_packs.get(ruleset_id)
        if found is not None:
            return found
        ruleset = self.ruleset(ruleset_id)
        names: set[str] = {self.installed._owner(ruleset_id)}
        for hook in ruleset.hook_names():
            names.update(self.call_order(hook))
        names.update(d.plugin for d in self._declarable_map(ruleset_id).values() if d.plugin)
        found = self._ruleset_packs[ruleset_id] = {
            n: version for n, (_, version) in self._distributions().items() if n in names
        }
        return found

    def ruleset(self, ruleset_id: str) -> Ruleset:
        return self.engine.ruleset(ruleset_id)

    def _per_plugin(self, hook_name: str, ruleset_id: str) -> list[tuple[str, Any]]:
        """``(plugin name, result)`` of a host hook taking ``ruleset``, in call order, None left out.

        A plugin whose hook raises cannot be loaded: that is a start-up error naming it.
        """
        out = []
        for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
            try:
                result = impl.function(**{name: ruleset_id for name in impl.argnames})
            except Exception as exc:
                raise PluginValidationError(
                    f"plugin {impl.plugin_name!r} failed in {hook_name}({ruleset_id!r}): {type(exc).__name__}: {exc}",
                    details={"plugin": impl.plugin_name, "hook": hook_name, "ruleset": ruleset_id},
                ) from exc
            if result is not None:
                out.append((impl.plugin_name, result))
        return out

    def declarables(self, ruleset_id: str) -> tuple[Declarable, ...]:
        """What an attacker may declare for ``ruleset_id``, from every plugin, in call order."""
        return tuple(self._declarable_map(ruleset_id).values())

    def _declarable_map(self, ruleset_id: str) -> dict[str, Declarable]:
        found = self._declarables.get(ruleset_id)
        if found is not None:
            return found
        self.ruleset(ruleset_id)
        found = {}
        for plugin, items in self._per_plugin("vtt_bridge_declarables", ruleset_id):
            for item in items:
                if not isinstance(item, Declarable):
                    raise PluginValidationError(
                        f"plugin {plugin!r}: vtt_bridge_declarables returned {item!r}, not a Declarable",
                        details={"plugin": plugin, "hook": "vtt_bridge_declarables"},
                    )
                if item.plugin != plugin:
                    item = dataclasses.replace(item, plugin=plugin)
                if item.id in found:
                    raise PluginValidationError(
                        f"{ruleset_id}: {item.id!r} is declared by both {found[item.id].plugin} and {plugin}",
                        details={"ruleset": ruleset_id, "id": item.id, "plugins": [found[item.id].plugin, plugin]},
                    )
                found[item.id] = item
        self._declarables[ruleset_id] = found
        return found

    def flag_schemas(self, ruleset_id: str) -> dict[str, Schema]:
        """``{plugin name: schema}`` of the flags plugins keep on tokens of ``ruleset_id``."""
        found = self._flags.get(ruleset_id)
        if found is not None:
            return found
        self.ruleset(ruleset_id)
        found = {}
        for plugin, schema in self._per_plugin("vtt_bridge_token_flags", ruleset_id):
            if isinstance(schema, type) and issubclass(schema, Schema):
                schema = schema()
            if not isinstance(schema, Schema):
                raise PluginValidationError(
                    f"plugin {plugin!r}: vtt_bridge_token_flags returned {schema!r}, not a marshmallow schema",
                    details={"plugin": plugin, "hook": "vtt_bridge_token_flags"},
                )
            found[plugin] = schema
        self._flags[ruleset_id] = found
        return found

    def monitor(self, before: Any, after: Any) -> Any:
        """Watch every hook call from now on (tracing, ``vtt_bridge.testing.HookRecorder``).

        ``before(hook_name, hook_impls, kwargs)`` and ``after(outcome, hook_name,
        hook_impls, kwargs)``: pluggy's ``add_hookcall_monitoring``, the engine
        calling every hook through pluggy meanwhile. Returns a function that stops watching.
        """
        undo_pm = self.pm.add_hookcall_monitoring(before, after)
        undo_engine = self.engine.monitored()

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
        """Validate an attack declaration; ``invalid_request`` with field messages if bad.

        Its ``charms`` are checked against the declarables of the installed
        plugins: an unknown id, or a parameter the Charm does not take or of
        the wrong type or range, is refused naming ``declaration.charms.<n>``.
        """
        loaded = self._load(ruleset_id, "declaration", data)
        charms = loaded.get("charms")
        if charms:
            self._check_charms(ruleset_id, charms)
        return loaded

    def _check_charms(self, ruleset_id: str, charms: Any) -> None:
        known = self._declarable_map(ruleset_id)
        errors: dict[str, Any] = {}
        for index, use in enumerate(charms):
            if not isinstance(use, Mapping):
                errors[str(index)] = {"_schema": ["Not a valid mapping type."]}
                continue
            charm_id = use.get("id")
            item = known.get(charm_id) if isinstance(charm_id, str) else None
            if item is None or item.kind == "option":
                names = ", ".join(sorted(k for k, d in known.items() if d.kind != "option")) or "none installed"
                if charm_id is None:
                    message = "Missing data for required field."
                elif item is not None:
                    message = f"{item.label} ({charm_id!r}) is chosen at a decision, not declared"
                else:
                    message = f"Unknown Charm {charm_id!r}; known: {names}"
                errors[str(index)] = {"id": [message]}
                continue
            _, problems = check_params(item.params, {k: v for k, v in use.items() if k != "id"})
            if problems:
                errors[str(index)] = problems
        if errors:
            first = next(iter(errors.values()))
            field, messages = next(iter(first.items()))
            raise InvalidRequest(
                f"declaration.charms: {field}: {messages[0]}", details={"declaration": {"charms": errors}}
            )

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
        return self._load_with(self._schema(ruleset_id, which), ruleset_id, which, data)

    @staticmethod
    def _load_with(schema: Schema, ruleset_id: str, which: str, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise InvalidRequest(f"the {which} must be an object", details={which: ["Not a valid mapping type."]})
        try:
            return schema.load(data)
        except ValidationError as err:
            raise InvalidRequest(f"invalid {which} for {ruleset_id}", details={which: err.messages}) from None

    def dump_system(self, ruleset_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
        return self._schema(ruleset_id, "token").dump(data)

    def load_flags(self, ruleset_id: str, data: Any) -> dict[str, Any]:
        """Validate a token's ``flags``: each plugin's part by the schema that plugin declares.

        Flags of a plugin that declares no schema for the ruleset (or is not
        installed) are refused at ``flags.<plugin>``.
        """
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            raise InvalidRequest("flags must be an object", details={"flags": ["Not a valid mapping type."]})
        schemas = self.flag_schemas(ruleset_id)
        out: dict[str, Any] = {}
        errors: dict[str, Any] = {}
        for plugin, value in data.items():
            schema = schemas.get(plugin)
            if schema is None:
                known = ", ".join(schemas) or "none"
                errors[str(plugin)] = [f"No installed plugin keeps flags on {ruleset_id} tokens as {plugin!r}; known: {known}."]
                continue
            if not isinstance(value, Mapping):
                errors[plugin] = ["Not a valid mapping type."]
                continue
            try:
                out[plugin] = schema.load(value)
            except ValidationError as err:
                errors[plugin] = err.messages
        if errors:
            first = next(iter(errors))
            raise InvalidRequest(f"invalid flags.{first} for {ruleset_id}", details={"flags": errors})
        return out

    def validate_token(self, token: Token | Mapping[str, Any]) -> Token:
        """A token with its ``system`` and ``flags`` checked (schema defaults filled in).

        What the server calls on every token write (create, update, import);
        ``invalid_request`` names the bad field (``system``, ``flags.<plugin>``).
        Takes a :class:`Token` or its wire form.
        """
        if not isinstance(token, Token):
            token = Token.from_dict(token)
        system = self.load_system(token.ruleset, thaw(token.system))
        flags = self.load_flags(token.ruleset, thaw(token.flags))
        return Token(
            token.id, token.name, token.ruleset, system, ownership=token.ownership, version=token.version, flags=flags
        )

    def changed_token(
        self, before: Token, system: Mapping[str, Any], *, writers: Mapping[str, Any] | None = None
    ) -> Token:
        """The token a resolution leaves: ``system`` clamped to the ruleset's ranges, then checked.

        A number a ruleset or pack wrote past its token schema's range (a DV
        penalty past the cap after fifty attacks) is clamped to the range, so a
        long game does not wedge a token. Anything else invalid is a
        ``plugin_error`` naming the plugin, hook and step that last wrote a bad
        field (from ``writers``, as the resolution's ``ctx.changes.writers``
        records them: ``{token id: {field: (plugin, step)}}``; a token's
        ``(plugin, step)`` pair stands for every field).
        """
        try:
            schema = self._lean_schema(before, system)
            loaded = self._load_with(schema, before.ruleset, "token", clamp(schema, system))
        except InvalidRequest as exc:
            plugin, step = _writer_of((writers or {}).get(before.id), exc.details.get("token"))
            hook = f"{before.ruleset}_{step}" if step is not None else None
            raise PluginError(
                f"plugin {plugin or '?'} left token {before.id!r} invalid in hook {hook or '?'}"
                f" (step {step or '?'}); nothing was applied",
                details={"plugin": plugin, "hook": hook, "step": step, "token": before.id, "errors": exc.details},
            ) from None
        return Token(
            before.id,
            before.name,
            before.ruleset,
            loaded,
            ownership=before.ownership,
            version=before.version + 1,
            flags=before.flags,
        )

    def _lean_schema(self, before: Token, system: Mapping[str, Any]) -> Schema:
        """The token schema for checking ``system``, the change of ``before`` a resolution made.

        ``before`` passed this schema when it was stored, so the fields
        ``system`` leaves exactly as they were (a character's abilities,
        weapons, armor, its unchanged numbers ...) are not loaded a second
        time: the schema used takes them as they are. What changed is loaded in
        full, and schema-level validators and post-load hooks still see the
        whole ``system``. (Most of an attack's schema work was re-checking what
        it did not touch.)
        """
        schema = self._schema(before.ruleset, "token")
        containers = self._containers.get(before.ruleset)
        if containers is None:
            containers = self._containers[before.ruleset] = [
                (name, field.data_key or name, field) for name, field in schema.load_fields.items()
            ]
        plain = before.plain()
        same = frozenset(
            name
            for name, key, _field in containers
            if key in system and key in plain and system[key] == plain[key]
        )
        if not same:
            return schema
        lean = self._lean.get((before.ruleset, same))
        if lean is None:
            if len(self._lean) >= LEAN_SCHEMAS:
                return schema
            taken = {
                name: fields.Raw(data_key=field.data_key, attribute=field.attribute, allow_none=True)
                for name, _key, field in containers
                if name in same
            }
            cls = type(schema)
            lean = self._lean[(before.ruleset, same)] = type(cls.__name__, (cls,), taken)()
        return lean

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
        physical: Iterable[str] | None = None,
        faces: Iterable[list[int] | None] | None = None,
    ) -> Resolution:
        """Validate the declaration and begin a resolution (see :class:`Resolution`).

        ``physical`` and ``faces``: real dice, as :meth:`Engine.start` takes them."""
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
            physical=physical,
            faces=faces,
        )


def _ranges(field: Any) -> tuple[Any, Any] | None:
    low = high = None
    for validator in getattr(field, "validators", ()):
        if isinstance(validator, validate.Range):
            if validator.min is not None and validator.min_inclusive:
                low = validator.min
            if validator.max is not None and validator.max_inclusive:
                high = validator.max
    return (low, high) if low is not None or high is not None else None


def clamp(schema: Schema, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with every number past its field's inclusive ``Range`` set to the nearest bound.

    Nested schemas (and lists of them) are followed; anything else is left as is.
    """
    out = dict(data)
    for name, field in schema.load_fields.items():
        key = field.data_key or name
        if key not in out:
            continue
        value = out[key]
        if isinstance(field, fields.Nested):
            inner = field.schema
            if isinstance(value, Mapping) and not field.many:
                out[key] = clamp(inner, value)
            elif isinstance(value, (list, tuple)) and field.many:
                out[key] = [clamp(inner, v) if isinstance(v, Mapping) else v for v in value]
            continue
        if isinstance(field, fields.List) and isinstance(field.inner, fields.Nested) and isinstance(value, (list, tuple)):
            inner = field.inner.schema
            out[key] = [clamp(inner, v) if isinstance(v, Mapping) else v for v in value]
            continue
        if isinstance(field, fields.Dict) and field.value_field is not None and isinstance(value, Mapping):
            bounds = _ranges(field.value_field)
            if bounds is not None:
                out[key] = {k: _clamped(v, bounds) for k, v in value.items()}
            continue
        if type(value) in (int, float):
            bounds = _ranges(field)
            if bounds is not None:
                out[key] = _clamped(value, bounds)
    return out


def _writer_of(wrote: Any, errors: Any) -> tuple[str | None, str | None]:
    """``(plugin, step)`` that wrote the first bad field in ``errors`` (marshmallow's messages),
    else the last field written; ``wrote`` is ``{field: (plugin, step)}`` or one pair for all."""
    if not wrote:
        return None, None
    if isinstance(wrote, tuple):
        return wrote
    if isinstance(errors, Mapping):
        for field in errors:
            if field in wrote:
                return wrote[field]
    return next(reversed(wrote.values()))


def _clamped(value: Any, bounds: tuple[Any, Any]) -> Any:
    if type(value) not in (int, float):
        return value
    low, high = bounds
    if low is not None and value < low:
        return low
    if high is not None and value > high:
        return high
    return value


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

    The order plugins are registered in, the same for the server, every CLI
    command and ``vtt_bridge.testing``: the installed plugins (entry points)
    sorted by name, then ``$VTT_BRIDGE_PLUGINS`` in the order given, then
    ``plugins`` in the order given. A hook's implementations run in the reverse
    of that order (the last registered first), ``tryfirst`` ones before and
    ``trylast`` ones (each ruleset's own steps) after; wrappers wrap them all.

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
    dists: dict[int, tuple[str, str | None]] = {}
    if entry_points:
        _load_entry_points(pm, dists)
    extra = [p for p in env.get(PLUGINS_ENV, "").split(",") if p.strip()] + list(plugins)
    for plugin in extra:
        if isinstance(plugin, str):
            name = _installed_name(plugin.strip())
            if pm.is_blocked(name) or pm.has_plugin(name):
                continue
            try:
                module = _import_plugin(plugin.strip())
            except Exception as exc:  # a pack's own bug at import (SyntaxError, NameError...) too
                what = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
                raise PluginValidationError(
                    f"cannot import plugin {name!r}: {what}", details={"plugin": name}
                ) from exc
            if pm.is_registered(module):
                continue  # installed and also named for development: load it once
            pm.register(module, name=name)
        else:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
            pm.register(plugin, name=_installed_name(name) if isinstance(plugin, ModuleType) else name)

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
    host = Host(pm, rulesets, traced=traced, dists=dists)
    for ruleset_id in rulesets:  # a plugin's bad declarables or flag schema stop start-up
        host.declarables(ruleset_id)
        host.flag_schemas(ruleset_id)
    if traced:
        _trace_calls(host)
    return host


def _installed_name(module: str) -> str:
    """The name a plugin module is installed under (its ``vtt_bridge`` entry point), else ``module``.

    Packs key their token flags and declarables by that name, so a host built from
    module paths (``entry_points=False``, ``$VTT_BRIDGE_PLUGINS``) names them the same.
    """
    from importlib.metadata import entry_points

    names = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.value == module)
    return names[0] if names else module


def _load_entry_points(pm: pluggy.PluginManager, dists: dict[int, tuple[str, str | None]]) -> None:
    """Register the ``vtt_bridge`` entry points, sorted by name (the first of a name wins).

    Sorting makes the order the same on every machine, whatever order the
    installed distributions happen to be found in: the server, ``vtt-bridge
    plugins`` and ``vtt_bridge.testing`` all build their host here.
    """
    from importlib.metadata import entry_points

    seen: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        seen.setdefault(ep.name, ep)
    for name in sorted(seen):
        if pm.has_plugin(name) or pm.is_blocked(name):
            continue
        ep = seen[name]
        try:
            plugin = ep.load()
        except Exception as exc:  # a pack's own bug at import (SyntaxError, NameError...) too
            what = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
            raise PluginValidationError(
                f"plugin {name!r} failed to import: {what}", details={"plugin": name, "error": what}
            ) from exc
        pm.register(plugin, name=name)
        if ep.dist is not None:
            dists[id(plugin)] = _named(ep.dist)


def _named(dist: Any) -> tuple[str, str | None]:
    """A distribution's name and version, its metadata read once (each read parses the file)."""
    metadata = dist.metadata
    return metadata["name"], metadata["version"]


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
