/* Drawing a schema-form model (../common/schema-form.js) as HTML inputs, and reading
 * them back. The token sheet, a pack's flags, a Charm's parameters and a decision's
 * parameters are all drawn by this one renderer: selects for enums, number inputs with
 * their range (− and + around it for ranges of up to 20, such as Charm dice), checkboxes, nested groups, lists with add
 * and remove (a list of choices, such as the Charms a token knows, as one checkbox per
 * choice), a line of words for a list of plain values (wound penalties), each field's
 * one-line help (its schema's description) and its error under it. */

import {
  addItem,
  addKey,
  applyErrors,
  collect,
  fieldAt,
  fieldModel,
  FormErrors,
  removeItem,
  removeKey,
  scalarsText,
  setItems,
  setValues,
} from "../common/schema-form.js";
import { h, fill } from "./dom.js";

/** Whole numbers with at most this many steps between their bounds get − and + buttons
 * (what a phone needs to buy dice one at a time); wider ranges are typed. */
const STEPPED_RANGE = 20;

let serial = 0;

/** A form for one JSON Schema object. */
export class SchemaForm {
  /**
   * @param {object} schema  JSON Schema object (`properties`, `required`, ...)
   * @param {object} [value]  current values (else the defaults)
   * @param {object} [options]
   * @param {string} [options.name]  prefix of the inputs' ids and `data-field`s
   * @param {Function} [options.onChange]  called after any edit
   * @param {boolean} [options.compact]  groups start folded
   * @param {Object<string, string>} [options.choiceLabels]  what to show for a choice's
   *   value (a Charm's name for its id), in selects and choice checkboxes
   */
  constructor(schema, value, options = {}) {
    this.schema = schema;
    this.options = options;
    this.prefix = options.name || `f${++serial}`;
    this.model = fieldModel(schema, value);
    this.node = h("div", { class: `schema-form${options.compact ? " compact" : ""}` });
    this.top = h("p", { class: "error form-error", role: "alert" });
    this.render();
  }

  /** Every input's raw value, by path (what `collect` reads). */
  raw() {
    const out = {};
    for (const el of this.node.querySelectorAll("[data-path]")) {
      if (!("value" in el) || el.tagName === "BUTTON" || el.tagName === "FIELDSET" || el.tagName === "DETAILS") continue;
      out[el.dataset.path] = el.type === "checkbox" ? el.checked : el.value;
    }
    return out;
  }

  /** The object to send; throws FormErrors (and shows them) when a field cannot be read. */
  value() {
    const raw = this.raw();
    try {
      const value = collect(this.model, raw);
      if (this.hasErrors) this.showErrors({});
      return value;
    } catch (err) {
      if (err instanceof FormErrors) this.showErrors(err.errors);
      throw err;
    }
  }

  /** Put messages at their fields (path → message); those no field has go on top. */
  showErrors(errors) {
    setValues(this.model, this.raw());
    const left = applyErrors(this.model, errors);
    this.hasErrors = Object.keys(errors).length > 0;
    this.render();
    const rest = Object.entries(left).map(([path, message]) => (path ? `${path}: ${message}` : message));
    this.top.textContent = rest.join(" ");
    const first = this.node.querySelector(".field.invalid input, .field.invalid select, .field.invalid textarea");
    first?.focus();
  }

  render() {
    const open = new Set([...this.node.querySelectorAll("details[open][data-path]")].map((d) => d.dataset.path));
    this.openGroups = this.rendered ? open : null;
    fill(this.node, this.top, ...this.model.map((f) => this.draw(f)));
    this.rendered = true;
  }

  /** After an edit: the edited field's old error goes (the form is checked again on sending). */
  changed(el) {
    const label = el?.closest?.(".field.invalid");
    if (label) {
      label.classList.remove("invalid");
      label.querySelector(".field-error")?.remove();
      const field = fieldAt(this.model, label.dataset.for);
      if (field) field.error = undefined;
    }
    this.options.onChange?.();
  }

  /** Keep what is typed, change the model, draw again. */
  edit(fn) {
    setValues(this.model, this.raw());
    fn();
    this.render();
    this.changed();
  }

  id(field) {
    return `${this.prefix}-${field.path.replace(/\./g, "-")}`;
  }

