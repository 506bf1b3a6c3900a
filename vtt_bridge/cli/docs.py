"""``vtt-bridge docs``: the hook reference of the installed rulesets.

Without options it prints the reference (Markdown) for whatever rulesets are
installed here, third-party ones included. ``--write`` regenerates the
generated regions of ``docs/plugins.md`` (or the file given) in place, and
``--check`` exits with status 1 when that file is stale. Both read no
``VTT_BRIDGE_*`` environment variable, so the reference is the same on every
machine with the same rulesets installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import docs
from ..plugins import make_host

DEFAULT = "docs/plugins.md"


def register(sub) -> None:
    parser = sub.add_parser(
        "docs",
        help="print the hook reference, or regenerate docs/plugins.md (--write) or check it (--check)",
        description="Print the hook reference of the installed rulesets, or update the generated "
        "regions of a Markdown file (<!-- generated: ... --> … <!-- end generated -->).",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--write", nargs="?", const=DEFAULT, metavar="FILE", help=f"regenerate FILE in place (default {DEFAULT})"
    )
    group.add_argument(
        "--check", nargs="?", const=DEFAULT, metavar="FILE", help=f"exit 1 if FILE is stale (default {DEFAULT})"
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    if args.write is None and args.check is None:
        host = make_host(plugins=args.plugin)
        sys.stdout.write(docs.reference(host))
        return 0
    host = make_host(plugins=args.plugin, environ={})
    path = Path(args.write or args.check)
    if not path.exists():
        print(f"error: {path} does not exist", file=sys.stderr)
        return 2
    if args.check:
        stale = docs.check(path, host)
        if stale:
            print(f"{path} is stale ({', '.join(stale)}); run: vtt-bridge docs --write {path}", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    text = path.read_text()
    fresh = docs.update(text, host, path.parent)
    if fresh != text:
        path.write_text(fresh)
        print(f"wrote {path}")
    else:
        print(f"{path} is up to date")
    return 0
