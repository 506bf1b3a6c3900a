/**
 * The odds before the roll in the declaration dialog: an `attack.odds` answer drawn as
 * HTML without a DOM, from the shared odds model (common/odds.js, the web table's too).
 * An attack that can catch several models (a Warmachine AOE, a spray) shows the chance
 * to hit the target and to hit any model, and a row per model; a one-model attack one
 * chance to hit.
 */

import { oddsModel } from "../../../../vtt_bridge/server/static/common/odds.js";
import { esc } from "./chat.js";

/**
 * @param {object} odds  the `odds` of an `attack.odds` acknowledgement
 * @param {(id: string) => string} [nameOf]  a token id → the name to show
 * @returns {string}
 */
export function oddsHtml(odds, nameOf = (id) => id) {
  const m = oddsModel(odds, nameOf);
  const [first, ...others] = m.chances;
  const top = Math.max(...m.damage.map((d) => d.p), 0.0001);
  const bar = (p) => `<span class="bar"><span style="width:${((100 * p) / top).toFixed(1)}%"></span></span>`;
  const damage = m.damage.length
    ? `<table class="damage"><caption>${esc(m.damageTitle)}</caption><tbody>` +
      m.damage
        .map((d) => `<tr class="${d.miss ? "miss" : "dmg"}"><th>${esc(d.damage)}</th><td>${esc(d.text)}</td><td>${bar(d.p)}</td></tr>`)
        .join("") +
      "</tbody></table>"
    : "";
  const models = m.models.length
    ? `<table class="models"><thead><tr><th>Model</th><th>Hit</th><th>Mean</th><th>Damaged</th></tr></thead><tbody>` +
      m.models
        .map(
          (r) =>
            `<tr data-token="${esc(r.token)}"${r.target ? ' class="target"' : ""}><th>${esc(r.name)}${r.target ? " (target)" : ""}</th>` +
            `<td>${esc(r.hitText)}</td><td>${esc(r.meanText)}</td><td>${esc(r.damagedText)}</td></tr>`,
        )
        .join("") +
      "</tbody></table>"
    : "";
  const conditions = m.conditions.length ? `<ul class="conditions">${m.conditions.map((c) => `<li>${esc(c.text)}</li>`).join("")}</ul>` : "";
  return (
    `<div class="vtt-bridge-odds-result">` +
    `<p class="chance" data-chance="${first.key}"><b>${esc(first.text)}</b> · ${esc(m.meanText)}</p>` +
    others.map((c) => `<p class="chance" data-chance="${c.key}"><b>${esc(c.text)}</b></p>`).join("") +
    damage +
    models +
    conditions +
    `<p class="hint">${esc(m.method)}</p></div>`
  );
}
