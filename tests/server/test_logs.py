"""Server log lines carry their fields as data: key=value text or one JSON object."""

from __future__ import annotations

import json
import logging

from vtt_bridge.server.logs import StructuredFormatter, fields


def record(**extra) -> logging.LogRecord:
    made = logging.LogRecord("vtt_bridge.server", logging.INFO, __file__, 1, "attack resolved", (), None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_json_lines_hold_every_field():
    line = StructuredFormatter(as_json=True).format(record(**fields(table="t-1", ms=1.5, user="a b")))
    data = json.loads(line)
    assert data["message"] == "attack resolved" and data["level"] == "info"
    assert data["table"] == "t-1" and data["ms"] == 1.5 and data["user"] == "a b"


def test_text_lines_quote_what_needs_quoting():
    line = StructuredFormatter().format(record(**fields(table="t-1", reason="bad key")))
    assert line.endswith('info vtt_bridge.server "attack resolved" table=t-1 reason="bad key"')
