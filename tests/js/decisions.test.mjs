// common/decisions.js: what a question's option reads as, in the web table and Foundry alike.
import { test } from "node:test";
import assert from "node:assert/strict";

import { optionDetail, optionText } from "../../vtt_bridge/server/static/common/decisions.js";

// The exalted2e defense question as the bridge sends it, with a pack's Parry Charm.
const OPTIONS = [
  { id: "dodge", label: "Dodge", detail: "Dodge DV 7" },
  { id: "parry", label: "Parry", detail: "Parry DV 5 (daiklave)" },
  { id: "nothing", label: "Do nothing and accept the attack", detail: "DV 0" },
  { id: "iron-guard:parry", label: "Iron Guard", counts_as: "parry", plugin: "iron_guard" },
  { id: "iron-guard:block", label: "Iron Block", counts_as: "block", plugin: "iron_guard" },
  { id: "decline", label: "Decline" },
];

test("an option's detail reads once: the label is left out when the detail starts with it", () => {
  assert.equal(optionText(OPTIONS[0], OPTIONS), "Dodge DV 7");
  assert.equal(optionText(OPTIONS[1], OPTIONS), "Parry DV 5 (daiklave)");
  assert.equal(optionText(OPTIONS[2], OPTIONS), "Do nothing and accept the attack (DV 0)");
  assert.equal(optionText(OPTIONS[5], OPTIONS), "Decline");
  assert.equal(optionDetail(OPTIONS[5], OPTIONS), "");
});

test("a pack's option that counts as the ruleset's own gives that option's DV", () => {
  assert.equal(optionDetail(OPTIONS[3], OPTIONS), "Parry DV 5 (daiklave)");
  assert.equal(optionText(OPTIONS[3], OPTIONS), "Iron Guard (Parry DV 5 (daiklave))");
  // Counting as an option the question does not offer: said plainly.
  assert.equal(optionText(OPTIONS[4], OPTIONS), "Iron Block (as block)");
});
