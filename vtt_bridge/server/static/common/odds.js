/**
 * An `attack.odds` answer → what an odds panel shows, without a DOM or Foundry: the
 * web table draws it (web/attack.js), the Foundry module's declaration dialog too
 * (clients/foundry/src/logic/odds.js).
 *
 * The answer (docs/protocol.md, `attack.odds`) gives each figure as an estimate
 * `{value, se, exact}`. For an attack that can catch several models (a Warmachine AOE,
 * a spray) `hit` is the chance to hit any model and `target_hit` the chance to hit the
 * target; `damage` and `expected_damage` are the target's, and `models` has a line per
 * model. A one-model attack shows one chance to hit, as it always did.
 */

/** A chance as a short percentage: "85%", "3.9%", "< 0.1%". */
export const percent = (p) => (p > 0 && p < 0.001 ? "< 0.1%" : `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`);

/** The number in an estimate (`{value, se, exact}`), or a bare number; NaN when absent. */
export const estimate = (e) => (e && typeof e === "object" ? Number(e.value) : Number(e));

const mean = (x) => (Number.isFinite(x) ? x.toFixed(2) : "—");

/** The chance of any damage in a distribution `[{damage, value}]`: every amount above 0. */
export function anyDamage(damage) {
  return (damage || []).filter((d) => Number(d.damage) > 0).reduce((sum, d) => sum + estimate(d), 0);
}

/**
 * What an odds panel shows.
 * @param {object} odds  the `odds` of an `attack.odds` acknowledgement
 * @param {(id: string) => string} [nameOf]  a token id → the name to show (default: the id)
 * @returns {{
 *   unit: string, several: boolean,
 *   hit: number, targetHit: number, expected: number, target: string|null, targetName: string|null,
 *   chances: {key: string, label: string, p: number, text: string}[],
 *   meanText: string,
 *   damage: {damage: number, p: number, miss: boolean, text: string, tip: string}[], damageTitle: string,
 *   models: {token: string, name: string, target: boolean, hit: number, expected: number, damaged: number,
 *            hitText: string, meanText: string, damagedText: string}[],
 *   conditions: {token: string, name: string, condition: string, p: number, text: string}[],
 *   method: string,
 * }}
 */
export function oddsModel(odds, nameOf = (id) => id) {
  const unit = odds.unit || "damage";
  const models = Array.isArray(odds.models) ? odds.models : [];
  const several = models.length > 1;
  const target = odds.targets?.[0] ?? models[0]?.token ?? null;
  const targetName = target == null ? null : nameOf(target);
  const hit = estimate(odds.hit);
  const targetHit = odds.target_hit == null ? hit : estimate(odds.target_hit);
  const expected = estimate(odds.expected_damage);
  const chances = several
    ? [
        { key: "target", label: "Hit the target", p: targetHit, text: `Hit the target ${percent(targetHit)}` },
        { key: "any", label: "Hit any model", p: hit, text: `Hit any model ${percent(hit)}` },
      ]
    : [{ key: "hit", label: "Hit", p: hit, text: `Hit ${percent(hit)}` }];
  const human = (s) => String(s ?? "").replace(/[_-]+/g, " ");
  return {
    unit,
    several,
    hit,
    targetHit,
    expected,
    target,
    targetName,
    chances,
    meanText: `mean ${mean(expected)} ${unit}${several && targetName ? ` to ${targetName}` : ""}`,
    damage: (odds.damage || []).map((d) => {
      const p = estimate(d);
      return { damage: d.damage, p, miss: d.damage === 0, text: percent(p), tip: `${d.damage} ${unit}: ${percent(p)}` };
    }),
    damageTitle: `${human(unit)} dealt${several && targetName ? ` to ${targetName}` : ""}`,
    models: several
      ? models.map((m) => {
          const p = estimate(m.hit);
          const e = estimate(m.expected_damage);
          const damaged = anyDamage(m.damage);
          return {
            token: m.token,
            name: nameOf(m.token),
            target: m.token === target,
            hit: p,
            expected: e,
            damaged,
            hitText: percent(p),
            meanText: mean(e),
            damagedText: percent(damaged),
          };
        })
      : [],
    conditions: (odds.conditions || [])
      .filter((c) => estimate(c) > 0)
      .map((c) => {
        const p = estimate(c);
        const name = nameOf(c.token);
        return { token: c.token, name, condition: c.condition, p, text: `${name} ${human(c.condition)}: ${percent(p)}` };
      }),
    method: odds.method === "exact" ? "exact" : `Monte Carlo${odds.samples ? `, ${odds.samples} samples` : ""}`,
  };
}
