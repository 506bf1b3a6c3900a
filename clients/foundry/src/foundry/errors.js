// @ts-check
/**
 * Each player sees their own errors: a player's edit is synced to the bridge by the
 * active GM's client (the writer), so when the bridge refuses it the writer sends the
 * bridge's field errors over Foundry's module socket (`module.vtt-bridge`) to the user
 * who made the edit (Foundry's `updateActor` hook names them); that user's client
 * shows them as a notification, field by field (`system.weapons.0.accuracy: …`).
 */

import { errorsAt } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { BridgeError } from "../logic/connection.js";
import { MODULE_ID, report } from "./context.js";

export const SOCKET = `module.${MODULE_ID}`;

/**
 * One refusal as the player reads it: the bridge's field errors under `token`
 * flattened to `{path: message}`, its code and message.
 * @param {any} err  a BridgeError
 */
export function fieldErrors(err) {
  const fields = err?.details ? errorsAt(err.details, "token") : {};
  return { code: String(err?.code ?? "error"), message: String(err?.message ?? err), fields };
}

/** The text a player reads. @param {{code: string, message: string, fields: Record<string, string>}} e */
export const errorText = (e) => Object.entries(e.fields).map(([k, v]) => `${k}: ${v}`).join("; ") || `${e.code}: ${e.message}`;

/** Show an error that concerns this user. @param {any} payload */
function show(payload) {
  ui.notifications?.warn(`vtt-bridge — ${payload.actorName ?? ""}: ${errorText(payload.error)}`);
}

/**
 * The writer's sync of a user's edit failed: show it to that user (here when it is
 * this user, else over the socket, and here too).
 * @param {string|null|undefined} userId  who made the edit @param {any} actor @param {unknown} err
 */
export function relayError(userId, actor, err) {
  if (!(err instanceof BridgeError) || !["invalid_request", "conflict", "forbidden"].includes(err.code)) return report(err);
  const payload = { type: "errors", user: userId ?? null, actor: actor?.id ?? null, actorName: actor?.name ?? null, error: fieldErrors(err) };
  if (!userId || userId === game.user?.id) return show(payload);
  game.socket?.emit(SOCKET, payload);
  report(err);
}

export function registerErrors() {
  game.socket?.on(SOCKET, (/** @type {any} */ payload) => {
    if (payload?.type === "errors" && payload.user === game.user?.id) show(payload);
  });
}
