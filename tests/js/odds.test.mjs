// common/odds.js: an attack.odds answer → what the odds panel shows. The fixtures are the
// exact answers for two shipped Warmachine examples (tests/web/test_js_units.py writes them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { anyDamage, estimate, oddsModel, percent } from "../../vtt_bridge/server/static/common/odds.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));
const NAMES = { trencher1: "Trencher 1", trencher2: "Trencher 2", trencher3: "Trencher 3", juggernaut: "Juggernaut" };
const nameOf = (id) => NAMES[id] ?? id;

test("percent: whole numbers from 10%, a decimal below, and never 0% for a real chance", () => {
  assert.equal(percent(0.8456790123), "85%");
  assert.equal(percent(0.0385802469), "3.9%");
  assert.equal(percent(0.0004), "< 0.1%");
  assert.equal(percent(0), "0.0%");
  assert.equal(estimate({ value: 0.5, se: null, exact: "1/2" }), 0.5);
  assert.equal(estimate(0.25), 0.25);
});

test("an AOE: the chance to hit the target, to hit any model, and a row per model the blast can catch", () => {
  // aoe_deviation_blast.json: hit 137/162 (any model), target_hit 22/27 (docs/protocol.md, attack.odds).
  const m = oddsModel(fixture("warmachine_aoe_odds.json"), nameOf);
  assert.equal(m.several, true);
  assert.deepEqual(
    m.chances.map((c) => c.text),
    ["Hit the target 81%", "Hit any model 85%"],
  );
  assert.equal(m.targetHit, 22 / 27);
  assert.equal(m.hit, 137 / 162);
  assert.equal(m.meanText, "mean 0.78 damage points to Trencher 1");
  assert.equal(m.damageTitle, "damage points dealt to Trencher 1");
  assert.deepEqual(
    m.models.map((r) => [r.name, r.target, r.hitText, r.meanText, r.damagedText]),
    [
      ["Trencher 1", true, "81%", "0.78", "78%"], // 22/27; 503/648; P(damage ≥ 1) = 503/648
      ["Trencher 2", false, "3.9%", "0.02", "2.3%"], // 25/648; 175/7776
      ["Trencher 3", false, "3.1%", "0.02", "1.8%"], // 5/162; 35/1944
    ],
  );
  assert.ok(Math.abs(m.models[1].damaged - 175 / 7776) < 1e-12);
  // The chart is still the target's damage, a miss as 0.
  assert.deepEqual(m.damage.map((d) => [d.damage, d.miss]), [[0, true], [1, false]]);
  assert.deepEqual([m.damage[1].text, m.damage[1].tip], ["78%", "1 damage points: 78%"]);
  assert.ok(m.conditions.some((c) => c.text === "Trencher 2 knocked down: 0.8%"));
  assert.equal(m.method, "exact");
});

test("a one-model attack shows one chance to hit and no model rows, as before", () => {
  const m = oddsModel(fixture("warmachine_melee_odds.json"), nameOf);
  assert.equal(m.several, false);
  assert.deepEqual(m.chances.map((c) => c.text), ["Hit 100%"]); // 215/216
  assert.equal(m.models.length, 0);
  assert.equal(m.meanText, "mean 6.47 damage points"); // 302075/46656
  assert.equal(m.damageTitle, "damage points dealt");
});

test("an answer without target_hit or models (an older server) reads as a one-model attack", () => {
  const m = oddsModel({
    method: "monte_carlo",
    samples: 2000,
    unit: "wounds",
    hit: { value: 0.5, se: 0.01 },
    expected_damage: { value: 1.25, se: 0.02 },
    damage: [{ damage: 0, value: 0.5 }, { damage: 2, value: 0.5 }],
  });
  assert.deepEqual(m.chances.map((c) => c.text), ["Hit 50%"]);
  assert.equal(m.targetHit, 0.5);
  assert.equal(m.method, "Monte Carlo, 2000 samples");
  assert.equal(anyDamage([{ damage: 0, value: 0.5 }, { damage: 2, value: 0.3 }, { damage: 3, value: 0.2 }]), 0.5);
});
