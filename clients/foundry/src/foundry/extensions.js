// @ts-check
/**
 * The points where the feature modules (templates, cards, charms…) join main.js's
 * attack: `prepare` steps may change the request before it is sent (a spray's
 * models from the placed template), `resolved` steps see the record (an AOE drawn
 * where it landed). Each also fires a Foundry hook other modules can listen to:
 * `vttBridge.preAttack(request, context)` (mutable) and
 * `vttBridge.attackResolved(record, context)`.
 */

/** @typedef {{ruleset: any, attacker: any, targets: any[]}} AttackContext */

/** @type {Array<(request: any, context: AttackContext) => Promise<any>|any>} */
const prepare = [];
/** @type {Array<(record: any, context: AttackContext) => Promise<void>|void>} */
const resolved = [];

export const extensions = {
  /** @param {(request: any, context: AttackContext) => any} fn */
  onPrepare(fn) {
    prepare.push(fn);
  },
  /** @param {(record: any, context: AttackContext) => any} fn */
  onResolved(fn) {
    resolved.push(fn);
  },
  /** @param {any} request @param {AttackContext} context */
  async prepare(request, context) {
    let out = request;
    for (const fn of prepare) out = (await fn(out, context)) ?? out;
    Hooks.callAll(/** @type {any} */ ("vttBridge.preAttack"), out, context);
    return out;
  },
  /** @param {any} record @param {AttackContext} context @param {(err: unknown) => void} report */
  async resolved(record, context, report) {
    for (const fn of resolved) {
      try {
        await fn(record, context);
      } catch (err) {
        report(err);
      }
    }
    Hooks.callAll(/** @type {any} */ ("vttBridge.attackResolved"), record, context);
  },
};
