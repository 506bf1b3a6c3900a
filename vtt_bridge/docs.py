"""The hook reference, generated from the installed rulesets' hookspecs.

``docs/plugins.md`` is hand-written prose (the tutorial) with generated regions
between markers::

    <!-- generated: reference -->        the host's and every ruleset's hooks
    <!-- generated: api -->              the context, dice and test kit, from docstrings
    <!-- generated: include PATH -->     a file, fenced (PATH relative to the document)
    ...
    <!-- end generated -->

:func:`update` rewrites those regions and leaves the prose alone; ``vtt-bridge
docs --write`` runs it and ``tests/test_docs.py`` fails when the file differs
from what it would write. The reference reads only what the rulesets declare
(steps, decisions, schemas, hookspec docstrings), so it cannot drift from them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from marshmallow import Schema, fields
from marshmallow.utils import missing

from . import hookspecs as host_hookspecs
from .engine.steps import Ruleset, Step
from .plugins import Host

__all__ = ["Region", "check", "hookspec_functions", "missing_docstrings", "reference", "regions", "update"]

SPEC_ATTR = "vtt_bridge_spec"  # where pluggy's HookspecMarker("vtt_bridge") leaves its options

_REGION = re.compile(
    r"(?P<open><!-- generated: (?P<kind>[a-z]+)(?: (?P<arg>[^ ]+))? -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- end generated -->)",
    re.DOTALL,
)


# -------------------------------------------------------------------------
# Reading hookspecs
# -------------------------------------------------------------------------


def hookspec_functions(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """The hookspecs a module declares, in source order."""
    found = [
        (name, value)
        for name, value in vars(module).items()
        if callable(value) and getattr(value, SPEC_ATTR, None) is not None
    ]
    found.sort(key=lambda item: _line(item[1]))
    return dict(found)


def _line(function: Callable[..., Any]) -> int:
    try:
        return inspect.getsourcelines(function)[1]
    except (OSError, TypeError):
        return 0


def missing_docstrings(host: Host) -> list[str]:
    """Hooks of the host and of every installed ruleset whose hookspec has no docstring."""
    out = [name for name, f in hookspec_functions(host_hookspecs).items() if not (f.__doc__ or "").strip()]
    for ruleset in _rulesets(host):
        for name in ruleset.hook_names():
            spec = getattr(host.pm.hook, name).spec
            if spec is None or not (spec.function.__doc__ or "").strip():
                out.append(name)
        for name, f in hookspec_functions(ruleset.hookspecs).items():
            if not (f.__doc__ or "").strip() and name not in out:
                out.append(name)
    return out


def _signature(name: str, function: Callable[..., Any], *, defaults: bool = True) -> str:
    """``name(a: T, *rest, key: U = 1) -> R``, with string annotations unquoted."""
    sig = inspect.signature(function)
    params: list[str] = []
    star = False
    for p in sig.parameters.values():
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, star = "*" + text, True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + text
        elif p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.annotation is not inspect.Parameter.empty:
            text += f": {_annotation(p.annotation)}"
        if defaults and p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}"
        params.append(text)
    ret = sig.return_annotation
    tail = "" if ret is inspect.Signature.empty else f" -> {_annotation(ret)}"
    return f"{name}({', '.join(params)}){tail}"


def _annotation(ann: Any) -> str:
    return ann if isinstance(ann, str) else inspect.formatannotation(ann)


_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_FIELD = re.compile(r"^:(param|ivar|return|returns|raises)( [A-Za-z_][A-Za-z0-9_, ]*)?:", re.MULTILINE)


def _md(text: str) -> str:
    """reST as Markdown: roles become code, ``:param x:`` lines bullets, ``::`` blocks fenced."""
    text = _ROLE.sub(lambda m: f"`{m[2].rpartition('.')[2] if m[1] else m[2]}`", text)
    text = _FIELD.sub(_field_bullet, text)
    return _literal_blocks(text)


def _literal_blocks(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            out.append(line)
            i += 1
            continue
        head = line.rstrip()[:-2].rstrip()
        if head:
            out.append(head + ":")
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block = []
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        while out and not out[-1].strip():
            out.pop()
        out += ["", "```python", *inspect.cleandoc("\n".join(block)).split("\n"), "```"]
        if j < len(lines) and lines[j].strip():
            out.append("")
        i = j
    return "\n".join(out)


def _doc(function: Callable[..., Any]) -> str:
    text = inspect.cleandoc(function.__doc__ or "").strip()
    return _md(text) if text else "*(no docstring)*"


def _field_bullet(match: re.Match[str]) -> str:
    kind, name = match[1], (match[2] or "").strip()
    if kind in ("param", "ivar"):
        return f"- **`{name}`**:"
    if kind == "raises":
        return f"- **raises** `{name}`:" if name else "- **raises**:"
    return "- **returns**:"


def _rulesets(host: Host) -> list[Ruleset]:
    return [host.rulesets[rid] for rid in sorted(host.rulesets)]


# -------------------------------------------------------------------------
# The reference
# -------------------------------------------------------------------------


def reference(host: Host) -> str:
    """The hook reference for the host's hooks and every ruleset the host knows."""
    out = ["## Hook reference", ""]
    rulesets = _rulesets(host)
    out.append(
        "Generated by `vtt-bridge docs` from the hookspecs of the installed rulesets "
        f"({', '.join(f'`{r.id}`' for r in rulesets) or 'none'}): each step in the order it runs, "
        "what its hook receives, what the ruleset's own implementation does and what a "
        "pack may change, and the decisions a pack may add options to."
    )
    out.append("")
    out.append("### Host hooks")
    out.append("")
    for name, function in hookspec_functions(host_hookspecs).items():
        out.extend(_hook_block(name, function, level=4))
    for ruleset in rulesets:
        out.extend(_ruleset_section(host, ruleset))
    return "\n".join(out).rstrip() + "\n"


