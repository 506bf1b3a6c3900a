// @ts-check
/**
 * The system's own Charms: with an adapter that knows Charm items (the Exalted 2e
 * system's `charm` items), a character's Charms map to the packs' declarables. The
 * bridge token's pack `charms` lists then hold what the character has (so the attack
 * dialog offers only those, and the bridge asks a defender only about theirs); the
 * Charms no pack implements show in the attack dialog as "not automated".
 */

import { CharmAliases, charmPlan, flagsWithCharms } from "../logic/charms.js";
import { esc } from "../logic/chat.js";

/**
 * @param {any} ctx  {adapterFor, rulesetInfo, t}
 */
export function registerCharms(ctx) {
  const extra = new CharmAliases();

  /** The aliases for a ruleset: the adapter's and those other modules registered. @param {any} adapter */
  const aliasesFor = (adapter) => {
    const all = new CharmAliases(adapter?.charmAliases ?? {});
    for (const [id, list] of extra.byId) all.add({ [id]: list });
    return all;
  };

  /** The plan of an actor's Charm items (plain actor data, its items included). @param {any} data @param {any} ruleset */
  const plan = (data, ruleset) => charmPlan(data.items ?? [], ruleset, aliasesFor(ctx.adapterFor()));

  /**
   * The wanted bridge token with the character's Charms in its pack flags.
   * @param {any} token  from tokenFromActor (null: not taking part) @param {any} data  the actor's plain data
   */
  function withCharms(token, data) {
    if (!token) return token;
    const ruleset = ctx.rulesetInfo(token.ruleset);
    const p = plan(data, ruleset);
    const flags = flagsWithCharms(token.flags, ruleset, p);
    return Object.keys(flags).length ? { ...token, flags } : token;
  }

  /** The attack dialog's list of Charms not automated. @param {any} actor @param {any} ruleset */
  function notAutomatedHtml(actor, ruleset) {
    if (!actor?.items) return "";
    const data = { items: actor.items.map((/** @type {any} */ i) => ({ name: i.name, type: i.type })) };
    const p = plan(data, ruleset);
    const parts = [];
    if (p.automated.length) {
      parts.push(`<p class="hint">${esc(ctx.t("Charms.Automated"))}: ${p.automated.map((a) => esc(a.item)).join(", ")}</p>`);
    }
    if (p.notAutomated.length) {
      parts.push(`<p class="hint vtt-bridge-not-automated">${esc(ctx.t("Charms.NotAutomated"))}: ${p.notAutomated.map((n) => esc(n)).join(", ")}</p>`);
    }
    return parts.length ? `<section class="vtt-bridge-charms">${parts.join("")}</section>` : "";
  }

  return {
    withCharms,
    notAutomatedHtml,
    plan,
    /** Add aliases: `{declarableId: ["Charm name", /pattern/i]}`. @param {Record<string, any>} map */
    registerAliases: (map) => extra.add(map),
  };
}
