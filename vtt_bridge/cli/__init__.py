"""The ``vtt-bridge`` command. Each subcommand lives in its own module here."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from ..errors import VTTError

# Each module defines ``register(subparsers)`` adding its parser with ``func`` set.
COMMANDS = ("resolve", "plugins", "serve", "table", "odds", "docs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vtt-bridge", description="Attack resolution for virtual tabletops.")
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
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        if exc.details:
            print(f"details: {exc.details}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
