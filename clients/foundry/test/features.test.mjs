// The "what Foundry users expect" features, their logic against a real `vtt-bridge serve`:
// a spray's models from a cone template and an AOE drawn where it landed, combat-turn
// resets sent as token updates, the system's Charm items as declarables, a weapon from the
// sheet prefilling the declaration, the card's summary line and Dice So Nice order, a
// refused edit's field errors, a reloaded client asked its question again.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { defaultAdapters } from "../src/logic/adapters.js";
import { BridgeError } from "../src/logic/connection.js";
import { tokenFromActor } from "../src/logic/tokens.js";
import { aoeTemplates, positionInches, sprayModels, underCircle, underCone, weaponOf, needsTemplate } from "../src/logic/templates.js";
import { TurnRules, combatStep } from "../src/logic/turns.js";
import { CharmAliases, charmPlan, flagsWithCharms } from "../src/logic/charms.js";
import { weaponPrefill, isWeapon } from "../src/logic/sheet.js";
import { chatCard, throwOrder } from "../src/logic/chat.js";
import { declarablesFor } from "../../../vtt_bridge/server/static/common/declarables.js";
import { errorsAt } from "../../../vtt_bridge/server/static/common/schema-form.js";
import { USERS, bridgeForFile, exaltedActor } from "./helpers.mjs";

