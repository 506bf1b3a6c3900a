/**
 * The attack declaration dialog's model: the ruleset's declaration schema (less
 * `charms`, which the declarables fill) and the packs' declarables of
 * `rulesets.list` (contract 2), each with its typed parameters.
 */

import { collect, fieldModel } from "../../../../vtt_bridge/server/static/common/schema-form.js";

/**
 * @param {object} ruleset  one entry of `rulesets.list`
 * @param {object} [values]  the last declaration, to fill in again
 */
export function declarationModel(ruleset, values = {}) {
  const schema = ruleset.declaration_schema || { type: "object", properties: {} };
  const properties = { ...(schema.properties || {}) };
  delete properties.charms;
  const chosen = new Map((values.charms || []).map((c) => [c.id, c]));
  return {
    ruleset: ruleset.id,
    title: ruleset.title || ruleset.id,
    fields: fieldModel({ ...schema, properties }, values),
    declarables: (ruleset.declarables || []).map((d) => ({
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
  return declaration;
}
