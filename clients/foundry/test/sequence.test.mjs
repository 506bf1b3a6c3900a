// Broadcast order in the module's connection (common/sequence.js), against a real bridge:
// broadcasts in order reach the listeners, a duplicate does not, and a gap is one
// catch-up (table.sync, `onSync` with reconnect: true) after which it goes on in order.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bridgeForFile, exaltedActor, USERS } from "./helpers.mjs";
import { bridgeTokenId } from "../src/logic/ids.js";
import { defaultAdapters } from "../src/logic/adapters.js";
import { syncRequest, tokenFromActor } from "../src/logic/tokens.js";

const table = bridgeForFile();
const adapter = defaultAdapters().for("exalted2e");

const until = async (check, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

test("a gap in broadcast_seq is one table.sync; a duplicate is dropped; order goes on from the sync", async () => {
  const gm = table.connect(table.bridge.gmKey);
  await gm.connect();
  const actor = exaltedActor({ id: "ActOrder0000001", name: "Orderly", owner: "alice000000001" });
  const id = bridgeTokenId({ actorId: actor._id });
  const req = syncRequest(null, tokenFromActor(actor, { id, adapter, users: USERS }));
  await gm.request(req.event, req.payload);

  const watcher = table.connect(table.bridge.gmKey);
  const syncs = [];
  watcher.onSync((sync, how) => syncs.push({ how, seq: sync.broadcast_seq }));
  await watcher.connect();
  assert.equal(syncs.length, 1);
  assert.ok(Number.isInteger(syncs[0].seq), "table.sync answers broadcast_seq");
  const seen = [];
  watcher.on("token.updated", (data) => seen.push(data.broadcast_seq));

  await gm.request("token.update", { id, name: "Orderly II" });
  await until(() => seen.length === 1);
  assert.equal(seen[0], syncs[0].seq + 1);

  // The same event again (as a process catching up could send it): dropped.
  const deliver = (data) => watcher.socket.listeners("token.updated").forEach((fn) => fn(data));
  deliver({ token: { id, name: "stale" }, broadcast_seq: seen[0] });
  assert.equal(seen.length, 1);

  // A forged gap: the next number skipped. Not applied; one catch-up from the bridge.
  deliver({ token: { id, name: "forged" }, broadcast_seq: seen[0] + 5 });
  assert.equal(seen.length, 1);
  await until(() => syncs.length >= 2);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(syncs.length, 2);
  assert.deepEqual(syncs[1], { how: { reconnect: true }, seq: seen[0] });
  assert.equal(watcher.sequence.gaps, 1);

  await gm.request("token.update", { id, name: "Orderly III" });
  await until(() => seen.length === 2);
  assert.equal(seen[1], seen[0] + 1);
  assert.equal(syncs.length, 2);
});
