// common/schema-form.js: JSON Schema (as rulesets.list gives it) → fields → the object sent back.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  FormErrors,
  addItem,
  addKey,
  removeKey,
  applyErrors,
  collect,
  errorsAt,
  fieldAt,
  fieldModel,
  removeItem,
  parseScalars,
  scalarsText,
  setItems,
  walk,
} from "../../vtt_bridge/server/static/common/schema-form.js";

// A cut of the warmachine_mk3 and highest_die token schemas, as describe_schema writes them.
const TOKEN = {
  type: "object",
  properties: {
    kind: { type: "string", enum: ["warrior", "warjack", "solo"] },
    DEF: { type: "integer" },
    ARM: { type: "integer", minimum: 0, maximum: 30 },
    FOCUS: { type: "integer", minimum: 0, default: null, nullable: true },
    base: { type: "integer", enum: [30, 40, 50], default: 30 },
    stealth: { type: "boolean", default: false },
    side: { type: "string", maxLength: 100, default: "" },
    position: {
      type: "object",
      properties: { x: { type: "number" }, y: { type: "number" } },
      required: ["x", "y"],
      additionalProperties: false,
      default: null,
      nullable: true,
    },
    body: { type: "array", items: { type: "integer", enum: [4, 6, 8, 10, 12] }, maxItems: 3 },
    weapons: {
      type: "array",
      items: {
        type: "object",
        properties: {
          name: { type: "string", minLength: 1 },
          POW: { type: "integer", minimum: 0, default: 0 },
          kind: { type: "string", enum: ["melee", "ranged"], default: "melee" },
        },
        required: ["name"],
      },
      default: [],
    },
    soak: { type: "object", additionalProperties: { type: "integer", minimum: 0 }, default: {} },
    marked: { default: null, nullable: true },
  },
  required: ["kind", "DEF", "ARM"],
  additionalProperties: false,
};

test("every property becomes a field with the widget its type needs", () => {
  const model = fieldModel(TOKEN);
  const widgets = Object.fromEntries(model.map((f) => [f.path, f.widget]));
  assert.deepEqual(widgets, {
    kind: "select",
    DEF: "number",
    ARM: "number",
    FOCUS: "number",
    base: "select",
    stealth: "checkbox",
    side: "text",
    position: "group",
    body: "list",
    weapons: "list",
    soak: "group",
    marked: "text",
  });
  const arm = fieldAt(model, "ARM");
  assert.equal(arm.min, 0);
  assert.equal(arm.max, 30);
  assert.equal(arm.step, 1);
  assert.equal(arm.required, true);
  assert.equal(arm.label, "ARM");
  assert.deepEqual(
    fieldAt(model, "base").choices.map((c) => c.value),
    [30, 40, 50],
  );
  // A free map is a group whose keys the user picks; an untyped field is JSON text, not lost.
  assert.equal(fieldAt(model, "soak").map, true);
  assert.equal(fieldAt(model, "marked").type, "json");
});

test("defaults fill a new token's fields; given values win", () => {
  const fresh = fieldModel(TOKEN);
  assert.equal(fieldAt(fresh, "base").value, 30);
  assert.equal(fieldAt(fresh, "stealth").value, false);
  assert.deepEqual(fieldAt(fresh, "weapons").value, []);
  assert.equal(fieldAt(fresh, "DEF").value, undefined);

  const model = fieldModel(TOKEN, { kind: "warjack", DEF: 12, ARM: 18, weapons: [{ name: "Fist", POW: 12 }] });
  assert.equal(fieldAt(model, "DEF").value, 12);
  assert.equal(fieldAt(model, "weapons.0.name").value, "Fist");
  assert.equal(fieldAt(model, "weapons.0.POW").value, 12);
  // A field the token lacks starts at its default.
  assert.equal(fieldAt(model, "weapons.0.kind").value, "melee");
});

