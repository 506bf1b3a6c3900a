/**
 * A `decision` prompt as a dialog model, and the answer read back from it.
 * Options' typed parameters (contract 1: a JSON Schema object per option) become
 * fields through the shared schema-form module; what each option gives ("Dodge DV 7")
 * reads as in the web table, through the shared decisions module.
 */

import { optionDetail, optionText } from "../../../../vtt_bridge/server/static/common/decisions.js";
import { collect, fieldModel } from "../../../../vtt_bridge/server/static/common/schema-form.js";

/**
 * @param {object} decision  as the bridge sends it: `{key, prompt, token, options, default, timeout, attack}`
 * @param {{now?: number, names?: Function}} [context]
 */
export function decisionModel(decision, { now = Date.now(), names = (id) => id } = {}) {
  const options = (decision.options || []).map((o) => ({
    id: o.id,
    label: o.label || o.id,
    detail: optionDetail(o, decision.options),
    text: optionText(o, decision.options),
    countsAs: o.counts_as ?? null,
    plugin: o.plugin ?? null,
    isDefault: o.id === decision.default,
    fields: o.params && typeof o.params === "object" ? fieldModel(o.params) : [],
  }));
  const timeout = typeof decision.timeout === "number" && decision.timeout > 0 ? decision.timeout : null;
  return {
    key: decision.key,
    attack: decision.attack?.id ?? null,
    prompt: decision.prompt || decision.key,
    token: decision.token ?? null,
    tokenName: decision.token ? names(decision.token) : null,
    attacker: decision.attack?.attacker ? names(decision.attack.attacker) : null,
    options,
    default: decision.default ?? null,
    deadline: timeout === null ? null : now + timeout * 1000,
  };
}

/** Whole seconds left to answer, or null when the question has no timeout. */
export function secondsLeft(model, now = Date.now()) {
  if (model.deadline === null) return null;
  return Math.max(0, Math.ceil((model.deadline - now) / 1000));
}

/**
 * The answer to send for the chosen option: its id, or `{option, params}` with the
 * parameters read from the form (`raw`: widget values by field path).
 * @throws {FormErrors} a parameter that cannot be read (out of range, not a number)
 */
export function answerFor(model, optionId, raw = {}) {
  const option = model.options.find((o) => o.id === optionId);
  if (!option) throw new RangeError(`no option ${optionId}`);
  if (!option.fields.length) return option.id;
  return { option: option.id, params: collect(option.fields, raw) };
}
