// common/rolls.js against every example attack's recorded rolls (`vtt-bridge resolve --json`).
import assert from "node:assert/strict";
import { before, test } from "node:test";

import { describeRoll, doubleFaces, parseDouble, toRollData, totalOf, RollDataError } from "../../../vtt_bridge/server/static/common/rolls.js";
import { exampleRolls } from "../scripts/example-rolls.mjs";

let examples;
before(async () => {
  examples = await exampleRolls();
});

test("every recorded roll of every example is roll data whose terms add up to its total", () => {
  assert.ok(examples.length >= 20);
  const rulesets = new Set(examples.map((e) => e.ruleset));
  assert.deepEqual([...rulesets].sort(), ["exalted2e", "exalted2e_mass", "godsgloom", "highest_die", "warmachine_mk3"]);
  for (const { example, rolls } of examples) {
    for (const roll of rolls) {
      const data = toRollData(roll);
      assert.equal(totalOf(data), roll.total, `${example}: ${roll.formula}`);
      assert.deepEqual(data.dice, []);
      assert.doesNotMatch(roll.formula, /\b0d\d/, `${example}: ${roll.formula}`);
      assert.doesNotMatch(roll.formula, /\d+d\d+r/, `${example}: no Foundry reroll modifier`);
    }
  }
});

test("describeRoll lists each die with what it counted for", () => {
  const parry = examples.find((e) => e.example.endsWith("seeded_duel.json")).rolls.find((r) => r.options.flavor === "parry");
  const d = describeRoll(parry);
  assert.equal(d.formula, "{1d10,1d8}kh");
  assert.equal(d.total, 7);
  assert.deepEqual(d.faces.map((f) => [f.value, f.sides, f.active, f.discarded]), [[3, 10, false, true], [7, 8, true, false]]);
  // GODSGLOOM: ATC.10's roll as judged there; the Pool Reroll a roll of its own, the 4 replaced dice rerolled.
  const gloom = examples.find((e) => e.example.endsWith("rerolls_and_criticals.json")).rolls;
  const red = gloom.find((r) => r.options.flavor === "attacker 🟥");
  assert.equal(describeRoll(red).faces.filter((f) => f.rerolled).length, 0);
  const faces = describeRoll(gloom.find((r) => r.options.flavor === "attacker 🟥 Pool Reroll")).faces;
  assert.equal(faces.filter((f) => f.rerolled).length, 4);
  assert.ok(faces.every((f) => f.colour === "red"));
  const attack = examples.find((e) => e.example.endsWith("sword_vs_soldier.json")).rolls[0];
  assert.deepEqual(describeRoll(attack).faces.filter((f) => f.value === 10).map((f) => f.count), [2, 2]);
});

test("the dbl modifier counts an active success on the face twice", () => {
  const results = [{ result: 10, active: true, success: true, count: 1 }, { result: 7, active: true, success: true, count: 1 }, { result: 10, active: false, success: true, count: 1 }];
  doubleFaces(results, parseDouble("dbl10", 10));
  assert.deepEqual(results.map((r) => r.count), [2, 1, 1]);
  assert.equal(parseDouble("dbl", 10), 10);
  assert.equal(parseDouble("cs>=7", 10), null);
});

test("what is not roll data is refused, naming where", () => {
  assert.throws(() => toRollData({ class: "Roll", formula: "1d6", terms: [{ class: "Die", number: 0, faces: 6, results: [] }] }), (e) => e instanceof RollDataError && e.path === "roll.terms.0");
  assert.throws(() => toRollData({ class: "Nope" }), /not a Roll/);
});
