// The Bridge tab in actor sheets (issue 25, defects 1, 4, 7 and 10).
import { bridgeTab, click, exaltedWorldActor, type, until } from "../foundry.mjs";

/** The first input of the tab's rules data (a `system.*` field the sheet must never submit). */
const systemInput = (tab) => tab.querySelector("input[name^='system.'][type=number], input[name^='system.'][type=text]");

/** Every key a sheet submitted that belongs to the Bridge tab. */
const bridgeKeys = (world) => world.sheetSubmits.flatMap((d) => Object.keys(d)).filter((k) => k === "enabled" || k === "ruleset" || k.startsWith("packs.") || (k.startsWith("system.") && !["system.essence.value", "system.notes"].includes(k)));

/** Sheets of both frameworks the version has: v1 everywhere, AppV2 from 13 (api: v13 ActorSheetV2). */
const sheetKinds = (world) => (world.version >= 13 ? ["ActorSheetV1", "ActorSheetV2"] : ["ActorSheetV1"]);

export const scenarios = [
  {
    name: "defect 1: editing the Bridge tab and closing the sheet writes nothing into actor.system; the sheet's own fields still save",
    async run({ world, assert }) {
      for (const kind of sheetKinds(world)) {
        const actor = exaltedWorldActor(world, { name: `Sheet ${kind}` });
        const before = structuredClone(actor.system);
        world.sheetSubmits.length = 0;
        const sheet = await new world[kind](actor).render();
        const tab = bridgeTab(sheet);
        assert.ok(tab, `${kind}: the Bridge tab is there`);
        const input = systemInput(tab);
        assert.ok(input, `${kind}: the tab shows the rules data`);
        type(world, input, "7");
        type(world, tab.querySelector("input[name=enabled]"), false);
        await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(bridgeKeys(world), [], `${kind}: the sheet submitted none of the Bridge tab's fields`);
        // The sheet's own field still submits, and only it.
        type(world, sheet.form.querySelector("input[name='system.essence.value']"), 3);
        await until(() => actor.system.essence.value === 3, `${kind}: the sheet's own field saved`);
        if (sheet.options.submitOnClose) await sheet.close();
        assert.deepEqual(bridgeKeys(world), [], `${kind}: nothing of the tab on close either`);
        const { notes: _notes, ...system } = actor.system; // the sheet's own textarea
        assert.deepEqual({ ...system, essence: before.essence }, before, `${kind}: actor.system has no bridge keys`);
        assert.equal(actor.getFlag("vtt-bridge", "enabled"), true, `${kind}: the unsaved tab changed no flag`);
        await sheet.close?.();
      }
    },
  },
  {
    name: "defect 1: what was typed into the Bridge tab survives a re-render of the sheet",
    async run({ world, assert }) {
      for (const kind of sheetKinds(world)) {
        const actor = exaltedWorldActor(world, { name: `Typed ${kind}` });
        const sheet = await new world[kind](actor).render();
        const input = systemInput(bridgeTab(sheet));
        const name = input.name;
        type(world, input, "9");
        await actor.update({ "system.notes": "changed elsewhere" }); // re-renders the open sheet
        const again = bridgeTab(sheet).querySelector(`[name="${name}"]`);
        assert.equal(again.value, "9", `${kind}: ${name} keeps what was typed`);
        await sheet.close();
      }
    },
  },
  {
    name: "defect 4: an AppV2 sheet keeps the Bridge tab, once, after re-renders; the chosen tab stays chosen",
    versions: [13, 14],
    async run({ world, assert }) {
      const actor = exaltedWorldActor(world, { name: "AppV2" });
      const sheet = await new world.ActorSheetV2(actor).render();
      click(world, sheet.element.querySelector("nav [data-tab='vtt-bridge']"));
      assert.equal(sheet.tabGroups.primary, "vtt-bridge");
      for (let i = 0; i < 2; i++) await sheet.render();
      assert.equal(sheet.element.querySelectorAll("nav [data-tab='vtt-bridge']").length, 1, "one nav link");
      assert.equal(sheet.element.querySelectorAll("section[data-tab='vtt-bridge']").length, 1, "one tab body");
      assert.ok(sheet.element.querySelector("section[data-tab='vtt-bridge']").classList.contains("active"), "the Bridge tab is still shown");
      assert.ok(sheet.element.querySelector("nav [data-tab='vtt-bridge']").classList.contains("active"));
      await sheet.close();
    },
  },
  {
    name: "defect 4: a v1 sheet shows the Bridge tab again after a re-render, not the first tab",
    async run({ world, assert }) {
      const actor = exaltedWorldActor(world, { name: "V1 tabs" });
      const sheet = await new world.ActorSheetV1(actor).render();
      click(world, sheet.form.querySelector("nav [data-tab='vtt-bridge']"));
      assert.equal(sheet.activeTabName, "vtt-bridge");
      await actor.update({ "system.notes": "x" });
      assert.equal(sheet.form.querySelectorAll("nav [data-tab='vtt-bridge']").length, 1);
      assert.ok(sheet.form.querySelector("section[data-tab='vtt-bridge']").classList.contains("active"), "the Bridge tab is still shown");
      // Choosing another tab is remembered too.
      click(world, sheet.form.querySelector("nav [data-tab='notes']"));
      await actor.update({ "system.notes": "y" });
      assert.ok(!sheet.form.querySelector("section[data-tab='vtt-bridge']").classList.contains("active"));
      assert.equal(sheet.activeTabName, "notes");
      await sheet.close();
    },
  },
  {
    name: "defect 7: the GM's Save updates the bridge token once, without a conflict",
    async run({ world, gm, assert }) {
      const health = { penalties: [0, -1, -1, -2, -2, -4, "I"], damage: Array(7).fill(null) };
      const actor = exaltedWorldActor(world, { name: "Saver", flags: { system: { attributes: ATTRIBUTES, essence: 2, health } } });
      const system = world.game.system.id;
      world.game.system.id = "worldbuilding"; // no adapter: the tab holds all the rules data
      try {
        await saveOnce({ world, gm, assert, actor });
      } finally {
        world.game.system.id = system;
      }
    },
  },
  {
    name: "with the exalted2e adapter, the tab shows what the adapter maps and saves (the bridge updated once)",
    async run({ world, gm, assert }) {
      const actor = exaltedWorldActor(world, { name: "Adapted", dex: 5 });
      await saveOnce({ world, gm, assert, actor });
      const id = `a-${actor.id}`;
      assert.equal((await gm.request("token.get", { id })).token.system.attributes.dexterity, 5);
    },
  },
  {
    name: "defect 10: saving the tab of an exalted2e actor with no health track (no adapter) is accepted by the bridge",
    async run({ world, gm, assert }) {
      const system = world.game.system.id;
      world.game.system.id = "worldbuilding"; // no adapter: the tab holds all the rules data
      try {
        const actor = exaltedWorldActor(world, { name: "No track", flags: { system: { attributes: ATTRIBUTES, essence: 2 } } });
        const sheet = await new world.ActorSheetV1(actor).render();
        const tab = bridgeTab(sheet);
        world.notices.length = 0;
        click(world, tab.querySelector(".vtt-bridge-save"));
        const id = `a-${actor.id}`;
        const token = await until(() => gm.request("token.get", { id }).then((a) => a.token, () => null), () => `the bridge token is made (${JSON.stringify(world.notices)})`, 5000);
        assert.ok(token.system.health === null || Array.isArray(token.system.health?.penalties), JSON.stringify(token.system.health));
        assert.deepEqual(world.notices.filter((n) => n.level !== "info"), []);
        const saved = actor.getFlag("vtt-bridge", "system");
        assert.ok(!saved.health || saved.health.penalties !== null, "no penalties: null stored");
        await sheet.close();
      } finally {
        world.game.system.id = system;
      }
    },
  },
];

