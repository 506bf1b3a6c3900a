"""The odds in a terminal: a summary, the damage table with a bar chart, the conditions."""

from __future__ import annotations

from .result import Estimate, OddsResult

__all__ = ["bar", "render"]

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int) -> str:
    """A horizontal bar ``fraction`` (0–1) of ``width`` cells, in eighths of a cell."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    return text.ljust(width)


def percent(est: Estimate, *, se: bool = True) -> str:
    text = f"{est.value * 100:6.2f}%"
    if se and est.se is not None:
        text += f" ± {est.se * 100:.2f}"
    return text


def _mean(est: Estimate) -> str:
    return f"{est.value:.3f}" + (f" ± {est.se:.3f}" if est.se is not None else "")


def _models(result: OddsResult, pw: int, width: int) -> list[str]:
    """Each model the attack can hit: its hit chance, its mean damage, its chance of any damage."""
    label_width = max([5] + [len(m.token) for m in result.models])
    mean_width = 13 if result.method == "monte_carlo" else 7
    lines = [
        f"  {'model':>{label_width}}  {'P(hit)':>{pw}}  {'mean':>{mean_width}}  {'P(damaged)':>10}",
        "  " + "─" * (label_width + 2 + pw + 2 + mean_width + 2 + 10 + 2 + width),
    ]
    for m in result.models:
        damaged = sum(est.value for d, est in m.damage if d > 0)
        row = (
            f"  {m.token:>{label_width}}  {percent(m.hit, se=result.method == 'monte_carlo'):>{pw}}"
            f"  {_mean(m.expected_damage):>{mean_width}}  {damaged * 100:9.2f}%  {bar(m.hit.value, width)}"
        )
        lines.append(row.rstrip())
    return lines


def render(result: OddsResult, *, width: int = 40) -> str:
    """A plain-text report: method, hit chance, expected damage, table and bars."""
    mc = result.method == "monte_carlo"
    method = (
        f"Monte Carlo through the real pipeline: {result.samples:,} resolutions, seed {result.seed} (± is one standard error)"
        if mc
        else "exact"
    )
    lines = [
        f"{result.ruleset}: {result.attacker} → {', '.join(result.targets)}",
        f"  method: {method}",
        f"  why:    {result.reason}",
    ]
    if result.answers:
        lines.append("  answers: " + ", ".join(f"{k}={v}" for k, v in result.answers.items()) + " (others: rules' default)")
    else:
        lines.append("  answers: the rules' default for every decision")
    lines.append("")
    several = len(result.models) > 1
    if several:
        lines.append(f"  hit any model:   {percent(result.hit)}")
        lines.append(f"  hit the target:  {percent(result.target_hit)}")
    else:
        lines.append(f"  hit:             {percent(result.hit)}")
    target = f" to {result.targets[0]}" if several and result.targets else ""
    lines.append(f"  expected damage: {_mean(result.expected_damage)} {result.unit}{target}")
    lines.append("")

    pw = 16 if mc else 7  # the probability column, wider with "± se"
    label_width = max([14, len(result.unit)] + [len(f"{t}: {c}") for t, c, _ in result.conditions])
    rule = "  " + "─" * (label_width + 2 + pw + 2 + 7 + 2 + width)
    if several:
        lines.append(f"  {result.unit} to {result.targets[0]}:")
    lines.append(f"  {result.unit:>{label_width}}  {'P(=)':>{pw}}  {'P(≥)':>7}")
    lines.append(rule)
    peak = max((est.value for _, est in result.damage), default=0.0) or 1.0
    at_least = 1.0
    for d, est in result.damage:
        if at_least < 0.00005 and not mc:
            # Everything from here on rounds to 0.00%: one line says so, not a screenful.
            lines.append(f"  {f'≥ {d}':>{label_width}}  {'< 0.01%':>{pw}}")
            break
        row = f"  {d:>{label_width}}  {percent(est, se=mc):>{pw}}  {at_least * 100:6.2f}%  {bar(est.value / peak, width)}"
        lines.append(row.rstrip())
        at_least -= est.value
    if several:
        lines.append("")
        lines.extend(_models(result, pw, width))
    if result.conditions:
        lines.append("")
        lines.append(f"  {'condition':>{label_width}}  {'P':>{pw}}")
        lines.append(rule)
        for token, condition, est in result.conditions:
            label = f"{token}: {condition}"
            row = f"  {label:>{label_width}}  {percent(est, se=mc):>{pw}}  {'':7}  {bar(est.value, width)}"
            lines.append(row.rstrip())
    for note in result.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)
