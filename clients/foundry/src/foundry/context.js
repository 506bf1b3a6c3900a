// @ts-check
/**
 * What every part of the Foundry wiring shares: this client's state (the connection,
 * the bridge's rulesets), translation, error reporting, the users, the adapters.
 */

import { BridgeError } from "../logic/connection.js";
import { defaultAdapters } from "../logic/adapters.js";
import { MODULE_ID } from "../logic/tokens.js";

export { MODULE_ID };

export const adapters = defaultAdapters();

/** The module's state on this client. */
export const state = {
  /** @type {import("../logic/connection.js").BridgeConnection|null} */
  connection: null,
  /** @type {any[]} */
  rulesets: [],
};

/** Foundry's major version (12, 13, 14…). */
export const generation = () => Number(game.release?.generation ?? 13);

export const t = (/** @type {string} */ key, /** @type {Record<string, string>} */ data = {}) =>
  game.i18n ? game.i18n.format(`VTTBRIDGE.${key}`, data) : key;

/** @param {unknown} err */
export function report(err) {
  const message = err instanceof BridgeError ? `${err.code}: ${err.message}` : String(err);
  ui.notifications?.error(`vtt-bridge — ${message}`);
  console.error("vtt-bridge |", err);
}

/**
 * The element of a rendered application or hook argument: an HTMLElement (v13), a
 * jQuery object (v1 applications, v12 hooks) or an application with `element`.
 * @param {any} html
 * @returns {HTMLElement|null}
 */
export const rootOf = (html) => {
  if (html instanceof HTMLElement) return html;
  if (html?.element instanceof HTMLElement) return html.element;
  return html?.[0] instanceof HTMLElement ? html[0] : null;
};

/** @param {"url"|"table"|"key"} key */
export function setting(key) {
  return String(game.settings?.get(MODULE_ID, key) ?? "").trim();
}

export function need() {
  if (!state.connection?.connected) throw new BridgeError("not_connected", t("NotConnected"));
  return state.connection;
}

/** @returns {{id: string, isGM: boolean, active: boolean}[]} */
export function gameUsers() {
  return (game.users?.contents ?? []).map((u) => ({ id: String(u.id), isGM: u.isGM, active: u.active }));
}

/** @param {string} id */
export function rulesetInfo(id) {
  return state.rulesets.find((r) => r.id === id) ?? null;
}
