// @ts-check
/**
 * The combat tracker drives the rules' per-action resets: when Foundry's combat moves
 * to a combatant's turn (or a new round), the active GM's client asks the bridge for
 * the combat's tokens and sends the resets the ruleset has (Exalted: the acting
 * character's DV penalty and the onslaught against it lapse, its onslaught on others
 * restarts; Warmachine: Shield Guard's once-per-round use clears) as `token.update`s
 * with each token's version. The bridge's protocol has no turn event: the resets are
 * plain token updates, broadcast to everyone as `token.updated` and written back to
 * the actors like any other change.
 */

import { TurnRules, combatStep } from "../logic/turns.js";
import { isWriter } from "../logic/tokens.js";

/**
 * @param {any} ctx  {need, idOf, report, connected, gameUsers}
 */
export function registerCombat(ctx) {
  const rules = new TurnRules();

  /**
   * Send the resets for one step of a combat. @param {any} combat @param {{newRound: boolean, newTurn: boolean}} step
   * @returns {Promise<any[]>} the tokens as the bridge has them after
   */
  async function advance(combat, step) {
    const connection = ctx.need();
    const current = combat.combatant;
    const actor = current?.token ? ctx.idOf(current.token) : current?.actor ? ctx.idOf(current.actor) : null;
    const ids = new Set();
    for (const c of combat.combatants?.contents ?? combat.combatants ?? []) {
      if (c.token) ids.add(ctx.idOf(c.token));
      else if (c.actor) ids.add(ctx.idOf(c.actor));
    }
    const tokens = [];
    for (const id of ids) {
      const token = await connection.request("token.get", { id }).then((/** @type {any} */ a) => a.token, () => null);
      if (token) tokens.push(token);
    }
    const out = [];
    for (const patch of rules.resets(tokens, { actor, ...step })) {
      out.push((await connection.request("token.update", patch)).token);
    }
    return out;
  }

  Hooks.on("updateCombat", (/** @type {any} */ combat, /** @type {any} */ change, /** @type {any} */ options) => {
    const step = combatStep(change, options);
    if (!step.newRound && !step.newTurn) return;
    if (!combat.started || !ctx.connected() || !game.user || !isWriter(game.user, ctx.gameUsers())) return;
    void advance(combat, step).catch(ctx.report);
  });

  return { rules, advance };
}
