"""``vtt-bridge new-pack NAME --ruleset R``: write a working, installable pack to start from.

The skeleton holds what every pack needs and nothing it must delete first:

- ``pyproject.toml`` with the ``vtt_bridge`` entry point (how the host finds it);
- the pack module: one declarable (a Charm or ability an attacker may declare)
  and one hook, a wrapper on the ruleset's first step that notes the declarable
  on the card when it is declared;
- a test written with :mod:`vtt_bridge.testing` (scripted dice, the ruleset's
  sample tokens) that passes as generated: ``python -m pytest`` in the new
  directory, installed or not;
- a README saying how to install, list, try and test it.

Change the hook to the step your rules act at (``vtt-bridge plugins --ruleset
R`` lists them in call order; docs/plugins.md has each step's reference).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import InvalidRequest
from ..plugins import make_host

NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


def register(sub) -> None:
    parser = sub.add_parser(
        "new-pack",
        help="write a new pack (entry point, one hook, one declarable, a scripted-dice test, README)",
        description="Write a working, installable pack skeleton for a ruleset; its test passes as generated.",
    )
    parser.add_argument("name", help="the pack's name: lower case, words joined by - or _ (e.g. iron-guard)")
    parser.add_argument("--ruleset", required=True, metavar="ID", help="the ruleset it extends (vtt-bridge plugins lists them)")
    parser.add_argument("--dir", metavar="PATH", help="where to write it (default: ./NAME); must not exist or be empty")
    parser.set_defaults(func=run)


def names(name: str) -> dict[str, str]:
    """The distribution, module (and entry point) and declarable id a pack name gives."""
    if not NAME.match(name):
        raise InvalidRequest(
            f"a pack name is lower case letters and digits, words joined by - or _ (e.g. iron-guard); got {name!r}",
            details={"name": ["Not a valid pack name."]},
        )
    module = name.replace("-", "_")
    return {
        "dist": name.replace("_", "-"),
        "module": module,
        "charm": name.replace("_", "-"),
        "title": " ".join(w.capitalize() for w in re.split(r"[-_]", name)),
    }


def base_declaration(host, ruleset: str) -> dict[str, Any]:
    """A declaration the ruleset takes for its first sample token attacking the second.

    Empty when the ruleset needs nothing; a ruleset requiring the weapon gets the
    attacker's first one.
    """
    from ..testing import resolve, sample_tokens

    tokens = sample_tokens(ruleset, host=host)
    try:
        resolve(ruleset, tokens, declaration={}, dice=[2] * 400, host=host)
        return {}
    except InvalidRequest as exc:
        missing = exc.details.get("declaration", {}) if isinstance(exc.details, dict) else {}
        weapons = next(iter(tokens.values())).system.get("weapons") or []
        if "weapon" in missing and weapons:
            return {"weapon": weapons[0]["name"]}
        raise


def files(name: str, ruleset: str, *, first_step: str, kind: str, base: dict[str, Any] | None = None) -> dict[str, str]:
    """Relative path → text of every file of the skeleton."""
    n = names(name)
    fill = {
        **n,
        "ruleset": ruleset,
        "step": first_step,
        "hook": f"{ruleset}_{first_step}",
        "kind": kind,
        "base": json.dumps(base or {}),
    }
    return {path: text.format(**fill) for path, text in TEMPLATES.items()} | {
        f"{n['module']}/__init__.py": MODULE.format(**fill),
        f"tests/test_{n['module']}.py": TEST.format(**fill),
    }


def run(args) -> int:
    host = make_host(plugins=args.plugin)
    ruleset = host.ruleset(args.ruleset)  # an unknown id is refused with the ones there are
    target = Path(args.dir or args.name)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidRequest(
            f"{target} exists and is not an empty directory: choose another --dir", details={"dir": [str(target)]}
        )
    kind = "charm" if ruleset.id.startswith("exalted") else "ability"
    base = base_declaration(host, ruleset.id)
    written = files(args.name, ruleset.id, first_step=ruleset.steps[0].name, kind=kind, base=base)
    for path, text in written.items():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    n = names(args.name)
    print(f"wrote {len(written)} files to {target}/ (pack {n['module']!r} for {ruleset.id}):")
    for path in sorted(written):
        print(f"  {path}")
    print(
        f"next:\n  cd {target}\n  python -m pytest            # its test passes as generated\n"
        f"  pip install -e .            # the host finds it through its entry point\n"
        f"  vtt-bridge plugins --ruleset {ruleset.id}"
    )
    return 0


TEMPLATES = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "{title}: a vtt_bridge pack for the {ruleset} ruleset"
requires-python = ">=3.11"
dependencies = ["vtt-bridge"]

# The host finds the pack through this entry point; its name is the plugin's name.
[project.entry-points.vtt_bridge]
{module} = "{module}"

[tool.setuptools]
packages = ["{module}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]
""",
    "README.md": """\
# {dist}

A [vtt_bridge](https://pypi.org/project/vtt-bridge/) pack for the `{ruleset}` ruleset.

**{title}** ({kind}): declared with an attack as `"charms": [{{"id": "{charm}"}}]`, it
notes itself on the card at the first step (`{step}`). Change the hook in
`{module}/__init__.py` to the step your rules act at: `vtt-bridge plugins --ruleset
{ruleset}` lists the steps in call order, and docs/plugins.md has each step's reference.

```sh
python -m pytest                          # its test, with scripted dice (vtt_bridge.testing)
pip install -e .                          # the host finds it through its entry point
vtt-bridge plugins --ruleset {ruleset}    # {module} listed, and {charm} under declarables
```

Without installing it, any command loads it with `vtt-bridge --plugin {module} ...`
(from this directory).
""",
}

