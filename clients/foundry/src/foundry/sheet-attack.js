// @ts-check
/**
 * Attack from the sheet: every weapon item an actor sheet shows gets an attack
 * control; pressing it attacks the user's targets with that weapon, the declaration
 * dialog prefilled. The Token HUD and `api.attack()` stay; `api.attackWith(item)` is
 * the same as the sheet's control, for macros.
 */

import { BridgeError } from "../logic/connection.js";
import { bridgeFlags } from "../logic/tokens.js";
import { isWeapon, weaponPrefill } from "../logic/sheet.js";
import { need, report, rootOf, rulesetInfo, t } from "./context.js";
import { idOf } from "./actors.js";
import { attack } from "./attack.js";

/**
 * The token a sheet's actor attacks from: a synthetic actor's own token, else the
 * actor's token on the viewed scene, else the actor itself (its bridge token `a-…`).
 * @param {any} actor
 */
export function attackerOf(actor) {
  if (actor.isToken && actor.token) return actor.token.object ?? actor.token;
  const [placed] = actor.getActiveTokens?.(true) ?? [];
  return placed ?? actor;
}

/** Attack the user's targets with one weapon item. @param {any} item @param {{targets?: any[]}} [options] */
export async function attackWith(item, options = {}) {
  const actor = item?.actor ?? item?.parent;
  const flags = bridgeFlags(actor?.toObject?.() ?? {});
  if (!actor || !flags.enabled || !flags.ruleset) throw new BridgeError("invalid_request", t("Attack.NotMarked", { name: actor?.name ?? "?" }));
  const ruleset = rulesetInfo(flags.ruleset);
  if (!ruleset) throw new BridgeError("unknown_ruleset", flags.ruleset);
  const attacker = attackerOf(actor);
  const token = await need()
    .request("token.get", { id: idOf(attacker) })
    .then((ack) => ack.token, () => null);
  const { values, missing } = weaponPrefill(ruleset, token, String(item.name));
  if (missing) ui.notifications?.warn(`vtt-bridge — ${missing}`);
  return attack({ attacker, targets: options.targets, prefill: values });
}

/** Put an attack control on each weapon row of a rendered sheet. @param {any} app @param {HTMLElement|null} root */
export function decorateSheet(app, root) {
  const actor = app.document ?? app.actor;
  if (!root || !actor || actor.documentName !== "Actor" || !actor.isOwner) return;
  if (!bridgeFlags(actor.toObject()).enabled) return;
  for (const row of root.querySelectorAll("[data-item-id], [data-document-id]")) {
    const el = /** @type {HTMLElement} */ (row);
    const item = actor.items.get(el.dataset.itemId ?? el.dataset.documentId ?? "");
    if (!item || !isWeapon(item) || el.querySelector(":scope > .vtt-bridge-weapon-attack")) continue;
    const button = document.createElement("a");
    button.className = "vtt-bridge-weapon-attack";
    button.dataset.tooltip = t("Attack.Weapon", { weapon: item.name });
    button.setAttribute("aria-label", t("Attack.Weapon", { weapon: item.name }));
    button.innerHTML = `<i class="fa-solid fa-khanda"></i>`;
    button.addEventListener("click", (ev) => {
      ev.preventDefault();
      ev.stopPropagation(); // the row's own click (open the item, the system's roll) stays the system's
      void attackWith(item).catch(report);
    });
    el.append(button);
  }
}

export function registerSheetAttack() {
  for (const hook of ["renderActorSheet", "renderActorSheetV2"]) {
    Hooks.on(/** @type {any} */ (hook), (/** @type {any} */ app, /** @type {any} */ html) => decorateSheet(app, rootOf(html) ?? rootOf(app.element)));
  }
}
