// Runs every scenario of test/harness/scenarios/ against one simulated Foundry version,
// in this process: one real bridge, one world, the module's bundle loaded once.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { io } from "socket.io-client";

import { BridgeConnection } from "../../src/logic/connection.js";
import { bridgeUserName } from "../../src/logic/ids.js";
import { USERS, startBridge } from "../helpers.mjs";
import { MODULE_ROOT, createWorld } from "./foundry.mjs";

const SCENARIOS = join(MODULE_ROOT, "test", "harness", "scenarios");

/** Every scenario: `{file, name, versions?, system?, run(ctx)}`. */
export async function loadScenarios({ only = null } = {}) {
  const out = [];
  const files = readdirSync(SCENARIOS).filter((f) => f.endsWith(".mjs")).sort();
  for (const file of files.filter((f) => (only ? f.startsWith(only) : !f.startsWith("player-")))) {
    const mod = await import(join(SCENARIOS, file));
    for (const s of mod.scenarios) out.push({ file, ...s });
  }
  return out;
}

/**
 * Register the node:test tests of `version`: the module built, a bridge and a world
 * started before them. The world's client is `me` (a user id of `users`; the first GM
 * by default) connected with its own key; scenarios get `{version, world, gm, bridge,
 * assert}` (`gm`: a GM connection of the test's own). A scenario that names `versions`
 * runs on those only; `users`/`me` of the scenario's file pick which runner runs it
 * (see README.md).
 */
export async function runVersion(version, { system = "exalted2e", users = USERS, me, only = null } = {}) {
  const scenarios = (await loadScenarios({ only })).filter((s) => !s.versions || s.versions.includes(version));
  const ctx = { version, assert };
  describe(`Foundry ${version}`, () => {
    before(async () => {
      if (!process.env.VTT_BRIDGE_HARNESS_NO_BUILD) execFileSync(process.execPath, [join(MODULE_ROOT, "scripts", "build.mjs")]);
      ctx.bridge = await startBridge({ decisionTimeout: 20 });
      // A GM connection of the test's own, to read what the bridge holds (and make a player's key).
      ctx.gm = new BridgeConnection({ io, url: ctx.bridge.url, table: ctx.bridge.table, key: ctx.bridge.gmKey, timeout: 10000 });
      await ctx.gm.connect();
      ctx.world = createWorld({ version, system, users, me });
      const user = ctx.world.user;
      const key = user.isGM ? ctx.bridge.gmKey : await ctx.gm.createKey(bridgeUserName(user));
      await ctx.world.load();
      await ctx.world.ready({ url: ctx.bridge.url, table: ctx.bridge.table, key });
    });
    after(async () => {
      ctx.gm?.close();
      ctx.world?.close();
      await ctx.bridge?.stop();
    });
    for (const s of scenarios) {
      test(`${s.file}: ${s.name}`, { timeout: s.timeout ?? 60000 }, async () => {
        ctx.world.install();
        ctx.world.notices.length = 0;
        await s.run(ctx);
      });
    }
  });
}
