/**
 * A character's own Charm items (the game system's) → the bridge's declarables.
 *
 * A Charm item maps to a declarable of `rulesets.list` when its name is the
 * declarable's label, the label's part before or inside brackets ("Essence
 * Overwhelming (First Excellency)" matches "Essence Overwhelming" and "First
 * Excellency"), its id, or an alias: the adapter's `charmAliases` ({declarable id:
 * [name or RegExp]}), what another module adds through `registerCharmAliases`, and a
 * declarable's own `aliases` list if a pack's listing carries one. Names compare
 * without case, punctuation or extra spaces. Every other Charm item is "not
 * automated": shown with the attack, never dropped.
 */

const norm = (s) => String(s ?? "").toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();

/** The names a declarable answers to. @param {{id: string, label?: string, aliases?: string[]}} d */
export function namesOf(d) {
  const names = new Set([norm(d.id), norm(d.label)]);
  const m = /^(.*?)\s*\(([^)]*)\)\s*$/.exec(String(d.label ?? ""));
  if (m) {
    names.add(norm(m[1]));
    names.add(norm(m[2]));
  }
  for (const a of Array.isArray(d.aliases) ? d.aliases : []) if (typeof a === "string") names.add(norm(a));
  names.delete("");
  return names;
}

export class CharmAliases {
  constructor(initial = {}) {
    /** @type {Map<string, Array<string|RegExp>>} declarable id → aliases */
    this.byId = new Map();
    this.add(initial);
  }

  /** Add aliases: `{declarableId: ["Name", /pattern/i, ...]}`. */
  add(map) {
    for (const [id, list] of Object.entries(map || {})) {
      const items = (Array.isArray(list) ? list : [list]).filter((a) => typeof a === "string" || a instanceof RegExp);
      if (!items.length) throw new TypeError(`charm aliases for ${id}: give names or regular expressions`);
      this.byId.set(id, [...(this.byId.get(id) || []), ...items]);
    }
    return this;
  }

  /** Does the item name match an alias of `id`? */
  matches(id, name) {
    return (this.byId.get(id) || []).some((a) => (a instanceof RegExp ? a.test(String(name)) : norm(a) === norm(name)));
  }
}

/** Is this item one of the system's Charms? (the exalted2e system's item type `charm`) */
export const isCharm = (item) => String(item?.type ?? "").toLowerCase() === "charm";

/**
 * The plan for an actor's Charm items.
 * @param {Array<{name: string, type: string}>} items  the actor's items (plain data)
 * @param {object|null} ruleset  one entry of `rulesets.list` (its `declarables`)
 * @param {CharmAliases} [aliases]
 * @returns {{automated: Array<{item: string, id: string, plugin: string, kind: string}>,
 *   notAutomated: string[], known: Record<string, string[]>}}  `known`: per pack, the
 *   declarable ids the character has (the pack's `charms` list on the token)
 */
export function charmPlan(items, ruleset, aliases = new CharmAliases()) {
  const declarables = Array.isArray(ruleset?.declarables) ? ruleset.declarables : [];
  const named = declarables.map((d) => ({ d, names: namesOf(d) }));
  const automated = [];
  const notAutomated = [];
  /** @type {Record<string, string[]>} */
  const known = {};
  for (const item of (items || []).filter(isCharm)) {
    const name = String(item.name ?? "");
    const hit = named.find(({ d, names }) => names.has(norm(name)) || aliases.matches(d.id, name));
    if (!hit) {
      notAutomated.push(name);
      continue;
    }
    const { d } = hit;
    automated.push({ item: name, id: d.id, plugin: d.plugin, kind: d.kind || "charm" });
    (known[d.plugin] ??= []);
    if (!known[d.plugin].includes(d.id)) known[d.plugin].push(d.id);
  }
  return { automated, notAutomated, known };
}

/**
 * The token's pack flags with the Charms the character has. When the actor has Charm
 * items, each pack whose flags schema keeps a `charms` list gets the ids its Charm
 * items map to (added to what the Bridge tab lists): a pack Charm the character does
 * not have is then not offered, and the bridge refuses it. A character with no Charm
 * items keeps its flags as they are (no list: every declarable is known).
 * @param {Record<string, any>|undefined} flags  the token's `flags` (per pack)
 * @param {object} ruleset  one entry of `rulesets.list` (its `flags` schemas)
 * @param {ReturnType<typeof charmPlan>} plan
 */
export function flagsWithCharms(flags, ruleset, plan) {
  const out = { ...(flags || {}) };
  if (!plan.automated.length && !plan.notAutomated.length) return out;
  for (const [plugin, schema] of Object.entries(ruleset?.flags || {})) {
    if (!schema?.properties?.charms) continue;
    const listed = Array.isArray(out[plugin]?.charms) ? out[plugin].charms : [];
    out[plugin] = { ...(out[plugin] || {}), charms: [...new Set([...listed, ...(plan.known[plugin] || [])])] };
  }
  return out;
}
