import assert from "node:assert/strict";
import { test } from "node:test";

import { bridgeOwnership, bridgeTokenId, bridgeUserName } from "../src/logic/ids.js";
import { defaultAdapters, noAdapter } from "../src/logic/adapters.js";
import { actorUpdateFromToken, isWriter, syncRequest, tokenFromActor } from "../src/logic/tokens.js";
import { answerFor, decisionModel, secondsLeft } from "../src/logic/decisions.js";
import { collectDeclaration, declarationModel } from "../src/logic/declaration.js";
import { exaltedActor } from "./helpers.mjs";

const USERS = [
  { id: "gmUser00000001", isGM: true, active: true },
  { id: "alice000000001", isGM: false, active: true },
  { id: "bob00000000001", isGM: false, active: false },
];

test("a linked actor is one token, an unlinked token its own", () => {
  assert.equal(bridgeTokenId({ actorId: "Ab12", tokenId: "Tk9", actorLink: true }), "a-Ab12");
  assert.equal(bridgeTokenId({ actorId: "Ab12", tokenId: "Tk9", actorLink: false }), "t-Tk9");
  assert.equal(bridgeTokenId({ actorId: "Ab12" }), "a-Ab12");
});

test("ownership levels 0-3 map unchanged; GMs are left out (the bridge's gm owns everything)", () => {
  const own = bridgeOwnership({ default: 1, alice000000001: 3, bob00000000001: 2, gmUser00000001: 3, ghost: 3 }, USERS);
  assert.deepEqual(own, { default: 1, "u-alice000000001": 3, "u-bob00000000001": 2 });
  assert.equal(bridgeUserName(USERS[0]), "gm");
  assert.match(bridgeUserName({ id: "we!rd" }), /^u-we_rd$/);
});

test("the Exalted 2e adapter maps the system's data model onto the exalted2e token", () => {
  const adapter = defaultAdapters().for("exalted2e");
  assert.equal(adapter.ruleset, "exalted2e");
  const actor = exaltedActor({ id: "A1", name: "Anoria", owner: "alice000000001", weapon: "Daiklave" });
  actor.system.abilities.martialArts.value = 4;
  actor.system.health.lethal = 2;
  actor.system.health.bashing = 1;
  const sys = adapter.toSystem(actor);
  assert.equal(sys.attributes.dexterity, 4);
  assert.equal(sys.abilities.martial_arts, 4);
  assert.equal(sys.abilities.melee, 3);
  assert.equal(sys.motes, 43);
  assert.equal(sys.divine, true);
  assert.deepEqual(sys.weapons, [{ name: "Daiklave", ability: "melee", accuracy: 1, damage: 3, damage_type: "L", defense: 1, range: null, unarmed: false }]);
  assert.deepEqual(sys.health.damage.slice(0, 4), ["L", "L", "B", null]);
  assert.deepEqual(sys.health.penalties.slice(0, 7), [0, -1, -1, -2, -2, -4, "I"]);
  // and back: the track's marks become the system's counts, spent motes leave the peripheral pool first
  const update = adapter.toActorUpdate({ ...sys, motes: 40, health: { ...sys.health, damage: ["L", "L", "L", "B", null] } }, actor);
  assert.deepEqual(update, {
    "system.health.bashing": 1, "system.health.lethal": 3, "system.health.aggravated": 0,
    "system.motes.peripheral.value": 27, "system.motes.personal.value": 13,
  });
});

test("no adapter: the flags are the rules data", () => {
  const adapters = defaultAdapters();
  assert.equal(adapters.for("dnd5e"), noAdapter);
  const actor = { name: "Goblin", ownership: { default: 0 }, flags: { "vtt-bridge": { enabled: true, ruleset: "highest_die", system: { body: [6] } } } };
  const token = tokenFromActor(actor, { id: "a-G", adapter: noAdapter, users: USERS });
  assert.deepEqual(token, { id: "a-G", name: "Goblin", ruleset: "highest_die", ownership: {}, system: { body: [6] } });
  assert.equal(tokenFromActor({ name: "x", flags: {} }, { id: "a-x", adapter: noAdapter, users: USERS }), null);
  assert.throws(() => adapters.register({ id: "x" }), /string system/);
});

