// @ts-check
/**
 * Actors as bridge tokens: which token an actor or a canvas token is, syncing an actor
 * to the bridge (the GM's client), and writing the bridge's changes back.
 */

import { BridgeError } from "../logic/connection.js";
import { bridgeTokenId } from "../logic/ids.js";
import { actorUpdateFromToken, bridgeFlags, isWriter, syncRequest, tokenFromActor } from "../logic/tokens.js";
import { MODULE_ID, adapters, gameUsers, generation, need, report } from "./context.js";
import { withCharms } from "./charms.js";

/**
 * The bridge token id of a canvas token, a TokenDocument or an actor. A synthetic actor
 * (the actor of an unlinked token, `actor.isToken`) is its token, never its base actor.
 * @param {any} thing  a Token (placeable), a TokenDocument or an Actor
 */
export function idOf(thing) {
  const doc = thing?.document ?? (thing?.isToken && thing.token ? thing.token : thing);
  if (doc?.documentName === "Token") {
    return bridgeTokenId({ actorId: doc.actorId, tokenId: doc.id, actorLink: doc.actorLink });
  }
  return bridgeTokenId({ actorId: doc.id });
}

/** @param {any} actor */
export function wantedToken(actor, id = idOf(actor), name = actor.name) {
  const data = actor.toObject();
  data.items = actor.items.map((/** @type {any} */ i) => i.toObject());
  // With an adapter that knows Charm items, the character's Charms fill the packs' lists (charms.js).
  return withCharms(tokenFromActor(data, { id, adapter: adapters.for(game.system?.id ?? ""), users: gameUsers(), name }), data);
}

/** @type {Map<string, Promise<any>>} */
const syncing = new Map();

/**
 * GM: make the bridge hold what the actor says. Syncs of one token run one after the
 * other, so two updates in a row never race each other into a `conflict`.
 * @param {any} actor
 */
export function syncActor(actor, id = idOf(actor), name = actor.name) {
  const run = (syncing.get(id) ?? Promise.resolve()).then(
    () => syncNow(actor, id, name),
    () => syncNow(actor, id, name),
  );
  syncing.set(id, run);
  const done = () => void (syncing.get(id) === run && syncing.delete(id));
  run.then(done, done);
  return run;
}

/** @param {any} actor @param {string} id @param {string} name */
async function syncNow(actor, id, name) {
  const connection = need();
  const wanted = wantedToken(actor, id, name);
  if (!wanted) return null;
  let current = null;
  try {
    current = (await connection.request("token.get", { id })).token;
  } catch (err) {
    if (!(err instanceof BridgeError && err.code === "not_found")) throw err;
  }
  const req = syncRequest(current, wanted);
  if (!req) return current;
  if (req.event === "recreate") {
    await connection.request("token.delete", { id });
    return (await connection.request("token.create", wanted)).token;
  }
  return (await connection.request(req.event, req.payload)).token;
}

export async function syncAll() {
  for (const actor of /** @type {any[]} */ (game.actors?.contents ?? [])) {
    if (bridgeFlags(actor.toObject()).enabled) await syncActor(actor).catch(report);
  }
  for (const scene of game.scenes?.contents ?? []) {
    for (const token of scene.tokens.contents) {
      if (!token.actorLink && token.actor && bridgeFlags(token.actor.toObject()).enabled) await syncActor(token.actor, idOf(token), token.name).catch(report);
    }
  }
}

/**
 * Find the actor a bridge token stands for.
 * @param {string} id
 * @returns {any}
 */
export function actorOf(id) {
  if (id.startsWith("a-")) return game.actors?.get(id.slice(2)) ?? null;
  if (id.startsWith("t-")) {
    for (const scene of game.scenes?.contents ?? []) {
      const token = scene.tokens.get(id.slice(2));
      if (token) return token.actor;
    }
  }
  return null;
}

/** Is this client the one that writes bridge changes to actors? */
export const writer = () => !!game.user && isWriter(game.user, gameUsers());

const WHOLE = [`flags.${MODULE_ID}.system`, `flags.${MODULE_ID}.packs`];

/**
 * Update an actor so `flags.vtt-bridge.system` and `.packs` are REPLACED by the update's
 * values, not merged into (Foundry merges objects on update: keys the bridge dropped
 * would survive). v13+: the `==key` replacement key; v12: delete (`-=key`), then set.
 * @param {any} actor @param {Record<string, any>} update  flat, as `actorUpdateFromToken` makes it
 * @param {Record<string, any>} options  the update's options
 */
export async function replaceFlags(actor, update, options) {
  const replaced = Object.fromEntries(Object.entries(update).filter(([k]) => WHOLE.includes(k)));
  const rest = Object.fromEntries(Object.entries(update).filter(([k]) => !WHOLE.includes(k)));
  const to = (/** @type {string} */ k, /** @type {string} */ prefix) => k.replace(/\.(\w+)$/, `.${prefix}$1`);
  if (generation() >= 13) {
    return actor.update({ ...rest, ...Object.fromEntries(Object.entries(replaced).map(([k, v]) => [to(k, "=="), v])) }, options);
  }
  await actor.update(Object.fromEntries(Object.keys(replaced).map((k) => [to(k, "-="), null])), options);
  return actor.update({ ...rest, ...replaced }, options);
}

/**
 * The active GM's client writes bridge changes to the actors (`force`: any GM's, the
 * card's Apply). @param {any} token @param {{force?: boolean}} [options]
 * @returns {Promise<boolean>} whether an actor was written
 */
export async function writeBack(token, options = {}) {
  if (!(options.force ? !!game.user?.isGM : writer())) return false;
  const actor = actorOf(token.id);
  if (!actor) return false;
  const update = actorUpdateFromToken(token, actor.toObject(), adapters.for(game.system?.id ?? ""));
  await replaceFlags(actor, update, { vttBridge: true });
  return true;
}
