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
];
