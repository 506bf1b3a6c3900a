// @ts-check
/**
 * vtt-bridge for Foundry VTT: the entry point. Everything that decides something lives
 * in ../logic (plain modules the Node tests run); the files beside this one wire it to
 * Foundry, and this one registers the hooks:
 *
 * - context.js   this client's state, translation, error reports, users
 * - connect.js   settings and the connection (catch-up after a reconnection)
 * - actors.js    actors as bridge tokens: sync to the bridge, write-back
 * - sheet.js     the sheet's Bridge tab
 * - dialogs.js   DialogV2 the same on every version
 * - questions.js the bridge's questions, the GM's Players dialog
 * - attack.js    the declaration dialog and api.attack()
 * - cards.js     chat cards: posting, Apply and Undo, the dice (Dice So Nice in step order)
 * - extensions.js where the features below join an attack (and the vttBridge.* hooks)
 * - sheet-attack.js attacking from a weapon on the sheet
 * - templates.js Warmachine sprays and AOEs as measured templates
 * - combat.js    the combat tracker's turns → the rules' per-action resets
 * - charms.js    the system's Charm items → the packs' declarables
 * - errors.js    a refused edit's errors to the player who made it
 */

import { doubleFaces, parseDouble } from "../../../../vtt_bridge/server/static/common/rolls.js";
import { bridgeFlags } from "../logic/tokens.js";
import { MODULE_ID, adapters, generation, report, rootOf, state, t } from "./context.js";
import { connect, registerSettings } from "./connect.js";
import { syncActor, syncAll, writer } from "./actors.js";
import { injectTab, openTabDialog } from "./sheet.js";
import { playersDialog } from "./questions.js";
import { attack } from "./attack.js";
import { bindCard } from "./cards.js";
import { attackWith, registerSheetAttack } from "./sheet-attack.js";
import { registerTemplates } from "./templates.js";
import { registerCombat, turnRules } from "./combat.js";
import { registerCharmAliases } from "./charms.js";
import { registerErrors, relayError } from "./errors.js";
import "../quench/suite.js"; // the in-Foundry test suite, registered only when Quench is there
import "../quench/features.js"; // its batch of the features (sheet weapons, Charms, combat turns)

/** Foundry's `dbl` modifier for the bridge's Exalted formulas (`cs>=7dbl10`). */
function registerDoubleModifier() {
  const Die = /** @type {any} */ (foundry.dice.terms.Die);
  Die.MODIFIERS.dbl = function doubleSuccesses(/** @type {string} */ modifier) {
    const face = parseDouble(modifier, this.faces);
    if (face !== null) doubleFaces(this.results, face);
  };
}

Hooks.once("init", () => {
  registerSettings();
  registerDoubleModifier();
  registerSheetAttack();
  registerTemplates();
  registerCombat();
  registerErrors();
  const module = game.modules?.get(MODULE_ID);
  if (module) {
    /** @type {any} */ (module).api = {
      attack: (/** @type {any} */ options) => attack(options),
      attackWith: (/** @type {any} */ item, /** @type {any} */ options) => attackWith(item, options),
      registerTurnRule: (/** @type {string} */ ruleset, /** @type {any} */ rule) => turnRules.register(ruleset, rule),
      registerCharmAliases: (/** @type {any} */ map) => registerCharmAliases(map),
      connect,
      players: playersDialog,
      sync: syncAll,
      openSheet: openTabDialog,
      registerAdapter: (/** @type {any} */ adapter) => adapters.register(adapter),
      get connection() {
        return state.connection;
      },
    };
  }
  // v13 renders chat messages as HTMLElement (renderChatMessageHTML; renderChatMessage is
  // deprecated there); v12 only has renderChatMessage, with jQuery.
  const chatHook = generation() >= 13 ? "renderChatMessageHTML" : "renderChatMessage";
  Hooks.on(/** @type {any} */ (chatHook), (/** @type {any} */ message, /** @type {any} */ html) => {
    const root = rootOf(html);
    if (root) bindCard(message, root);
  });
});

Hooks.once("ready", () => void connect());

Hooks.on("renderTokenHUD", (/** @type {any} */ hud, /** @type {any} */ html) => {
  const root = rootOf(html);
  const column = root?.querySelector(".col.right");
  const token = hud.object;
  if (!column || !token?.actor || !bridgeFlags(token.actor.toObject()).enabled) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "control-icon vtt-bridge-attack";
  button.dataset.tooltip = t("Attack.HUD");
  button.innerHTML = `<i class="fa-solid fa-khanda"></i>`;
  button.addEventListener("click", () => void attack({ attacker: token }).catch(report));
  column.append(button);
});

// v1 sheets (renderActorSheet, jQuery) and ApplicationV2 sheets (renderActorSheetV2, HTMLElement).
for (const hook of ["renderActorSheet", "renderActorSheetV2"]) {
  Hooks.on(/** @type {any} */ (hook), (/** @type {any} */ app, /** @type {any} */ html) => {
    const root = rootOf(html) ?? rootOf(app.element);
    if (root) injectTab(app, root);
  });
}

Hooks.on(/** @type {any} */ ("getHeaderControlsActorSheetV2"), (/** @type {any} */ app, /** @type {any} */ controls) => {
  controls.push({ icon: "fa-solid fa-dice-d10", label: t("Sheet.Tab"), action: "vttBridge", onClick: () => void openTabDialog(app.document) });
});

Hooks.on(/** @type {any} */ ("getActorSheetHeaderButtons"), (/** @type {any} */ app, /** @type {any} */ buttons) => {
  buttons.unshift({ label: t("Sheet.Tab"), class: "vtt-bridge", icon: "fa-solid fa-dice-d10", onclick: () => void openTabDialog(app.actor) });
});

// The GM's client brings the bridge up to what an actor says after any update — but not
// after its own write-back (`vttBridge`), nor after its own save of the Bridge tab
// (`vttBridgeSave` by this user), which syncs by itself. A player's save or edit is synced
// here, and a refusal goes to that player (errors.js), not only to this GM.
Hooks.on("updateActor", (/** @type {any} */ actor, /** @type {any} */ _change, /** @type {any} */ options, /** @type {string} */ userId) => {
  if (options?.vttBridge || (options?.vttBridgeSave && userId === game.user?.id) || !state.connection || !writer()) return;
  if (bridgeFlags(actor.toObject()).enabled) void syncActor(actor).catch((err) => relayError(userId, actor, err));
});

// The Players tool: v12 gives an array of controls whose button tools run `onClick`;
// v13 a record of controls whose tools run `onChange` (and would run a v12 `onClick`
// too: a tool has one or the other, never both).
Hooks.on(/** @type {any} */ ("getSceneControlButtons"), (/** @type {any} */ controls) => {
  if (!game.user?.isGM) return;
  const open = () => void playersDialog().catch(report);
  const base = { name: "vtt-bridge-players", title: t("Players.Title"), icon: "fa-solid fa-key", button: true, order: 100 };
  if (Array.isArray(controls)) {
    controls.find((c) => c.name === "token")?.tools.push({ ...base, onClick: open });
  } else if (controls.tokens) {
    controls.tokens.tools[base.name] = { ...base, onChange: open };
  }
});
