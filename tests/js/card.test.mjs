// common/card.js: an attack record → one summary line and the steps worth showing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { cardModel, plain, rollColour, segments, show, stepCard } from "../../vtt_bridge/server/static/common/card.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));

const token = (id, name) => ({ before: { id, name }, after: { id, name } });

// The shape of the protocol's example record (docs/protocol.md, `attack`).
const DUEL = {
  id: "atk-1",
  seq: 5,
  ruleset: "duel",
  kind: "attack",
  attacker: "a",
  targets: ["b"],
  declaration: { weapon: "sword", charms: [{ id: "excellent-strike" }] },
  steps: [
    { step: "declare", title: "1. Declare", rolls: [], changes: [], notes: [{ text: "declared", plugin: "duel" }] },
    { step: "defend", title: "2. Defend", rolls: [], changes: [], notes: [], decisions: ["defense"] },
    {
      step: "roll",
      title: "3. Roll",
      rolls: [{ class: "Roll", formula: "2d6cs>=4", terms: [], total: 2 }],
      changes: [{ number: "hits", from: null, to: 2, plugin: "duel" }],
      notes: [{ text: null, plugin: "duel" }],
    },
    { step: "reroll", title: "4. Reroll", rolls: [], changes: [], notes: [] },
    { step: "wound", title: null, item: "b", rolls: [], changes: [], notes: [{ text: "2 wounds", plugin: "duel" }] },
  ],
  outcome: { hit: true, damage: 2, conditions: { b: ["reeling", "hurt"], a: [] } },
  ended: null,
  decisions: [
    {
      key: "defense",
      name: "defense",
      prompt: "Block or take it?",
      token: "b",
      options: [
        { id: "block", label: "Block" },
        { id: "none", label: "Take it" },
      ],
      default: "block",
      answer: { option: "none", params: { stunt: 2 } },
      how: "answered",
    },
  ],
  tokens: { a: token("a", "Attacker"), b: token("b", "Defender") },
};

test("the summary says who, with what, hit, damage and conditions in one line", () => {
  const { summary } = cardModel(DUEL);
  assert.equal(summary.text, "Attacker → Defender (sword with Excellent strike): hit, 2 damage; Defender: Reeling, Hurt");
  assert.equal(summary.attacker, "Attacker");
  assert.deepEqual(summary.targets, ["Defender"]);
  assert.equal(summary.hit, true);
  assert.equal(summary.damage, 2);
  assert.deepEqual(summary.conditions, [{ token: "b", name: "Defender", conditions: ["reeling", "hurt"] }]);
});

test("empty steps are dropped and nothing reads null", () => {
  const { steps } = cardModel(DUEL);
  assert.deepEqual(
    steps.map((s) => s.title),
    ["1. Declare", "2. Defend", "3. Roll", "Wound"],
  );
  const roll = steps[2];
  assert.deepEqual(roll.notes, []);
  assert.deepEqual(roll.changes, [{ number: "hits", label: "Hits", from: "—", to: "2", plugin: "duel" }]);
  assert.deepEqual(steps[3].item, { token: "b", name: "Defender" });
  const defend = steps[1];
  assert.deepEqual(defend.decisions, [
    {
      key: "defense",
      token: "b",
      prompt: "Block or take it?",
      answer: "Take it",
      params: [{ name: "stunt", label: "Stunt", value: "2" }],
      how: "answered",
    },
  ]);
  for (const step of steps) for (const note of step.notes) assert.notEqual(note.text, "null");
});

test("a miss, an early end and names given by the client", () => {
  const miss = { ...DUEL, tokens: undefined, outcome: { hit: false, damage: 0, conditions: {} }, ended: "hardness", declaration: {} };
  const { summary } = cardModel(miss, { names: { a: "Anoria" } });
  assert.equal(summary.text, "Anoria → b: miss (hardness)");
  const unresolved = cardModel({ attacker: "a", targets: ["b", "c"], steps: [] }, { names: (id) => id.toUpperCase() });
  assert.equal(unresolved.summary.text, "A → B, C");
  assert.equal(unresolved.summary.resolved, false);
});

test("GODSGLOOM's dice are named red and blue, not drawn as emoji", () => {
  const record = fixture("godsgloom_rerolls.json");
  const card = cardModel(record);
  const rolls = card.steps[0].rolls;
  assert.deepEqual(rolls.map(rollColour), ["red", "blue", "red", "blue"]);
  assert.deepEqual(segments("attacker 🟥"), [{ text: "attacker " }, { text: "red", colour: "red", title: "red die" }]);
  assert.equal(plain("defender's 3 🛡️ against attacker's 5 ⚔️: 2 left"), "defender's 3 blocks against attacker's 5 hits: 2 left");
  // The record's steps with nothing in them (a reroll nobody took) are not on the card.
  const titles = card.steps.map((s) => s.title);
  assert.equal(titles.filter((t) => t === "RDP.10 Active player: Pool Reroll").length, 1);
  assert.ok(record.steps.length > card.steps.length);
  assert.match(card.summary.text, /: hit, 2 damage$/);
});

test("a counterattack is a nested card under its step, with its own summary", () => {
  const record = fixture("exalted2e_counterattack.json");
  const card = cardModel(record, { names: { anoria: "Anoria", monk: "Immaculate monk" } });
  const step = card.steps.find((s) => s.children.length);
  assert.equal(step.step, "counterattack");
  const [counter] = step.children;
  assert.equal(counter.summary.kind, "counterattack");
  assert.equal(counter.summary.attacker, "Anoria");
  assert.match(counter.summary.text, /^Anoria → Immaculate monk \(daiklave\)/);
  // Decisions the nested attack asked are answered from the parent record.
  const asked = counter.steps.flatMap((s) => s.decisions);
  assert.ok(asked.length > 0);
  assert.ok(asked.every((d) => d.answer !== "…"), JSON.stringify(asked));
});

test("a step broadcast live shows its question before the answer is known", () => {
  const live = stepCard({ step: "defend", title: "2. Defend", rolls: [], changes: [], notes: [], decisions: ["counterattack/defense"] });
  assert.deepEqual(live.decisions.map((d) => [d.prompt, d.answer, d.how]), [["Defense", "…", "asked"]]);
  assert.equal(stepCard({ step: "reroll", title: "4. Reroll", rolls: [], changes: [], notes: [] }), null);
});

test("show never prints null", () => {
  assert.equal(show(null), "—");
  assert.equal(show(undefined), "—");
  assert.equal(show([]), "none");
  assert.equal(show({ anoria: 3 }), "anoria 3");
  assert.equal(show(false), "no");
});
