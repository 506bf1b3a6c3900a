// @ts-check
/**
 * Each player sees their own errors: a sheet edit is synced to the bridge by the
 * active GM's client (the writer), so when the bridge refuses it the writer sends the
 * bridge's field errors over Foundry's module socket (`module.vtt-bridge`) to the user
 * who made the edit (Foundry's `updateActor` hook names them); that user's client
 * shows them as a notification, field by field (`system.weapons.0.accuracy: …`).
 */

import { errorsAt } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { MODULE_ID } from "../logic/tokens.js";

export const SOCKET = `module.${MODULE_ID}`;

/**
 * The message for one refusal: the bridge's field errors under `token` flattened to
 * `{path: message}`, else its message.
 * @param {any} err  a BridgeError
 */
export function fieldErrors(err) {
  const fields = err?.details ? errorsAt(err.details, "token") : {};
  return { code: String(err?.code ?? "error"), message: String(err?.message ?? err), fields };
}

/** The text a player reads. @param {{code: string, message: string, fields: Record<string, string>}} e */
export const errorText = (e) => Object.entries(e.fields).map(([k, v]) => `${k}: ${v}`).join("; ") || `${e.code}: ${e.message}`;

/**
 * @param {any} ctx  {report, BridgeError}
 */
export function registerErrors(ctx) {
  /** @type {Set<(e: any) => void>} */
  const listeners = new Set();

  /** Show an error that concerns this user: notification and the open tab's fields. @param {any} payload */
  function show(payload) {
    ui.notifications?.warn(`vtt-bridge — ${payload.actorName ?? ""}: ${errorText(payload.error)}`);
    for (const fn of listeners) fn(payload);
  }

  /**
   * The writer's sync of a user's edit failed: show it to that user (here when it is
   * this user, else over the socket), and on this GM client too.
   * @param {string|null|undefined} userId  who made the edit @param {any} actor @param {unknown} err
   */
  function relay(userId, actor, err) {
    const refused = /** @type {any} */ (err);
    if (!(err instanceof ctx.BridgeError) || !["invalid_request", "conflict", "forbidden"].includes(refused.code)) return ctx.report(err);
    const payload = { type: "errors", user: userId ?? null, actor: actor?.id ?? null, actorName: actor?.name ?? null, error: fieldErrors(err) };
    if (!userId || userId === game.user?.id) return show(payload);
    game.socket?.emit(SOCKET, payload);
    ctx.report(err);
  }

  game.socket?.on(SOCKET, (/** @type {any} */ payload) => {
    if (payload?.type === "errors" && payload.user === game.user?.id) show(payload);
  });

  return {
    relay,
    show,
    /** Called with each error shown on this client. @param {(e: any) => void} fn */
    onError: (fn) => void listeners.add(fn),
  };
}
