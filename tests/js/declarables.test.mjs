// common/declarables.js: the attack form offers a token only what it knows.
import { test } from "node:test";
import assert from "node:assert/strict";

import { declarablesFor, knows } from "../../vtt_bridge/server/static/common/declarables.js";

// exalted2e as `rulesets.list` describes it with the Excellencies pack installed.
const EXALTED = {
  id: "exalted2e",
  declarables: [
    { id: "first-excellency", label: "Essence Overwhelming", plugin: "excellencies", kind: "charm" },
    { id: "second-excellency", label: "Essence Triumphant", plugin: "excellencies", kind: "charm" },
    { id: "third-excellency", label: "Essence Resurgent", plugin: "excellencies", kind: "option" },
    { id: "solar-counterattack", label: "Solar Counterattack", plugin: "excellencies", kind: "option" },
    { id: "keen-edge", label: "Keen edge", plugin: "keen_edge", kind: "ability" },
  ],
  flags: { excellencies: { type: "object", properties: { charms: { type: "array", items: { type: "string" } } } } },
};
const ids = (list) => list.map((d) => d.id);

test("a token whose pack flags list its Charms is offered those, options listed apart", () => {
  const hero = { id: "hero", flags: { excellencies: { charms: ["second-excellency", "third-excellency"] } } };
  const { declare, options } = declarablesFor(EXALTED, hero);
  // keen_edge keeps no `charms` list on tokens: every token knows its ability.
  assert.deepEqual(ids(declare), ["second-excellency", "keen-edge"]);
  assert.deepEqual(ids(options), ["third-excellency"]);
  assert.equal(knows(EXALTED, hero, EXALTED.declarables[0]), false);
});

test("no list, or no token, knows everything; an empty list knows nothing of that pack", () => {
  assert.deepEqual(ids(declarablesFor(EXALTED, { id: "scout", flags: {} }).declare), ["first-excellency", "second-excellency", "keen-edge"]);
  assert.deepEqual(ids(declarablesFor(EXALTED, null).options), ["third-excellency", "solar-counterattack"]);
  const none = declarablesFor(EXALTED, { id: "mortal", flags: { excellencies: { charms: [] } } });
  assert.deepEqual([ids(none.declare), ids(none.options)], [["keen-edge"], []]);
  assert.deepEqual(declarablesFor({ id: "bare" }, { id: "x" }), { declare: [], options: [] });
});
