// @ts-check
/**
 * The module's Quench suite: the harness's scenarios of issue 25 run inside a real
 * Foundry world. Install Quench (https://foundryvtt.com/packages/quench), enable it and
 * vtt-bridge in a world, log in as the GM, open the Quench window (the flask button in
 * the scene controls) and run the "vtt-bridge" batches. They make their own actors,
 * messages and tokens (names starting "vtt-bridge quench") and delete them afterwards.
 * The batches that need the bridge (a GM connection set in the module settings) skip
 * themselves without one.
 *
 * Registered on Quench's `quenchReady` hook only: without Quench this file does nothing.
 */

import { MODULE_ID, rootOf, state } from "../foundry/context.js";
import { idOf, replaceFlags, syncActor } from "../foundry/actors.js";
import { openDialog } from "../foundry/dialogs.js";

const PREFIX = "vtt-bridge quench";
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** Wait until `check()` is truthy, polling (bounded). @param {() => any} check @param {string} what */
async function until(check, what, timeout = 5000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

/** A marked actor of this world, deleted by `cleanup`. @param {Record<string, any>} system */
async function markedActor(name, system = {}) {
  const ActorClass = /** @type {any} */ (CONFIG.Actor.documentClass);
  const type = Object.keys(game.system?.documentTypes?.Actor ?? {}).find((t) => t !== "base") ?? "character";
  return ActorClass.create({ name: `${PREFIX} ${name}`, type, flags: { [MODULE_ID]: { enabled: true, ruleset: "exalted2e", system, packs: {} } } });
}

/** The element of an open sheet. @param {any} sheet */
const sheetRoot = (sheet) => rootOf(sheet.element);

/** @param {any} quench */
export function registerBatches(quench) {
  quench.registerBatch(
    `${MODULE_ID}.sheet`,
    (/** @type {any} */ { describe, it, assert, after }) => {
      /** @type {any[]} */
      const made = [];
      after(async () => {
        for (const doc of made) await doc.delete();
      });
      describe("the Bridge tab (issue 25, defects 1 and 4)", () => {
        it("editing the tab and closing the sheet writes nothing into actor.system", async () => {
          const actor = await markedActor("sheet");
          made.push(actor);
          const before = JSON.stringify(actor.system);
          const sheet = actor.sheet;
          await sheet.render(true);
          const root = await until(() => sheetRoot(sheet)?.querySelector(`section[data-tab="${MODULE_ID}"]`) && sheetRoot(sheet), "the Bridge tab is drawn");
          const input = /** @type {HTMLInputElement|null} */ (root.querySelector(`section[data-tab="${MODULE_ID}"] input[name^="system."]`));
          if (input) {
            input.value = "7";
            input.dispatchEvent(new Event("input", { bubbles: true }));
            input.dispatchEvent(new Event("change", { bubbles: true }));
          }
          await sleep(300);
          await sheet.close();
          await sleep(300);
          assert.equal(JSON.stringify(actor.system), before);
          assert.equal(actor.getFlag(MODULE_ID, "enabled"), true);
        });
        it("re-rendering the sheet keeps one Bridge tab", async () => {
          const actor = await markedActor("rerender");
          made.push(actor);
          const sheet = actor.sheet;
          await sheet.render(true);
          await until(() => sheetRoot(sheet)?.querySelector(`section[data-tab="${MODULE_ID}"]`), "the Bridge tab is drawn");
          await sheet.render(true);
          await sheet.render(true);
          await sleep(200);
          const root = /** @type {HTMLElement} */ (sheetRoot(sheet));
          assert.equal(root.querySelectorAll(`nav [data-tab="${MODULE_ID}"]`).length, 1);
          assert.equal(root.querySelectorAll(`section[data-tab="${MODULE_ID}"]`).length, 1);
          await sheet.close();
        });
      });
    },
    { displayName: "vtt-bridge: the sheet's Bridge tab" },
  );

  quench.registerBatch(
    `${MODULE_ID}.documents`,
    (/** @type {any} */ { describe, it, assert, after }) => {
      /** @type {any[]} */
      const made = [];
      after(async () => {
        for (const doc of made) await doc.delete();
      });
      describe("actors and tokens (issue 25, defects 5 and 6)", () => {
        it("a write-back replaces flags.vtt-bridge.system: keys the bridge dropped are gone", async () => {
          const actor = await markedActor("write-back", { hardness: { L: 3 }, onslaught: { x: 2 } });
          made.push(actor);
          await replaceFlags(actor, { [`flags.${MODULE_ID}.system`]: { hardness: {} }, [`flags.${MODULE_ID}.packs`]: {} }, { vttBridge: true });
          assert.deepEqual(actor.getFlag(MODULE_ID, "system"), { hardness: {} });
        });
        it("an unlinked token's actor is its token, not its base actor", /** @this {any} */ async function () {
          const scene = /** @type {any} */ (canvas)?.scene;
          if (!scene) return this.skip();
          const actor = await markedActor("unlinked");
          made.push(actor);
          const data = (await actor.getTokenDocument({ actorLink: false, name: `${PREFIX} token` })).toObject();
          const [token] = await scene.createEmbeddedDocuments("Token", [data]);
          made.push(token);
          assert.equal(token.actor.isToken, true);
          assert.equal(idOf(token.actor), `t-${token.id}`);
          assert.equal(idOf(actor), `a-${actor.id}`);
        });
      });
    },
    { displayName: "vtt-bridge: actors, tokens, write-back" },
  );

  quench.registerBatch(
    `${MODULE_ID}.ui`,
    (/** @type {any} */ { describe, it, assert, after }) => {
      /** @type {any[]} */
      const made = [];
      after(async () => {
        for (const doc of made) await doc.delete();
      });
      describe("controls, dialogs, chat (issue 25, defects 2, 3, 8, 9)", () => {
        it("the Players tool has one callback", /** @this {any} */ function () {
          if (!game.user?.isGM) return this.skip();
          const controls = /** @type {any} */ (ui.controls)?.controls;
          const tokens = Array.isArray(controls) ? controls.find((c) => c.name === "token") : controls?.tokens;
          const tools = Array.isArray(tokens?.tools) ? tokens.tools : Object.values(tokens?.tools ?? {});
          const tool = tools.find((/** @type {any} */ t) => t.name === "vtt-bridge-players");
          assert.ok(tool, "the tool is there");
          assert.equal([tool.onClick, tool.onChange].filter(Boolean).length, 1);
        });
        it("a dialog the module opens closes when asked, and its question resolves", async () => {
          const { dialog, result } = openDialog({ window: { title: `${PREFIX} dialog` }, content: "<p>?</p>", buttons: [{ action: "ok", label: "OK" }] });
          await until(() => rootOf(dialog), "the dialog is drawn");
          await dialog.close();
          assert.equal(await result, null);
        });
        it("a card with its own content shows its rolls' core dice", async () => {
          const RollClass = /** @type {any} */ (foundry.dice.Roll);
          const roll = await new RollClass("2d10").evaluate();
          const message = await ChatMessage.create({
            content: `<section class="vtt-bridge-card" data-attack="${PREFIX}"><div class="vtt-bridge-summary">${PREFIX}</div></section>`,
            rolls: [roll],
            flags: { [MODULE_ID]: { attack: `${PREFIX}`, gm: true } },
          });
          made.push(message);
          const log = () => /** @type {any} */ (ui.chat)?.element;
          const root = await until(() => rootOf(log())?.querySelector(`[data-message-id="${message?.id}"]`), "the card is in the chat log");
          await until(() => root.querySelector(".vtt-bridge-dice .dice-roll"), "the dice are drawn");
        });
        it("the installed manifest names its manifest and download URLs", () => {
          const module = /** @type {any} */ (game.modules?.get(MODULE_ID));
          assert.match(String(module?.manifest), /^https?:\/\/.+module\.json$/);
          assert.match(String(module?.download), /^https?:\/\/.+\.zip$/);
        });
      });
    },
    { displayName: "vtt-bridge: controls, dialogs, chat, manifest" },
  );

  quench.registerBatch(
    `${MODULE_ID}.bridge`,
    (/** @type {any} */ { describe, it, assert, after }) => {
      /** @type {any[]} */
      const made = [];
      after(async () => {
        for (const doc of made) await doc.delete();
      });
      describe("with the bridge (issue 25, defect 7)", () => {
        it("the GM's Save updates the bridge token once", /** @this {any} */ async function () {
          const connection = state.connection;
          if (!game.user?.isGM || !connection?.connected || connection.role !== "gm") return this.skip();
          const actor = await markedActor("save");
          made.push(actor);
          const id = idOf(actor);
          await syncActor(actor).catch(() => null);
          const token = await until(() => connection.request("token.get", { id }).then((a) => a.token, () => null), "the bridge has the actor");
          const sheet = actor.sheet;
          await sheet.render(true);
          const root = await until(() => sheetRoot(sheet)?.querySelector(`section[data-tab="${MODULE_ID}"]`), "the Bridge tab is drawn");
          /** @type {HTMLElement} */ (root.querySelector(".vtt-bridge-save")).click();
          await sleep(1000);
          const now = (await connection.request("token.get", { id })).token;
          assert.isAtMost(now.version, token.version + 1);
          await sheet.close();
          await connection.request("token.delete", { id });
        });
      });
    },
    { displayName: "vtt-bridge: with the bridge" },
  );
}

Hooks.on(/** @type {any} */ ("quenchReady"), (/** @type {any} */ quench) => registerBatches(quench));
