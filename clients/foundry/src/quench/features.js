// @ts-check
/**
 * The Quench batch of the features of issue 25's "What Foundry users expect", for a
 * real world (see suite.js for how to run Quench): a weapon row on the game system's
 * own sheet gets the attack control, a character's Charm items fill the pack's list at
 * the bridge, and the combat tracker's next turn resets the acting Exalt's DV penalty.
 * Each test skips itself where the world lacks what it needs (the system's item types,
 * the GM's connection, a viewed scene). Registered on `quenchReady` only.
 */

import { MODULE_ID, rootOf, state } from "../foundry/context.js";
import { idOf, syncActor } from "../foundry/actors.js";

const PREFIX = "vtt-bridge quench";
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @param {() => any} check @param {string} what */
async function until(check, what, timeout = 8000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

/** A marked exalted2e actor with items, deleted afterwards. @param {string} name @param {any[]} items @param {Record<string, any>} system */
async function actorWith(name, items, system = {}) {
  const ActorClass = /** @type {any} */ (CONFIG.Actor.documentClass);
  const type = Object.keys(game.system?.documentTypes?.Actor ?? {}).find((t) => t !== "base") ?? "character";
  return ActorClass.create({ name: `${PREFIX} ${name}`, type, items, flags: { [MODULE_ID]: { enabled: true, ruleset: "exalted2e", system, packs: {} } } });
}

const hasItemType = (/** @type {string} */ type) => !!(/** @type {any} */ (game.system?.documentTypes?.Item ?? {}))[type];
const gmConnected = () => !!game.user?.isGM && !!state.connection?.connected && state.connection.role === "gm";

/** @param {any} quench */
export function registerFeatureBatch(quench) {
  quench.registerBatch(
    `${MODULE_ID}.features`,
    (/** @type {any} */ { describe, it, assert, after }) => {
      /** @type {any[]} */
      const made = [];
      after(async () => {
        for (const doc of made.reverse()) await doc.delete();
      });
      describe("what Foundry users expect (issue 25)", () => {
        it("a weapon item's row on the system's sheet gets the attack control", /** @this {any} */ async function () {
          if (!hasItemType("weapon")) return this.skip();
          const actor = await actorWith("weapon", [{ type: "weapon", name: `${PREFIX} blade` }]);
          made.push(actor);
          const sheet = actor.sheet;
          await sheet.render(true);
          try {
            await until(() => rootOf(sheet.element)?.querySelector(".vtt-bridge-weapon-attack"), "the weapon row has the attack control");
          } finally {
            await sheet.close();
          }
        });
        it("the character's Charm items fill the Excellencies pack's list at the bridge", /** @this {any} */ async function () {
          if (game.system?.id !== "exalted2e" || !hasItemType("charm") || !gmConnected()) return this.skip();
          const actor = await actorWith("charms", [
            { type: "charm", name: "First Melee Excellency" },
            { type: "charm", name: `${PREFIX} not automated` },
          ]);
          made.push(actor);
          const id = idOf(actor);
          await syncActor(actor);
          const { token } = await /** @type {any} */ (state.connection).request("token.get", { id });
          assert.deepEqual(token.flags?.excellencies?.charms, ["first-excellency"]);
          await /** @type {any} */ (state.connection).request("token.delete", { id });
        });
        it("the combat tracker's next turn resets the acting Exalt's DV penalty at the bridge", /** @this {any} */ async function () {
          const scene = /** @type {any} */ (canvas)?.scene;
          if (!gmConnected() || !scene) return this.skip();
          const actor = await actorWith("combat", [], { dv_penalty: 2 });
          made.push(actor);
          const [token] = await scene.createEmbeddedDocuments("Token", [{ name: actor.name, actorId: actor.id, actorLink: true, x: 0, y: 0 }]);
          made.push(token);
          await syncActor(actor);
          const CombatClass = /** @type {any} */ (CONFIG.Combat.documentClass);
          const combat = await CombatClass.create({ scene: scene.id });
          made.push(combat);
          await combat.createEmbeddedDocuments("Combatant", [{ tokenId: token.id, sceneId: scene.id, actorId: actor.id }]);
          await combat.startCombat();
          await combat.nextRound();
          const id = idOf(actor);
          await until(async () => (await /** @type {any} */ (state.connection).request("token.get", { id })).token.system.dv_penalty === 0, "the DV penalty lapses");
          await /** @type {any} */ (state.connection).request("token.delete", { id });
        });
      });
    },
    { displayName: "vtt-bridge: sheet weapons, Charms, combat turns" },
  );
}

Hooks.on(/** @type {any} */ ("quenchReady"), (/** @type {any} */ quench) => registerFeatureBatch(quench));
