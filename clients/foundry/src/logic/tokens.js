/**
 * Actors as bridge tokens and back, over plain data.
 *
 * An actor takes part when its `flags["vtt-bridge"]` has `enabled: true` and a
 * `ruleset`. Its rules data is `flags["vtt-bridge"].system` (edited in the sheet's
 * Bridge tab), overlaid by what the system's adapter maps from the actor's own data
 * (the game system's sheet stays the authority for what it has); pack data is
 * `flags["vtt-bridge"].packs` (the bridge token's `flags`, per plugin).
 */

import { bridgeOwnership } from "./ids.js";

export const MODULE_ID = "vtt-bridge";

/** The module's flags of an actor (plain data), with defaults. */
export function bridgeFlags(actor) {
  const f = actor?.flags?.[MODULE_ID] || {};
  return {
    enabled: f.enabled === true,
    ruleset: typeof f.ruleset === "string" ? f.ruleset : null,
    system: f.system && typeof f.system === "object" ? f.system : {},
    packs: f.packs && typeof f.packs === "object" ? f.packs : {},
    version: Number.isInteger(f.version) ? f.version : null,
  };
}

/**
 * The bridge token an actor stands for.
 * @param {object} actor  plain actor data: `{name, type, system, items, flags, ownership}`
 * @param {object} options
 * @param {string} options.id  the bridge token id (`bridgeTokenId`)
 * @param {object} options.adapter  the system's adapter (or `noAdapter`)
 * @param {Array<{id: string, isGM?: boolean}>} options.users  the world's users
 * @param {string} [options.name]  the name to show (a token's own name)
 * @returns {{id, name, ruleset, ownership, system, flags?}|null} null if the actor does not take part
 */
export function tokenFromActor(actor, { id, adapter, users, name }) {
  const f = bridgeFlags(actor);
  if (!f.enabled || !f.ruleset) return null;
  const mapped = adapter && adapter.ruleset === f.ruleset ? adapter.toSystem(actor) : null;
  const token = {
    id,
    name: String(name ?? actor.name ?? id).slice(0, 200),
    ruleset: f.ruleset,
    ownership: bridgeOwnership(actor.ownership, users),
    system: { ...f.system, ...(mapped || {}) },
  };
  // Pack data goes only when there is some (a bridge without pack flags refuses the field).
  if (Object.keys(f.packs).length) token.flags = f.packs;
  return token;
}

/**
 * Does the bridge's value already say everything `wanted` says? The bridge fills
 * schema defaults in (a weapon's `minimum`, an empty `hardness`), so a field the
 * actor does not set is no difference.
 */
export function covers(current, wanted) {
  if (Array.isArray(wanted)) {
    return Array.isArray(current) && current.length === wanted.length && wanted.every((w, i) => covers(current[i], w));
  }
  if (wanted && typeof wanted === "object") {
    if (!current || typeof current !== "object" || Array.isArray(current)) return false;
    return Object.keys(wanted).every((k) => covers(current[k], wanted[k]));
  }
  return current === wanted;
}

/**
 * What to send so the bridge holds `wanted`: `token.create`, a `token.update` patch
 * of what differs, or null when the bridge already agrees.
 * @param {object|null} current  the bridge's token (`token.get`), or null if none
 * @param {object} wanted  from `tokenFromActor`
 */
export function syncRequest(current, wanted) {
  if (!current) return { event: "token.create", payload: wanted };
  const patch = { id: wanted.id, version: current.version };
  if (current.name !== wanted.name) patch.name = wanted.name;
  // Ownership replaces as a whole: compare both ways.
  const owners = current.ownership ?? {};
  if (!covers(owners, wanted.ownership) || Object.keys(owners).length !== Object.keys(wanted.ownership).length) {
    patch.ownership = wanted.ownership;
  }
  for (const key of ["system", "flags"]) {
    if (wanted[key] !== undefined && !covers(current[key] ?? {}, wanted[key])) patch[key] = wanted[key];
  }
  if (wanted.ruleset !== current.ruleset) return { event: "recreate", payload: wanted };
  return Object.keys(patch).length > 2 ? { event: "token.update", payload: patch } : null;
}

/**
 * The actor update that writes a bridge token back (the active GM's client does this
 * on `token.updated`): the flags, and through the adapter the system's own fields.
 * @returns {object} a flat Foundry update
 */
export function actorUpdateFromToken(token, actor, adapter) {
  const update = {
    [`flags.${MODULE_ID}.system`]: token.system,
    [`flags.${MODULE_ID}.packs`]: token.flags || {},
    [`flags.${MODULE_ID}.version`]: token.version,
  };
  if (adapter && adapter.ruleset === token.ruleset) Object.assign(update, adapter.toActorUpdate(token.system, actor));
  return update;
}

/** Is this the client that writes bridge changes to actors (the active GM with the lowest id)? */
export function isWriter(me, users) {
  const gms = users.filter((u) => u.isGM && u.active).map((u) => u.id).sort();
  return gms.length > 0 && gms[0] === me.id;
}