test("sync sends only what differs, with the version; the writer is the first active GM", () => {
  const wanted = { id: "a-1", name: "A", ruleset: "duel", ownership: { "u-a": 3 }, system: { hp: 10 }, flags: {} };
  assert.deepEqual(syncRequest(null, wanted), { event: "token.create", payload: wanted });
  const current = { ...wanted, version: 4, system: { hp: 8 } };
  assert.deepEqual(syncRequest(current, wanted), { event: "token.update", payload: { id: "a-1", version: 4, system: { hp: 10 } } });
  assert.equal(syncRequest({ ...wanted, version: 4 }, wanted), null);
  assert.equal(isWriter(USERS[0], USERS), true);
  assert.equal(isWriter(USERS[1], USERS), false);
  const update = actorUpdateFromToken({ ...wanted, version: 5 }, {}, noAdapter);
  assert.deepEqual(update, { "flags.vtt-bridge.system": { hp: 10 }, "flags.vtt-bridge.packs": {}, "flags.vtt-bridge.version": 5 });
});

test("a decision becomes a dialog: options, typed parameters, countdown; the answer is read back", () => {
  const decision = {
    key: "defense", prompt: "Dodge or parry?", token: "b", default: "dodge", timeout: 30,
    attack: { id: "atk-1", attacker: "a" },
    options: [
      { id: "dodge", label: "Dodge", detail: "Dodge DV 4" },
      { id: "parry", label: "Parry", detail: "Parry DV 3 (unarmed)", params: { type: "object", properties: { stunt: { type: "integer", minimum: 0, maximum: 3, default: 0, title: "Stunt dice" } }, additionalProperties: false } },
    ],
  };
  const model = decisionModel(decision, { now: 1000, names: (id) => ({ a: "Anoria", b: "Monk" })[id] });
  assert.equal(model.tokenName, "Monk");
  assert.equal(model.attacker, "Anoria");
  assert.deepEqual(model.options.map((o) => [o.id, o.isDefault, o.fields.map((f) => [f.path, f.widget, f.min, f.max])]), [
    ["dodge", true, []],
    ["parry", false, [["stunt", "number", 0, 3]]],
  ]);
  // What each choice gives reads as in the web table (common/decisions.js).
  assert.deepEqual(model.options.map((o) => o.text), ["Dodge DV 4", "Parry DV 3 (unarmed)"]);
  assert.equal(model.options[0].detail, "Dodge DV 4");
  assert.equal(secondsLeft(model, 1000), 30);
  assert.equal(secondsLeft(model, 30500), 1);
  assert.equal(secondsLeft(model, 99999), 0);
  assert.equal(answerFor(model, "dodge"), "dodge");
  assert.deepEqual(answerFor(model, "parry", { stunt: "2" }), { option: "parry", params: { stunt: 2 } });
  assert.throws(() => answerFor(model, "parry", { stunt: "7" }), /at most 3/);
});

test("the declaration dialog comes from the declaration schema and the declarables", () => {
  const ruleset = {
    id: "exalted2e", title: "Exalted 2e",
    declaration_schema: { type: "object", properties: { weapon: { type: "string" }, stunt: { type: "integer", minimum: 0, maximum: 3, default: 0 }, charms: { type: "array" } } },
    declarables: [{ id: "first-excellency", label: "First Excellency", plugin: "excellencies", kind: "charm", inert: true,
      params: { type: "object", properties: { dice: { type: "integer", minimum: 1, maximum: 5, default: 1 } } } }],
  };
  const model = declarationModel(ruleset);
  assert.deepEqual(model.fields.map((f) => f.path), ["weapon", "stunt"]);
  assert.equal(model.declarables[0].fields[0].path, "charms.first-excellency.dice");
  const d = collectDeclaration(model, { weapon: "Daiklave", stunt: "1", "charms.first-excellency.dice": "3" }, ["first-excellency"]);
  assert.deepEqual(d, { weapon: "Daiklave", stunt: 1, charms: [{ id: "first-excellency", dice: 3 }] });
  assert.deepEqual(collectDeclaration(model, {}, []), { stunt: 0, charms: [] });
});

