"""The socket.io namespace: connect, disconnect, and one handler per event.

Every handler has one shape, ``on_<event>(self, sid, data)`` returning the
acknowledgement's fields. :meth:`TableNamespace.trigger_event` routes the
dotted event names (``token.create`` → ``on_token_create``), wraps the
result in the ``{ok: true, ...}`` envelope, and turns *any* exception into an
``{ok: false, error}`` acknowledgement: python-socketio sends no ack when a
handler raises, and the client would wait for its timeout instead. Unknown
events get an error acknowledgement too. The namespace keeps no client
state; connections live in the bridge's registry.

Odd input never reaches a handler: packets are checked as they are decoded
(:mod:`.wire`), and one that fails arrives here as a :class:`~.wire.Refused`
event, answered with its error. Reserved socket.io names sent by a client
(``connect``, ``disconnect``, ...) are refused there too, so the connection
handlers below only ever run for real connections. Each connection's events
pass a token bucket first (``rate_limited``, with ``retry_after`` seconds).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import socketio
from socketio.exceptions import ConnectionRefusedError

from ..errors import InvalidRequest, VTTError, error_envelope, ok_envelope
from ..state import messages
from .bridge import Bridge
from .campaign import Campaign
from .keyguard import KeyGuard
from .logs import fields
from .wire import RateLimiter, Refused

__all__ = ["EVENTS", "TableNamespace"]

log = logging.getLogger("vtt_bridge.server")

# Client → server events and their handlers, as documented in docs/protocol.md.
EVENTS: Mapping[str, str] = {
    "echo": "on_echo",
    "rulesets.list": "on_rulesets_list",
    "table.get": "on_table_get",
    "table.update": "on_table_update",
    "key.create": "on_key_create",
    "key.revoke": "on_key_revoke",
    "token.create": "on_token_create",
    "token.get": "on_token_get",
    "token.list": "on_token_list",
    "token.update": "on_token_update",
    "token.delete": "on_token_delete",
    "attack": "on_attack",
    "attack.odds": "on_attack_odds",
    "attack.whatif": "on_attack_whatif",
    "attack.whatif.apply": "on_attack_whatif_apply",
    "attack.history": "on_attack_history",
    "attack.get": "on_attack_get",
    "attack.undo": "on_attack_undo",
    "decision.default": "on_decision_default",
    "table.export": "on_table_export",
    "tokens.import": "on_tokens_import",
    "table.sync": "on_table_sync",
}


class TableNamespace(socketio.AsyncNamespace):
    """The default namespace ``/``: one table per connection, chosen by its key."""

    def __init__(self, bridge: Bridge, limiter: RateLimiter | None = None, keys: KeyGuard | None = None) -> None:
        super().__init__("/")
        self.bridge = bridge
        self.campaign = Campaign(bridge)
        self.limiter = limiter or RateLimiter(0, 1)
        self.keys = keys or KeyGuard(bridge, interval=0)

    async def trigger_event(self, event: Any, *args: Any) -> Any:
        # Only python-socketio itself calls these two: a client's packet named
        # "connect" or "disconnect" was turned into a Refused event while decoding.
        if event == "connect":
            return await self.on_connect(*args)
        if event == "disconnect":
            return await self.on_disconnect(*args)
        sid = args[0]
        started = time.perf_counter()
        try:
            wait = self.limiter.take(sid)
            if wait is not None:
                raise self.limiter.error(wait)
            if isinstance(event, Refused):
                raise event.error
            handler = EVENTS.get(event) if isinstance(event, str) else None
            if handler is None:
                raise InvalidRequest(
                    f"unknown event {event!r}", details={"event": [f"Must be one of: {', '.join(EVENTS)}."]}
                )
            if len(args) > 2:
                raise InvalidRequest(
                    "an event carries one payload object", details={"_schema": ["Expected a single argument."]}
                )
            payload = await getattr(self, handler)(sid, args[1] if len(args) == 2 else None)
            return ok_envelope(**payload)
        except VTTError as exc:
            log.debug(
                "request refused",
                extra=fields(event=str(event)[:100], sid=sid, code=exc.code, ms=_ms(started)),
            )
            return error_envelope(exc)
        except Exception as exc:
            log.exception("request failed", extra=fields(event=str(event)[:100], sid=sid))
            return error_envelope(exc)

    # -- connections --------------------------------------------------------------

    async def on_connect(self, sid: str, environ: Mapping[str, Any], auth: Any = None) -> None:
        if isinstance(auth, Refused):  # auth that was not valid JSON, Unicode or numbers
            log.info("connection refused", extra=fields(sid=sid, code=auth.error.code, reason=auth.error.message))
            raise ConnectionRefusedError(auth.error.message, auth.error.to_dict())
        try:
            caller, runtime, events, batch = await self.bridge.authenticate(sid, auth)
        except VTTError as exc:
            log.info("connection refused", extra=fields(sid=sid, code=exc.code, reason=exc.message))
            raise ConnectionRefusedError(exc.message, exc.to_dict()) from None
        except Exception:
            log.exception("connect failed", extra=fields(sid=sid))
            raise ConnectionRefusedError(
                "internal server error", {"code": "internal", "message": "internal server error", "details": {}}
            ) from None
        for room in (runtime.room, *runtime.rooms(events, batch=sid if batch else None)):
            await self.enter_room(sid, room)
        log.info("connected", extra=fields(sid=sid, table=caller.table, user=caller.user))

    async def on_disconnect(self, sid: str, reason: Any = None) -> None:
        self.limiter.forget(sid)
        caller = self.bridge.leave(sid, str(reason) if reason is not None else None)
        if caller is not None:
            log.info("disconnected", extra=fields(sid=sid, table=caller.table, user=caller.user, reason=str(reason)))

    # -- events (one shape: sid, data → acknowledgement fields) ------------------------

    async def on_echo(self, sid: str, data: Any) -> dict[str, Any]:
        """A bare round trip, for clients checking the link (and the benchmark)."""
        self.bridge.caller(sid)
        return {"data": data}

    async def on_rulesets_list(self, sid: str, data: Any) -> dict[str, Any]:
        caller = self.bridge.caller(sid)
        self.bridge.messages.load(messages.Empty, data)
        return self.bridge.rulesets(caller)

    async def on_table_get(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.table_get(self.bridge.caller(sid), data)

    async def on_table_update(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.table_update(self.bridge.caller(sid), data)

    async def on_key_create(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.keys.key_create(self.bridge.caller(sid), data)

    async def on_key_revoke(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.keys.key_revoke(self.bridge.caller(sid), data)

    async def on_token_create(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.token_create(self.bridge.caller(sid), data)

    async def on_token_get(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.token_get(self.bridge.caller(sid), data)

    async def on_token_list(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.token_list(self.bridge.caller(sid), data)

    async def on_token_update(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.token_update(self.bridge.caller(sid), data)

    async def on_token_delete(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.token_delete(self.bridge.caller(sid), data)

    async def on_attack(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.attack(self.bridge.caller(sid), data)

    async def on_attack_odds(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.odds(self.bridge.caller(sid), data)

    async def on_attack_whatif(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.what_if(self.bridge.caller(sid), data)

    async def on_attack_whatif_apply(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.what_if_apply(self.bridge.caller(sid), data)

    async def on_attack_history(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.history(self.bridge.caller(sid), data)

    async def on_attack_get(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.get(self.bridge.caller(sid), data)

    async def on_attack_undo(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.undo(self.bridge.caller(sid), data)

    async def on_decision_default(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.bridge.attacks.take_default(self.bridge.caller(sid), data)

    # -- campaign: export, import, resync (see campaign.py) -------------------------

    async def on_table_export(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.campaign.export(self.bridge.caller(sid), data)

    async def on_tokens_import(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.campaign.import_tokens(self.bridge.caller(sid), data)

    async def on_table_sync(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.campaign.sync(self.bridge.caller(sid), data)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
