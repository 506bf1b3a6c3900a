/**
 * What a ruleset resets when Foundry's combat tracker moves on: per-action and
 * per-round state of the bridge's tokens, as `token.update` patches (the protocol's
 * token.update merges `system` key by key; it has no way to delete a key, so an
 * onslaught entry that lapses is set to 0, which the rules read as no penalty).
 *
 * A rule is `{turn?(token, ctx), round?(token, ctx)}`, each returning a `system`
 * patch or null:
 * - `turn`: called for every bridge token of the combat when `token` (ctx.actor) is
 *   the combatant whose turn begins (ctx.self: is this token the acting one);
 * - `round`: called for every bridge token of the combat when a new round begins.
 * Another module adds or replaces a ruleset's rule through
 * `game.modules.get("vtt-bridge").api.registerTurnRule(ruleset, rule)`.
 */

/** Exalted 2e: "This penalty disappears on the tick the character is next permitted to act" (seed 002, DV Penalties). */
const exalted2e = Object.freeze({
  turn(token, { self, actor }) {
    const s = token.system || {};
    const onslaught = s.onslaught && typeof s.onslaught === "object" ? s.onslaught : {};
    if (self) {
      // Its own action DV penalty and every onslaught against it lapse.
      const patch = {};
      if (s.dv_penalty) patch.dv_penalty = 0;
      const lapsed = Object.fromEntries(Object.entries(onslaught).filter(([, n]) => n).map(([k]) => [k, 0]));
      if (Object.keys(lapsed).length) patch.onslaught = lapsed;
      return Object.keys(patch).length ? patch : null;
    }
    // "If an attacker acts a second time before the defender's DV refreshes, the
    // onslaught penalty is reset to 0 at the start of the second series of attacks."
    return onslaught[actor] ? { onslaught: { [actor]: 0 } } : null;
  },
});

/** Warmachine MkIII: Shield Guard is "once per round" (the pack's `shield_guard_used`, cleared at the round's start). */
const warmachine_mk3 = Object.freeze({
  round(token) {
    return token.system?.shield_guard_used ? { shield_guard_used: false } : null;
  },
});

export class TurnRules {
  constructor() {
    /** @type {Map<string, {turn?: Function, round?: Function}>} */
    this.byRuleset = new Map([
      ["exalted2e", exalted2e],
      ["exalted2e_mass", exalted2e],
      ["warmachine_mk3", warmachine_mk3],
    ]);
  }

  /** Add or replace the rule of a ruleset. */
  register(ruleset, rule) {
    if (typeof ruleset !== "string" || !ruleset) throw new TypeError("a turn rule needs a ruleset id");
    if (!rule || (typeof rule.turn !== "function" && typeof rule.round !== "function")) {
      throw new TypeError("a turn rule needs turn() or round()");
    }
    this.byRuleset.set(ruleset, rule);
    return rule;
  }

  /**
   * The `token.update` payloads a step of the combat tracker calls for.
   * @param {object[]} tokens  the combat's bridge tokens (`token.get`), with `version`
   * @param {{actor: string|null, newRound: boolean, newTurn: boolean}} step  `actor`: the
   *   bridge token id of the combatant whose turn begins
   * @returns {object[]} `{id, version, system}` patches, one per token that changes
   */
  resets(tokens, { actor, newRound, newTurn }) {
    const out = [];
    for (const token of tokens) {
      const rule = this.byRuleset.get(token.ruleset);
      if (!rule) continue;
      let system = {};
      if (newRound && rule.round) Object.assign(system, rule.round(token, { actor }) || {});
      if ((newTurn || newRound) && actor && rule.turn) {
        const patch = rule.turn(token, { self: token.id === actor, actor });
        if (patch) system = merge(system, patch);
      }
      if (Object.keys(system).length) out.push({ id: token.id, version: token.version, system });
    }
    return out;
  }
}

function merge(a, b) {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object" ? merge(out[k], v) : v;
  }
  return out;
}

/**
 * What an `updateCombat` change means: a new turn, a new round, or neither. Foundry
 * passes the changed fields (`round`, `turn`) and, for a step of the tracker, the
 * options' `direction` (1 forward, -1 back): stepping back resets nothing.
 * @param {{round?: number, turn?: number}} change  @param {{direction?: number}} [options]
 */
export function combatStep(change, options = {}) {
  if (options?.direction === -1) return { newRound: false, newTurn: false };
  const has = (k) => Object.prototype.hasOwnProperty.call(change || {}, k);
  return { newRound: has("round"), newTurn: has("turn") || has("round") };
}