MODULE = '''\
"""{title}, a pack for the ``{ruleset}`` ruleset.

Declared with an attack (``"charms": [{{"id": "{charm}"}}]``), it notes itself
on the card at step ``{step}``. Replace the note with your rules.
"""

from vtt_bridge import Declarable, hookimpl

CHARM = "{charm}"


@hookimpl
def vtt_bridge_declarables(ruleset):
    """What an attacker may declare: listed in ``rulesets.list`` for players to pick.

    ``inert``: the pack changes nothing unless declared, so exact odds stay exact.
    """
    if ruleset != "{ruleset}":
        return None
    return [
        Declarable(
            id=CHARM,
            label="{title}",
            plugin="{module}",
            kind="{kind}",
            description="notes itself on the card (a new pack: give it its rules)",
            inert=True,
        )
    ]


@hookimpl(wrapper=True)
def {hook}(ctx):
    """Step {step}: after the ruleset's own implementation, act if declared."""
    result = yield  # the ruleset's own implementation runs here
    if ctx.declared(CHARM) is not None:
        ctx.note("{title} is declared")
    return result
'''

TEST = '''\
"""{title}, tested with vtt_bridge.testing: scripted dice, the ruleset's sample tokens."""

from vtt_bridge.testing import resolve, sample_tokens

PACK = "{module}"  # by module: works whether the pack is installed or not
DICE = [2] * 400  # scripted faces, used in order: the same attack every run
BASE = {base}  # what the ruleset needs declared, the pack aside


def attack(declaration):
    tokens = sample_tokens("{ruleset}")  # the first attacks the second
    return resolve("{ruleset}", tokens, declaration={{**BASE, **declaration}}, dice=DICE, plugins=[PACK])


def test_declared_it_notes_itself_at_the_first_step():
    res = attack({{"charms": [{{"id": "{charm}"}}]}})
    assert ("{title} is declared", PACK) in res.step("{step}").notes


def test_not_declared_it_changes_nothing():
    res = attack({{}})
    assert all(plugin != PACK for _, plugin in res.step("{step}").notes)
    assert res.changes_by(PACK) == []
'''
