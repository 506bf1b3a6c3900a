/**
 * The chat card of one resolution: a summary line with the steps folded under it,
 * built from the shared card model (common/card.js) and drawn as HTML without a
 * DOM. The rolls go along as Foundry roll data (common/rolls.js) for the
 * ChatMessage's `rolls`, so Dice So Nice and Foundry's dice tooltips show them.
 *
 * What only the GM sees goes in a second, whispered card: the dice seed or script
 * and the token numbers before and after.
 */

import { cardModel, plain } from "../../../../vtt_bridge/server/static/common/card.js";
import { describeRoll, toRollData } from "../../../../vtt_bridge/server/static/common/rolls.js";

const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ESC[c]);

/** Every roll of a record, nested attacks included, in card order. */
export function allRolls(attack) {
  const out = [];
  const visit = (steps) => {
    for (const step of steps || []) {
      out.push(...(step.rolls || []));
      for (const child of step.children || []) visit(child.steps);
    }
  };
  visit(attack.steps);
  return out;
}

function diceHtml(roll) {
  const d = describeRoll(roll);
  const faces = d.faces
    .map((f) => {
      const cls = ["die", `d${f.sides}`];
      if (!f.active) cls.push(f.rerolled ? "rerolled" : "discarded");
      if (f.success === true) cls.push("success");
      if (f.count === 2) cls.push("double");
      if (f.colour) cls.push(`die-${f.colour}`);
      return `<li class="${cls.join(" ")}">${f.value}</li>`;
    })
    .join("");
  const sup = d.superseded ? ` <em class="superseded">(superseded)</em>` : "";
  return `<div class="vtt-bridge-roll"><span class="flavor">${esc(plain(d.label))}</span> <code>${esc(d.formula)}</code> = <b>${d.total}</b>${sup}<ol class="dice">${faces}</ol></div>`;
}

function stepHtml(step) {
  const parts = [];
  const where = step.item ? ` <span class="item">(${esc(step.item.name)})</span>` : "";
  parts.push(`<summary>${esc(plain(step.title))}${where}</summary>`);
  for (const roll of step.rolls) parts.push(diceHtml(roll));
  for (const c of step.changes) parts.push(`<div class="change">${esc(c.label)}: ${esc(c.from)} → ${esc(c.to)}${c.plugin ? ` <span class="plugin">${esc(c.plugin)}</span>` : ""}</div>`);
  for (const n of step.notes) parts.push(`<div class="note">${esc(plain(n.text))}</div>`);
  for (const d of step.decisions) parts.push(`<div class="decision">${esc(d.prompt)}: <b>${esc(d.answer)}</b>${d.how !== "answered" ? ` <em>(${esc(d.how)})</em>` : ""}</div>`);
  for (const child of step.children) parts.push(cardBody(child));
  if (step.ended) parts.push(`<div class="ended">${esc(plain(step.ended))}</div>`);
  return `<details class="vtt-bridge-step">${parts.join("")}</details>`;
}

function cardBody(model) {
  const s = model.summary;
  const cls = s.hit ? "hit" : "miss";
  const detail = s.detail ? ` <span class="detail">— ${esc(plain(s.detail))}</span>` : "";
  return `<div class="vtt-bridge-summary ${cls}">${esc(plain(s.text))}${detail}</div><div class="vtt-bridge-steps">${model.steps.map(stepHtml).join("")}</div>`;
}

/**
 * The card data of one resolution.
 * @param {object} attack  the attack record (`attack`'s acknowledgement)
 * @param {{names?: Function|Object, undo?: boolean}} [options]  `undo`: the GM's Apply and Undo buttons
 * @returns {{content: string, gmContent: string, rolls: object[], summary: object}}
 */
export function chatCard(attack, options = {}) {
  const model = cardModel(attack, { names: options.names });
  // The GM's buttons (the module removes them on a player's client): write the bridge's
  // numbers to the actors now, and undo the attack.
  const undo = options.undo
    ? `<div class="vtt-bridge-buttons"><button type="button" class="vtt-bridge-apply" data-attack="${esc(attack.id)}">Apply</button>` +
      `<button type="button" class="vtt-bridge-undo" data-attack="${esc(attack.id)}">Undo</button></div>`
    : "";
  const content = `<section class="vtt-bridge-card" data-attack="${esc(attack.id)}">${cardBody(model)}${undo}</section>`;
  const gm = [];
  gm.push(`<div>Dice: ${attack.dice === "scripted" ? `scripted (${attack.dice_used ?? "?"} used)` : `seed ${esc(attack.seed)}`}</div>`);
  for (const [id, change] of Object.entries(attack.changes || {})) {
    const name = model.summary && options.names ? (typeof options.names === "function" ? options.names(id) : options.names[id]) : null;
    const label = name ?? attack.tokens?.[id]?.after?.name ?? id;
    gm.push(`<div class="change">${esc(label)}: ${esc(JSON.stringify(diff(change.before, change.after)))}</div>`);
  }
  for (const d of attack.decisions || []) {
    if (d.how === "given") gm.push(`<div class="decision">${esc(d.prompt || d.key)}: ${esc(d.answer?.option)} (given by the GM)</div>`);
  }
  const gmContent = `<section class="vtt-bridge-card gm" data-attack="${esc(attack.id)}"><div class="vtt-bridge-summary">GM: ${esc(plain(model.summary.text))}</div>${gm.join("")}</section>`;
  return { content, gmContent, rolls: allRolls(attack).map(toRollData), summary: model.summary };
}

/**
 * The order Dice So Nice throws a record's rolls in: step order (the attack roll
 * before the damage roll, a nested counterattack's rolls where it came), each with
 * whether a later roll superseded it (a reroll's first throw), to be shown as such.
 * @param {object} attack  @returns {Array<{index: number, superseded: boolean, label: string}>}
 */
export function throwOrder(attack) {
  return allRolls(attack).map((roll, index) => ({ index, superseded: roll?.options?.superseded === true, label: plain(roll?.options?.flavor ?? "") }));
}

/** The fields that changed, `{field: [before, after]}`, nested paths dotted. */
export function diff(before = {}, after = {}, prefix = "") {
  const out = {};
  const keys = new Set([...Object.keys(before || {}), ...Object.keys(after || {})]);
  for (const k of keys) {
    const a = before?.[k];
    const b = after?.[k];
    const path = prefix ? `${prefix}.${k}` : k;
    if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) Object.assign(out, diff(a, b, path));
    else if (JSON.stringify(a) !== JSON.stringify(b)) out[path] = [a ?? null, b ?? null];
  }
  return out;
}
