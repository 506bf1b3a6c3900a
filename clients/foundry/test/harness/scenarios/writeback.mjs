// Unlinked tokens (issue 25, defect 6); write-back after an undo (defect 5) is in attack.mjs.
import { exaltedWorldActor, until } from "../foundry.mjs";

export const scenarios = [
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
