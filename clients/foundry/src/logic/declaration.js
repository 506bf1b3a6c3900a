/**
 * The attack declaration dialog's model: the ruleset's declaration schema (less
 * `charms`, which the declarables fill) and the packs' declarables of
 * `rulesets.list` (contract 2) that the attacking token knows, each with its typed
 * parameters, plus the decision options it knows (listed, never declared) — the same
 * choice as the web table's (common/declarables.js).
 */

import { declarablesFor } from "../../../../vtt_bridge/server/static/common/declarables.js";
import { collect, fieldModel } from "../../../../vtt_bridge/server/static/common/schema-form.js";

/**
 * @param {object} ruleset  one entry of `rulesets.list`
 * @param {object} [values]  the last declaration, to fill in again
 * @param {object|null} [attacker]  the attacking token as the bridge keeps it (its `flags`
 *   say what it knows); none: every declarable is offered
 */
export function declarationModel(ruleset, values = {}, attacker = null) {
  const schema = ruleset.declaration_schema || { type: "object", properties: {} };
  const properties = { ...(schema.properties || {}) };
  delete properties.charms;
  const chosen = new Map((values.charms || []).map((c) => [c.id, c]));
  const known = declarablesFor(ruleset, attacker);
  return {
    ruleset: ruleset.id,
    title: ruleset.title || ruleset.id,
    fields: fieldModel({ ...schema, properties }, values),
    options: known.options.map((d) => ({ id: d.id, label: d.label || d.id, plugin: d.plugin, description: d.description || "" })),
    declarables: known.declare.map((d) => ({
      id: d.id,
      label: d.label || d.id,
      plugin: d.plugin,
      kind: d.kind || "charm",
      description: d.description || "",
      chosen: chosen.has(d.id),
      fields: d.params ? fieldModel(d.params, chosen.get(d.id), `charms.${d.id}`) : [],
    })),
  };
}

/**
 * The declaration to send.
 * @param {object} model  from `declarationModel`
 * @param {object} raw  widget values by path (declarables' parameters under `charms.<id>.<param>`)
 * @param {string[]} chosen  the declarables ticked
 * @throws {FormErrors}
 */
export function collectDeclaration(model, raw, chosen) {
  const declaration = collect(model.fields, raw);
  const charms = [];
  for (const d of model.declarables) {
    if (!chosen.includes(d.id)) continue;
    charms.push({ id: d.id, ...collect(d.fields, raw) });
  }
  if (charms.length || model.declarables.length) declaration.charms = charms;
  // (A declarable the attacker does not know is not in the model: it cannot be sent.)
  return declaration;
}
