// web/tracks.js: heal one step and reset, per shape of token state (no DOM needed for the patches).
import { test } from "node:test";
import assert from "node:assert/strict";

import { trackPatch } from "../../vtt_bridge/server/static/web/tracks.js";

test("Exalted health levels: heal clears the last marked level, reset clears them all", () => {
  const system = { health: { penalties: [0, -1, -1, -2, "I"], damage: ["L", "B", null, null, null] }, conditions: [] };
  assert.deepEqual(trackPatch(system, "heal"), { health: { damage: ["L", null, null, null, null] } });
  assert.deepEqual(trackPatch(system, "reset"), { health: { damage: [null, null, null, null, null] } });
  assert.equal(trackPatch({ health: { penalties: [0], damage: [null] } }, "heal"), null);
});

test("GODSGLOOM health points: heal adds one up to max, reset fills it", () => {
  assert.deepEqual(trackPatch({ health: { current: 1, max: 3 } }, "heal"), { health: { current: 2 } });
  assert.deepEqual(trackPatch({ health: { current: 1, max: 3 } }, "reset"), { health: { current: 3 } });
  assert.equal(trackPatch({ health: { current: 3, max: 3 } }, "heal"), null);
});

test("Warmachine boxes, grids and spirals, conditions and flags", () => {
  assert.deepEqual(trackPatch({ boxes: 5, marked: 2 }, "heal"), { marked: 1 });
  assert.deepEqual(trackPatch({ boxes: 5, marked: 2, destroyed: true, disabled: true }, "reset"), { marked: 0, destroyed: false, disabled: false });
  const grid = { grid: ["-", "-", "-", "-", "-", "-"], marked: [0, 2, 0, 1, 0, 0], crippled: ["cortex"] };
  assert.deepEqual(trackPatch(grid, "heal"), { marked: [0, 2, 0, 0, 0, 0] });
  assert.deepEqual(trackPatch(grid, "reset"), { marked: [0, 0, 0, 0, 0, 0], crippled: [] });
  const spiral = { spiral: [2, 2, 2, 2, 2, 2], marked: [1, 0, 0, 0, 0, 0] };
  assert.deepEqual(trackPatch(spiral, "heal"), { marked: [0, 0, 0, 0, 0, 0] });
  assert.deepEqual(trackPatch({ conditions: ["hurt", "afraid"] }, "reset"), { conditions: [] });
  assert.equal(trackPatch({ conditions: ["hurt"] }, "heal"), null);
  assert.equal(trackPatch({ hp: 3 }, "reset"), null);
});
