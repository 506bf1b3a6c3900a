// A question survives a dropped connection, with socket.io-client's own reconnection.
//
//   node redecide.mjs URL TABLE KEY
//
// Connects (long-polling, then websocket, as a browser), and on the first
// `decision` drops its connection as a network failure would (the engine
// closes under the client, which says no goodbye); socket.io-client
// reconnects by itself. The question is expected again on the new
// connection: it answers "none" then. Prints one JSON line per event it sees
// ({"event", ...}) and exits 0 after answering, 1 after 30 seconds.
import { io } from "socket.io-client";

const [url, table, key] = process.argv.slice(2);
const say = (data) => process.stdout.write(JSON.stringify(data) + "\n");
const socket = io(url, { auth: { table, key }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
let asked = 0;
socket.on("connect", () => say({ event: "connect" }));
socket.on("disconnect", (reason) => say({ event: "disconnect", reason }));
socket.on("decision", (decision, reply) => {
  asked += 1;
  say({ event: "decision", key: decision.key, timeout: decision.timeout });
  if (asked === 1) {
    socket.io.engine.close(); // the connection goes; the reply never comes
    return;
  }
  reply("none");
  setTimeout(() => process.exit(0), 200);
});
setTimeout(() => {
  say({ event: "gave up" });
  process.exit(1);
}, 30000);
