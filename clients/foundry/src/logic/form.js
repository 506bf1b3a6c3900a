/**
 * A field model (common/schema-form.js) drawn as HTML, without a DOM, and read back
 * from a form's values: the sheet's Bridge tab, the declaration dialog and the
 * decision dialog all use it.
 */

import { addItem, addKey, fieldAt, removeItem, removeKey, setValues } from "../../../../vtt_bridge/server/static/common/schema-form.js";
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
        const path = esc(field.path);
        let children = formHtml(field.children);
        let controls = "";
        if (field.widget === "list") {
          children = field.children
            .map((c, i) => `<div class="item">${formHtml([c])}<button type="button" data-remove="${path}" data-index="${i}" title="Remove">−</button></div>`)
            .join("");
          controls = `<button type="button" data-add="${path}">+ ${esc(field.label)}</button>`;
        } else if (field.map) {
          children = field.children
            .map((c) => `<div class="item">${formHtml([c])}<button type="button" data-remove-key="${path}" data-key="${esc(c.name)}" title="Remove">−</button></div>`)
            .join("");
          controls = `<input type="text" data-new-key="${path}" placeholder="key"><button type="button" data-add-key="${path}">+</button>`;
        }
        return `<fieldset data-path="${path}"><legend>${esc(field.label)}</legend>${children}${controls}${error}</fieldset>`;
      }
      const hint = field.description ? `<p class="hint">${esc(field.description)}</p>` : "";
      return `<div class="form-group"><label>${esc(field.label)}</label><div class="form-fields">${input(field)}</div>${hint}${error}</div>`;
    })
    .join("");
}

/**
 * Raw values by path, as `collect` takes them, from a form's entries
 * (`[...new FormData(form)]`, where a ticked box is present and an unticked one is
 * not; or `[path, value]` pairs with booleans for boxes).
 */
export function rawValues(model, entries, walkFields) {
  const raw = {};
  for (const [k, v] of entries) raw[k] = v;
  for (const field of walkFields(model)) {
    if (field.widget !== "checkbox") continue;
    const v = raw[field.path];
    raw[field.path] = typeof v === "boolean" ? v : v !== undefined;
  }
  return raw;
}

/**
 * A list or map control pressed: the model keeps what was typed (`raw`), then gains
 * or loses the item or key. Returns the model to draw again.
 * @param {object[]} model
 * @param {Object<string, *>} raw  widget values by path
 * @param {{add?: string, remove?: string, index?: number, addKey?: string, key?: string, removeKey?: string}} control
 */
export function applyControl(model, raw, control) {
  setValues(model, raw);
  const at = (path) => {
    const field = fieldAt(model, path);
    if (!field) throw new RangeError(`no field ${path}`);
    return field;
  };
  if (control.add !== undefined) addItem(at(control.add));
  else if (control.remove !== undefined) removeItem(at(control.remove), Number(control.index));
  else if (control.addKey !== undefined && control.key) addKey(at(control.addKey), control.key);
  else if (control.removeKey !== undefined) removeKey(at(control.removeKey), control.key);
  return model;
}
