// The module's Quench suite (src/quench/suite.js), run in the simulated world: Quench's
// `quenchReady(quench)` hook with `quench.registerBatch(key, fn, {displayName})`, each batch
// called with Mocha's describe/it/after and Chai's assert (Quench README; the batch
// context of https://github.com/Ethaks/FVTT-Quench). What needs a canvas scene skips here.
import nodeAssert from "node:assert/strict";

const SKIP = Symbol("skip");

/** The part of Chai's `assert` the suite uses, on Node's assert. */
const chaiAssert = {
  equal: (a, b, m) => nodeAssert.equal(a, b, m),
  deepEqual: (a, b, m) => nodeAssert.deepEqual(a, b, m),
  ok: (a, m) => nodeAssert.ok(a, m),
  match: (a, re, m) => nodeAssert.match(a, re, m),
  isAtMost: (a, b, m) => nodeAssert.ok(a <= b, m ?? `${a} <= ${b}`),
};

export const scenarios = [
  {
    name: "the shipped Quench suite registers its batches and passes (what needs a canvas scene skips)",
    async run({ world, assert }) {
      const batches = [];
      world.hooks.callAll("quenchReady", { registerBatch: (key, fn, options) => batches.push({ key, fn, options }) });
      assert.deepEqual(batches.map((b) => b.key), ["vtt-bridge.sheet", "vtt-bridge.documents", "vtt-bridge.ui", "vtt-bridge.bridge", "vtt-bridge.features"]);
      const results = [];
      for (const batch of batches) {
        const tests = [];
        const afters = [];
        batch.fn({ describe: (_name, body) => body(), it: (name, fn) => tests.push({ name, fn }), after: (fn) => afters.push(fn), assert: chaiAssert });
        for (const t of tests) {
          try {
            await t.fn.call({ skip: () => { throw SKIP; } });
            results.push(`${batch.key}: ${t.name}: passed`);
          } catch (err) {
            if (err !== SKIP) throw new Error(`${batch.key}: ${t.name}: ${err?.stack ?? err}`);
            results.push(`${batch.key}: ${t.name}: skipped`);
          }
        }
        for (const fn of afters) await fn();
      }
      const skipped = results.filter((r) => r.endsWith("skipped"));
      // The features batch needs the system's item types (not simulated) and a viewed scene.
      assert.deepEqual(skipped, [
        "vtt-bridge.documents: an unlinked token's actor is its token, not its base actor: skipped",
        "vtt-bridge.features: a weapon item's row on the system's sheet gets the attack control: skipped",
        "vtt-bridge.features: the character's Charm items fill the Excellencies pack's list at the bridge: skipped",
        "vtt-bridge.features: the combat tracker's next turn resets the acting Exalt's DV penalty at the bridge: skipped",
      ], results.join("\n"));
    },
  },
];
