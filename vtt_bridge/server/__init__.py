"""The socket.io bridge server: tables, players, tokens and attacks over the wire.

Build and run one with :class:`BridgeServer` (``vtt-bridge serve`` does);
the wire protocol is documented in ``docs/protocol.md``.
"""

from __future__ import annotations

from .app import ServerConfig, build
from .bridge import Bridge, create_table, issue_key
from .namespace import EVENTS, TableNamespace
from .runner import BridgeServer, serve_forever

__all__ = [
    "EVENTS",
    "Bridge",
    "BridgeServer",
    "ServerConfig",
    "TableNamespace",
    "build",
    "create_table",
    "issue_key",
    "serve_forever",
]
