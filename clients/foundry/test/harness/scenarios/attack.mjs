// An attack from the Token HUD and api.attack(): the declaration dialog with the odds,
// the defender's question in this client (issue 25, defect 3: the question closes when
// settled elsewhere, on every version), the card with its dice (defect 8) and Undo.
import { answerFor, decisionModel } from "../../../src/logic/decisions.js";
import { click, exaltedWorldActor, until } from "../foundry.mjs";

const decisionDialogs = (world) => world.dialogs.filter((d) => String(d.options.content).includes("vtt-bridge-decision"));

/** Two marked actors of this client's user, linked tokens on a scene, synced. */
export async function duel(world, { attacker = {}, defender = {} } = {}) {
  const a = exaltedWorldActor(world, { name: "Anoria", dex: 5, melee: 5, weapon: "Daiklave", ...attacker });
  const d = exaltedWorldActor(world, { name: "Monk", dodge: 3, ...defender });
  const scene = world.addScene();
  const ta = world.addToken(scene, a);
  const td = world.addToken(scene, d);
  await world.api().sync();
  return { a, d, ta, td, scene };
}

export const scenarios = [
  {
    name: "defect 3: a question settled elsewhere closes this client's dialog, and the attack resolves",
    async run({ world, gm, assert }) {
      const { ta, td } = await duel(world);
      gm.onDecision(async (decision) => {
        await until(() => decisionDialogs(world).length > 0, "this client's dialog is open");
        const model = decisionModel(decision);
        return answerFor(model, model.default ?? model.options[0].id, {});
      });
      try {
        const record = await world.api().attack({ attacker: ta.object, targets: [td.object], declaration: { weapon: "Daiklave" } });
        assert.ok(record.id);
        await until(() => decisionDialogs(world).length === 0, "the dialog closed", 3000);
      } finally {
        gm.onDecision(null);
      }
    },
  },
  {
    name: "the Token HUD attacks: declaration dialog with the odds, the question answered in this client's dialog, one card with the core dice",
    async run({ world, assert }) {
      const { ta, td } = await duel(world);
      world.targets.clear();
      world.targets.add(td.object);
      // The Token HUD hook gets (hud, html); the control attacks with the HUD's token.
      const hud = world.window.document.createElement("div");
      hud.innerHTML = `<div class="col left"></div><div class="col right"></div>`;
      world.hooks.callAll("renderTokenHUD", { object: ta.object }, world.version >= 13 ? hud : [hud], {});
      const button = hud.querySelector(".vtt-bridge-attack");
      assert.ok(button, "the HUD has the attack control");
      const before = world.messages.size;
      click(world, button);
      const declare = await until(() => world.dialogs.find((d) => String(d.options.content).includes("vtt-bridge-declare")), "the declaration dialog");
      await until(() => /%/.test(declare.element.querySelector(".vtt-bridge-odds .body")?.textContent ?? ""), "the odds are shown");
      const weapon = declare.element.querySelector("[name=weapon]");
      if (weapon && !weapon.value) weapon.value = "Daiklave";
      await declare.press("attack");
      const question = await until(() => decisionDialogs(world)[0], "the defender's question");
      assert.match(question.element.textContent, /Monk/);
      // This client answers every question of the attack in its dialogs, with the default.
      await until(async () => {
        for (const q of decisionDialogs(world)) await q.press(q.options.buttons.find((b) => b.default)?.action ?? q.options.buttons[0].action);
        return world.messages.size >= before + 2;
      }, () => `the card and the GM's card are posted (${JSON.stringify(world.notices)})`, 30000);
      const card = world.messages.contents.slice(before).find((m) => !m.flags["vtt-bridge"].gm);
      assert.ok(card.rolls.length > 0, "the card carries its rolls");
      // Defect 8: the card has HTML of its own, so core draws no dice; the module does.
      await until(() => card.element.querySelector(".vtt-bridge-dice .dice-roll .dice-tooltip"), "the card shows the core dice tooltips");
      assert.equal(card.element.querySelectorAll(".vtt-bridge-dice .dice-roll").length, card.rolls.length);
      assert.deepEqual(world.deprecations, [], "no deprecated hook is listened to");
      world.targets.clear();
    },
  },
  {
    name: "issue 28: the defender's dialog says what each choice gives, as the bridge sent it (Dodge DV, Parry DV, DV 0)",
    async run({ world, gm, assert }) {
      const { ta, td } = await duel(world, { defender: { dodge: 3 } });
      const done = world.api().attack({ attacker: ta.object, targets: [td.object], declaration: { weapon: "Daiklave" } });
      const question = await until(() => decisionDialogs(world).find((d) => !d.closed && d.options.buttons.some((b) => b.action === "parry")), "the defender's question");
      const labels = Object.fromEntries([...question.element.querySelectorAll("footer button")].map((b) => [b.dataset.action, b.textContent]));
      await question.press("parry");
      // Any other question of the attack (none by default): the default.
      const record = await until(async () => {
        for (const q of decisionDialogs(world).filter((d) => !d.closed)) await q.press(q.options.buttons.find((b) => b.default)?.action ?? q.options.buttons[0].action);
        return Promise.race([done, new Promise((r) => setTimeout(() => r(null), 200))]);
      }, "the attack resolves", 30000);
      const asked = record.decisions.find((d) => d.key === "defense");
      assert.equal(asked.answer.option, "parry");
      const detail = Object.fromEntries(asked.options.map((o) => [o.id, o.detail]));
      // Seed 002: "Dodge DV" and "Parry DV" — each button reads as the bridge's detail says.
      assert.match(detail.dodge, /^Dodge DV \d+$/);
      assert.match(labels.dodge, new RegExp(`^${detail.dodge}( \\(|$)`));
      assert.match(labels.parry, new RegExp(`^${detail.parry.replace(/[()]/g, "\\$&")}( \\(|$)`));
      assert.match(labels.nothing, new RegExp(`^Do nothing.* \\(${detail.nothing}\\)`));
    },
  },
  {
    name: "defect 5: Undo on the GM's card undoes the attack, and the actor gets exactly the bridge's numbers back (what the attack added is gone)",
    async run({ world, gm, assert }) {
      const { ta, td, d } = await duel(world, { defender: { dodge: 0 } });
      gm.onDecision(async (decision) => {
        const model = decisionModel(decision);
        return answerFor(model, model.default ?? model.options[0].id, {});
      });
      let record;
      try {
        const before = world.messages.size;
        record = await world.api().attack({ attacker: ta.object, targets: [td.object], declaration: { weapon: "Daiklave" } });
        await until(() => world.messages.size >= before + 2, "the cards");
      } finally {
        gm.onDecision(null);
      }
      const v = () => d.getFlag("vtt-bridge", "version");
      const { token: after } = await gm.request("token.get", { id: `a-${d.id}` });
      await until(() => v() === after.version, "the write-back of the attack");
      const card = world.messages.contents.find((m) => m.flags["vtt-bridge"].attack === record.id && !m.flags["vtt-bridge"].gm);
      const undo = card.element.querySelector(".vtt-bridge-undo");
      assert.ok(undo, "the GM sees Undo");
      click(world, undo);
      await until(() => world.notices.some((n) => n.message === "The attack was undone."), "the undo is confirmed");
      await until(() => v() > after.version, "the write-back of the undo");
      const { token } = await gm.request("token.get", { id: `a-${d.id}` });
      assert.notDeepEqual(after.system.onslaught, token.system.onslaught, "the attack had added to the defender's onslaught");
      assert.deepEqual(d.getFlag("vtt-bridge", "system"), token.system);
      // The next sync (any update of the actor) leaves the bridge as the undo left it.
      await d.update({ "system.notes": "touched" });
      await new Promise((r) => setTimeout(r, 300));
      const { token: now } = await gm.request("token.get", { id: `a-${d.id}` });
      assert.deepEqual(now.system.onslaught, token.system.onslaught, "a cleared onslaught stays cleared");
    },
  },
];
