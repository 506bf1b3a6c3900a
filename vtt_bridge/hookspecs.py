"""The host's own hooks.

The host knows no ruleset. A plugin provides rulesets through
:func:`vtt_bridge_rulesets`; each :class:`~vtt_bridge.Ruleset` carries the
module of its step hookspecs, which the host registers at start-up. Packs
implement those step hooks; a hook that no installed ruleset declares is
refused when the plugin manager is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .engine.steps import Ruleset

hookspec = pluggy.HookspecMarker("vtt_bridge")
hookimpl = pluggy.HookimplMarker("vtt_bridge")

# -------------------------------------------------------------------------
# Registering rulesets
# -------------------------------------------------------------------------


@hookspec
def vtt_bridge_rulesets() -> list[Ruleset]:
    """Called once at start-up. Return the rulesets this plugin provides.

    The host registers each ruleset's ``hookspecs`` module, so packs can
    implement its step hooks. A plugin that provides no ruleset need not
    implement this hook.

    :return: a list of :class:`~vtt_bridge.Ruleset`; ``None`` or ``[]`` for none.
        Two plugins providing the same ruleset id is a start-up error.
    """
