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
import { need, report, state } from "./context.js";
import { idOf, writer } from "./actors.js";

export const turnRules = new TurnRules();

/** The bridge token of a combatant: its token, else its actor. @param {any} c */
const combatantId = (c) => (c?.token ? idOf(c.token) : c?.actor ? idOf(c.actor) : null);

/**
 * Send the resets for one step of a combat.
 * @param {any} combat @param {{newRound: boolean, newTurn: boolean}} step
 * @returns {Promise<any[]>} the tokens the bridge changed
 */
export async function advanceCombat(combat, step) {
  const connection = need();
  const actor = combatantId(combat.combatant);
  const ids = new Set([...(combat.combatants?.contents ?? combat.combatants ?? [])].map(combatantId).filter(Boolean));
  const tokens = [];
  for (const id of ids) {
    const token = await connection.request("token.get", { id }).then((a) => a.token, () => null);
    if (token) tokens.push(token);
  }
  const out = [];
  for (const patch of turnRules.resets(tokens, { actor, ...step })) out.push((await connection.request("token.update", patch)).token);
  return out;
}

export function registerCombat() {
  Hooks.on("updateCombat", (/** @type {any} */ combat, /** @type {any} */ change, /** @type {any} */ options) => {
    const step = combatStep(change, options);
    if ((!step.newRound && !step.newTurn) || !combat.started || !state.connection?.connected || !writer()) return;
    void advanceCombat(combat, step).catch(report);
  });
}
