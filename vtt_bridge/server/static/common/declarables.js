/**
 * What an attacking token may declare, without a DOM: the web table's attack form and
 * the Foundry module's declaration dialog offer the same Charms and abilities.
 *
 * `rulesets.list` lists every installed pack's declarables; a token knows only some.
 * A pack says which with a `charms` list in the flags it keeps on the token
 * (`token.flags.<plugin>.charms`; its flags schema, `rulesets.list` → `flags.<plugin>`,
 * has a `charms` property): a listed declarable is known, an unlisted one is not, and
 * without a list (or for a pack whose flags have no `charms`) the token knows them
 * all. The server refuses a declarable the token does not know, so a form offers
 * only these. A declarable of kind `option` is chosen at a decision, never declared:
 * it is listed apart, for players to know it is there.
 */

/** Does the pack `plugin` say, in its flags schema, which of its declarables a token knows? */
function packLists(ruleset, plugin) {
  const schema = ruleset?.flags?.[plugin];
  return !!schema?.properties?.charms;
}

/**
 * Does `token` know `declarable`?
 * @param {object} ruleset  one entry of `rulesets.list` (its `flags` schemas)
 * @param {object|null} token  the attacking token (`flags` as the bridge keeps them)
 * @param {{id: string, plugin: string}} declarable
 */
export function knows(ruleset, token, declarable) {
  if (!packLists(ruleset, declarable.plugin)) return true;
  const listed = token?.flags?.[declarable.plugin]?.charms;
  return !Array.isArray(listed) || listed.includes(declarable.id);
}

/**
 * The declarables a token may declare (`declare`), and the decision options it knows
 * (`options`, listed only), in the order `rulesets.list` gives them.
 * @param {object} ruleset  one entry of `rulesets.list`
 * @param {object|null} token  the attacking token; none: everything is offered
 * @returns {{declare: object[], options: object[]}}
 */
export function declarablesFor(ruleset, token) {
  const all = Array.isArray(ruleset?.declarables) ? ruleset.declarables : [];
  const known = token ? all.filter((d) => knows(ruleset, token, d)) : all;
  return {
    declare: known.filter((d) => (d.kind || "charm") !== "option"),
    options: known.filter((d) => d.kind === "option"),
  };
}