def _hook_block(name: str, function: Callable[..., Any], *, level: int, title: str | None = None) -> list[str]:
    heading = "#" * level
    lines = [f"{heading} {f'{title} — ' if title else ''}`{name}`", ""]
    lines.append("```python")
    lines.append(_signature(name, function))
    lines.append("```")
    lines.append("")
    lines.append(_doc(function))
    lines.append("")
    return lines


def _ruleset_section(host: Host, ruleset: Ruleset) -> list[str]:
    rid = ruleset.id
    out = [f"### `{rid}` — {ruleset.title}", ""]
    if ruleset.description:
        out += [inspect.cleandoc(ruleset.description), ""]
    module_doc = inspect.cleandoc(ruleset.hookspecs.__doc__ or "")
    if module_doc:
        out += [_md(module_doc), ""]
    targets = (
        f"{ruleset.min_targets}"
        if ruleset.min_targets == ruleset.max_targets
        else f"{ruleset.min_targets}–{ruleset.max_targets}"
    )
    out.append(f"- Hook prefix: `{rid}_`; targets per attack: {targets}.")
    if ruleset.numbers:
        out.append(
            "- Working numbers (traced on change, `ctx.<name>`): " + ", ".join(f"`{n}`" for n in ruleset.numbers) + "."
        )
    out.append("")
    out += _schema_table("Token `system` fields", ruleset.token_schema)
    out += _schema_table("Declaration fields", ruleset.declaration_schema)

    out += ["#### Steps in order", "", "| Step | Hook | Decision asked before it |", "|---|---|---|"]
    for step, depth in _walk(ruleset.steps):
        title = ("↳ " * depth) + step.title
        ask = f"`{step.ask.name}` (options: `{rid}_{step.ask.name}_options`)" if step.ask else ""
        out.append(f"| {title} | `{rid}_{step.name}` | {ask} |")
    out.append("")

    specs = hookspec_functions(ruleset.hookspecs)
    documented = set()
    for step, _depth in _walk(ruleset.steps):
        name = f"{rid}_{step.name}"
        spec = _spec(host, name, specs)
        out.extend(_hook_block(name, spec, level=4, title=step.title))
        out.extend(_step_facts(step, ruleset))
        documented.add(name)
        if step.ask is not None:
            options = f"{rid}_{step.ask.name}_options"
            out.extend(
                _hook_block(options, _spec(host, options, specs), level=5, title=f"options of `{step.ask.name}`")
            )
            documented.add(options)
    others = [name for name in specs if name not in documented]
    if others:
        out += ["#### Other hooks", ""]
        for name in others:
            out.extend(_hook_block(name, specs[name], level=5))
    return out


