/**
 * A field model (common/schema-form.js) drawn as HTML, without a DOM, and read back
 * from a form's values: the sheet's Bridge tab, the declaration dialog and the
 * decision dialog all use it.
 */

import { esc } from "./chat.js";

function input(field) {
  const name = esc(field.path);
  const value = field.value === undefined || field.value === null ? "" : field.value;
  const req = field.required ? " required" : "";
  switch (field.widget) {
    case "number":
      return `<input type="number" name="${name}" value="${esc(value)}"${field.min !== undefined ? ` min="${field.min}"` : ""}${field.max !== undefined ? ` max="${field.max}"` : ""} step="${field.step ?? "any"}"${req}>`;
    case "checkbox":
      return `<input type="checkbox" name="${name}"${field.value === true ? " checked" : ""}>`;
    case "select":
      return `<select name="${name}">${field.choices
        .map((c) => `<option value="${esc(c.value ?? "")}"${c.value === field.value ? " selected" : ""}>${esc(c.label)}</option>`)
        .join("")}</select>`;
    default: {
      const text = field.type === "json" ? JSON.stringify(field.value ?? null) : value;
      return `<input type="text" name="${name}" value="${esc(text)}"${req}>`;
    }
  }
}

/** The HTML of a field model: groups and lists as fieldsets, each field a labelled row. */
export function formHtml(model) {
  return model
    .map((field) => {
      const error = field.error ? `<p class="notes error">${esc(field.error)}</p>` : "";
      if (field.widget === "group" || field.widget === "list") {
        return `<fieldset data-path="${esc(field.path)}"><legend>${esc(field.label)}</legend>${formHtml(field.children)}${error}</fieldset>`;
      }
      const hint = field.description ? `<p class="hint">${esc(field.description)}</p>` : "";
      return `<div class="form-group"><label>${esc(field.label)}</label><div class="form-fields">${input(field)}</div>${hint}${error}</div>`;
    })
    .join("");
}

/**
 * Raw values by path, as `collect` takes them, from a form's entries
 * (`[...new FormData(form)]`): checkboxes not in the entries are unticked.
 */
export function rawValues(model, entries, walkFields) {
  const raw = {};
  for (const [k, v] of entries) raw[k] = v;
  for (const field of walkFields(model)) if (field.widget === "checkbox") raw[field.path] = raw[field.path] !== undefined;
  return raw;
}
