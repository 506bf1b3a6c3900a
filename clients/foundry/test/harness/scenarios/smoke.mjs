import { until } from "../foundry.mjs";

// The module loads, registers its settings and API, and connects to the bridge as GM.
export const scenarios = [
  {
    name: "the module registers its settings and API, and connects as gm",
    async run({ world, assert }) {
      assert.ok(world.settingConfig.has("vtt-bridge.url"));
      assert.equal(world.settingConfig.get("vtt-bridge.key").scope, "client");
      const api = world.api();
      assert.equal(typeof api.attack, "function");
      assert.equal(api.connection.role, "gm");
      assert.deepEqual(world.hooks.errors, []);
    },
  },
  {
    name: "the `dbl` die modifier counts a 10 twice (Exalted's cs>=7dbl10)",
    async run({ world, assert }) {
      const term = { faces: 10, results: [{ result: 10, active: true, success: true, count: 1 }, { result: 7, active: true, success: true, count: 1 }] };
      world.Die.MODIFIERS.dbl.call(term, "dbl10");
      assert.deepEqual(term.results.map((r) => r.count), [2, 1]);
    },
  },
  {
    name: "a wrong key is reported, and the right one connects again (settings' onChange)",
    async run({ world, bridge, assert }) {
      await world.game.settings.set("vtt-bridge", "key", "not-a-key");
      await until(() => world.notices.some((n) => n.level === "error" && /forbidden/.test(n.message)), "the refusal is shown");
      assert.equal(world.api().connection, null);
      world.notices.length = 0;
      await world.game.settings.set("vtt-bridge", "key", bridge.gmKey);
      await until(() => world.api().connection?.connected, "connected again");
    },
  },
  {
    name: "after the bridge restarts the module catches up and says so",
    async run({ world, bridge, gm, assert }) {
      await bridge.restart();
      await until(() => world.notices.some((n) => /back online/.test(n.message)), () => `the catch-up notice (${JSON.stringify(world.notices)})`, 30000);
      await until(() => gm.connected, "the test's own connection is back too", 30000);
      assert.ok(world.api().connection.connected);
    },
  },
];
