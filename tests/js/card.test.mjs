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

// -- each roll as judged at its step; rerolls and extra dice under the step that made them ------

import { describeRoll, totalOf } from "../../vtt_bridge/server/static/common/rolls.js";

const RECORDS = ["exalted2e_counterattack.json", "exalted2e_mass_routs.json", "warmachine_reroll.json", "highest_die_parry.json", "godsgloom_rerolls.json"];

/** Every step of a card, nested attacks' steps included. */
const allSteps = (card) => card.steps.flatMap((s) => [s, ...s.children.flatMap(allSteps)]);

test("every roll of every ruleset's record reads, in Foundry's terms, the total its step judged", () => {
  for (const name of RECORDS) {
    const card = cardModel(fixture(name));
    const rolls = allSteps(card).flatMap((s) => s.rolls);
    assert.ok(rolls.length > 0, name);
    for (const roll of rolls) {
      assert.equal(totalOf(roll), roll.total, `${name}: ${roll.options.flavor} ${roll.formula}`);
      assert.doesNotMatch(roll.formula, /(^|\D)0d/, `${name}: ${roll.formula}`);
      // No roll is struck through by a later step: a roll set aside is set aside where it was made.
      assert.notEqual(describeRoll(roll).superseded, true, `${name}: ${roll.options.flavor}`);
    }
  }
});

test("GODSGLOOM: ATC.10 shows the dice as judged; each reroll and the critical dice sit under their own step", () => {
  const card = cardModel(fixture("godsgloom_rerolls.json"));
  const line = (roll) => {
    const d = describeRoll(roll);
    return `${plain(d.label)}: ${d.formula} [${d.faces.map((f) => (f.rerolled ? `(${f.value})` : f.value)).join(" ")}] = ${d.total}`;
  };
  const byStep = card.steps.filter((s) => s.rolls.length).map((s) => [s.title, s.rolls.map(line)]);
  assert.deepEqual(byStep, [
    [
      "ATC.10 Roll",
      ["attacker red: 4d6cs>=3 [1 2 6 2] = 1", "attacker blue: 1d6cs>=3 [5] = 1", "defender red: 1d6cs>=3 [3] = 1", "defender blue: 3d6cs>=3 [1 1 2] = 0"],
    ],
    [
      "RDP.10 Active player: Pool Reroll",
      ["attacker red Pool Reroll: 4d6cs>=3 [(1) (2) (6) (2) 4 6 6 3] = 4", "attacker blue Pool Reroll: 1d6cs>=3 [(5) 2] = 0"],
    ],
    ["RDP.20 Inactive player: Single-Die Reroll", ["defender blue die 3 reroll: 1d6cs>=3 [(2) 1] = 0"]],
    ["RDP.20 Inactive player: Single-Die Reroll", ["defender blue die 3 reroll: 1d6cs>=3 [(1) 4] = 1"]],
    ["ATC.30 Criticals", ["attacker red critical extra die: 1d6cs>=3 [5] = 1", "defender blue critical extra die: 1d6cs>=3 [3] = 1"]],
  ]);
  // The rerolls keep their colour on the card.
  assert.deepEqual(card.steps[0].rolls.concat(card.steps.find((s) => s.step === "criticals").rolls).map(rollColour), ["red", "blue", "red", "blue", "red", "blue"]);
});

test("Warmachine: the missed attack roll stays as judged at 5b; the reroll is a roll under the 5b it returns to", () => {
  const card = cardModel(fixture("warmachine_reroll.json"));
  const dice = card.steps.filter((s) => s.step === "attack_roll_dice");
  assert.equal(dice.length, 2);
  const [first, again] = dice.map((s) => describeRoll(s.rolls[0]));
  assert.deepEqual([first.label, first.formula, first.faces.map((f) => [f.value, f.active]), first.total], ["attack roll", "2d6 + 7", [[1, true], [2, true]], 10]);
  assert.deepEqual([again.label, again.formula, again.faces.map((f) => [f.value, f.active]), again.total], ["attack roll (reroll)", "2d6 + 7", [[5, true], [4, true]], 16]);
  // Between them, the step that chose the reroll, with its decision.
  const between = card.steps.slice(card.steps.indexOf(dice[0]) + 1, card.steps.indexOf(dice[1]));
  const reroll = between.find((s) => s.step === "attack_roll_reroll");
  assert.deepEqual(reroll.decisions.map((d) => [d.key, d.how]), [["reroll_attack[caster]", "given"]]);
});

test("the summary names whom the attack struck and how each target defended", () => {
  // Exalted: Anoria dodged the Monk's staff; her Solar Counterattack's own parry is not this attack's.
  const counter = cardModel(fixture("exalted2e_counterattack.json"), { names: { anoria: "Anoria", monk: "Monk" } }).summary;
  assert.deepEqual(counter.defended.map((d) => [d.name, d.answer]), [["Anoria", "Dodge"]]);
  assert.equal(counter.detail, "struck Anoria; Anoria defended: Dodge");
  // Warmachine: the models of the outcome, with how each was hit when it was not a plain roll.
  const shot = cardModel(fixture("warmachine_reroll.json"), { names: { caster: "Kreoss" } }).summary;
  assert.deepEqual(shot.struck.map((s) => [s.name, s.how]), [["Kreoss", "roll"]]);
  assert.equal(shot.detail, "struck Kreoss");
  const guarded = cardModel({ targets: ["c"], outcome: { hit: true, models: { c: { hit: false, how: "redirected to r" }, r: { hit: true, how: "redirected" } } }, decisions: [] }).summary;
  assert.equal(guarded.detail, "struck r (redirected)");
  // A miss strikes nobody; an attack still going has no detail yet.
  assert.deepEqual(cardModel({ targets: ["b"], outcome: { hit: false }, decisions: [] }).summary.struck, []);
  assert.equal(cardModel({ targets: ["b"], steps: [] }).summary.detail, "");
});
