// The GM's Players tool in the scene controls (issue 25, defect 2) and the Players dialog.
import { click, until } from "../foundry.mjs";

const playersDialogs = (world) => world.dialogs.filter((d) => d.options.window?.title === "Bridge players");

export const scenarios = [
  {
    name: "defect 2: one click on the Players tool opens one dialog, and a key made there is shown",
    async run({ world, assert }) {
      const controls = world.sceneControls();
      const tool = controls.tool("vtt-bridge-players");
      assert.ok(tool, "the tool is in the token controls");
      // A tool has one callback: v12's onClick, or v13's onChange.
      assert.equal([tool.onClick, tool.onChange].filter(Boolean).length, 1);
      controls.click("vtt-bridge-players");
      await until(() => playersDialogs(world).length > 0, "the Players dialog opens");
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(playersDialogs(world).length, 1, "one dialog per click");
      const [dialog] = playersDialogs(world);
      const player = world.users.contents.find((u) => !u.isGM);
      click(world, dialog.element.querySelector(`button[data-user="${player.id}"]`));
      const key = dialog.element.querySelector(`input.key[data-user="${player.id}"]`);
      await until(() => key.value.length > 8, "the player's key is shown");
      await dialog.press("close");
      assert.equal(playersDialogs(world).length, 0);
    },
  },
];
