/**
 * Warmachine AOEs and sprays on Foundry's canvas, as plain geometry.
 *
 * The bridge measures in inches (a model's `system.position`, the centre of its
 * base); the canvas in pixels. A scene whose grid says how many units a square is
 * (Foundry's `grid.distance`, units `in` for a tabletop wargame) converts one into
 * the other: inches = pixels / grid.size × grid.distance.
 *
 * A spray is Foundry's cone template placed by the player: the models whose bases it
 * touches (besides the target) are the declaration's `models_under_template`. An
 * AOE is resolved by the bridge (it centres on the target on a hit, deviates on a
 * miss); the module draws where it landed: a circle template of the AOE, and a ray
 * from where it was aimed to where it went.
 */

/** @typedef {{size: number, distance: number}} Grid  pixels per square, units per square */
/** @typedef {{id: string, x: number, y: number, width: number, height: number}} Placed  a token: top-left and size in pixels */

export const inchesPerPixel = (grid) => grid.distance / grid.size;

/** The centre of a placed token in pixels. @param {Placed} t */
export const centre = (t) => ({ x: t.x + t.width / 2, y: t.y + t.height / 2 });

/** A token's centre in inches, as the bridge's `system.position`. @param {Placed} t @param {Grid} grid */
export function positionInches(t, grid) {
  const c = centre(t);
  const k = inchesPerPixel(grid);
  return { x: round(c.x * k), y: round(c.y * k) };
}

/** A point in inches → pixels. @param {{x: number, y: number}} p @param {Grid} grid */
export function toPixels(p, grid) {
  const k = inchesPerPixel(grid);
  return { x: p.x / k, y: p.y / k };
}

const round = (v) => Math.round(v * 1000) / 1000;

/** Half the token's smaller side: its base's radius, in pixels. @param {Placed} t */
const baseRadius = (t) => Math.min(t.width, t.height) / 2;

/**
 * The tokens a circle touches (any part of the base under it).
 * @param {{x: number, y: number}} c  centre, pixels  @param {number} radius  pixels
 * @param {Placed[]} tokens
 */
export function underCircle(c, radius, tokens) {
  return tokens.filter((t) => {
    const p = centre(t);
    return Math.hypot(p.x - c.x, p.y - c.y) <= radius + baseRadius(t);
  });
}

/**
 * The tokens a cone touches: a base whose edge comes within the cone's length and
 * whose nearest side falls inside its angle.
 * @param {{x: number, y: number, direction: number, angle: number, length: number}} cone
 *   origin in pixels, direction and full angle in degrees (Foundry's measured template),
 *   length in pixels
 * @param {Placed[]} tokens
 */
export function underCone(cone, tokens) {
  const half = (cone.angle / 2) * (Math.PI / 180);
  const dir = cone.direction * (Math.PI / 180);
  return tokens.filter((t) => {
    const p = centre(t);
    const r = baseRadius(t);
    const d = Math.hypot(p.x - cone.x, p.y - cone.y);
    if (d - r > cone.length) return false;
    if (d <= r) return true; // the base covers the origin
    let off = Math.atan2(p.y - cone.y, p.x - cone.x) - dir;
    off = Math.atan2(Math.sin(off), Math.cos(off));
    return Math.abs(off) <= half + Math.asin(Math.min(1, r / d));
  });
}

/**
 * A spray's models: every token under the cone, less the attacker and the target,
 * as the declaration's `models_under_template` (bridge token ids).
 * @param {Placed[]} under  @param {string} attacker  @param {string} target  (bridge ids; Placed.id is the bridge id)
 */
export function sprayModels(under, attacker, target) {
  return under.map((t) => t.id).filter((id) => id !== attacker && id !== target);
}

/** The attacker's weapon by name, from the bridge token. */
export function weaponOf(token, name) {
  return (token?.system?.weapons || []).find((w) => w.name === name) ?? null;
}

/** Is this Warmachine weapon placed as a template before the attack (a spray)? */
export const needsTemplate = (weapon) => weapon?.spray === true;

/**
 * What to draw for a resolved AOE attack: the circle where the AOE landed and, after a
 * deviation, the ray from where it was aimed. Null for an attack with no AOE.
 * @param {object} record  the attack record
 * @param {object|null} weapon  the weapon (its `AOE` diameter, inches)
 * @param {Record<string, {x: number, y: number}>} positions  bridge token id → inches (the target's, when it hit)
 * @param {Grid} grid
 * @returns {{circle: {x: number, y: number, distance: number}, ray: null|{x: number, y: number, distance: number, direction: number}}|null}
 *   template data in pixels (x, y) and scene units (distance), direction in degrees
 */
export function aoeTemplates(record, weapon, positions, grid) {
  if (!weapon?.AOE) return null;
  const dev = record?.outcome?.deviation;
  const target = record?.targets?.[0];
  const landed = dev?.to ?? positions[target];
  if (!landed) return null;
  const at = toPixels(landed, grid);
  // A circle template's distance is its radius in scene units (inches): half the AOE's diameter.
  const circle = { x: at.x, y: at.y, distance: weapon.AOE / 2 };
  let ray = null;
  if (dev?.from && dev?.to) {
    const from = toPixels(dev.from, grid);
    ray = {
      x: from.x,
      y: from.y,
      distance: round(Math.hypot(dev.to.x - dev.from.x, dev.to.y - dev.from.y)),
      direction: round((Math.atan2(at.y - from.y, at.x - from.x) * 180) / Math.PI),
    };
  }
  return { circle, ray };
}
