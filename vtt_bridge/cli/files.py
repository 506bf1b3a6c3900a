"""Reading the JSON files commands take (request files, token files), with one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidRequest

__all__ = ["read_json"]


def read_json(path: str, *, what: str) -> Any:
    """The JSON in ``path`` (``-``: standard input); a missing or unreadable file or bad JSON
    is ``invalid_request`` saying which file and what was expected (``what``: "a JSON request")."""
    name = "standard input" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except FileNotFoundError:
        raise InvalidRequest(f"no file {path!r}: give the path of {what}", details={}) from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"{name} is not {what} ({exc})", details={}) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{name} is not JSON: {exc}", details={}) from None
