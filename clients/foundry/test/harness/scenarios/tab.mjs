// The Bridge tab's own controls: the header button's dialog (sheets without tabs), list
// items added and removed, the ruleset choice, field errors on Save.
import { bridgeTab, click, exaltedWorldActor, type, until } from "../foundry.mjs";

const tabDialogs = (world) => world.dialogs.filter((d) => /^Bridge: /.test(d.options.window?.title ?? ""));

export const scenarios = [
  {
    name: "the sheet's header opens the Bridge tab as a dialog; a weapon added there is saved to the bridge",
    async run({ world, gm, assert }) {
      const actor = exaltedWorldActor(world, { name: "Header" });
      await world.api().sync();
      const kinds = world.version >= 13 ? ["ActorSheetV1", "ActorSheetV2"] : ["ActorSheetV1"];
      for (const kind of kinds) {
        const sheet = await new world[kind](actor).render();
        const entry = kind === "ActorSheetV1" ? sheet.headerButtons.find((b) => b.class === "vtt-bridge") : sheet.headerControls.find((c) => c.action === "vttBridge");
        assert.ok(entry, `${kind}: the header has the Bridge entry`);
        (entry.onclick ?? entry.onClick)();
        const dialog = await until(() => tabDialogs(world)[0], "the Bridge dialog");
        assert.ok(dialog.element.querySelector(".vtt-bridge-tab input[name=enabled]"));
        if (kind === "ActorSheetV1") {
          // Hardness is a map the tab edits: add a key, give it a value, remove another.
          const add = dialog.element.querySelector("[data-add-key='system.hardness']");
          assert.ok(add, "the Hardness map has an add control");
          dialog.element.querySelector("[data-new-key='system.hardness']").value = "A";
          click(world, add);
          const field = dialog.element.querySelector("input[name='system.hardness.A']");
          assert.ok(field, "the new key has its field");
          type(world, field, "4");
          const weapons = dialog.element.querySelector("[data-add='system.weapons']");
          if (weapons) {
            const n = dialog.element.querySelectorAll("[data-remove='system.weapons']").length;
            click(world, weapons);
            assert.equal(dialog.element.querySelectorAll("[data-remove='system.weapons']").length, n + 1, "a weapon row was added");
            click(world, [...dialog.element.querySelectorAll("[data-remove='system.weapons']")].at(-1));
            assert.equal(dialog.element.querySelectorAll("[data-remove='system.weapons']").length, n, "and removed");
          }
          assert.equal(dialog.element.querySelector("input[name='system.hardness.A']").value, "4", "what was typed stays through the redraws");
          click(world, dialog.element.querySelector(".vtt-bridge-save"));
          await until(async () => (await gm.request("token.get", { id: `a-${actor.id}` })).token.system.hardness?.A === 4, "the bridge has the new Hardness");
        }
        await dialog.press("close");
        await sheet.close();
      }
    },
  },
  {
    name: "a field the form refuses shows its error and saves nothing",
    async run({ world, assert }) {
      const actor = exaltedWorldActor(world, { name: "Wrong" });
      const sheet = await new world.ActorSheetV1(actor).render();
      const tab = bridgeTab(sheet);
      type(world, tab.querySelector("input[name='system.dv_penalty']"), "1.5");
      world.notices.length = 0;
      const updates = world.updates.length;
      click(world, tab.querySelector(".vtt-bridge-save"));
      await until(() => world.notices.some((n) => n.level === "warn" && /dv_penalty/.test(n.message)), () => `the error is shown (${JSON.stringify(world.notices)})`);
      assert.equal(world.updates.length, updates, "the actor was not updated");
      await sheet.close();
    },
  },
  {
    name: "choosing no ruleset in the tab stores it and redraws the tab without rules data",
    async run({ world, assert }) {
      const actor = exaltedWorldActor(world, { name: "Chooser" });
      const sheet = await new world.ActorSheetV1(actor).render();
      const select = bridgeTab(sheet).querySelector("select[name=ruleset]");
      assert.equal(select.value, "exalted2e");
      select.value = "";
      select.dispatchEvent(new world.window.Event("change", { bubbles: true }));
      await until(() => actor.getFlag("vtt-bridge", "ruleset") === null, "the flag is cleared");
      await until(() => !bridgeTab(sheet).querySelector(".vtt-bridge-system"), "the rules data is gone from the tab");
      await sheet.close();
    },
  },
];