const ATTRIBUTES = Object.fromEntries(["strength", "dexterity", "stamina", "charisma", "manipulation", "appearance", "perception", "intelligence", "wits"].map((a) => [a, 3]));

/** Sync the actor, type a DV penalty into its tab, press Save: the bridge token moves one version, no error. */
async function saveOnce({ world, gm, assert, actor }) {
  await world.api().sync();
  const id = `a-${actor.id}`;
  const v0 = (await gm.request("token.get", { id })).token.version;
  const sheet = await new world.ActorSheetV1(actor).render();
  const tab = bridgeTab(sheet);
  const dv = tab.querySelector("input[name='system.dv_penalty']");
  assert.ok(dv, "the tab has the DV penalty field");
  type(world, dv, "2");
  world.notices.length = 0;
  click(world, tab.querySelector(".vtt-bridge-save"));
  await until(async () => (await gm.request("token.get", { id })).token.system.dv_penalty === 2, () => `the bridge has the saved value (${JSON.stringify(world.notices)})`);
  await new Promise((r) => setTimeout(r, 300));
  const token = (await gm.request("token.get", { id })).token;
  assert.equal(token.version, v0 + 1, "one token.update");
  assert.deepEqual(world.notices.filter((n) => n.level !== "info"), [], "no conflict reported");
  assert.equal(actor.getFlag("vtt-bridge", "system").dv_penalty, 2);
  await sheet.close();
}
