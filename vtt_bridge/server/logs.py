"""Structured logs: every server log line carries its fields as data.

Code logs ``log.info("attack resolved", extra=fields(table=..., ms=...))``;
the formatter writes either ``logfmt``-style text (``key=value``, for people
at a terminal) or one JSON object per line (for a log shipper).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

__all__ = ["StructuredFormatter", "configure", "fields"]


# Field names whose values are secrets: they are never written, whatever a caller passes.
SECRET = frozenset({"key", "keys", "auth", "password", "token_secret"})


def fields(**values: Any) -> dict[str, Any]:
    """The ``extra=`` argument carrying structured fields (secret-named ones redacted)."""
    for name in SECRET.intersection(values):
        values[name] = "[redacted]"
    return {"fields": values}


def _text(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return json.dumps(text)
    return text


class StructuredFormatter(logging.Formatter):
    def __init__(self, *, as_json: bool = False) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        extra = getattr(record, "fields", None) or {}
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        if self.as_json:
            out: dict[str, Any] = {
                "time": stamp,
                "level": record.levelname.lower(),
                "logger": record.name,
                "message": record.getMessage(),
                **extra,
            }
            if record.exc_info:
                out["exception"] = self.formatException(record.exc_info)
            return json.dumps(out, default=str)
        parts = [stamp, record.levelname.lower(), record.name, _text(record.getMessage())]
        parts += [f"{k}={_text(v)}" for k, v in extra.items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(*, as_json: bool = False, level: int = logging.INFO) -> None:
    """Route the root logger through the structured formatter (used by ``serve``)."""
    root = logging.getLogger()
    handler = logging.StreamHandler()
    handler.setFormatter(StructuredFormatter(as_json=as_json))
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Per-packet chatter from the socket libraries is not useful at INFO.
    for noisy in ("engineio", "socketio", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
