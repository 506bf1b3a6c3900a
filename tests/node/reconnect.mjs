// A JavaScript client across a server restart, with socket.io-client's own reconnection.
//
//   node reconnect.mjs URL TABLE KEY
//
// Prints one JSON line per connect and disconnect ({"event", "reason"?, "user"?});
// after each connect it asks `table.get`, so the harness sees the session works.
// Exits after the second connect, or 1 after 30 seconds.
import { io } from "socket.io-client";

const [url, table, key] = process.argv.slice(2);
const say = (data) => process.stdout.write(JSON.stringify(data) + "\n");
const socket = io(url, { auth: { table, key }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
let connects = 0;
socket.on("connect", async () => {
  connects += 1;
  const ack = await socket.timeout(5000).emitWithAck("table.get");
  say({ event: "connect", user: ack.user });
  if (connects === 2) {
    socket.close();
    process.exit(0);
  }
});
socket.on("disconnect", (reason) => say({ event: "disconnect", reason }));
setTimeout(() => {
  say({ event: "gave up" });
  process.exit(1);
}, 30000);
