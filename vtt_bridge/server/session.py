"""Who is calling, and what Foundry's ownership levels let them do.

A connection is a :class:`Caller`: the table it opened and the user its key
is bound to. The GM's key is bound to the user ``"gm"``. A token's
``ownership`` maps user names (and ``"default"``, for every player) to
Foundry's levels: 0 none, 1 limited, 2 observer, 3 owner.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.tokens import Token
from ..errors import Forbidden
from ..state.keys import GM_USER

__all__ = ["NONE", "LIMITED", "OBSERVER", "OWNER", "Caller", "level", "require_gm", "require_owner"]

NONE, LIMITED, OBSERVER, OWNER = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Caller:
    """One authenticated connection: its socket id, its table, its user, and the digest of the key it used.

    The digest (never the key) lets the server close the connection when that
    key is replaced or revoked.
    """

    sid: str
    table: str
    user: str
    key_digest: str = ""

    @property
    def is_gm(self) -> bool:
        return self.user == GM_USER

    @property
    def role(self) -> str:
        return "gm" if self.is_gm else "player"


def level(token: Token, user: str) -> int:
    """``user``'s ownership level of ``token`` (the GM owns everything)."""
    if user == GM_USER:
        return OWNER
    ownership = token.ownership
    found = ownership.get(user)
    if found is None:
        found = ownership.get("default", NONE)
    return int(found)


def require_gm(caller: Caller, action: str) -> None:
    if not caller.is_gm:
        raise Forbidden(f"only the GM may {action}", details={"user": caller.user})


def require_owner(caller: Caller, token: Token, action: str) -> None:
    if level(token, caller.user) < OWNER:
        raise Forbidden(
            f"{caller.user} does not own token {token.id!r} and may not {action}",
            details={"token": token.id, "user": caller.user},
        )
