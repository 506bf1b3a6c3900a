// A bridge restarted mid-attack (SIGTERM, as Ctrl-C): the attack it cut short is
// answered `server_stopping` (nothing applied), and the module sends it again, with the
// same request id, once its connection is back; the bridge resolves it once.
import assert from "node:assert/strict";
import { test } from "node:test";

import { defaultAdapters } from "../src/logic/adapters.js";
import { bridgeTokenId, bridgeUserName } from "../src/logic/ids.js";
import { syncRequest, tokenFromActor } from "../src/logic/tokens.js";
import { decisionModel } from "../src/logic/decisions.js";
import { USERS, bridgeForFile, exaltedActor } from "./helpers.mjs";

const adapter = defaultAdapters().for("exalted2e");
const table = bridgeForFile({ decisionTimeout: 60, connection: { timeout: 30000, attackTimeout: 60000 } });
const connect = table.connect;

test("an attack cut short by a bridge restart is sent again once reconnected and resolved once", async () => {
  const gm = connect(table.bridge.gmKey);
  await gm.connect();
  const keys = {};
  for (const user of USERS.filter((u) => !u.isGM)) keys[user.id] = await gm.createKey(bridgeUserName(user));
  const ids = {};
  for (const actor of [
    exaltedActor({ id: "ActAnoria000001", name: "Anoria", owner: "alice000000001", dex: 5, melee: 5, weapon: "Daiklave" }),
    exaltedActor({ id: "ActMonk00000001", name: "Monk", owner: "bob00000000001", dodge: 3 }),
  ]) {
    ids[actor.name] = bridgeTokenId({ actorId: actor._id });
    const req = syncRequest(null, tokenFromActor(actor, { id: ids[actor.name], adapter, users: USERS }));
    await gm.request(req.event, req.payload);
  }
  const alice = connect(keys.alice000000001);
  const bob = connect(keys.bob00000000001);
  await alice.connect();
  await bob.connect();

  // Bob leaves the first question open (the bridge stops meanwhile); he answers the next one.
  let first = true;
  let asked;
  const askedOnce = new Promise((resolve) => (asked = resolve));
  bob.onDecision(async (decision, { signal }) => {
    if (first) {
      first = false;
      asked();
      await new Promise((resolve) => {
        signal.addEventListener("abort", resolve);
        setTimeout(resolve, 20000).unref();
      });
      return undefined;
    }
    return decisionModel(decision).default ?? undefined;
  });
  // Whoever is asked after the restart (the GM while bob is not back yet) takes the default.
  gm.onDecision(async (decision) => decisionModel(decision).default ?? undefined);
  alice.onDecision(async (decision) => decisionModel(decision).default ?? undefined);

  const count = async () => (await gm.request("attack.history", { limit: 500 })).attacks.filter((e) => e.kind === "attack").length;
  const before = await count();
  const request = { ruleset: "exalted2e", attacker: ids.Anoria, targets: [ids.Monk], declaration: { weapon: "Daiklave" }, requestId: "foundry-restart-1" };
  const pending = alice.attack(request);
  await askedOnce;
  await table.bridge.restart();
  const attack = await pending;
  assert.equal(attack.attacker, ids.Anoria);
  assert.equal(await count(), before + 1, "the cut-short attack was applied once");
  // Sent once more with the same id: the first result, nothing rolled again.
  assert.equal((await alice.attack(request)).id, attack.id);
  assert.equal(await count(), before + 1);
});
