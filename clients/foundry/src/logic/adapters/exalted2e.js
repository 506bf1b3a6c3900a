/**
 * The "Exalted 2nd Edition" Foundry system (id `exalted2e`) → the bridge's
 * `exalted2e` token. Written from that system's published data model: actor
 * `system.attributes.<name>.value`, `system.abilities.<camelCase>.value`,
 * `system.essence.value`, `system.motes.{personal,peripheral}.value`,
 * `system.health.{bashing,lethal,aggravated}` counts with bonus levels
 * `health.bonus.{zero,one,two}`, `exaltType`; weapon items with `accuracy`, `damage`,
 * `damageType`, `defense`, `range`, `tags`, `equipped`; armor items with
 * `soak.{bashing,lethal}`, `hardness`, `mobilityPenalty`, `equipped`.
 */

const ATTRIBUTES = ["strength", "dexterity", "stamina", "charisma", "manipulation", "appearance", "perception", "intelligence", "wits"];
const ABILITIES = [
  "archery", "martial_arts", "melee", "thrown", "war", "integrity", "performance", "presence", "resistance", "survival",
  "craft", "investigation", "lore", "medicine", "occult", "athletics", "awareness", "dodge", "larceny", "stealth",
  "bureaucracy", "linguistics", "ride", "sail", "socialize",
];
const DAMAGE = { bashing: "B", lethal: "L", aggravated: "A" };

const camel = (snake) => snake.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const num = (v, fallback = 0) => (Number.isFinite(v) ? Math.trunc(v) : fallback);
const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

function weaponAbility(system, name) {
  const tags = (system.tags || []).map((t) => String(t).toLowerCase());
  if (tags.includes("thrown")) return "thrown";
  if (num(system.range) > 0) return "archery";
  if (tags.includes("martial arts") || tags.includes("martialarts") || tags.includes("unarmed") || /fist|unarmed/i.test(name)) return "martial_arts";
  return "melee";
}

function weapon(item) {
  const s = item.system || {};
  const ability = weaponAbility(s, item.name);
  const ranged = ability === "archery" || ability === "thrown";
  return {
    name: String(item.name || "weapon").slice(0, 100),
    ability,
    accuracy: clamp(num(s.accuracy), -10, 10),
    damage: clamp(num(s.damage), -10, 50),
    damage_type: DAMAGE[s.damageType] ?? "L",
    defense: ranged ? null : clamp(num(s.defense), -10, 10),
    range: num(s.range) > 0 ? num(s.range) : null,
    unarmed: /fist|unarmed/i.test(item.name || ""),
  };
}

/** The health track: standard penalties plus bonus levels, damage marked A, L, B from the top. */
function health(h, stamina) {
  const bonus = h?.bonus || {};
  const penalties = [
    0, ...Array(num(bonus.zero)).fill(0),
    -1, -1, ...Array(num(bonus.one)).fill(-1),
    -2, -2, ...Array(num(bonus.two)).fill(-2),
    -4, "I", ...Array(Math.max(0, stamina)).fill("D"),
  ];
  const marks = [...Array(num(h?.aggravated)).fill("A"), ...Array(num(h?.lethal)).fill("L"), ...Array(num(h?.bashing)).fill("B")];
  const damage = penalties.map((_, i) => marks[i] ?? null);
  return { penalties, damage };
}

export const exalted2e = Object.freeze({
  id: "exalted2e",
  system: "exalted2e",
  ruleset: "exalted2e",
  label: "Exalted 2nd Edition",

  /**
   * Charm items whose names the packs' declarables do not carry: the system names an
   * Excellency per Ability or Attribute ("First Melee Excellency"); the excellencies
   * pack has one of each kind (charms.js matches labels and ids by itself).
   */
  charmAliases: {
    "first-excellency": [/^first [a-z ]+ excellency$/i],
    "second-excellency": [/^second [a-z ]+ excellency$/i],
    "third-excellency": [/^third [a-z ]+ excellency$/i],
  },

  /**
   * @param {{type?: string, system: object, items?: Array<{type: string, name: string, system: object}>}} actor
   * @returns {object} the bridge token's `system`
   */
  toSystem(actor) {
    const s = actor.system || {};
    const attributes = {};
    for (const name of ATTRIBUTES) attributes[name] = clamp(num(s.attributes?.[name]?.value, 1), 0, 10);
    const abilities = {};
    for (const name of ABILITIES) abilities[name] = clamp(num(s.abilities?.[camel(name)]?.value), 0, 10);
    const items = actor.items || [];
    const equipped = (type) => {
      const all = items.filter((i) => i.type === type);
      const on = all.filter((i) => i.system?.equipped);
      return on.length ? on : all;
    };
    const weapons = [];
    const seen = new Set();
    for (const item of equipped("weapon")) {
      const w = weapon(item);
      if (seen.has(w.name)) continue;
      seen.add(w.name);
      weapons.push(w);
    }
    const [armorItem] = items.filter((i) => i.type === "armor" && i.system?.equipped);
    const armor = armorItem
      ? {
          name: String(armorItem.name || "armor").slice(0, 100),
          bashing: clamp(num(armorItem.system.soak?.bashing), 0, 50),
          lethal: clamp(num(armorItem.system.soak?.lethal), 0, 50),
          mobility: clamp(-num(armorItem.system.mobilityPenalty), 0, 10),
          hardness: { B: num(armorItem.system.hardness), L: num(armorItem.system.hardness) },
        }
      : null;
    const motes = num(s.motes?.personal?.value) + num(s.motes?.peripheral?.value);
    return {
      attributes,
      abilities,
      essence: clamp(num(s.essence?.value, 1), 1, 10),
      divine: s.exaltType !== undefined && s.exaltType !== "mortal",
      extra: actor.type === "npc" && s.extra === true,
      motes: clamp(motes, 0, 500),
      weapons,
      armor,
      health: health(s.health, attributes.stamina),
    };
  },

  /**
   * What the bridge changed, as an update of the actor's own data: damage counts and motes.
   * @param {object} system  the bridge token's `system` after an attack
   * @param {{system: object}} actor  the actor as it is
   * @returns {object} a flat Foundry update (`{"system.health.lethal": 2, ...}`)
   */
  toActorUpdate(system, actor) {
    const update = {};
    const marks = system.health?.damage || [];
    for (const [field, mark] of [["bashing", "B"], ["lethal", "L"], ["aggravated", "A"]]) {
      update[`system.health.${field}`] = marks.filter((m) => m === mark).length;
    }
    const s = actor.system || {};
    const personal = num(s.motes?.personal?.value);
    const peripheral = num(s.motes?.peripheral?.value);
    let spent = personal + peripheral - num(system.motes, personal + peripheral);
    if (spent !== 0) {
      // Peripheral motes are spent first; motes regained fill the personal pool.
      const fromPeripheral = spent > 0 ? Math.min(spent, peripheral) : 0;
      update["system.motes.peripheral.value"] = peripheral - fromPeripheral;
      spent -= fromPeripheral;
      update["system.motes.personal.value"] = Math.max(0, personal - spent);
    }
    return update;
  },
});