const example = (ruleset, name) => JSON.parse(readFileSync(new URL(`../../../plugins/vtt_${ruleset}/examples/${name}.json`, import.meta.url), "utf8"));
const table = bridgeForFile({ decisionTimeout: 20, connection: { attackTimeout: 60000, socket: { reconnectionDelay: 100, reconnectionDelayMax: 300 } } });
const until = async (what, check, ms = 15000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

// A scene with 100 px to the inch (grid square 100 px, distance 1 in).
const GRID = { size: 100, distance: 1 };
const MM = 100 / 25.4; // pixels per millimetre
/** A canvas token whose base centre is at (x, y) inches. */
const placedAt = (id, { x, y }, base = 30) => ({ id, x: x * 100 - (base * MM) / 2, y: y * 100 - (base * MM) / 2, width: base * MM, height: base * MM });

let gm;
let rulesets;
const ruleset = (id) => rulesets.find((r) => r.id === id);
const seat = async (ex, prefix) => {
  for (const t of ex.tokens) await gm.request("token.create", { ...t, id: `${prefix}${t.id}`, ruleset: ex.ruleset });
  return (id) => `${prefix}${id}`;
};

test("connect the GM and read the rulesets", async () => {
  gm = table.connect(table.bridge.gmKey);
  await gm.connect();
  rulesets = (await gm.rulesets()).rulesets;
  assert.ok(ruleset("warmachine_mk3") && ruleset("exalted2e"));
});

test("a spray: the models under the cone template the player placed are the attack's models", async () => {
  const ex = example("warmachine_mk3", "spray_two_models");
  const id = await seat(ex, "spray-");
  const firebrand = ex.tokens.find((t) => t.id === "firebrand");
  const weapon = weaponOf(firebrand, "Flame Thrower");
  assert.ok(needsTemplate(weapon));
  // On the canvas: the two Banes in front of the Firebrand, and a third model off to the side.
  const tokens = [
    placedAt(id("firebrand"), { x: 10, y: 10 }, 50),
    placedAt(id("bane1"), { x: 10, y: 14 }),
    placedAt(id("bane2"), { x: 10.9, y: 15.5 }),
    placedAt("spray-bystander", { x: 16, y: 10 }),
  ];
  assert.deepEqual(positionInches(tokens[2], GRID), { x: 10.9, y: 15.5 });
  // The player's cone: from the Firebrand's centre, straight down the canvas (90°), 8" long, 30° wide.
  const cone = { x: 1000, y: 1000, direction: 90, angle: 30, length: 8 * 100 };
  const under = underCone(cone, tokens);
  assert.deepEqual(under.map((t) => t.id), [id("firebrand"), id("bane1"), id("bane2")]);
  const models = sprayModels(under, id("firebrand"), id("bane1"));
  assert.deepEqual(models, [id("bane2")]);
  // The bridge resolves the spray with those models: each gets its own attack roll.
  const record = (await gm.request("attack", {
    ruleset: ex.ruleset, attacker: id("firebrand"), targets: [id("bane1")],
    declaration: { ...ex.declaration, models_under_template: models }, dice: ex.dice,
  }, { timeout: 30000 })).attack;
  assert.deepEqual(Object.keys(record.outcome.models).sort(), [id("bane1"), id("bane2")]);
  assert.equal(record.outcome.models[id("bane2")].hit, false);
});

test("an AOE: the circle where it landed after the deviation, and the ray from the aim point", async () => {
  const ex = example("warmachine_mk3", "aoe_deviation_blast");
  const id = await seat(ex, "aoe-");
  const record = (await gm.request("attack", {
    ruleset: ex.ruleset, attacker: id("defender"), targets: [id("trencher1")],
    declaration: ex.declaration, dice: ex.dice, answers: ex.answers,
  }, { timeout: 30000 })).attack;
  const dev = record.outcome.deviation;
  assert.deepEqual([dev.from, dev.distance], [{ x: 10, y: 18 }, 3]); // missed trencher1 at (10, 18): deviates 3"
  const weapon = weaponOf(ex.tokens[0], "Heavy Barrel");
  const drawn = aoeTemplates(record, weapon, {}, GRID);
  assert.deepEqual(drawn.circle, { x: dev.to.x * 100, y: dev.to.y * 100, distance: 1.5 }); // a 3" AOE: radius 1.5"
  assert.equal(drawn.ray.distance, 3);
  assert.deepEqual([drawn.ray.x, drawn.ray.y], [1000, 1800]);
  // The models the bridge caught are the ones under the drawn circle on the canvas.
  const canvas = ex.tokens.filter((t) => t.id !== "defender").map((t) => placedAt(id(t.id), t.system.position));
  const under = underCircle({ x: drawn.circle.x, y: drawn.circle.y }, drawn.circle.distance * 100, canvas).map((t) => t.id).sort();
  const blasted = Object.entries(record.outcome.models).filter(([, m]) => m.how === "blast").map(([k]) => k).sort();
  assert.deepEqual(under, blasted);
  // A hit centres the AOE on the target, without a ray; a weapon with no AOE draws nothing.
  const hit = aoeTemplates({ targets: ["t"], outcome: { hit: true } }, weapon, { t: { x: 4, y: 5 } }, GRID);
  assert.deepEqual(hit, { circle: { x: 400, y: 500, distance: 1.5 }, ray: null });
  assert.equal(aoeTemplates(record, { name: "sword" }, {}, GRID), null);
});

test("combat turns: the acting Exalt's DV penalty and the onslaught against it lapse, its onslaught on others restarts", async () => {
  const adapter = defaultAdapters().for("exalted2e");
  const make = async (actor, system) => {
    const wanted = tokenFromActor({ ...actor, flags: { "vtt-bridge": { ...actor.flags["vtt-bridge"], system } } }, { id: `turn-${actor._id}`, adapter, users: USERS });
    return (await gm.request("token.create", wanted)).token;
  };
  const a = await make(exaltedActor({ id: "A", name: "Anoria", owner: "alice000000001" }), { dv_penalty: 2, onslaught: { "turn-B": 3 } });
  const b = await make(exaltedActor({ id: "B", name: "Monk", owner: "bob00000000001" }), { dv_penalty: 1, onslaught: { "turn-A": 2, "group:wolves": 1 } });
  const rules = new TurnRules();
  // Foundry's updateCombat: {turn: 1} going forward; stepping back resets nothing.
  assert.deepEqual(combatStep({ turn: 1 }, { direction: 1 }), { newRound: false, newTurn: true });
  assert.deepEqual(combatStep({ round: 2, turn: 0 }, { direction: 1 }), { newRound: true, newTurn: true });
  assert.deepEqual(combatStep({ turn: 0 }, { direction: -1 }), { newRound: false, newTurn: false });
  assert.deepEqual(combatStep({ name: "x" }), { newRound: false, newTurn: false });
  const patches = rules.resets([a, b], { actor: a.id, ...combatStep({ turn: 1 }) });
  assert.deepEqual(patches, [
    { id: a.id, version: a.version, system: { dv_penalty: 0, onslaught: { "turn-B": 0 } } },
    { id: b.id, version: b.version, system: { onslaught: { "turn-A": 0 } } },
  ]);
  // The bridge takes them as token updates.
  for (const p of patches) await gm.request("token.update", p);
  const after = Object.fromEntries(await Promise.all([a.id, b.id].map(async (id) => [id, (await gm.request("token.get", { id })).token.system])));
  assert.deepEqual([after[a.id].dv_penalty, after[a.id].onslaught], [0, { "turn-B": 0 }]);
  assert.deepEqual([after[b.id].dv_penalty, after[b.id].onslaught], [1, { "turn-A": 0, "group:wolves": 1 }]); // the Monk's own penalty waits for its tick
  // Nothing left to reset: no patch.
  const fresh = await Promise.all([a.id, b.id].map(async (id) => (await gm.request("token.get", { id })).token));
  assert.deepEqual(rules.resets(fresh, { actor: a.id, newRound: false, newTurn: true }), []);
  // A module adds a rule for another ruleset; a rule without turn() or round() is refused.
  rules.register("highest_die", { round: () => ({ rerolls: 1 }) });
  assert.deepEqual(rules.resets([{ id: "h", version: 4, ruleset: "highest_die", system: {} }], { actor: null, newRound: true, newTurn: true }), [{ id: "h", version: 4, system: { rerolls: 1 } }]);
  assert.throws(() => rules.register("x", {}), /turn\(\) or round\(\)/);
});

test("combat rounds: Warmachine's Shield Guard, once per round, is free again", async () => {
  const ex = example("warmachine_mk3", "shield_guard");
  const id = await seat(ex, "round-");
  const guard = ex.tokens.find((t) => t.system.shield_guard);
  const used = (await gm.request("token.update", { id: id(guard.id), system: { shield_guard_used: true } })).token;
  const rules = new TurnRules();
  assert.deepEqual(rules.resets([used], { actor: null, newRound: false, newTurn: true }), [], "a new turn is not a new round");
  const [patch] = rules.resets([used], { actor: null, newRound: true, newTurn: true });
  assert.deepEqual(patch, { id: used.id, version: used.version, system: { shield_guard_used: false } });
  assert.equal((await gm.request("token.update", patch)).token.system.shield_guard_used, false);
});

test("the system's Charm items map to the packs' declarables; the rest are not automated", async () => {
  const exalted = ruleset("exalted2e");
  const items = [
    { type: "charm", name: "First Melee Excellency" },
    { type: "charm", name: "Essence Triumphant" },
    { type: "charm", name: "Solar Counterattack" },
    { type: "charm", name: "Heavenly Guardian Defense" },
    { type: "weapon", name: "Daiklave" },
  ];
  const plan = charmPlan(items, exalted, new CharmAliases(defaultAdapters().for("exalted2e").charmAliases));
  assert.deepEqual(plan.automated.map((a) => [a.item, a.id]), [
    ["First Melee Excellency", "first-excellency"],
    ["Essence Triumphant", "second-excellency"],
    ["Solar Counterattack", "solar-counterattack"],
  ]);
  assert.deepEqual(plan.notAutomated, ["Heavenly Guardian Defense"]);
  const flags = flagsWithCharms({}, exalted, plan);
  assert.deepEqual(flags.excellencies.charms, ["first-excellency", "second-excellency", "solar-counterattack"]);
  // The bridge keeps that list: the dialog offers what the character has, and the bridge refuses the rest.
  const actor = exaltedActor({ id: "Charmed", name: "Charmed", owner: "alice000000001", weapon: "Daiklave" });
  const wanted = { ...tokenFromActor(actor, { id: "charm-a", adapter: defaultAdapters().for("exalted2e"), users: USERS }), flags };
  const token = (await gm.request("token.create", wanted)).token;
  assert.deepEqual(declarablesFor(exalted, token).declare.map((d) => d.id), ["first-excellency", "second-excellency"]);
  // A character without the Second Excellency item is refused it.
  const fewer = flagsWithCharms({}, exalted, charmPlan(items.slice(0, 1), exalted, new CharmAliases(defaultAdapters().for("exalted2e").charmAliases)));
  await gm.request("token.create", { ...wanted, id: "charm-b", flags: fewer });
  await gm.request("token.create", { ...tokenFromActor(exaltedActor({ id: "Foe", name: "Foe", owner: "bob00000000001" }), { id: "charm-foe", adapter: defaultAdapters().for("exalted2e"), users: USERS }) });
  await assert.rejects(
    gm.request("attack", { ruleset: "exalted2e", attacker: "charm-b", targets: ["charm-foe"], declaration: { charms: [{ id: "second-excellency", successes: 1 }] } }, { timeout: 30000 }),
    (e) => e instanceof BridgeError && e.code === "invalid_request",
  );
  // No Charm items: the flags stay as they were (every declarable known); a module's aliases extend the mapping.
  assert.deepEqual(flagsWithCharms({ excellencies: { charms: ["first-excellency"] } }, exalted, charmPlan([], exalted)), { excellencies: { charms: ["first-excellency"] } });
  const more = new CharmAliases({ "first-excellency": ["Dipping Swallow Excellency"] });
  assert.deepEqual(charmPlan([{ type: "Charm", name: "dipping swallow excellency" }], exalted, more).automated.map((a) => a.id), ["first-excellency"]);
  assert.throws(() => new CharmAliases({ x: [3] }), /names or regular expressions/);
});

test("a weapon from the sheet prefills the declaration when the bridge's token carries it", async () => {
  const exalted = ruleset("exalted2e");
  const token = (await gm.request("token.get", { id: "charm-a" })).token;
  assert.ok(isWeapon({ type: "weapon" }) && !isWeapon({ type: "charm" }));
  assert.deepEqual(weaponPrefill(exalted, token, "Daiklave"), { values: { weapon: "Daiklave" }, missing: null });
  const none = weaponPrefill(exalted, token, "Grand Goremaul");
  assert.deepEqual(none.values, {});
  assert.match(none.missing, /has no weapon "Grand Goremaul" at the bridge \(it has Daiklave\)/);
  assert.match(weaponPrefill({ id: "x", declaration_schema: { properties: {} } }, token, "Daiklave").missing, /names no weapon/);
});

test("the card says whom the attack struck and how the target defended; dice go attack first, superseded marked", async () => {
  const ex = example("exalted2e", "excellencies_anoria_vs_monk");
  const id = await seat(ex, "card-");
  const record = (await gm.request("attack", {
    ruleset: ex.ruleset, attacker: id("anoria"), targets: [id("monk")], declaration: ex.declaration, seed: ex.seed, answers: { ...ex.answers, counterattack: "decline" },
  }, { timeout: 30000 })).attack;
  const card = chatCard(record, { undo: true });
  assert.equal(card.summary.defended[0].answer, "Parry");
  assert.match(card.content, new RegExp(`<span class="detail">— ${card.summary.hit ? `struck Immaculate monk; ` : ""}Immaculate monk defended: Parry</span>`));
  assert.match(card.content, /<button type="button" class="vtt-bridge-apply" data-attack="[^"]+">Apply<\/button><button type="button" class="vtt-bridge-undo"/);
  // Shield Guard: the guard was struck instead of the target.
  const sg = example("warmachine_mk3", "shield_guard");
  const sid = await seat(sg, ""); // its pack data names tokens by their ids: seated as they are
    const guarded = (await gm.request("attack", { ruleset: sg.ruleset, attacker: sid(sg.attacker), targets: sg.targets.map(sid), declaration: sg.declaration, dice: sg.dice, answers: sg.answers }, { timeout: 30000 })).attack;
  assert.match(chatCard(guarded).summary.detail, /struck .* \(redirected\)/);
  // Dice So Nice throws in step order: the missed roll (it stays as judged at 5b), the reroll, then the damage.
  const rr = example("warmachine_mk3", "reroll_granted");
  const rid = await seat(rr, "rr-");
  const rerolled = (await gm.request("attack", { ruleset: rr.ruleset, attacker: rid("sentinel"), targets: [rid("caster")], declaration: rr.declaration, dice: rr.dice, answers: { reroll_attack: `reroll:${rid("captain")}`, reroll_damage: "decline", redirect: "decline" } }, { timeout: 30000 })).attack;
  const order = throwOrder(rerolled);
  assert.deepEqual(order.map((o) => [o.superseded, o.label]), [[false, "attack roll"], [false, "attack roll (reroll)"], [false, "damage roll"]]);
  // A roll the rules set aside as a whole carries `options.superseded` (docs/protocol.md, "Rolls as Foundry
  // reads them"; an Exalted reroll set aside): it is thrown in its place, marked superseded.
  rerolled.steps.find((st) => st.rolls?.length).rolls[0].options.superseded = true;
  assert.deepEqual(throwOrder(rerolled).map((o) => o.superseded), [true, false, false]);
});

test("a refused edit: the bridge's field errors, as the player who made it reads them", async () => {
  const err = await gm.request("token.update", { id: "charm-a", system: { essence: 99 } }).catch((e) => e);
  assert.ok(err instanceof BridgeError && err.code === "invalid_request");
  const { fieldErrors, errorText } = await import("../src/foundry/errors.js");
  const e = fieldErrors(err);
  assert.deepEqual(Object.keys(e.fields), Object.keys(errorsAt(err.details, "token")));
  assert.match(errorText(e), /essence: /);
  assert.equal(errorText({ code: "conflict", message: "stale", fields: {} }), "conflict: stale");
});

test("a player who reloads mid-question gets the question back on the new connection", async () => {
  const ex = example("warmachine_mk3", "reroll_granted");
  const id = await seat(ex, "reload-");
  await gm.request("token.update", { id: id("sentinel"), ownership: { alice: 3 } });
  const key = await gm.createKey("alice");
  const before = table.connect(key);
  const asked = [];
  before.onDecision((d, { signal }) => {
    asked.push(["before", d.key]);
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(undefined)));
  });
  await before.connect();
  const attack = gm.request("attack", { ruleset: ex.ruleset, attacker: id("sentinel"), targets: [id("caster")], declaration: ex.declaration, dice: [1, 2, 5, 4, 6, 5], answers: { reroll_damage: "decline", redirect: "decline" } }, { timeout: 40000 });
  await until("the question", () => asked.length === 1);
  // The page reloads: the old socket drops (no goodbye), a new Foundry page connects with the same key.
  before.socket.io.reconnection(false);
  before.socket.io.engine.close();
  const after = table.connect(key);
  const pending = [];
  after.onSync((sync) => pending.push(...sync.pending.map((p) => p.key)));
  after.onDecision((d) => {
    asked.push(["after", d.key]);
    return `reroll:${id("captain")}`;
  });
  await after.connect();
  assert.ok(pending.every((k) => k.startsWith("reroll_attack")), "the table's sync lists it as pending, if the new page connects before it is put again");
  const record = (await attack).attack;
  assert.deepEqual(asked, [["before", "reroll_attack[" + id("caster") + "]"], ["after", "reroll_attack[" + id("caster") + "]"]]);
  const d = record.decisions.find((x) => x.key.startsWith("reroll_attack"));
  assert.deepEqual([d.answer.option, d.how], [`reroll:${id("captain")}`, "answered"]);
  assert.equal(record.outcome.hit, true);
  before.close();
});
