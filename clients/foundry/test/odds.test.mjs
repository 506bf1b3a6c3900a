// The odds in the Foundry declaration dialog (tests/js/fixtures: the exact attack.odds
// answers of two shipped Warmachine examples), drawn from the web table's odds model.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { io } from "socket.io-client";

import { BridgeConnection } from "../src/logic/connection.js";
import { oddsHtml } from "../src/logic/odds.js";
import { startBridge } from "./helpers.mjs";

const odds = (name) => JSON.parse(readFileSync(new URL(`../../../tests/js/fixtures/${name}`, import.meta.url), "utf8"));
const NAMES = { trencher1: "Trencher 1", trencher2: "Trencher 2", trencher3: "Trencher 3", juggernaut: "Juggernaut <NPC>" };
const nameOf = (id) => NAMES[id] ?? id;

test("an AOE: hit the target 22/27, hit any model 137/162, and a row per model", () => {
  const html = oddsHtml(odds("warmachine_aoe_odds.json"), nameOf);
  const chances = [...html.matchAll(/<p class="chance" data-chance="(\w+)"><b>(.*?)<\/b>/g)].map(([, key, text]) => [key, text]);
  assert.deepEqual(chances, [["target", "Hit the target 81%"], ["any", "Hit any model 85%"]]);
  const rows = [...html.matchAll(/<tr data-token="(\w+)"[^>]*><th>(.*?)<\/th><td>(.*?)<\/td><td>(.*?)<\/td><td>(.*?)<\/td><\/tr>/g)].map((m) => m.slice(1));
  assert.deepEqual(rows, [
    ["trencher1", "Trencher 1 (target)", "81%", "0.78", "78%"],
    ["trencher2", "Trencher 2", "3.9%", "0.02", "2.3%"],
    ["trencher3", "Trencher 3", "3.1%", "0.02", "1.8%"],
  ]);
  assert.match(html, /<caption>damage points dealt to Trencher 1<\/caption>/);
});

test("a one-model attack: one chance to hit, no model rows; names are escaped", () => {
  const html = oddsHtml(odds("warmachine_melee_odds.json"), nameOf);
  assert.match(html, /<p class="chance" data-chance="hit"><b>Hit 100%<\/b> · mean 6.47 damage points<\/p>/);
  assert.doesNotMatch(html, /class="models"|any model/);
  assert.match(html, /Juggernaut &lt;NPC&gt;/);
});

test("the dialog's odds come from a real bridge: attack.odds of the shipped AOE example, drawn", async (t) => {
  const example = JSON.parse(readFileSync(new URL("../../../plugins/vtt_warmachine_mk3/examples/aoe_deviation_blast.json", import.meta.url), "utf8"));
  const bridge = await startBridge();
  const gm = new BridgeConnection({ io, url: bridge.url, table: bridge.table, key: bridge.gmKey, timeout: 30000 });
  t.after(async () => {
    gm.close();
    await bridge.stop();
  });
  await gm.connect();
  for (const token of example.tokens) await gm.request("token.create", { ...token, ruleset: example.ruleset });
  // What the declaration dialog asks (main.js, `askOdds`) for the declaration it holds.
  const { odds } = await gm.request("attack.odds", {
    ruleset: example.ruleset,
    attacker: example.attacker,
    targets: example.targets,
    declaration: example.declaration,
  });
  assert.deepEqual([odds.target_hit.exact, odds.hit.exact], ["22/27", "137/162"]);
  const html = oddsHtml(odds, nameOf);
  assert.match(html, /<b>Hit the target 81%<\/b>.*<b>Hit any model 85%<\/b>/s);
  assert.match(html, /<tr data-token="trencher3"><th>Trencher 3<\/th><td>3.1%<\/td><td>0.02<\/td><td>1.8%<\/td><\/tr>/);
});