test("collect coerces the raw widget values, fills defaults and leaves unset optionals null", () => {
  const model = fieldModel(TOKEN);
  const got = collect(model, { kind: "warjack", DEF: "12", ARM: "18", base: "40", stealth: true, FOCUS: "" });
  assert.deepEqual(got, {
    kind: "warjack",
    DEF: 12,
    ARM: 18,
    FOCUS: null,
    base: 40,
    stealth: true,
    side: "",
    position: null,
    body: [],
    weapons: [],
    soak: {},
    marked: null,
  });
});

test("a map gets keys added and removed, its values typed", () => {
  const model = fieldModel(TOKEN, { kind: "solo", DEF: 1, ARM: 1, soak: { L: 2 } });
  const soak = fieldAt(model, "soak");
  assert.deepEqual(soak.children.map((c) => [c.path, c.widget, c.value]), [["soak.L", "number", 2]]);
  addKey(soak, "B");
  assert.throws(() => addKey(soak, "B"), /already there/);
  assert.throws(() => addKey(soak, "a.b"), /without dots/);
  assert.deepEqual(collect(model, { "soak.B": "3" }).soak, { L: 2, B: 3 });
  assert.throws(() => collect(model, { "soak.B": "-1" }), (err) => err.errors["soak.B"] === "Must be at least 0.");
  removeKey(soak, "L");
  assert.deepEqual(collect(model, { "soak.B": "3" }).soak, { B: 3 });
});

test("lists grow and shrink, new items start at their defaults", () => {
  const model = fieldModel(TOKEN, { kind: "solo", DEF: 13, ARM: 13 });
  const weapons = fieldAt(model, "weapons");
  addItem(weapons);
  addItem(weapons);
  assert.deepEqual(
    [...walk(weapons.children)].map((f) => f.path),
    ["weapons.0", "weapons.0.name", "weapons.0.POW", "weapons.0.kind", "weapons.1", "weapons.1.name", "weapons.1.POW", "weapons.1.kind"],
  );
  fieldAt(model, "weapons.1.name").value = "Spear";
  removeItem(weapons, 0);
  assert.equal(weapons.children.length, 1);
  assert.equal(fieldAt(model, "weapons.0.name").value, "Spear");
  const got = collect(model, { "weapons.0.POW": "11", "weapons.0.kind": "ranged" });
  assert.deepEqual(got.weapons, [{ name: "Spear", POW: 11, kind: "ranged" }]);

  const body = fieldAt(model, "body");
  addItem(body);
  addItem(body);
  assert.deepEqual(collect(model, { "body.0": "8", "body.1": "6" }).body, [8, 6]);
});

test("an optional group is null until one of its fields is filled", () => {
  const model = fieldModel(TOKEN);
  assert.equal(collect(model, { kind: "solo", DEF: "1", ARM: "1" }).position, null);
  assert.deepEqual(collect(model, { kind: "solo", DEF: "1", ARM: "1", "position.x": "2", "position.y": "3.5" }).position, { x: 2, y: 3.5 });
});

test("bad input names the field it belongs to", () => {
  const model = fieldModel(TOKEN);
  addItem(fieldAt(model, "weapons"));
  assert.throws(
    () => collect(model, { kind: "warjack", DEF: "twelve", ARM: "31", marked: "{oops" }),
    (err) => {
      assert.ok(err instanceof FormErrors);
      assert.deepEqual(err.errors, {
        DEF: "Not a valid number.",
        ARM: "Must be at most 30.",
        "weapons.0.name": "Missing data for required field.",
        marked: "Not valid JSON.",
      });
      return true;
    },
  );
  assert.throws(() => collect(fieldModel(TOKEN), { kind: "", DEF: "1.5", ARM: "2" }), (err) => {
    assert.deepEqual(err.errors, { kind: "Missing data for required field.", DEF: "Not a valid integer." });
    return true;
  });
});

