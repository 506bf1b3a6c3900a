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
import { adapters, rulesetInfo, t } from "./context.js";

/** Aliases other modules registered (`api.registerCharmAliases`). */
const extra = new CharmAliases();

/** The aliases in force: the adapter's and those registered. */
function aliases() {
  const all = new CharmAliases(/** @type {any} */ (adapters.for(game.system?.id ?? "")).charmAliases ?? {});
  for (const [id, list] of extra.byId) all.add({ [id]: list });
  return all;
}

/** Add aliases: `{declarableId: ["Charm name", /pattern/i]}`. @param {Record<string, any>} map */
export const registerCharmAliases = (map) => extra.add(map);

/** The plan of some items (plain data: name, type). @param {any[]} items @param {any} ruleset */
export const planOf = (items, ruleset) => charmPlan(items, ruleset, aliases());

/**
 * The wanted bridge token with the character's Charms in its pack flags.
 * @param {any} token  from tokenFromActor (null: not taking part) @param {any} data  the actor's plain data, items included
 */
export function withCharms(token, data) {
  if (!token) return token;
  const ruleset = rulesetInfo(token.ruleset);
  const flags = flagsWithCharms(token.flags, ruleset, planOf(data.items ?? [], ruleset));
  return Object.keys(flags).length ? { ...token, flags } : token;
}

/** The attack dialog's lines: the character's Charms the bridge plays, and those not automated. @param {any} actor @param {any} ruleset */
export function charmsHtml(actor, ruleset) {
  const items = [...(actor?.items ?? [])].map((/** @type {any} */ i) => ({ name: i.name, type: i.type }));
  const p = planOf(items, ruleset);
  const parts = [];
  if (p.automated.length) parts.push(`<p class="hint">${esc(t("Charms.Automated"))}: ${p.automated.map((a) => esc(a.item)).join(", ")}</p>`);
  if (p.notAutomated.length) parts.push(`<p class="hint vtt-bridge-not-automated">${esc(t("Charms.NotAutomated"))}: ${p.notAutomated.map(esc).join(", ")}</p>`);
  return parts.length ? `<section class="vtt-bridge-charms">${parts.join("")}</section>` : "";
}
