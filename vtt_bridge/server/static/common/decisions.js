/* What a question's option reads as, for the web table's dialog and the Foundry module's
 * alike: its label, and what choosing it gives where the rules know it (the option's
 * `detail`, "Dodge DV 7"). A pack's option that stands for one of the ruleset's own
 * (`counts_as: "parry"`) and says nothing itself reads as that option does: the same
 * DV is used. No DOM, no socket. */

/**
 * What choosing `option` gives: its own `detail`, else that of the option it counts as
 * ("Parry DV 5 (daiklave)"), else "as Parry"; "" when nothing is known.
 * @param {{id: string, label?: string, detail?: string, counts_as?: string}} option
 * @param {Array<{id: string, label?: string, detail?: string}>} [options]  the question's options
 * @returns {string}
 */
export function optionDetail(option, options = []) {
  if (option.detail) return String(option.detail);
  if (!option.counts_as || option.counts_as === option.id) return "";
  const same = options.find((o) => o.id === option.counts_as);
  if (same?.detail) return String(same.detail);
  return `as ${same?.label || option.counts_as}`;
}

/**
 * The option as one line: "Parry DV 5 (daiklave)" when the detail already starts with
 * the label (it would read twice), else "Do nothing (DV 0)", else the label alone.
 * @param {{id: string, label?: string, detail?: string, counts_as?: string}} option
 * @param {Array<{id: string, label?: string, detail?: string}>} [options]
 * @returns {string}
 */
export function optionText(option, options = []) {
  const label = option.label || option.id;
  const detail = optionDetail(option, options);
  if (!detail) return label;
  return detail.toLowerCase().startsWith(label.toLowerCase()) ? detail : `${label} (${detail})`;
}
