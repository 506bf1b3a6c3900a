// @ts-check
/**
 * Warmachine AOEs and sprays as measured templates. A spray: the player places a cone
 * template (Foundry's Measure tool) from the attacking model before attacking; the
 * models under it become the declaration's `models_under_template`. An AOE: the bridge
 * centres it on the target or deviates it; the attacker's client draws the circle
 * where it landed and, after a deviation, a ray from the aim point. The active GM's
 * client keeps each Warmachine model's `system.position` (inches) at its token's
 * place on the canvas.
 */

import { aoeTemplates, needsTemplate, positionInches, sprayModels, underCone, weaponOf } from "../logic/templates.js";
import { bridgeFlags } from "../logic/tokens.js";
import { need, report, rulesetInfo, state, t } from "./context.js";
import { idOf, writer } from "./actors.js";
import { extensions } from "./extensions.js";

/** Does this ruleset's declaration take models under a template? @param {any} ruleset */
const takesTemplates = (ruleset) => !!ruleset?.declaration_schema?.properties?.models_under_template;

/** The scene's grid: pixels and units per square. @param {any} scene */
export function gridOf(scene) {
  const g = scene?.grid ?? {};
  return { size: Number(g.size ?? 100), distance: Number(g.distance ?? 1) };
}

export function registerTemplates() {
  /** A canvas token as geometry, with its bridge id. @param {any} t */
  const placed = (t, grid = gridOf(canvas?.scene)) => ({
    id: idOf(t),
    x: Number(t.document?.x ?? t.x),
    y: Number(t.document?.y ?? t.y),
    width: Number(t.w ?? (t.document?.width ?? 1) * grid.size),
    height: Number(t.h ?? (t.document?.height ?? 1) * grid.size),
  });

  /** The newest cone template this user placed on the viewed scene. */
  function myCone() {
    const mine = (canvas?.scene?.templates?.contents ?? []).filter((/** @type {any} */ d) => {
      const author = d.author?.id ?? d.user?.id ?? d.author ?? d.user;
      return d.t === "cone" && author === game.user?.id;
    });
    return mine.at(-1) ?? null;
  }

  extensions.onPrepare(async (request, { ruleset }) => {
    if (!takesTemplates(ruleset) || request.declaration?.models_under_template?.length) return request;
    const token = await need().request("token.get", { id: request.attacker }).then((/** @type {any} */ a) => a.token, () => null);
    const weapon = weaponOf(token, request.declaration?.weapon);
    if (!needsTemplate(weapon)) return request;
    const cone = myCone();
    if (!cone) {
      ui.notifications?.warn(t("Template.PlaceSpray", { weapon: weapon.name }));
      return request;
    }
    const grid = gridOf(canvas?.scene);
    const models = underCone(
      { x: cone.x, y: cone.y, direction: cone.direction, angle: cone.angle, length: (cone.distance / grid.distance) * grid.size },
      (canvas?.tokens?.placeables ?? []).map((/** @type {any} */ t) => placed(t, grid)),
    );
    const ids = sprayModels(models, request.attacker, request.targets[0]);
    return { ...request, declaration: { ...request.declaration, models_under_template: ids } };
  });

  extensions.onResolved(async (record, { ruleset }) => {
    if (!takesTemplates(ruleset) || !canvas?.scene) return;
    const attacker = record.tokens?.[record.attacker]?.before ?? (await need().request("token.get", { id: record.attacker }).then((/** @type {any} */ a) => a.token, () => null));
    const weapon = weaponOf(attacker, record.outcome?.weapon ?? record.declaration?.weapon);
    const grid = gridOf(canvas.scene);
    /** @type {Record<string, {x: number, y: number}>} */
    const positions = {};
    for (const t of canvas.tokens?.placeables ?? []) positions[idOf(t)] = positionInches(placed(t, grid), grid);
    const drawn = aoeTemplates(record, weapon, positions, grid);
    if (!drawn) return;
    const flags = { "vtt-bridge": { attack: record.id } };
    const data = [{ t: "circle", x: drawn.circle.x, y: drawn.circle.y, distance: drawn.circle.distance, fillColor: "#ff6400", flags }];
    if (drawn.ray) data.push({ t: "ray", x: drawn.ray.x, y: drawn.ray.y, distance: drawn.ray.distance, direction: drawn.ray.direction, width: grid.distance / 4, fillColor: "#ffd000", flags });
    await canvas.scene.createEmbeddedDocuments("MeasuredTemplate", /** @type {any} */ (data));
  });

  // The writer keeps Warmachine models' positions at their tokens' places.
  Hooks.on("updateToken", (/** @type {any} */ doc, /** @type {any} */ change) => {
    if (!("x" in (change ?? {}) || "y" in (change ?? {})) || !state.connection?.connected || !writer()) return;
    const actor = doc.actor;
    const flags = actor ? bridgeFlags(actor.toObject()) : null;
    if (!flags?.enabled || !takesTemplates(rulesetInfo(flags.ruleset ?? ""))) return;
    const grid = gridOf(doc.parent);
    const where = positionInches({ id: "", x: doc.x, y: doc.y, width: doc.width * grid.size, height: doc.height * grid.size }, grid);
    void need().request("token.update", { id: idOf(doc), system: { position: where } }).catch(report);
  });

  return { myCone, placed };
}
