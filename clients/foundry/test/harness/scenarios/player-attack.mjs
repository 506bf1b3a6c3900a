// As a player (run by player13.test.mjs, as Alice): their attack, their card without Undo,
// and no write-back from their client (only the active GM's client writes).
import { answerFor, decisionModel } from "../../../src/logic/decisions.js";
import { defaultAdapters } from "../../../src/logic/adapters.js";
import { tokenFromActor } from "../../../src/logic/tokens.js";
import { exaltedWorldActor, until } from "../foundry.mjs";

const adapter = defaultAdapters().for("exalted2e");

export const scenarios = [
  {
    name: "a player's attack posts their card, without the GM's Undo; their client writes nothing back",
    async run({ world, gm, assert }) {
      const gmId = world.users.contents.find((u) => u.isGM).id;
      const a = exaltedWorldActor(world, { name: "Alice's hero", dex: 5, melee: 5, weapon: "Daiklave" });
      const d = exaltedWorldActor(world, { name: "Foe", owner: gmId });
      const users = world.users.contents.map((u) => ({ id: u.id, isGM: u.isGM }));
      // The GM's Foundry would sync the actors; here the test's own GM connection does.
      for (const actor of [a, d]) await gm.request("token.create", tokenFromActor(actor.toObject(), { id: `a-${actor.id}`, adapter, users }));
      const scene = world.addScene();
      const ta = world.addToken(scene, a);
      const td = world.addToken(scene, d);
      gm.onDecision(async (decision) => {
        const model = decisionModel(decision);
        return answerFor(model, model.default ?? model.options[0].id, {});
      });
      try {
        const before = world.messages.size;
        const attack = world.api().attack({ attacker: ta.object, targets: [td.object], declaration: { weapon: "Daiklave" } });
        // Questions put to Alice are answered in her dialogs.
        let done = false;
        void attack.finally(() => (done = true));
        await until(async () => {
          for (const q of world.dialogs.filter((x) => String(x.options.content).includes("vtt-bridge-decision"))) await q.press(q.options.buttons[0].action);
          return done;
        }, "the attack resolves", 30000);
        const record = await attack;
        const card = world.messages.contents.slice(before).find((m) => m.flags["vtt-bridge"].attack === record.id && !m.flags["vtt-bridge"].gm);
        assert.ok(card, "the player's card is posted");
        assert.equal(card.element.querySelector(".vtt-bridge-undo"), null, "a player sees no Undo");
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(d.getFlag("vtt-bridge", "version"), undefined, "the player's client wrote nothing back");
      } finally {
        gm.onDecision(null);
      }
    },
  },
];
