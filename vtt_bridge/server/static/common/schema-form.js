/**
 * A form from a JSON Schema, without a DOM: the web table and the Foundry module
 * both build their token sheets, Charm parameters and decision parameters from it.
 *
 * `rulesets.list` describes token schemas, declaration schemas, pack flags and typed
 * parameters as JSON Schema objects (the subset a form needs: type, properties,
 * required, default, minimum/maximum, enum, items, nullable, title, description).
 * `fieldModel(schema, value)` turns one into a list of fields, each saying which
 * widget shows it; a client draws the widgets, reads them back as raw values by
 * path, and `collect(model, raw)` turns those into the object to send (numbers
 * coerced, defaults filled, blanks left out). When the server refuses a write with
 * `invalid_request`, `errorsAt(details)` says which field each message belongs to.
 *
 * Paths are dotted, list items by index: `weapons.0.name`, as marshmallow's error
 * details nest them.
 *
 * A list of untyped plain values (a health track's penalties: `0 -1 -1 -2 I D`) is one
 * text field of `type: "scalars"`: words separated by spaces or commas, numbers read as
 * numbers. A list of choices (the Charms a token knows) is a list field whose `items`
 * have an `enum`: a client may draw it as one checkbox per choice (`setItems`).
 */

/** A whole number, a number, or one of a closed list of values. */
export const WIDGETS = Object.freeze(["number", "checkbox", "text", "select", "list", "group"]);

/** `martial_arts` → `Martial arts`; `MAT` stays `MAT`. */
export function humanize(name) {
  const text = String(name).replace(/[_-]+/g, " ").trim();
  if (text === text.toUpperCase()) return text;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const clone = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") ?? "any";
  if (schema.type) return schema.type;
  if (schema.enum) return "enum";
  if (schema.properties) return "object";
  return "any";
}

