"""Every installed ruleset answers for its odds, and every shipped example gets odds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtt_bridge.cli.resolve import load_tokens
from vtt_bridge.odds import compute_odds, ruleset_owner

from .helpers import real_host

ROOT = Path(__file__).resolve().parents[2]
RULESETS = ("exalted2e", "exalted2e_mass", "warmachine_mk3", "highest_die", "godsgloom")
EXAMPLES = sorted((ROOT / "plugins").glob("vtt_*/examples/*.json"))

# Examples whose request the exact models leave to Monte Carlo, and why.
MONTE_CARLO = {
    "momentum_and_onslaught.json": "Onslaught held: the Momentum pack adds an Auto-⚔️ the model leaves to Monte Carlo",
    "cinder_strikes_back.json": "a counterattack answered",
}


@pytest.fixture(scope="module")
def host():
    return real_host()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_each_ruleset_plugin_provides_its_exact_model(host, ruleset):
    owner = ruleset_owner(host, ruleset)
    assert owner is not None, f"{ruleset} is not installed"
    implementers = [impl.plugin_name for impl in host.pm.hook.vtt_bridge_exact_odds.get_hookimpls()]
    assert owner in implementers


@pytest.mark.parametrize("path", EXAMPLES, ids=[f"{p.parent.parent.name}/{p.name}" for p in EXAMPLES])
def test_every_shipped_example_gets_odds(host, path):
    data = json.loads(path.read_text())
    if data.get("ruleset") not in host.rulesets:
        pytest.skip(f"{data.get('ruleset')} is not installed")
    result = compute_odds(host, data, load_tokens(host, data), mc_samples=100)
    assert result.method == ("monte_carlo" if path.name in MONTE_CARLO else "exact"), result.reason
    assert 0 <= result.hit.value <= 1
    assert abs(sum(e.value for _, e in result.damage) - 1) < 1e-9
