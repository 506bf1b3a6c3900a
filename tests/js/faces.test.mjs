// common/faces.js: the faces a player types for a physical-dice question, checked as the server checks them.
import { test } from "node:test";
import assert from "node:assert/strict";

import { diceSizes, readFaces } from "../../vtt_bridge/server/static/common/faces.js";

const attack = { label: "attack", number: 5, sides: 10 };

test("five faces of a d10, with spaces or commas, are read as numbers", () => {
  assert.deepEqual(readFaces("7 7 2 10 1", attack), { faces: [7, 7, 2, 10, 1], count: 5 });
  assert.deepEqual(readFaces(" 7, 7,2  10 ,1 ", attack), { faces: [7, 7, 2, 10, 1], count: 5 });
});

test("too few or too many faces say how many are entered", () => {
  assert.deepEqual(readFaces("7 7 2", attack), { error: "3 of 5 faces entered.", count: 3 });
  assert.deepEqual(readFaces("", attack), { error: "0 of 5 faces entered.", count: 0 });
  assert.equal(readFaces("1 1 1 1 1 1", attack).error, "6 of 5 faces entered.");
});

test("a face the die cannot show names the die and its range", () => {
  assert.equal(readFaces("7 7 11", attack).error, "Die 3 shows 11: a d10 shows 1–10.");
  assert.equal(readFaces("0 1 1 1 1", attack).error, "Die 1 shows 0: a d10 shows 1–10.");
  assert.equal(readFaces("7 seven", attack).error, "Die 2 shows seven: a d10 shows 1–10.");
  assert.equal(readFaces("2.5 1 1 1 1", attack).error, "Die 1 shows 2.5: a d10 shows 1–10.");
});

test("a mixed pool checks each die against its own size", () => {
  const pool = { label: "attack", number: 2, sides: [8, 6] };
  assert.deepEqual(diceSizes(pool), [8, 6]);
  assert.deepEqual(diceSizes(attack), [10, 10, 10, 10, 10]);
  assert.deepEqual(readFaces("8 6", pool), { faces: [8, 6], count: 2 });
  assert.equal(readFaces("8 7", pool).error, "Die 2 shows 7: a d6 shows 1–6.");
});