/** The value a fresh field of this schema starts with (its default, else empty). */
export function initialValue(schema) {
  if (schema && "default" in schema) return clone(schema.default);
  const type = typeOf(schema);
  if (type === "object" && schema.properties) {
    const out = {};
    for (const [name, sub] of Object.entries(schema.properties)) {
      const value = initialValue(sub);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }
  if (type === "array") return [];
  if (type === "boolean") return false;
  return undefined;
}

/** Is this an object with named properties (a group of fields), rather than a free map? */
const isGroup = (schema) => typeOf(schema) === "object" && schema.properties && Object.keys(schema.properties).length > 0;

/** A free map whose values are plain (soak by damage type, a grid's systems by letter)? */
const isMap = (schema) =>
  typeOf(schema) === "object" &&
  !isGroup(schema) &&
  schema.additionalProperties &&
  typeof schema.additionalProperties === "object" &&
  isScalar(schema.additionalProperties);

const isScalar = (schema) => !!schema?.enum || ["integer", "number", "boolean", "string"].includes(typeOf(schema));

/** Can a field of this schema be edited with the widgets (else it is JSON text)? */
function editable(schema) {
  const type = typeOf(schema);
  if (isScalar(schema)) return true;
  if (isGroup(schema) || isMap(schema)) return true;
  if (type === "array" && schema.items && !schema.prefixItems) return editable(schema.items);
  return false;
}

/**
 * One field of the model.
 * @param {string} path  dotted path from the root (`attributes.dexterity`)
 * @param {string} name  the key in its parent (`dexterity`, or `0` in a list)
 * @param {object} schema
 * @param {*} value  the current value (undefined: not set)
 * @param {boolean} required
 */
export function fieldFor(path, name, schema, value, required = false) {
  schema = schema || {};
  const type = typeOf(schema);
  const nullable = schema.nullable === true || (Array.isArray(schema.type) && schema.type.includes("null"));
  const has = value !== undefined;
  const field = {
    path,
    name: String(name),
    label: schema.title || humanize(name),
    description: schema.description || "",
    type: type === "enum" ? "string" : type,
    widget: "text",
    value: has ? value : initialValue(schema),
    default: "default" in schema ? clone(schema.default) : undefined,
    min: schema.minimum ?? schema.exclusiveMinimum,
    max: schema.maximum ?? schema.exclusiveMaximum,
    step: undefined,
    choices: undefined,
    required: !!required,
    nullable,
    children: undefined,
    error: undefined,
    schema,
  };
  if (schema.enum) {
    field.widget = "select";
    field.choices = schema.enum.map((v) => ({ value: v, label: v === null ? "—" : String(v) }));
    if (nullable && !schema.enum.includes(null)) field.choices.unshift({ value: null, label: "—" });
  } else if (type === "integer" || type === "number") {
    field.widget = "number";
    field.step = type === "integer" ? 1 : "any";
  } else if (type === "boolean") {
    field.widget = "checkbox";
  } else if (type === "string") {
    field.widget = "text";
    if (schema.maxLength !== undefined) field.maxLength = schema.maxLength;
  } else if (isGroup(schema)) {
    field.widget = "group";
    const current = field.value && typeof field.value === "object" ? field.value : null;
    const req = new Set(schema.required || []);
    field.children = Object.entries(schema.properties).map(([key, sub]) =>
      // An optional group that is not set (null) shows its fields empty, not with defaults.
      fieldFor(join(path, key), key, sub, current ? current[key] : null, req.has(key)),
    );
  } else if (isMap(schema)) {
    // A group whose keys the user chooses: `map: true`, `entries` the schema of a value.
    field.widget = "group";
    field.map = true;
    field.entries = schema.additionalProperties;
    const current = field.value && typeof field.value === "object" ? field.value : {};
    field.children = Object.entries(current).map(([key, v]) => fieldFor(join(path, key), key, schema.additionalProperties, v, true));
  } else if (type === "array" && isScalarList(schema, field.value)) {
    // Untyped plain values (wound penalties: 0, -1, "I"): one line of words.
    field.widget = "text";
    field.type = "scalars";
    field.minItems = schema.minItems;
    field.maxItems = schema.maxItems;
  } else if (type === "array" && schema.items && !schema.prefixItems && editable(schema.items)) {
    field.widget = "list";
    field.items = schema.items;
    field.minItems = schema.minItems;
    field.maxItems = schema.maxItems;
    const list = Array.isArray(field.value) ? field.value : [];
    field.children = list.map((item, i) => fieldFor(join(path, i), i, schema.items, item, true));
  } else {
    // A free map (soak by damage type), a list of mixed values, an untyped field: JSON text.
    field.widget = "text";
    field.type = "json";
  }
  return field;
}

const join = (path, key) => (path === "" ? String(key) : `${path}.${key}`);

const isPlain = (v) => v === null || ["number", "string", "boolean"].includes(typeof v);

/** A list whose items say no type, holding plain values only (or nothing yet)? */
function isScalarList(schema, value) {
  if (schema.prefixItems || !schema.items || typeof schema.items !== "object") return false;
  if (typeOf(schema.items) !== "any" || schema.items.enum) return false;
  return value === undefined || value === null || (Array.isArray(value) && value.every(isPlain));
}

/** `"0 -1 -1 I"` → `[0, -1, -1, "I"]` (a JSON list is read as JSON). */
export function parseScalars(text) {
  const raw = String(text).trim();
  if (raw.startsWith("[")) return JSON.parse(raw);
  return raw
    .split(/[\s,;]+/)
    .filter(Boolean)
    .map((word) => {
      const n = word.replace(/^[−–]/, "-");
      return /^[-+]?\d+(\.\d+)?$/.test(n) ? Number(n) : word;
    });
}

/** How a list of plain values is shown in its text field. */
export const scalarsText = (value) => (Array.isArray(value) ? value.map((v) => String(v)).join(" ") : value == null ? "" : String(value));

/**
 * The field model of an object schema: one field per property, with the given
 * values (else the defaults) filled in.
 * @param {object} schema  a JSON Schema object (`{type: "object", properties, required}`)
 * @param {object} [value]  current values (a token's `system`, say)
 * @param {string} [prefix]  path prefix for every field
 * @returns {object[]} fields
 */
export function fieldModel(schema, value = undefined, prefix = "") {
  if (!schema || typeof schema !== "object") return [];
  const required = new Set(schema.required || []);
  const current = value && typeof value === "object" ? value : {};
  return Object.entries(schema.properties || {}).map(([key, sub]) =>
    fieldFor(join(prefix, key), key, sub, key in current ? current[key] : undefined, required.has(key)),
  );
}

/** Every field of a model, depth first (groups and lists before their children). */
export function* walk(model) {
  for (const field of model) {
    yield field;
    if (field.children) yield* walk(field.children);
  }
}

/** The field at a path, or undefined. */
export function fieldAt(model, path) {
  for (const field of walk(model)) if (field.path === path) return field;
  return undefined;
}

/** A list field with one more item (defaults filled) at the end. */
export function addItem(field) {
  if (field.widget !== "list") throw new TypeError(`${field.path} is not a list`);
  const i = field.children.length;
  const item = fieldFor(join(field.path, i), i, field.items, initialValue(field.items), true);
  field.children.push(item);
  return item;
}

/** A list field holding exactly `values`, in that order (a list of choices drawn as checkboxes). */
export function setItems(field, values) {
  if (field.widget !== "list") throw new TypeError(`${field.path} is not a list`);
  field.children = values.map((item, i) => fieldFor(join(field.path, i), i, field.items, item, true));
  return field;
}

/** A map field (`field.map`) with one more key (its value at the entries' default). */
export function addKey(field, key) {
  if (!field.map) throw new TypeError(`${field.path} is not a map`);
  const name = String(key).trim();
  if (!name || name.includes(".")) throw new RangeError("a key is a name without dots");
  if (field.children.some((c) => c.name === name)) throw new RangeError(`${name} is already there`);
  const entry = fieldFor(join(field.path, name), name, field.entries, initialValue(field.entries), true);
  field.children.push(entry);
  return entry;
}

/** A map field without `key`. */
export function removeKey(field, key) {
  if (!field.map) throw new TypeError(`${field.path} is not a map`);
  field.children = field.children.filter((c) => c.name !== String(key));
  return field;
}

/**
 * Keep what a form shows in its model: each field's `value` becomes its raw widget
 * value (as `collect` takes them), so the model can be redrawn (a list item added or
 * removed) without losing what was typed. Nothing is checked here.
 */
export function setValues(model, raw) {
  for (const field of walk(model)) if (!field.children && field.path in raw) field.value = raw[field.path];
  return model;
}

/** The value a field holds now, groups and lists put together from their children. */
export function currentValue(field) {
  if (field.widget === "group") {
    const out = {};
    for (const child of field.children) {
      const value = currentValue(child);
      if (value !== undefined) out[child.name] = value;
    }
    return out;
  }
  if (field.widget === "list") return field.children.map(currentValue);
  return field.value;
}

/** A list field without its item at `index` (later items renumbered, values kept). */
export function removeItem(field, index) {
  if (field.widget !== "list") throw new TypeError(`${field.path} is not a list`);
  const values = field.children.map(currentValue);
  values.splice(index, 1);
  field.children = values.map((item, i) => fieldFor(join(field.path, i), i, field.items, item, true));
  return field;
}

/** Raised by `collect` when a value cannot be read: `errors` maps paths to messages. */
export class FormErrors extends Error {
  constructor(errors) {
    const first = Object.entries(errors)[0];
    super(first ? `${first[0]}: ${first[1]}` : "invalid form");
    this.name = "FormErrors";
    this.errors = errors;
  }
}

const BLANK = Symbol("blank");

function isBlank(raw) {
  return raw === undefined || raw === null || (typeof raw === "string" && raw.trim() === "");
}

function readScalar(field, raw, errors) {
  if (field.widget === "checkbox") {
    if (typeof raw === "boolean") return raw;
    if (raw === undefined) return typeof field.value === "boolean" ? field.value : BLANK;
    return ["true", "on", "1", "yes"].includes(String(raw).toLowerCase());
  }
  if (raw === undefined) raw = field.value;
  if (field.widget === "select") {
    if (raw === null && field.choices.some((c) => c.value === null)) return null;
    if (isBlank(raw)) return BLANK;
    const choice = field.choices.find((c) => c.value === raw || String(c.value) === String(raw));
    if (!choice) {
      errors[field.path] = `Must be one of: ${field.choices.filter((c) => c.value !== null).map((c) => c.label).join(", ")}.`;
      return BLANK;
    }
    return choice.value;
  }
  if (isBlank(raw)) return BLANK;
  if (field.widget === "number") {
    const n = typeof raw === "number" ? raw : Number(String(raw).trim());
    if (!Number.isFinite(n)) {
      errors[field.path] = "Not a valid number.";
      return BLANK;
    }
    if (field.type === "integer" && !Number.isInteger(n)) {
      errors[field.path] = "Not a valid integer.";
      return BLANK;
    }
    if (field.min !== undefined && n < field.min) {
      errors[field.path] = `Must be at least ${field.min}.`;
      return BLANK;
    }
    if (field.max !== undefined && n > field.max) {
      errors[field.path] = `Must be at most ${field.max}.`;
      return BLANK;
    }
    return n;
  }
  if (field.type === "scalars") {
    if (typeof raw !== "string") return clone(raw);
    let items;
    try {
      items = parseScalars(raw);
    } catch {
      errors[field.path] = "Not a list: write the values separated by spaces.";
      return BLANK;
    }
    if (!Array.isArray(items)) {
      errors[field.path] = "Not a list: write the values separated by spaces.";
      return BLANK;
    }
    return items;
  }
  if (field.type === "json") {
    if (typeof raw !== "string") return clone(raw);
    try {
      return JSON.parse(raw);
    } catch {
      errors[field.path] = "Not valid JSON.";
      return BLANK;
    }
  }
  return String(raw);
}

/** Has anything under this field a value (given in `raw`, else in the model)? */
function anyGiven(field, raw) {
  if (field.children) return field.children.some((child) => anyGiven(child, raw)) || ((field.widget === "list" || field.map) && field.children.length > 0);
  const value = field.path in raw ? raw[field.path] : field.value;
  if (field.widget === "checkbox") return value === true || value === "true" || value === "on";
  return !isBlank(value);
}

function readField(field, raw, errors) {
  let value;
  if (field.widget === "group") {
    if (field.nullable && !anyGiven(field, raw)) {
      // An optional group left empty stays unset.
      value = null;
    } else {
      value = {};
      for (const child of field.children) {
        const v = readField(child, raw, errors);
        if (v !== BLANK) value[child.name] = v;
      }
    }
  } else if (field.widget === "list") {
    value = [];
    for (const child of field.children) {
      const v = readField(child, raw, errors);
      if (v === BLANK) {
        if (!(child.path in errors)) errors[child.path] = "Missing data for required field.";
      } else value.push(v);
    }
    if (!value.length && field.nullable && field.value === null) value = null;
    else {
      if (field.minItems !== undefined && value.length < field.minItems) errors[field.path] = `At least ${field.minItems} item(s).`;
      if (field.maxItems !== undefined && value.length > field.maxItems) errors[field.path] = `At most ${field.maxItems} item(s).`;
    }
  } else {
    value = readScalar(field, raw[field.path], errors);
  }
  if (value === BLANK) {
    if (field.nullable) return null;
    if (field.default !== undefined) return clone(field.default);
    if (field.required && !(field.path in errors)) errors[field.path] = "Missing data for required field.";
    return BLANK;
  }
  return value;
}

/**
 * Read a form back: the object to send.
 * @param {object[]} model  from `fieldModel` (lists as long as the form shows them)
 * @param {Object<string, *>} [raw]  the widgets' values by path: strings from text and
 *   number inputs and selects (`String(choice.value)`, `""` for none), booleans from
 *   checkboxes. A path left out keeps the field's model value.
 * @returns {object} numbers coerced, blanks left out, defaults of blank fields filled
 * @throws {FormErrors} naming each field that cannot be read (not a number, out of
 *   range, a required field left blank)
 */
export function collect(model, raw = {}) {
  const errors = {};
  const out = {};
  for (const field of model) {
    const value = readField(field, raw, errors);
    if (value !== BLANK) out[field.name] = value;
  }
  if (Object.keys(errors).length) throw new FormErrors(errors);
  return out;
}

/**
 * Map an `invalid_request` error's `details` onto field paths.
 * @param {object|Array|string} details  marshmallow-style: `{weapons: {"0": {name: ["…"]}}}`
 * @param {string} [under]  only messages under this dotted prefix, with it taken off
 *   (`"token"` for `token.create`'s `{token: {…}}`)
 * @returns {Object<string, string>} path → message (several joined with a space)
 */
export function errorsAt(details, under = "") {
  const out = {};
  const visit = (node, path) => {
    if (node === null || node === undefined) return;
    if (typeof node === "string") {
      out[path] = out[path] ? `${out[path]} ${node}` : node;
    } else if (Array.isArray(node)) {
      if (node.every((m) => typeof m === "string")) {
        for (const m of node) visit(m, path);
      } else node.forEach((m, i) => visit(m, join(path, i)));
    } else if (typeof node === "object") {
      for (const [key, sub] of Object.entries(node)) visit(sub, join(path, key));
    } else out[path] = String(node);
  };
  visit(details, "");
  if (!under) return out;
  const prefix = `${under}.`;
  const inside = {};
  for (const [path, message] of Object.entries(out)) {
    if (path.startsWith(prefix)) inside[path.slice(prefix.length)] = message;
    else if (path === under) inside[""] = message;
  }
  return inside;
}

/**
 * Put messages on a model's fields (`field.error`); messages no field has are returned
 * (path → message) for the form to show at its top. Earlier errors are cleared.
 */
export function applyErrors(model, errors) {
  const left = { ...errors };
  for (const field of walk(model)) {
    field.error = errors[field.path];
    delete left[field.path];
  }
  return left;
}
