"""Read-only token snapshots.

A resolution reads tokens only through snapshots: nested dicts become
:class:`FrozenDict`, lists become tuples, and any attempt to change one raises
:class:`~vtt_bridge.errors.SnapshotMutation`. Changes go through
``ctx.update`` so they are traced and committed atomically.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import SnapshotMutation

__all__ = ["FrozenDict", "Token", "freeze", "thaw"]


def _refuse(self, *args, **kwargs):
    raise SnapshotMutation(
        "token snapshots are read-only; change a token through ctx.update(token_id, ...)",
        details={},
    )


class FrozenDict(dict):
    """A dict that refuses every change (and still serializes as JSON)."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __hash__(self) -> int:  # pragma: no cover - not needed, but keep dict semantics honest
        raise TypeError("unhashable type: 'FrozenDict'")

    def __reduce__(self):
        return (FrozenDict, (dict(self),))


# Scalars are returned as they are; checking their type first keeps freeze/thaw
# off the (slow) ABC ``isinstance(value, Mapping)`` path for every leaf.
_ATOMS = frozenset({str, int, float, bool, type(None)})
_all_atoms = _ATOMS.issuperset  # of an iterable of types: every one is a scalar (checked in C)


def freeze(value: Any) -> Any:
    """Deep-freeze JSON-like data: dicts to :class:`FrozenDict`, lists to tuples."""
    kind = type(value)
    if kind in _ATOMS or kind is FrozenDict:
        return value
    # Exact types first: the ABC check below is slow, and most data is plain.
    if kind is dict:
        if _all_atoms(map(type, value.values())):
            return FrozenDict(value)
        return FrozenDict({k: v if type(v) in _ATOMS else freeze(v) for k, v in value.items()})
    if kind is list or kind is tuple:
        if _all_atoms(map(type, value)):
            return value if kind is tuple else tuple(value)
        return tuple([v if type(v) in _ATOMS else freeze(v) for v in value])
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple([freeze(v) for v in value])
    return value


def thaw(value: Any) -> Any:
    """The mutable copy of frozen (or any JSON-like) data."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is FrozenDict or kind is dict:
        if _all_atoms(map(type, value.values())):
            return dict(value)
        return {k: v if type(v) in _ATOMS else thaw(v) for k, v in value.items()}
    if kind is tuple or kind is list:
        if _all_atoms(map(type, value)):
            return list(value)
        return [v if type(v) in _ATOMS else thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


_NO_FLAGS = FrozenDict()


class Token:
    """A read-only snapshot of one token.

    ``system`` holds the ruleset's stats (validated by its token schema);
    ``ownership`` maps user names to Foundry levels (0 none … 3 owner);
    ``flags`` maps plugin names to the data each pack keeps on the token
    (validated by the schema the pack returns from ``vtt_bridge_token_flags``).
    """

    __slots__ = ("id", "name", "ruleset", "ownership", "system", "flags", "version", "_plain")

    def __init__(
        self,
        id: str,
        name: str,
        ruleset: str,
        system: Mapping[str, Any],
        *,
        ownership: Mapping[str, int] | None = None,
        version: int = 1,
        flags: Mapping[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "ruleset", ruleset)
        object.__setattr__(self, "system", freeze(system))
        object.__setattr__(self, "ownership", freeze(ownership or {}))
        object.__setattr__(self, "flags", freeze(flags) if flags else _NO_FLAGS)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "_plain", None)

    __setattr__ = __delattr__ = _refuse

    def __getitem__(self, key: str) -> Any:
        return self.system[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.system.get(key, default)

    def plain(self) -> dict[str, Any]:
        """``system`` as plain dicts and lists, made once per snapshot and shared.

        Resolution records carry it as each changed token's ``before`` state; treat
        it as read-only (``thaw`` it to get a copy you may change).
        """
        plain = self._plain
        if plain is None:
            plain = thaw(self.system)
            object.__setattr__(self, "_plain", plain)
        return plain

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Token:
        return cls(
            data["id"],
            data.get("name", data["id"]),
            data["ruleset"],
            data.get("system", {}),
            ownership=data.get("ownership"),
            version=data.get("version", 1),
            flags=data.get("flags"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "ruleset": self.ruleset,
            "ownership": thaw(self.ownership),
            "system": thaw(self.system),
            "flags": thaw(self.flags),
            "version": self.version,
        }

    def __repr__(self) -> str:
        return f"Token({self.id!r}, {self.ruleset!r}, v{self.version})"
