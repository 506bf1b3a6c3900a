// `store_unavailable` is retried by the module itself (common/retry.js), against a real
// bridge on a real redis-server that is stopped mid-play: the attack sent while Redis is
// away goes through once it is back, with the same request_id, without the user sending
// it again, and is applied once.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bridgeTokenId } from "../src/logic/ids.js";
import { defaultAdapters } from "../src/logic/adapters.js";
import { answerFor, decisionModel } from "../src/logic/decisions.js";
import { syncRequest, tokenFromActor } from "../src/logic/tokens.js";
import { BridgeConnection } from "../src/logic/connection.js";
import { io } from "socket.io-client";
import { exaltedActor, redisServerBin, startBridge, startRedis, USERS } from "./helpers.mjs";

const adapter = defaultAdapters().for("exalted2e");

const until = async (check, ms) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
};

test("an attack sent while Redis is down goes through when it is back, once, the user waiting", { skip: !redisServerBin() && "no redis-server", timeout: 90000 }, async () => {
  const redis = await startRedis();
  let bridge = null;
  let gm = null;
  try {
    bridge = await startBridge({ redis: redis.url, decisionTimeout: 5 });
    gm = new BridgeConnection({ io, url: bridge.url, table: bridge.table, key: bridge.gmKey, timeout: 10000, attackTimeout: 60000 });
    const waits = [];
    gm.onStoreWait((seconds, event, ok) => waits.push({ seconds, event, ok }));
    gm.onDecision(async (decision) => {
      const model = decisionModel(decision);
      return answerFor(model, model.default ?? model.options[0].id, {});
    });
    await gm.connect();
    const ids = {};
    for (const [name, owner] of [["Anoria", "alice000000001"], ["Monk", "bob00000000001"]]) {
      const actor = exaltedActor({ id: `Act${name}`.padEnd(15, "0"), name, owner, weapon: name === "Anoria" ? "Daiklave" : null });
      ids[name] = bridgeTokenId({ actorId: actor._id });
      const req = syncRequest(null, tokenFromActor(actor, { id: ids[name], adapter, users: USERS }));
      await gm.request(req.event, req.payload);
    }

    await redis.stop();
    const sent = gm.attack({ ruleset: "exalted2e", attacker: ids.Anoria, targets: [ids.Monk], requestId: "foundry-outage-1" });
    await until(() => waits.some((w) => w.seconds !== null), 20000); // answered store_unavailable: waiting
    assert.equal(waits[0].event, "attack");
    await new Promise((r) => setTimeout(r, 1500)); // down for a while: it keeps waiting, no error
    await redis.start();
    const record = await sent;
    assert.equal(record.attacker, ids.Anoria);
    assert.deepEqual(waits.at(-1), { seconds: null, event: "attack", ok: true });
    assert.ok(waits.filter((w) => w.seconds !== null).length >= 2, JSON.stringify(waits));

    // Applied once: the same request_id again answers the same attack, and history has one.
    const again = await gm.request("attack", { ruleset: "exalted2e", attacker: ids.Anoria, targets: [ids.Monk], declaration: {}, request_id: "foundry-outage-1" });
    assert.equal(again.attack.id, record.id);
    const { attacks } = await gm.request("attack.history", { limit: 10 });
    assert.deepEqual(attacks.filter((a) => a.kind === "attack").map((a) => a.id), [record.id]);
  } finally {
    gm?.close();
    await bridge?.stop();
    await redis.remove();
  }
});