  draw(field) {
    if (field.widget === "group") return this.drawGroup(field);
    if (field.widget === "list") return this.drawList(field);
    const id = this.id(field);
    const data = { path: field.path, field: field.path };
    const common = { id, dataset: data, "aria-invalid": field.error ? "true" : undefined, title: field.description || undefined };
    let input;
    let cls = "";
    if (field.widget === "checkbox") {
      input = h("input", { ...common, type: "checkbox", checked: field.value === true || field.value === "true", onchange: (ev) => this.changed(ev.target) });
      cls = "check";
    } else if (field.widget === "select") {
      const current = field.value === undefined ? "" : field.value === null ? "" : String(field.value);
      const hasNull = field.choices.some((c) => c.value === null);
      input = h(
        "select",
        { ...common, onchange: (ev) => this.changed(ev.target) },
        !hasNull && (field.value === undefined || field.value === null || field.value === "")
          ? h("option", { value: "" }, field.required ? "— choose —" : "(none)")
          : null,
        field.choices.map((c) => h("option", { value: c.value === null ? "" : String(c.value) }, this.choiceLabel(c.value, c.label))),
      );
      input.value = current;
    } else if (field.widget === "number") {
      input = h("input", {
        ...common,
        type: "number",
        inputmode: field.type === "integer" ? "numeric" : "decimal",
        step: field.step === "any" ? "any" : String(field.step ?? 1),
        min: field.min,
        max: field.max,
        value: field.value === undefined || field.value === null ? "" : String(field.value),
        placeholder: field.nullable ? "—" : undefined,
        oninput: (ev) => this.changed(ev.target),
      });
      cls = "number";
      if (field.type === "integer" && field.min !== undefined && field.max !== undefined && field.max - field.min <= STEPPED_RANGE) {
        input = this.stepper(field, input);
        cls = "number stepped";
      }
    } else if (field.type === "scalars") {
      input = h("input", {
        ...common,
        value: scalarsText(field.value),
        placeholder: "values separated by spaces",
        oninput: (ev) => this.changed(ev.target),
      });
      cls = "scalars";
    } else if (field.type === "json") {
      input = h("textarea", {
        ...common,
        rows: 2,
        value: field.value === undefined || field.value === null ? "" : typeof field.value === "string" ? field.value : JSON.stringify(field.value),
        placeholder: field.default !== undefined && field.default !== null ? JSON.stringify(field.default) : field.nullable ? "— (JSON)" : "JSON",
        oninput: (ev) => this.changed(ev.target),
      });
      cls = "json";
    } else {
      input = h("input", {
        ...common,
        value: field.value === undefined || field.value === null ? "" : String(field.value),
        maxlength: field.maxLength,
        oninput: (ev) => this.changed(ev.target),
      });
    }
    return h(
      "label",
      { class: `field ${cls}${field.error ? " invalid" : ""}`, for: id, dataset: { for: field.path } },
      h(
        "span",
        {},
        field.label,
        field.required ? h("abbr", { title: "required", class: "req" }, " *") : null,
        field.description ? h("small", { class: "help" }, field.description) : null,
      ),
      input,
      field.error ? h("small", { class: "field-error", role: "alert" }, field.error) : null,
    );
  }

  /** A small whole-number range (stunt dice 0–3, Excellency dice 0–20): − and + around the number. */
  stepper(field, input) {
    const bump = (by) => {
      const now = input.value === "" ? Number(field.default ?? field.min) : Number(input.value);
      const next = Math.min(field.max, Math.max(field.min, (Number.isFinite(now) ? now : field.min) + by));
      input.value = String(next);
      this.changed(input);
    };
    return h(
      "span",
      { class: "stepper" },
      h("button", { type: "button", class: "small step-down", "aria-label": `${field.label} minus one`, onclick: () => bump(-1) }, "−"),
      input,
      h("button", { type: "button", class: "small step-up", "aria-label": `${field.label} plus one`, onclick: () => bump(1) }, "+"),
    );
  }

  drawGroup(field) {
    const wasOpen = this.openGroups ? this.openGroups.has(field.path) : null;
    const hasError = [...walkFields(field.children)].some((f) => f.error);
    // An optional group not set starts folded; so do big groups (25 abilities) in a compact
    // form, unless they hold a required field or an error.
    const unset = field.nullable && (field.value === null || field.value === undefined);
    const big = field.children.length > 8 && !field.children.some((c) => c.required);
    const open = hasError || (wasOpen ?? (!unset && !(this.options.compact && big)));
    return h(
      "details",
      { class: `group${field.error ? " invalid" : ""}`, open, dataset: { path: field.path } },
      h(
        "summary",
        {},
        field.label,
        field.nullable ? h("span", { class: "hint" }, " (optional)") : null,
        field.description ? h("small", { class: "help" }, field.description) : null,
      ),
      field.error ? h("small", { class: "field-error", role: "alert" }, field.error) : null,
      // (A <details> does not lay out its children as a grid; a box inside it does.)
      h("div", { class: "group-body" }, field.map ? this.drawMap(field) : field.children.map((c) => this.draw(c))),
    );
  }

