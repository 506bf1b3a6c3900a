// A Foundry client away from the table — restarted, or its connection dropped — catches up
// with `table.sync` on connect, as the web table does: the attacks it missed, and the
// questions still out for its user. Against a real `vtt-bridge serve`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { bridgeForFile } from "./helpers.mjs";

// Seed 001's reroll example: Sentinel (alice's) shoots Kreoss; Battlegroup captain grants a reroll.
const EXAMPLE = JSON.parse(readFileSync(new URL("../../../plugins/vtt_warmachine_mk3/examples/reroll_granted.json", import.meta.url), "utf8"));
const table = bridgeForFile({ decisionTimeout: 30, connection: { socket: { reconnectionDelay: 100, reconnectionDelayMax: 300 } } });
const connect = table.connect;

const until = async (what, check, ms = 15000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

test("a restarted client gets the attacks it missed; a dropped one catches up and is asked again", async () => {
  const gm = connect(table.bridge.gmKey);
  await gm.connect();
  const aliceKey = await gm.createKey("alice");
  for (const token of EXAMPLE.tokens) await gm.request("token.create", { ...token, ruleset: EXAMPLE.ruleset });
  const shot = (extra) => ({ ruleset: EXAMPLE.ruleset, attacker: "sentinel", targets: ["caster"], declaration: EXAMPLE.declaration, ...extra });
  // [5 4] + 7 = 16 hits DEF 15 (no reroll asked); damage [6 5].
  const hit = { dice: [5, 4, 6, 5], answers: { reroll_damage: "decline" } };

  // Alice's Foundry, first start: nothing happened yet.
  const syncs = [];
  const first = connect(aliceKey);
  first.onSync((sync, how) => syncs.push({ sync, ...how }));
  await first.connect();
  assert.equal(syncs.length, 1);
  assert.equal(syncs[0].reconnect, false);
  assert.deepEqual(syncs[0].sync.attacks, []);
  assert.equal(syncs[0].sync.tokens.length, 3);
  const one = (await gm.request("attack", shot(hit))).attack;
  await until("alice to hear attack.resolved", () => first.seq === one.seq);

  // A machine that never played at this table starts from now: no history to card.
  const fresh = [];
  const newcomer = connect(aliceKey, { since: null });
  newcomer.onSync((sync) => fresh.push(sync));
  await newcomer.connect();
  assert.deepEqual([fresh[0].attacks, newcomer.seq, fresh[0].tokens.length], [[], one.seq, 3]);
  newcomer.close();

  // Foundry closes; the GM attacks meanwhile; Foundry starts again from the seq it kept.
  first.close();
  const two = (await gm.request("attack", shot(hit))).attack;
  const seen = [];
  const again = connect(aliceKey, { since: first.seq });
  again.onSync((sync, how) => seen.push({ sync, ...how }));
  await again.connect();
  assert.deepEqual(seen[0].sync.attacks.map((a) => a.id), [two.id], "only the attack it missed");
  assert.equal(seen[0].sync.attacks[0].steps.length, two.steps.length);
  assert.equal(again.seq, two.seq);
  assert.equal(seen[0].sync.tokens.find((t) => t.id === "caster").version, two.tokens.caster.after.version);

  // A miss: [1 2] + 7 = 10. The reroll question goes to alice, whose connection then drops.
  const asked = [];
  again.onDecision(async (decision, { signal }) => {
    asked.push(decision);
    if (asked.length === 1) return new Promise((resolve) => signal.addEventListener("abort", () => resolve(undefined)));
    await until("the catch-up", () => seen.length === 2); // answer once the sync has listed it as pending
    return "reroll:captain";
  });
  const three = gm.request("attack", shot({ dice: [1, 2, 5, 4, 6, 5], answers: { reroll_damage: "decline" } }), { timeout: 40000 });
  await until("the reroll question", () => asked.length === 1);
  assert.equal(asked[0].key, "reroll_attack[caster]");
  again.socket.io.engine.close(); // a network drop, not a goodbye: socket.io reconnects by itself
  await until("the catch-up after the reconnection", () => seen.length === 2);
  const caught = seen[1];
  assert.equal(caught.reconnect, true);
  assert.deepEqual(caught.sync.attacks, []);
  assert.deepEqual(caught.sync.pending.map((p) => [p.key, p.attack?.attacker, p.waiting]), [["reroll_attack[caster]", "sentinel", ["alice"]]]);
  assert.ok(caught.sync.pending[0].remaining > 0);
  // The bridge puts the question again to the new connection; alice answers it there.
  const record = (await three).attack;
  const reroll = record.decisions.find((d) => d.key === "reroll_attack[caster]");
  assert.deepEqual([reroll.answer.option, reroll.how], ["reroll:captain", "answered"]);
  assert.equal(record.outcome.hit, true);
  await until("alice to hear the third attack", () => again.seq === record.seq);
});
