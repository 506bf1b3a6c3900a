// Starting a real `vtt-bridge serve` for the connection tests: the project's venv,
// a temp SQLite store, a free 127.0.0.1 port, a table made with `table create`.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
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

/** Start a bridge with one fresh table; `stop()` ends it and removes the store. */
export async function startBridge({ decisionTimeout = 20 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "vtt-bridge-foundry-"));
  const db = join(dir, "bridge.sqlite");
  const out = execFileSync(bridgeBin(), ["table", "create", "Foundry test", "--db", db, "--decision-timeout", String(decisionTimeout)], { encoding: "utf8" });
  const table = /table:\s+(\S+)/.exec(out)[1];
  const gmKey = /GM key:\s+(\S+)/.exec(out)[1];
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const launch = async () => {
    const proc = spawn(bridgeBin(), ["serve", "--db", db, "--host", "127.0.0.1", "--port", String(port), "--log-level", "warning"], {
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