  /** A map: one row per key (its value, ×), and a row to add a key. */
  drawMap(field) {
    const key = h("input", { placeholder: "name", "aria-label": `${field.label}: new name`, dataset: { newKey: field.path }, size: 8 });
    const add = () => {
      try {
        this.edit(() => addKey(fieldAt(this.model, field.path), key.value));
      } catch (err) {
        this.top.textContent = `${field.label}: ${err.message}`;
      }
    };
    key.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        add();
      }
    });
    return [
      ...field.children.map((child) =>
        h(
          "div",
          { class: "item-row map-entry" },
          this.draw({ ...child, label: child.name }),
          h(
            "button",
            {
              type: "button",
              class: "small remove-item",
              "aria-label": `remove ${child.name}`,
              dataset: { remove: child.path },
              onclick: () => this.edit(() => removeKey(fieldAt(this.model, field.path), child.name)),
            },
            "×",
          ),
        ),
      ),
      h("div", { class: "item-row map-add" }, key, h("button", { type: "button", class: "small add-item", dataset: { add: field.path }, onclick: add }, "Add")),
    ];
  }

  choiceLabel(value, fallback) {
    const labels = this.options.choiceLabels;
    return (labels && value !== null && labels[String(value)]) || fallback;
  }

  /** A list of choices (the Charms a token knows): one checkbox per choice, by name. */
  drawChoices(field) {
    const chosen = new Set(field.children.map((c) => String(c.value)));
    const boxes = field.items.enum.map((value) =>
      h("input", { type: "checkbox", checked: chosen.has(String(value)), dataset: { choice: String(value), list: field.path } }),
    );
    const pick = () => {
      const checked = field.items.enum.filter((_, i) => boxes[i].checked);
      this.edit(() => setItems(fieldAt(this.model, field.path), checked));
    };
    for (const box of boxes) box.addEventListener("change", pick);
    return h(
      "fieldset",
      { class: `list-field choices${field.error ? " invalid" : ""}`, dataset: { list: field.path } },
      h("legend", {}, field.label, field.description ? h("small", { class: "help" }, field.description) : null),
      field.error ? h("small", { class: "field-error", role: "alert" }, field.error) : null,
      field.items.enum.map((value, i) =>
        h("label", { class: "field check", title: String(value) }, h("span", {}, this.choiceLabel(value, String(value))), boxes[i]),
      ),
      // What `raw()` reads: the chosen values, in the choices' order.
      field.children.map((c) => h("input", { type: "hidden", value: String(c.value), dataset: { path: c.path } })),
    );
  }

  drawList(field) {
    if (isChoiceList(field)) return this.drawChoices(field);
    const itemLabel = (child, i) => {
      const name = child.children?.find((c) => c.name === "name" || c.name === "id");
      const named = name && name.value ? `: ${name.value}` : "";
      return `${singular(field.label)} ${i + 1}${named}`;
    };
    const full = field.maxItems !== undefined && field.children.length >= field.maxItems;
    return h(
      "fieldset",
      { class: `list-field${field.error ? " invalid" : ""}`, dataset: { list: field.path } },
      h("legend", {}, field.label),
      field.error ? h("small", { class: "field-error", role: "alert" }, field.error) : null,
      h(
        "ol",
        { class: "list-items" },
        field.children.map((child, i) =>
          h(
            "li",
            { class: `list-item${child.widget === "group" ? " object" : ""}`, dataset: { item: child.path } },
            child.widget === "group"
              ? h(
                  "div",
                  { class: "item-head" },
                  h("span", {}, itemLabel(child, i)),
                  this.removeButton(field, i),
                )
              : null,
            child.widget === "group" ? child.children.map((c) => this.draw(c)) : h("div", { class: "item-row" }, this.draw({ ...child, label: `${i + 1}` }), this.removeButton(field, i)),
          ),
        ),
      ),
      h(
        "button",
        {
          type: "button",
          class: "small add-item",
          disabled: full,
          dataset: { add: field.path },
          onclick: () => this.edit(() => addItem(fieldAt(this.model, field.path))),
        },
        `Add ${singular(field.label).toLowerCase()}`,
      ),
    );
  }

  removeButton(field, index) {
    return h(
      "button",
      {
        type: "button",
        class: "small remove-item",
        "aria-label": `remove ${singular(field.label).toLowerCase()} ${index + 1}`,
        dataset: { remove: `${field.path}.${index}` },
        onclick: () => this.edit(() => removeItem(fieldAt(this.model, field.path), index)),
      },
      "×",
    );
  }
}

/** A set of choices (Charms known): strings from a closed list, each at most once, none blank. */
function isChoiceList(field) {
  const items = field.items;
  if (!Array.isArray(items?.enum) || items.nullable || !items.enum.every((v) => typeof v === "string")) return false;
  const values = field.children.map((c) => String(c.value));
  return new Set(values).size === values.length;
}

function* walkFields(fields) {
  for (const f of fields) {
    yield f;
    if (f.children) yield* walkFields(f.children);
  }
}

/** "Weapons" → "Weapon" (for "Add weapon"); leaves other words alone. */
function singular(label) {
  const text = String(label);
  if (/ies$/i.test(text)) return text.replace(/ies$/i, "y");
  if (/ss$/i.test(text)) return text;
  return text.replace(/s$/i, "");
}

/** Old packs describe parameters as `{name: "description"}`; new ones as JSON Schema. */
export function paramsSchema(params) {
  if (!params || typeof params !== "object") return null;
  if (params.type === "object" && params.properties) return Object.keys(params.properties).length ? params : null;
  const entries = Object.entries(params);
  if (!entries.length) return null;
  return {
    type: "object",
    properties: Object.fromEntries(entries.map(([name, text]) => [name, { type: "string", title: String(name).replace(/_/g, " "), description: String(text) }])),
  };
}
