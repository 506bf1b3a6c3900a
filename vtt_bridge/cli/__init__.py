"""The ``vtt-bridge`` command. Each subcommand lives in its own module here."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from typing import Any

from ..errors import VTTError
from ..plugins import PLUGINS_ENV

# Each module defines ``register(subparsers)`` adding its parser with ``func`` set.
COMMANDS = ("resolve", "plugins", "serve", "table", "tokens", "odds", "replay", "docs", "new_pack")


class Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake said in one line (and where to find the usage)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="vtt-bridge", description="Attack resolution for virtual tabletops.")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="also load this plugin module (for developing a pack); repeatable",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except VTTError as exc:
        if args.verbose and exc.__cause__ is not None:
            # A plugin's exception: where in the pack it was raised.
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"error [{exc.code}]: {one_line(exc)}{way_out(exc, args.plugin)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except FileNotFoundError as exc:
        print(f"error: no such file: {exc.filename}", file=sys.stderr)
        return 2
    except OSError as exc:
        # Typically the port: "address already in use", or no permission for a port below 1024.
        print(f"error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.verbose:
            traceback.print_exc()
        if type(exc).__module__.split(".")[0] == "redis":
            print(f"error: Redis: {exc} (check the --redis URL and that the server runs)", file=sys.stderr)
            return 2
        print(
            f"error: internal error ({type(exc).__name__}: {exc}); run with -v for the traceback",
            file=sys.stderr,
        )
        return 1


def way_out(exc: VTTError, named: list[str]) -> str:
    """For a pack that cannot be loaded: how to run without it (every command builds the same host)."""
    plugin = exc.details.get("plugin") if isinstance(exc.details, dict) else None
    if exc.code != "plugin_invalid" or not isinstance(plugin, str):
        return ""
    given = [*named, *os.environ.get(PLUGINS_ENV, "").split(",")]
    if plugin in (p.strip() for p in given):
        return f" — loaded by --plugin or {PLUGINS_ENV}: leave it out, or fix it"
    return (
        f" — to run without it: VTT_BRIDGE_BLOCK_PLUGINS={plugin} vtt-bridge ... "
        f"(or pip uninstall its distribution); `vtt-bridge plugins` lists what loads"
    )


def one_line(exc: VTTError) -> str:
    """An error's message with the fields its details name, on one line."""
    fields = "; ".join(f"{path}: {msg}" if path else msg for path, msg in flatten(exc.details))
    return f"{exc.message} ({fields})" if fields and fields not in exc.message else exc.message


def flatten(details: Any, path: str = "") -> list[tuple[str, str]]:
    """marshmallow-style details ``{"a": {"b": ["msg"]}}`` as ``[("a.b", "msg")]``.

    Only message lists count: other values in details (an id, a version) are
    data for programs, already said in the message."""
    if isinstance(details, dict):
        out = []
        for key, value in details.items():
            out.extend(flatten(value, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(details, (list, tuple)) and all(isinstance(m, str) for m in details):
        return [(path, " ".join(details))]
    return []
