// Starting a real `vtt-bridge serve` for the connection tests: the project's venv,
// a temp SQLite store, a free 127.0.0.1 port, a table made with `table create`.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { io } from "socket.io-client";

import { BridgeConnection } from "../src/logic/connection.js";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, "../../..");

export function bridgeBin() {
  const venv = join(ROOT, ".venv", "bin", "vtt-bridge");
  if (process.env.VTT_BRIDGE_BIN) return process.env.VTT_BRIDGE_BIN;
  if (existsSync(venv)) return venv;
  const onPath = (process.env.PATH || "").split(delimiter).some((dir) => dir && existsSync(join(dir, "vtt-bridge")));
  if (onPath) return "vtt-bridge";
  throw new Error(
    "the connection tests start a real bridge, and no `vtt-bridge` was found: set up the project's " +
      "venv at the repository root (python3 -m venv .venv && .venv/bin/pip install -e .), put " +
      "`vtt-bridge` on PATH, or set VTT_BRIDGE_BIN",
  );
}

function freePort() {
  return new Promise((ok, bad) => {
    const srv = createServer();
    srv.once("error", bad);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** Start a bridge with one fresh table (on `redis`, a URL, else SQLite); `stop()` ends it and removes the store. */
export async function startBridge({ decisionTimeout = 20, redis = null } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "vtt-bridge-foundry-"));
  const db = join(dir, "bridge.sqlite");
  const store = redis ? ["--redis", redis] : ["--db", db];
  const out = execFileSync(bridgeBin(), ["table", "create", "Foundry test", ...store, "--decision-timeout", String(decisionTimeout)], { encoding: "utf8" });
  const table = /table:\s+(\S+)/.exec(out)[1];
  const gmKey = /GM key:\s+(\S+)/.exec(out)[1];
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const launch = async () => {
    const proc = spawn(bridgeBin(), ["serve", ...store, "--host", "127.0.0.1", "--port", String(port), "--log-level", "warning"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (b) => (stderr += b));
    const until = Date.now() + 20000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`vtt-bridge serve exited: ${stderr}`);
      try {
        const r = await fetch(`${url}/healthz`);
        if (r.ok) return proc;
      } catch {
        /* not up yet */
      }
      if (Date.now() > until) {
        proc.kill();
        throw new Error(`vtt-bridge serve did not come up: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const end = async (proc) => {
    proc.kill("SIGTERM");
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
  };
  let proc = await launch();
  return {
    url,
    table,
    gmKey,
    /** Stop the bridge (SIGTERM, as Ctrl-C) and serve the same store on the same port again. */
    async restart() {
      await end(proc);
      proc = await launch();
    },
    async stop() {
      await end(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The redis-server binary, or null when it is not installed (the Redis tests then skip). */
export function redisServerBin() {
  const found = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => existsSync(p));
  return found ?? ((process.env.PATH || "").split(delimiter).map((d) => join(d, "redis-server")).find((p) => existsSync(p)) || null);
}

/**
 * A real redis-server on a free 127.0.0.1 port, with its data in an append-only file
 * (fsynced at every write), so `stop()` then `start()` comes back with every key.
 */
export async function startRedis() {
  const bin = redisServerBin();
  const dir = mkdtempSync(join(tmpdir(), "vtt-bridge-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir];
  let proc = null;
  const ping = () =>
    new Promise((ok) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => socket.write("PING\r\n"));
      socket.once("data", (b) => {
        socket.destroy();
        ok(String(b).includes("PONG"));
      });
      socket.once("error", () => ok(false));
    });
  const redis = {
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      proc = spawn(bin, args, { stdio: "ignore" });
      const until = Date.now() + 10000;
      while (!(await ping())) {
        if (Date.now() > until || proc.exitCode !== null) throw new Error("redis-server did not start");
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (!proc || proc.exitCode !== null) return;
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await gone;
    },
    async remove() {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

/** An actor of the Foundry "exalted2e" system, as plain data (what `actor.toObject()` gives). */
export function exaltedActor({ id, name, owner, dex = 4, melee = 3, dodge = 2, weapon = null, flags = {} }) {
  return {
    _id: id,
    name,
    type: "character",
    ownership: { default: 0, [owner]: 3 },
    system: {
      exaltType: "solar",
      attributes: {
        strength: { value: 3 }, dexterity: { value: dex }, stamina: { value: 3 },
        charisma: { value: 2 }, manipulation: { value: 2 }, appearance: { value: 2 },
        perception: { value: 3 }, intelligence: { value: 2 }, wits: { value: 3 },
      },
      abilities: { melee: { value: melee }, dodge: { value: dodge }, martialArts: { value: 1 }, archery: { value: 0 } },
      essence: { value: 2, max: 2 },
      motes: { personal: { value: 13 }, peripheral: { value: 30 } },
      health: { bashing: 0, lethal: 0, aggravated: 0, bonus: { zero: 0, one: 0, two: 0 } },
    },
    items: weapon ? [{ type: "weapon", name: weapon, system: { accuracy: 1, damage: 3, damageType: "lethal", defense: 1, range: 0, tags: [], equipped: true } }] : [],
    flags: { "vtt-bridge": { enabled: true, ruleset: "exalted2e", system: {}, packs: {}, ...flags } },
  };
}

/** The Foundry users of the connection tests: a GM and two players. */
export const USERS = [
  { id: "gmUser00000001", name: "Gamemaster", isGM: true, active: true },
  { id: "alice000000001", name: "Alice", isGM: false, active: true },
  { id: "bob00000000001", name: "Bob", isGM: false, active: true },
];

/**
 * One real bridge for a test file: started before its tests, stopped after them with
 * every connection `connect` opened. `connection` holds the BridgeConnection options
 * the file's connections share (each call may add its own).
 */
export function bridgeForFile({ decisionTimeout = 20, connection = {} } = {}) {
  const open = [];
  const table = {
    bridge: null,
    connect(key, options = {}) {
      const { bridge } = table;
      const c = new BridgeConnection({ io, url: bridge.url, table: bridge.table, key, timeout: 10000, ...connection, ...options });
      open.push(c);
      return c;
    },
  };
  before(async () => {
    table.bridge = await startBridge({ decisionTimeout });
  });
  after(async () => {
    for (const c of open) c.close();
    await table.bridge?.stop();
  });
  return table;
}
