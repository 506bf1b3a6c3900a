"""Momentum and Onslaught for GODSGLOOM: an ordinary pack (entry point ``godsgloom_momentum``).

Importing it brings in its hook implementations; it uses only the public
``vtt_bridge`` API and the godsgloom ruleset's documented working numbers.
"""

from .hooks import godsgloom_auto_successes, godsgloom_reroll, vtt_bridge_declarables

__all__ = ["godsgloom_auto_successes", "godsgloom_reroll", "vtt_bridge_declarables"]
