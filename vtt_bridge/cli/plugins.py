"""``vtt-bridge plugins``: what is loaded, and who implements each step, in call order.

The first thing a pack author checks: is my pack loaded, from which
distribution and version, and does it run where I think it runs? For every
ruleset the steps are listed in rulebook order, each with the plugins that
implement it in the order they are called (wrappers first: they enter before
and leave after everything else; the ruleset's own ``trylast`` implementation
last), then what an attacker may declare there (declarables) and from which
plugin.

A pack that cannot be loaded does not hide the others: it is listed under
"Not loaded", with its error and how to run every command without it
(``VTT_BRIDGE_BLOCK_PLUGINS``).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import PluginValidationError
from ..plugins import BLOCK_ENV, Host, make_host

#: How many broken packs one listing sets aside before giving up.
MAX_BROKEN = 20


def register(sub) -> None:
    parser = sub.add_parser(
        "plugins",
        help="list loaded plugins and, per ruleset step, who implements it in call order",
        description="List the loaded plugins (distribution, version, the steps each implements) and, "
        "for every ruleset, who implements each step in call order.",
    )
    parser.add_argument("--json", action="store_true", help="print as JSON")
    parser.add_argument("--ruleset", metavar="ID", help="show only this ruleset's steps")
    parser.add_argument(
        "--block", action="append", default=[], metavar="NAME", help="do not load this plugin; repeatable"
    )
    parser.set_defaults(func=run)


def _impls(host: Host, hook: str) -> list[dict[str, Any]]:
    """The implementations of a hook in call order, with their ordering marks."""
    caller = getattr(host.pm.hook, hook, None)
    if caller is None:
        return []
    impls = list(reversed(caller.get_hookimpls()))
    wrappers = [i for i in impls if i.wrapper or i.hookwrapper]
    plain = [i for i in impls if not (i.wrapper or i.hookwrapper)]
    return [
        {
            "plugin": i.plugin_name,
            "wrapper": bool(i.wrapper or i.hookwrapper),
            "tryfirst": bool(i.tryfirst),
            "trylast": bool(i.trylast),
        }
        for i in wrappers + plain
    ]


def _owners(host: Host) -> dict[str, str]:
    """Ruleset id → the plugin that provides it."""
    owners = {}
    for impl in host.pm.hook.vtt_bridge_rulesets.get_hookimpls():
        for ruleset in impl.function() or ():
            owners[ruleset.id] = impl.plugin_name
    return owners


def _walk(steps, depth: int = 0):
    for step in steps:
        yield step, depth
        yield from _walk(step.steps, depth + 1)


def describe(host: Host, *, ruleset: str | None = None) -> dict[str, Any]:
    """Everything ``vtt-bridge plugins`` shows, as data (the ``--json`` output)."""
    owners = _owners(host)
    rulesets: dict[str, Any] = {}
    implements: dict[str, dict[str, list[str]]] = {}
    chosen = [host.ruleset(ruleset)] if ruleset is not None else [host.rulesets[r] for r in sorted(host.rulesets)]
    for rs in chosen:
        steps = []
        for step, depth in _walk(rs.steps):
            hook = f"{rs.id}_{step.name}"
            impls = _impls(host, hook)
            entry: dict[str, Any] = {
                "step": step.name,
                "title": step.title,
                "depth": depth,
                "hook": hook,
                "plugins": [i["plugin"] for i in impls],
                "impls": impls,
            }
            for i in impls:
                implements.setdefault(i["plugin"], {}).setdefault(rs.id, []).append(step.name)
            if step.ask is not None:
                options_hook = f"{rs.id}_{step.ask.name}_options"
                entry["decision"] = step.ask.name
                entry["options_hook"] = options_hook
                entry["options_impls"] = _impls(host, options_hook)
                entry["options_from"] = [i["plugin"] for i in entry["options_impls"]]
                for name in entry["options_from"]:
                    steps_of = implements.setdefault(name, {}).setdefault(rs.id, [])
                    if f"{step.ask.name}_options" not in steps_of:
                        steps_of.append(f"{step.ask.name}_options")
            steps.append(entry)
        declarables = [
            {
                "id": d.id,
                "label": d.label,
                "plugin": d.plugin,
                "kind": d.kind,
                "params": sorted(d.params),
                "description": d.description,
            }
            for d in host.declarables(rs.id)
        ]
        rulesets[rs.id] = {
            "title": rs.title,
            "provided_by": owners.get(rs.id),
            "steps": steps,
            "declarables": declarables,
        }
    plugins = []
    for info in host.plugins():
        data = info.to_dict()
        data["rulesets"] = sorted(rid for rid, owner in owners.items() if owner == info.name)
        data["steps"] = implements.get(info.name, {})
        plugins.append(data)
    blocked = sorted(name for name, plugin in host.pm.list_name_plugin() if plugin is None)
    return {"plugins": plugins, "blocked": blocked, "rulesets": rulesets, "broken": []}


def _mark(impl: dict[str, Any], owner: str | None) -> str:
    marks = [m for m in ("wrapper", "tryfirst") if impl[m]]
    if impl["trylast"] and impl["plugin"] != owner:
        marks.append("trylast")
    return impl["plugin"] + (f" ({', '.join(marks)})" if marks else "")


def render(info: dict[str, Any]) -> str:
    """The text ``vtt-bridge plugins`` prints."""
    lines = [f"Plugins ({len(info['plugins'])} loaded):"]
    width = max([len(p["name"]) for p in info["plugins"]] + [4])
    for p in info["plugins"]:
        dist = f"{p['distribution']} {p['version']}" if p["distribution"] else "(no distribution: loaded by path)"
        lines.append(f"  {p['name']:{width}}  {dist}  [{p['module']}]")
        if p["rulesets"]:
            lines.append(f"  {'':{width}}    provides: {', '.join(p['rulesets'])}")
        for rid, steps in p["steps"].items():
            owner = info["rulesets"][rid]["provided_by"]
            if p["name"] == owner:
                continue  # a ruleset implements all of its own steps
            lines.append(f"  {'':{width}}    {rid}: {', '.join(steps)}")
    if info["blocked"]:
        lines.append(f"Blocked: {', '.join(info['blocked'])}")
    if info.get("broken"):
        names = ",".join(b["plugin"] for b in info["broken"])
        lines.append("Not loaded (broken):")
        for b in info["broken"]:
            lines.append(f"  {b['plugin']}: {b['error']}")
        lines.append(
            f"  every other command refuses to start while they load; run without them with "
            f"{BLOCK_ENV}={names} vtt-bridge ..., or pip uninstall them"
        )
    for rid, rs in info["rulesets"].items():
        owner = rs["provided_by"]
        lines.append("")
        lines.append(f"{rid} — {rs['title']} (from {owner})")
        title_width = max([len(s["title"]) + 2 * s["depth"] for s in rs["steps"]] + [10])
        for step in rs["steps"]:
            order = " → ".join(_mark(i, owner) for i in step["impls"]) or "(nobody)"
            title = "  " * step["depth"] + step["title"]
            lines.append(f"  {title:{title_width}}  {order}")
            if "decision" in step:
                offered = " → ".join(_mark(i, owner) for i in step["options_impls"]) or "nobody"
                lines.append(f"  {'':{title_width}}    asks {step['decision']!r}: options from {offered}")
        if rs.get("declarables"):
            lines.append("  declarables (declaration.charms; kind option: chosen when asked):")
            for d in rs["declarables"]:
                params = f" {{{', '.join(d['params'])}}}" if d["params"] else ""
                lines.append(f"    {d['id']}{params} — {d['label']} ({d['kind']}, from {d['plugin']})")
    return "\n".join(lines)


def load(plugins, block) -> tuple[Host, list[dict[str, str]]]:
    """The host without the packs that cannot be loaded, and those packs with their errors.

    A pack that fails to load names itself (``details["plugin"]``); it is set
    aside and the host built again, so one broken pack hides no other.
    """
    broken: list[dict[str, str]] = []
    blocked = list(block)
    while True:
        try:
            return make_host(plugins=plugins, block=blocked), broken
        except PluginValidationError as exc:
            name = exc.details.get("plugin")
            if not isinstance(name, str) or name in blocked or len(broken) >= MAX_BROKEN:
                raise
            broken.append({"plugin": name, "error": exc.message})
            blocked.append(name)


def run(args) -> int:
    host, broken = load(args.plugin, args.block)
    info = describe(host, ruleset=args.ruleset)
    info["broken"] = broken
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        print(render(info))
    return 0
