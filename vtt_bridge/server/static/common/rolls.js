/**
 * Recorded rolls, without a DOM or Foundry: the web table draws a dice row from
 * them, the Foundry module rebuilds them with `Roll.fromData`.
 *
 * A roll in an attack record is already Foundry roll JSON (docs/protocol.md, "Rolls
 * as Foundry reads them"): `toRollData` checks it and returns a fresh copy Foundry
 * accepts; `describeRoll` lists its dice for a card; `doubleFaces` is the `dbl`
 * modifier the bridge writes for Exalted's 10s, which the Foundry module registers
 * with Foundry so that evaluating such a formula there counts as the rules do.
 */

import { rollColour } from "./card.js";

const TERM_CLASSES = new Set(["Die", "PoolTerm", "OperatorTerm", "NumericTerm"]);

/** Raised when a value is not a recorded roll. */
export class RollDataError extends Error {
  constructor(message, path) {
    super(`${path}: ${message}`);
    this.name = "RollDataError";
    this.path = path;
  }
}

function checkTerm(term, path) {
  if (!term || typeof term !== "object") throw new RollDataError("not a term", path);
  if (!TERM_CLASSES.has(term.class)) throw new RollDataError(`unknown term class ${JSON.stringify(term.class)}`, path);
  if (term.class === "Die") {
    if (!Number.isInteger(term.number) || term.number < 1) throw new RollDataError("a die term throws at least one die", path);
    if (!Number.isInteger(term.faces) || term.faces < 1) throw new RollDataError("faces is not a whole number", path);
    if (!Array.isArray(term.results)) throw new RollDataError("results is not a list", path);
    term.results.forEach((r, i) => {
      if (!Number.isInteger(r?.result) || typeof r.active !== "boolean") throw new RollDataError("not a die result", `${path}.results.${i}`);
    });
  } else if (term.class === "PoolTerm") {
    if (!Array.isArray(term.rolls) || !Array.isArray(term.results)) throw new RollDataError("a pool term has rolls and results", path);
    term.rolls.forEach((r, i) => checkRoll(r, `${path}.rolls.${i}`));
  }
}

function checkRoll(roll, path) {
  if (!roll || typeof roll !== "object" || roll.class !== "Roll") throw new RollDataError("not a Roll", path);
  if (!Array.isArray(roll.terms) || !roll.terms.length) throw new RollDataError("a roll has terms", path);
  if (typeof roll.formula !== "string") throw new RollDataError("formula is not a string", path);
  roll.terms.forEach((t, i) => checkTerm(t, `${path}.terms.${i}`));
}

/**
 * A recorded roll as the data `Roll.fromData` takes: checked, copied, with the
 * fields Foundry expects present (`dice`, `options`, the roll's `evaluated`).
 * @param {object} roll  one of a step's `rolls`
 * @returns {object}
 * @throws {RollDataError} naming the part that is not roll data
 */
export function toRollData(roll) {
  checkRoll(roll, "roll");
  const copy = JSON.parse(JSON.stringify(roll));
  const fill = (r) => {
    r.dice ??= [];
    r.options ??= {};
    r.evaluated = true;
    for (const term of r.terms) {
      term.options ??= {};
      if (term.class === "PoolTerm") term.rolls.forEach(fill);
    }
    return r;
  };
  return fill(copy);
}

/** What a term's results add up to in Foundry: active results, `count` where set. */
export function termTotal(term) {
  if (term.class === "NumericTerm") return term.number;
  if (term.class === "OperatorTerm") return 0;
  return (term.results || []).reduce((sum, r) => (r.active ? sum + (r.count ?? r.result) : sum), 0);
}

/** A roll's total read from its terms, as Foundry evaluates them. */
export function totalOf(roll) {
  let total = 0;
  let sign = 1;
  for (const term of roll.terms) {
    if (term.class === "OperatorTerm") sign = term.operator === "-" ? -1 : 1;
    else total += sign * termTotal(term);
  }
  return total;
}

/**
 * The dice of a roll for a card's dice row.
 * @param {object} roll  Foundry roll JSON from a record
 * @returns {{formula: string, label: string, total: number, superseded: boolean, physical: string|null,
 *   faces: Array<{value: number, sides: number, active: boolean, success: boolean|null,
 *   count: number|null, rerolled: boolean, discarded: boolean, colour: string|null}>}}
 */
export function describeRoll(roll) {
  const colour = rollColour(roll);
  const faces = [];
  const push = (term, kept) => {
    for (const r of term.results || []) {
      faces.push({
        value: r.result,
        sides: term.faces,
        active: kept === undefined ? r.active : r.active && kept,
        success: typeof r.success === "boolean" ? r.success : null,
        count: typeof r.count === "number" ? r.count : null,
        rerolled: r.rerolled === true,
        discarded: r.discarded === true || kept === false,
        colour,
      });
    }
  };
  for (const term of roll.terms || []) {
    if (term.class === "Die") push(term);
    else if (term.class === "PoolTerm") {
      term.rolls.forEach((inner, i) => {
        for (const t of inner.terms) if (t.class === "Die") push(t, term.results[i]?.active === true);
      });
    }
  }
  return {
    formula: roll.formula,
    label: roll.options?.flavor ?? "",
    total: roll.total,
    superseded: roll.options?.superseded === true,
    // Physical dice (Foundry's manual fulfilment): "entered" from real dice, "rolled" by the
    // bridge when no faces came in time; null for a roll nobody was asked for.
    physical: roll.options?.physical ?? null,
    faces,
  };
}

/**
 * The `dbl` modifier (`cs>=7dbl10`): every active success showing at least `face`
 * counts two. Changes the results in place, as a Foundry modifier does.
 * @param {Array<{result: number, active: boolean, success?: boolean, count?: number}>} results
 * @param {number} face
 */
export function doubleFaces(results, face) {
  for (const r of results) {
    if (r.active && r.result >= face && r.success !== false) {
      r.success = true;
      r.count = 2;
    }
  }
  return results;
}

/** Parse a `dbl` modifier (`"dbl10"` → 10; `"dbl"` → the die's largest face). */
export function parseDouble(modifier, faces) {
  const m = /^dbl(\d+)?$/i.exec(modifier);
  if (!m) return null;
  return m[1] === undefined ? faces : Number(m[1]);
}
