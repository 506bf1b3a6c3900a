// A JavaScript VTT module's view of vtt-bridge, with the official socket.io-client.
//
//   node interop.mjs URL TABLE GM_KEY
//
// Connects as the GM, checks a bad key is refused with a reason, lists the
// rulesets, resolves an attack whose defender prompt comes to this client
// (the defender's owner is not connected, so the GM decides), and collects
// the table's broadcasts. Prints one JSON object with what it saw; exits 1 on
// any failure.
import { io } from "socket.io-client";

const [url, table, key] = process.argv.slice(2);

function connect(auth) {
  return new Promise((resolve, reject) => {
    // Default transports: long-polling first, then the upgrade to websocket, as a browser does.
    const socket = io(url, { auth, reconnection: false });
    socket.on("connect", () => resolve(socket));
    socket.on("connect_error", (err) => {
      socket.close();
      reject(err);
    });
  });
}

async function main() {
  const seen = { refused: null, decisions: [], events: [] };

  try {
    await connect({ table, key: "not-the-key" });
  } catch (err) {
    seen.refused = { message: err.message, code: err.data && err.data.code };
  }

  const socket = await connect({ table, key });
  socket.on("decision", (decision, reply) => {
    seen.decisions.push(decision);
    reply({ option: "none" });
  });
  for (const name of ["attack.step", "attack.resolved", "token.updated"]) {
    socket.on(name, (data) => seen.events.push([name, data]));
  }
  const tokenUpdated = new Promise((resolve) => socket.once("token.updated", resolve));

  const rulesets = await socket.timeout(5000).emitWithAck("rulesets.list", {});
  seen.rulesets = rulesets.rulesets.map((r) => r.id);

  const ack = await socket.timeout(5000).emitWithAck("attack", {
    ruleset: "duel",
    attacker: "a",
    targets: ["b"],
    dice: [5, 6],
    request_id: "from-node",
  });
  seen.ack = ack;
  await tokenUpdated;

  const bad = await socket.timeout(5000).emitWithAck("token.update", { id: "b", version: 1, system: { hp: 1 } });
  seen.conflict = bad;
  socket.close();
  console.log(JSON.stringify(seen));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
