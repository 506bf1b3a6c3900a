"""A finished resolution as a readable step-by-step chat card (plain text)."""

from __future__ import annotations

import json
from typing import Any


def _die(result: dict[str, Any]) -> str:
    text = str(result["result"])
    if result.get("success"):
        text += "*" * result.get("count", 1)
    if not result.get("active", True):
        text = f"({text}{' rerolled' if result.get('rerolled') else ' dropped'})"
    return text


def roll_line(roll: dict[str, Any]) -> str:
    dice = []
    for term in roll["terms"]:
        if term["class"] == "Die":
            dice.extend(_die(r) for r in term["results"])
    flavor = roll.get("options", {}).get("flavor", "roll")
    return f"{flavor}: {roll['formula']} → [{' '.join(dice)}] = {roll['total']}"


def _diffs(before: Any, after: Any, path: str) -> list[str]:
    """What changed between two values, down to the nested keys that differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in after:
            if before.get(key) != after[key]:
                out.extend(_diffs(before.get(key), after[key], f"{path}.{key}" if path else str(key)))
        return out
    return [f"{path}: {before} → {after}"]


def render(record: dict[str, Any], *, indent: str = "", decisions: dict[str, Any] | None = None) -> str:
    """The chat card of a resolution record, one block per step (nested attacks indented)."""
    lines = []
    head = f"{record['ruleset']} {record.get('kind', 'attack')}: {record['attacker']} → {', '.join(record['targets'])}"
    lines.append(indent + head)
    if decisions is None:
        decisions = {d["key"]: d for d in record.get("decisions", [])}
    for step in record["steps"]:
        lines.extend(step_lines(step, decisions, indent))
    if record.get("outcome"):
        lines.append(f"{indent}  outcome: " + ", ".join(f"{k}={v}" for k, v in record["outcome"].items()))
    for token_id, change in record.get("changes", {}).items():
        lines.append(f"{indent}  {token_id}: " + "; ".join(_diffs(change["before"], change["after"], "")))
    return "\n".join(lines)


def step_lines(step: dict[str, Any], decisions: dict[str, Any], indent: str = "") -> list[str]:
    """One step of a card: its title, then its answers, rolls, changes, notes and nested attacks."""
    lines = []
    title = step["title"] + (f" [{step['item']}]" if step.get("item") else "")
    lines.append(f"{indent}  {title}")
    for key in step.get("decisions", []):
        d = decisions.get(key)
        if d is not None:
            answer = d["answer"]
            params = f" {json.dumps(answer['params'], sort_keys=True)}" if answer.get("params") else ""
            lines.append(f"{indent}    ? {d['prompt']} → {answer['option']}{params} ({d['how']})")
    for roll in step["rolls"]:
        lines.append(f"{indent}    🎲 {roll_line(roll)}")
    for change in step["changes"]:
        by = f" ({change['plugin']})" if change.get("plugin") else ""
        lines.append(f"{indent}    {change['number']}: {change['from']} → {change['to']}{by}")
    for note in step["notes"]:
        by = f" ({note['plugin']})" if note.get("plugin") else ""
        lines.append(f"{indent}    · {note['text']}{by}")
    for child in step.get("children", []):
        lines.append(render(child, indent=indent + "    ", decisions=decisions))
    if step.get("ended"):
        lines.append(f"{indent}    ✗ ended: {step['ended']}")
    return lines
