/**
 * Attacking from the character sheet: which items are weapons, and what the
 * declaration dialog is prefilled with for one.
 */

/** Is this item one the sheet attacks with? (a system's `weapon` items) */
export const isWeapon = (item) => String(item?.type ?? "").toLowerCase() === "weapon";

/**
 * The declaration a weapon prefills: its name in the ruleset's `weapon` field, when
 * the declaration schema has one and the attacking token (as the bridge keeps it)
 * carries a weapon of that name. Otherwise `{}` and why (`missing`).
 * @param {object} ruleset  one entry of `rulesets.list`
 * @param {object|null} token  the attacker's bridge token
 * @param {string} weapon  the item's name
 * @returns {{values: object, missing: string|null}}
 */
export function weaponPrefill(ruleset, token, weapon) {
  const props = ruleset?.declaration_schema?.properties || {};
  if (!props.weapon) return { values: {}, missing: `the ${ruleset?.id ?? "?"} declaration names no weapon` };
  const names = (token?.system?.weapons || []).map((w) => w?.name).filter(Boolean);
  if (names.length && !names.includes(weapon)) {
    return { values: {}, missing: `${token?.name ?? "the attacker"} has no weapon "${weapon}" at the bridge (it has ${names.join(", ")})` };
  }
  return { values: { weapon }, missing: null };
}