def _spec(host: Host, name: str, specs: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    caller = getattr(host.pm.hook, name, None)
    if caller is not None and caller.spec is not None:
        return caller.spec.function
    return specs[name]


def _walk(steps: Iterable[Step], depth: int = 0) -> Iterable[tuple[Step, int]]:
    for step in steps:
        yield step, depth
        yield from _walk(step.steps, depth + 1)


def _default_of(ask: Any) -> str:
    """The rules' default of a decision as the engine picks it (see ``Resolution._ask``)."""
    if callable(ask.default):
        doc = inspect.getdoc(ask.default)
        rule = doc.split("\n\n")[0].replace("\n", " ").rstrip(".") if doc else "picked by the ruleset"
        rule = re.sub(r"^the rules' default:\s*", "", rule, flags=re.IGNORECASE)
        return f"{rule[0].lower()}{rule[1:]} (worked out when it is asked)"
    if ask.default:
        return f"`{ask.default}`"
    if ask.decline is not None:
        return f"`{ask.decline.id}` ({ask.decline.label})"
    return "the first option offered"


def _step_facts(step: Step, ruleset: Ruleset) -> list[str]:
    facts = []
    ask = step.ask
    if ask is not None:
        who = (
            _WHO.get(ask.who, "the participant the ruleset picks")
            if isinstance(ask.who, str)
            else "the participant the ruleset picks"
        )
        text = (
            f"Before the hook runs, the engine collects the options of **`{ask.name}`** and asks {who}: "
            f"“{ask.prompt}” Not asked when nothing is offered. Default: {_default_of(ask)}."
        )
        if ask.decline is not None:
            text += f" `{ask.decline.id}` ({ask.decline.label}) is added to whatever is offered."
        if ask.repeat:
            text += (
                f" Asked again after the hook until the answer is `{ask.decline.id if ask.decline else 'declined'}`."
            )
        facts.append(text)
    if step.steps:
        kids = ", ".join(f"`{c.name}`" for c in step.steps)
        if step.each is not None:
            facts.append(f"After its hook, runs {kids} once for each item it selects (`ctx.item` is the current one).")
        else:
            facts.append(f"After its hook, runs {kids}.")
    if step.goto:
        facts.append(
            "May send the sequence back to " + ", ".join(f"`{g}`" for g in step.goto) + " with `ctx.goto(...)`."
        )
    if not facts:
        return []
    return [f"- {f}" for f in facts] + [""]


_WHO = {
    "attacker": "the attacker's owner",
    "defender": "the defender's owner",
    "item": "the owner of the current item",
    "gm": "the GM",
}


def _schema_table(caption: str, schema_cls: type[Schema]) -> list[str]:
    schema = schema_cls()
    if not schema.fields:
        return []
    out = [f"{caption} (`{schema_cls.__name__}`):", "", "| Field | Type | Required / default |", "|---|---|---|"]
    for name, field in schema.fields.items():
        if field.dump_only:
            continue
        out.append(f"| `{field.data_key or name}` | {_field_type(field)} | {_field_default(field)} |")
    out.append("")
    return out


def _field_type(field: fields.Field) -> str:
    if isinstance(field, fields.Nested):
        nested = field.nested
        name = (
            nested.__name__
            if isinstance(nested, type)
            else type(nested).__name__
            if not isinstance(nested, str)
            else nested
        )
        return f"{name}{' (many)' if field.many else ''}"
    if isinstance(field, fields.List):
        return f"list of {_field_type(field.inner)}"
    if isinstance(field, fields.Dict):
        return "object"
    return type(field).__name__.lower()


def _field_default(field: fields.Field) -> str:
    if field.required:
        return "required"
    default = field.load_default
    if default is missing or (default is None and field.allow_none):
        return "optional"
    if callable(default):
        try:
            default = default()
        except TypeError:
            return "optional"
    shown = repr(default)
    return f"default `{shown}`" if len(shown) <= 40 else "optional (defaults filled in)"


# -------------------------------------------------------------------------
# The API summary (context, dice, test kit)
# -------------------------------------------------------------------------


def api() -> str:
    """What a hook can do with ``ctx`` and its dice, and the test kit, from their docstrings."""
    from . import testing
    from .engine.context import AttackContext
    from .engine.dice import Dice, Roll
    from .engine.steps import Answer, Declarable, Option, Param

    out = ["## API summary", ""]
    out.append("Generated from the docstrings of the public classes; every name is importable from `vtt_bridge`")
    out.append("(the test kit from `vtt_bridge.testing`).")
    out.append("")
    out += _members("The context (`ctx`)", AttackContext, skip={"is_counterattack"})
    out += _members("Dice (`ctx.dice`)", Dice, skip={"scripted", "used"})
    out += _members("A roll (`Roll`)", Roll, skip={"die_sides", "is_active"})
    out += _members("Typed parameters (`Param`)", Param)
    out += _members("What may be declared (`Declarable`)", Declarable)
    out += _members("An option of a decision (`Option`)", Option)
    out += _members("An answer (`Answer`, from `ctx.answer(name)`)", Answer)
    out += ["### The test kit (`vtt_bridge.testing`)", ""]
    for name in ("host", "tokens", "make_token", "sample_tokens", "resolve", "policy"):
        out.append(f"- `{_signature(name, getattr(testing, name))}` — {_first_line(getattr(testing, name))}")
    out.append("")
    out += _members("`Result` (what `resolve` returns)", testing.Result, level=4)
    out += _members("`StepView` (`res.step(name)`)", testing.StepView, level=4)
    out += _members("`HookRecorder`", testing.HookRecorder, level=4, skip={"clear", "close"})
    return "\n".join(out).rstrip() + "\n"


def _first_line(obj: Any) -> str:
    doc = inspect.cleandoc(obj.__doc__ or "")
    paragraph = doc.split("\n\n")[0]
    return _ROLE.sub(lambda m: f"`{m[2].rpartition('.')[2] if m[1] else m[2]}`", " ".join(paragraph.split()))


def _members(caption: str, cls: type, *, level: int = 3, skip: set[str] = frozenset()) -> list[str]:
    out = ["#" * level + f" {caption}", "", _md(inspect.cleandoc(cls.__doc__ or "")), ""]
    for name, value in vars(cls).items():
        if name.startswith("_") or name in skip:
            continue
        if isinstance(value, property):
            doc = _first_line(value.fget) if value.fget.__doc__ else ""
            out.append(f"- `{name}`" + (f" — {doc}" if doc else ""))
        elif _is_function(value) and value.__doc__:
            sig = _signature(name, value).replace("(self, ", "(").replace("(self)", "()")
            out.append(f"- `{sig}` — {_first_line(value)}")
    out.append("")
    return out


def _is_function(value: Any) -> bool:
    return inspect.isfunction(value)


# -------------------------------------------------------------------------
# Regions of a document
# -------------------------------------------------------------------------


class Region:
    """One generated region of a document: its kind, argument and current body."""

    __slots__ = ("kind", "arg", "body", "start", "end")

    def __init__(self, kind: str, arg: str | None, body: str, start: int, end: int) -> None:
        self.kind, self.arg, self.body, self.start, self.end = kind, arg, body, start, end


def regions(text: str) -> list[Region]:
    return [Region(m["kind"], m["arg"], m["body"], m.start("body"), m.end("body")) for m in _REGION.finditer(text)]


_FENCES = {".py": "python", ".toml": "toml", ".json": "json", ".md": "markdown", ".sh": "sh", ".cfg": "ini"}


def _render(region: Region, host: Host, base: Path) -> str:
    if region.kind == "reference":
        return "\n" + reference(host) + "\n"
    if region.kind == "api":
        return "\n" + api() + "\n"
    if region.kind == "include":
        if not region.arg:
            raise ValueError("an include region needs a path: <!-- generated: include PATH -->")
        path = (base / region.arg).resolve()
        body = path.read_text()
        fence = "````" if "```" in body else "```"
        return f"{fence}{_FENCES.get(path.suffix, '')}\n{body.rstrip()}\n{fence}\n"
    raise ValueError(f"unknown generated region {region.kind!r}")


def update(text: str, host: Host, base: Path) -> str:
    """The document with every generated region rewritten (prose untouched)."""
    out, last = [], 0
    for region in regions(text):
        out.append(text[last : region.start])
        out.append(_render(region, host, base))
        last = region.end
    out.append(text[last:])
    return "".join(out)


def check(path: Path, host: Host) -> list[str]:
    """Names of the regions of ``path`` that are stale (empty list: up to date)."""
    text = path.read_text()
    fresh = update(text, host, path.parent)
    if fresh == text:
        return []
    old = {(r.kind, r.arg): r.body for r in regions(text)}
    stale = [f"{r.kind}{' ' + r.arg if r.arg else ''}" for r in regions(fresh) if old.get((r.kind, r.arg)) != r.body]
    return stale or ["(document)"]