test("typed parameters (a decision's or a Charm's) give a bounded integer field", () => {
  const params = {
    type: "object",
    properties: { stunt: { type: "integer", minimum: 0, maximum: 3, default: 0, title: "Stunt dice" } },
    required: [],
    additionalProperties: false,
  };
  const [stunt] = fieldModel(params);
  assert.equal(stunt.widget, "number");
  assert.equal(stunt.label, "Stunt dice");
  assert.deepEqual([stunt.min, stunt.max, stunt.value], [0, 3, 0]);
  assert.deepEqual(collect([stunt], { stunt: "2" }), { stunt: 2 });
  assert.deepEqual(collect([stunt], { stunt: "" }), { stunt: 0 });
  assert.throws(() => collect([stunt], { stunt: "4" }), /at most 3/);
});

test("errorsAt maps an invalid_request details tree onto field paths", () => {
  const details = {
    token: { weapons: { 0: { POW: ["Must be greater than or equal to 0."] } }, ARM: ["Not a valid integer.", "Too big."] },
    name: ["Missing data for required field."],
  };
  assert.deepEqual(errorsAt(details), {
    "token.weapons.0.POW": "Must be greater than or equal to 0.",
    "token.ARM": "Not a valid integer. Too big.",
    name: "Missing data for required field.",
  });
  assert.deepEqual(errorsAt(details, "token"), { "weapons.0.POW": "Must be greater than or equal to 0.", ARM: "Not a valid integer. Too big." });
  // Contract 2's shape for a declaration's unknown Charm.
  assert.deepEqual(errorsAt({ declaration: { charms: { 0: { id: ["Unknown Charm 'x'; known: a, b"] } } } }, "declaration"), {
    "charms.0.id": "Unknown Charm 'x'; known: a, b",
  });
});

test("applyErrors puts messages on fields and returns those no field has", () => {
  const model = fieldModel(TOKEN);
  addItem(fieldAt(model, "weapons"));
  const left = applyErrors(model, { "weapons.0.POW": "Too low.", hp: "Unknown field." });
  assert.equal(fieldAt(model, "weapons.0.POW").error, "Too low.");
  assert.deepEqual(left, { hp: "Unknown field." });
  applyErrors(model, {});
  assert.equal(fieldAt(model, "weapons.0.POW").error, undefined);
});

// An Exalted health track: penalties are plain values of no one type (0, -1, "I"), as
// describe_schema writes a custom field: `items: {}`.
const TRACK = {
  type: "object",
  properties: {
    health: {
      type: "object",
      properties: {
        penalties: { type: "array", items: {}, minItems: 1, title: "Wound penalties", description: "0 to -10, I, D" },
        damage: { type: "array", items: { type: "string", enum: ["B", "L", "A"], nullable: true } },
      },
    },
    charms: { type: "array", items: { type: "string", enum: ["first-excellency", "second-excellency"] } },
  },
};

test("a list of plain untyped values is one line of words, numbers read as numbers", () => {
  const model = fieldModel(TRACK, { health: { penalties: [0, -1, -1, -2, "I"], damage: [null, null, null, null, null] } });
  const penalties = fieldAt(model, "health.penalties");
  assert.equal(penalties.widget, "text");
  assert.equal(penalties.type, "scalars");
  assert.equal(penalties.label, "Wound penalties");
  assert.equal(scalarsText(penalties.value), "0 -1 -1 -2 I");
  // typed with spaces or commas, a typographic minus too; JSON still works
  assert.deepEqual(parseScalars("0, −1 -2  I D"), [0, -1, -2, "I", "D"]);
  assert.deepEqual(parseScalars("[0, -1]"), [0, -1]);
  const value = collect(model, { "health.penalties": "0 -1 -4 I" });
  assert.deepEqual(value.health.penalties, [0, -1, -4, "I"]);
  // a list of choices stays a list of fields (the damage marks repeat; Charms known do not)
  assert.equal(fieldAt(model, "health.damage").widget, "list");
});

test("setItems makes a list of choices hold exactly the values chosen", () => {
  const model = fieldModel(TRACK, { charms: ["second-excellency"] });
  const charms = fieldAt(model, "charms");
  setItems(charms, ["first-excellency", "second-excellency"]);
  assert.deepEqual(collect(model, {}).charms, ["first-excellency", "second-excellency"]);
  setItems(charms, []);
  assert.deepEqual(collect(model, {}).charms, []);
});
