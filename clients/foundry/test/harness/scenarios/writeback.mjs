// Writing the bridge's changes back to actors (issue 25, defect 5) and unlinked tokens (defect 6).
import { exaltedWorldActor, until } from "../foundry.mjs";

export const scenarios = [
  {
    name: "defect 5: a key the bridge dropped from the token's rules data is dropped from the actor too",
    async run({ world, gm, assert }) {
      const actor = exaltedWorldActor(world, { name: "Hard", flags: { system: { hardness: { L: 3 }, onslaught: { "atk-1": 2 } } } });
      await world.api().sync();
      const id = `a-${actor.id}`;
      const { token } = await gm.request("token.get", { id });
      assert.deepEqual(token.system.hardness, { L: 3 });
      await gm.request("token.update", { id, version: token.version, system: { hardness: {}, onslaught: {} } });
      await until(() => actor.getFlag("vtt-bridge", "version") === token.version + 1, "the write-back");
      assert.deepEqual(actor.getFlag("vtt-bridge", "system").hardness, {});
      assert.deepEqual(actor.getFlag("vtt-bridge", "system").onslaught, {});
      // And the next sync sends nothing back: the bridge keeps its cleared values.
      await actor.update({ "system.notes": "touched" });
      await new Promise((r) => setTimeout(r, 200));
      const { token: now } = await gm.request("token.get", { id });
      assert.deepEqual(now.system.hardness, {});
      assert.deepEqual(now.system.onslaught, {});
    },
  },
  {
    name: "defect 6: an unlinked token's actor syncs as its token, never over its base actor",
    async run({ world, gm, assert }) {
      const base = exaltedWorldActor(world, { name: "Bandit" });
      const scene = world.addScene();
      const token = world.addToken(scene, base, { actorLink: false, name: "Bandit 2" });
      await world.api().sync();
      const { token: baseBefore } = await gm.request("token.get", { id: `a-${base.id}` });
      const { token: own } = await gm.request("token.get", { id: `t-${token.id}` });
      assert.equal(own.name, "Bandit 2");
      assert.equal(token.actor.isToken, true);
      assert.equal(token.actor.id, base.id, "a synthetic actor has its base actor's id");
      await token.actor.update({ "flags.vtt-bridge.system.dv_penalty": 1 });
      await until(async () => (await gm.request("token.get", { id: `t-${token.id}` })).token.system.dv_penalty === 1, "the token's bridge token is updated");
      await new Promise((r) => setTimeout(r, 200));
      const { token: baseAfter } = await gm.request("token.get", { id: `a-${base.id}` });
      assert.equal(baseAfter.version, baseBefore.version, "the base actor's bridge token is untouched");
      assert.equal(baseAfter.name, "Bandit");
    },
  },
];
