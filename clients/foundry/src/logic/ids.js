/**
 * Which bridge token an actor is, and who owns it: pure functions over plain data
 * (no Foundry globals), so Node tests run them as the module does.
 */

/** Foundry's ownership levels, which the bridge uses unchanged. */
export const LEVELS = Object.freeze({ NONE: 0, LIMITED: 1, OBSERVER: 2, OWNER: 3 });

/**
 * The bridge token id of an actor on the canvas: stable across reloads and scenes.
 * A linked token (or an actor with no token) is its actor: `a-<actorId>`; an
 * unlinked token is its own copy of the actor: `t-<tokenId>`.
 * @param {{actorId: string, tokenId?: string|null, actorLink?: boolean}} where
 */
export function bridgeTokenId({ actorId, tokenId = null, actorLink = true }) {
  if (!actorLink && tokenId) return `t-${tokenId}`;
  if (!actorId) throw new TypeError("an actor id is needed");
  return `a-${actorId}`;
}

/**
 * A Foundry user as a bridge user name: the GM key is the user "gm"; each player's
 * key is bound to a name made from their Foundry user id (1–64 of A-Z a-z 0-9 _ . @ -).
 * @param {{id: string, isGM?: boolean}} user
 */
export function bridgeUserName(user) {
  if (user.isGM) return "gm";
  return `u-${String(user.id).replace(/[^A-Za-z0-9_.@-]/g, "_")}`.slice(0, 64);
}

/**
 * Foundry ownership (`{default: 0, <userId>: 3}`) as bridge ownership, levels unchanged.
 * GM users are left out: the GM owns everything on the bridge.
 * @param {Object<string, number>} ownership  the actor's `ownership`
 * @param {Array<{id: string, isGM?: boolean}>} users
 */
export function bridgeOwnership(ownership, users) {
  const out = {};
  const byId = new Map(users.map((u) => [u.id, u]));
  for (const [who, level] of Object.entries(ownership || {})) {
    if (!Number.isInteger(level) || level < 0 || level > 3) continue;
    if (who === "default") {
      if (level > 0) out.default = level;
      continue;
    }
    const user = byId.get(who);
    if (!user || user.isGM) continue;
    out[bridgeUserName(user)] = level;
  }
  return out;
}
