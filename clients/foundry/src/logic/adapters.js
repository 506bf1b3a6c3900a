/**
 * Adapters: how a game system's own actor data becomes a bridge token's `system`.
 *
 * An adapter is `{id, system, ruleset, label, toSystem(actor), toActorUpdate(system, actor)}`
 * for the Foundry system `system` (its `game.system.id`). Other modules register
 * theirs through `game.modules.get("vtt-bridge").api.registerAdapter(adapter)`.
 * Every other system takes the "no adapter" path: the rules data lives only in the
 * actor's `flags.vtt-bridge.system`, edited in the sheet tab.
 */

import { exalted2e } from "./adapters/exalted2e.js";

/** The "no adapter" path: the flags hold the rules data; nothing is written to the system. */
export const noAdapter = Object.freeze({
  id: "none",
  system: null,
  ruleset: null,
  label: "No adapter (rules data edited in the Bridge tab)",
  toSystem: () => null,
  toActorUpdate: () => ({}),
});

export class Adapters {
  constructor() {
    /** @type {Map<string, object>} */
    this.bySystem = new Map();
  }

  /** Add an adapter; a second one for the same system replaces the first. */
  register(adapter) {
    for (const key of ["id", "system", "ruleset"]) {
      if (typeof adapter?.[key] !== "string" || !adapter[key]) throw new TypeError(`an adapter needs a string ${key}`);
    }
    for (const fn of ["toSystem", "toActorUpdate"]) {
      if (typeof adapter[fn] !== "function") throw new TypeError(`an adapter needs ${fn}()`);
    }
    this.bySystem.set(adapter.system, adapter);
    return adapter;
  }

  /** The adapter for a Foundry system id, or `noAdapter`. */
  for(systemId) {
    return this.bySystem.get(systemId) ?? noAdapter;
  }
}

/** The adapters the module ships with. */
export function defaultAdapters() {
  const adapters = new Adapters();
  adapters.register(exalted2e);
  return adapters;
}