test("the declaration dialog offers only what the attacking token knows (flags.<plugin>.charms)", () => {
  const ruleset = {
    id: "exalted2e", title: "Exalted 2e",
    declaration_schema: { type: "object", properties: { charms: { type: "array" } } },
    declarables: [
      { id: "first-excellency", label: "Essence Overwhelming", plugin: "excellencies", kind: "charm", params: { type: "object", properties: {} } },
      { id: "second-excellency", label: "Essence Triumphant", plugin: "excellencies", kind: "charm", params: { type: "object", properties: {} } },
      { id: "third-excellency", label: "Essence Resurgent", plugin: "excellencies", kind: "option" },
    ],
    flags: { excellencies: { type: "object", properties: { charms: { type: "array" } } } },
  };
  const hero = { id: "a-hero", flags: { excellencies: { charms: ["second-excellency"] } } };
  const model = declarationModel(ruleset, {}, hero);
  assert.deepEqual(model.declarables.map((d) => d.id), ["second-excellency"]);
  assert.deepEqual(model.options, []); // Essence Resurgent is not known either
  // An id it does not know cannot be sent, even if a stale form ticks it.
  assert.deepEqual(collectDeclaration(model, {}, ["first-excellency", "second-excellency"]), { charms: [{ id: "second-excellency" }] });
  const open = declarationModel(ruleset, {}, { id: "a-scout", flags: {} });
  assert.deepEqual([open.declarables.map((d) => d.id), open.options.map((o) => o.id)], [["first-excellency", "second-excellency"], ["third-excellency"]]);
});

test("a field model draws as a form and reads back", async () => {
  const { formHtml, rawValues } = await import("../src/logic/form.js");
  const { fieldModel, walk, collect } = await import("../../../vtt_bridge/server/static/common/schema-form.js");
  const model = fieldModel({
    type: "object",
    properties: { hp: { type: "integer", minimum: 0, maximum: 20, title: "Hit points" }, extra: { type: "boolean" }, kind: { enum: ["normal", "slaying"] } },
    required: ["hp"],
  }, { hp: 7, kind: "slaying" });
  const html = formHtml(model);
  assert.match(html, /<label>Hit points<\/label>.*<input type="number" name="hp" value="7" min="0" max="20" step="1" required>/s);
  assert.match(html, /<option value="slaying" selected>slaying<\/option>/);
  assert.match(html, /<input type="checkbox" name="extra">/);
  const raw = rawValues(model, [["hp", "9"], ["kind", "normal"]], walk);
  assert.deepEqual(collect(model, raw), { hp: 9, extra: false, kind: "normal" });
  assert.doesNotMatch(formHtml(fieldModel({ type: "object", properties: { n: { type: "string", default: "<b>" } } })), /<b>/);
});

test("lists and maps in a form gain and lose entries, keeping what was typed", async () => {
  const { formHtml, applyControl, rawValues } = await import("../src/logic/form.js");
  const { fieldModel, walk, collect } = await import("../../../vtt_bridge/server/static/common/schema-form.js");
  const schema = {
    type: "object",
    properties: {
      weapons: { type: "array", items: { type: "object", properties: { name: { type: "string" }, damage: { type: "integer", default: 0 } }, required: ["name"] } },
      hardness: { type: "object", additionalProperties: { type: "integer" } },
    },
  };
  const model = fieldModel(schema, { weapons: [{ name: "Spear", damage: 2 }], hardness: {} });
  assert.match(formHtml(model), /data-add="weapons"/);
  assert.match(formHtml(model), /data-remove="weapons" data-index="0"/);
  assert.match(formHtml(model), /data-add-key="hardness"/);
  applyControl(model, { "weapons.0.name": "Long spear" }, { add: "weapons" });
  applyControl(model, {}, { addKey: "hardness", key: "L" });
  const raw = rawValues(model, [["weapons.0.name", "Long spear"], ["weapons.0.damage", "2"], ["weapons.1.name", "Fist"], ["hardness.L", "3"]], walk);
  assert.deepEqual(collect(model, raw), { weapons: [{ name: "Long spear", damage: 2 }, { name: "Fist", damage: 0 }], hardness: { L: 3 } });
  applyControl(model, raw, { remove: "weapons", index: 0 });
  assert.deepEqual(collect(model, {}).weapons, [{ name: "Fist", damage: 0 }]);
});

test("checkboxes read as ticked only when ticked, from FormData entries or booleans", async () => {
  const { rawValues } = await import("../src/logic/form.js");
  const { fieldModel, walk } = await import("../../../vtt_bridge/server/static/common/schema-form.js");
  const model = fieldModel({ type: "object", properties: { a: { type: "boolean" }, b: { type: "boolean" } } });
  assert.deepEqual(rawValues(model, [["a", "on"]], walk), { a: true, b: false });
  assert.deepEqual(rawValues(model, [["a", false], ["b", true]], walk), { a: false, b: true });
});
