/* The bridge's web table: a plain-JavaScript socket.io client of vtt-bridge.
 *
 * It knows no ruleset. Everything it shows comes from the server: the rulesets, their
 * schemas and what packs let an attacker declare from `rulesets.list`, the tokens from
 * `table.sync` / `token.list` and the `token.*` broadcasts, each attack from the
 * `attack.step` and `attack.resolved` broadcasts, the questions from `decision` calls.
 *
 * No build step, no framework. The modules, by concern:
 *   connection.js  join, requests, reconnect and resync      state.js   what the page knows
 *   scene.js       the tokens on the scene                    tracks.js  health tracks per shape
 *   tokens.js      the inspector and the token form           fields.js  forms from JSON Schema
 *   attack.js      the attack form, declarables, odds         chat.js    cards and history
 *   decisions.js   questions, countdowns, who the table waits for
 *   gm.js          GM tools                                   views.js   the phone's jump bar
 * ../common/*.js are shared with the Foundry module (no DOM there). */

import * as attack from "./attack.js";
import * as chat from "./chat.js";
import { banner, handle, join, leave, reloadRulesets } from "./connection.js";
import { $ } from "./dom.js";
import * as decisions from "./decisions.js";
import { renderGMTools, wireGMTools } from "./gm.js";
import { openWhatIf } from "./whatif.js";
import { renderScene } from "./scene.js";
import { announce, dropToken, on, putToken, state } from "./state.js";
import { closeEditor, renderInspector } from "./tokens.js";
import { wireViews } from "./views.js";

function renderHeader() {
  $("table-name").textContent = state.table ? state.table.name : "";
  $("whoami").textContent = state.user ? `${state.user} (${state.role === "gm" ? "GM" : "player"})` : "";
}

// -- what redraws what ------------------------------------------------------------------

on("tokens", () => {
  renderScene();
  renderInspector();
  attack.renderAttackers();
});
on("scene", () => {
  renderScene();
  renderInspector();
});
on("selected", () => {
  renderScene();
  renderInspector();
});
on("choose-attacker", (token) => attack.chooseAttacker(token));
on("toggle-target", (token) => attack.toggleTarget(token));
on("loaded", () => {
  renderHeader();
  renderGMTools();
  const editing = state.editing;
  attack.fillRulesetSelects();
  announce("tokens");
  chat.refreshHistory();
  if (editing && editing.mode === "edit" && !state.tokens.has(editing.token.id)) closeEditor();
});
on("record", (record, options) => chat.onResolved(record, options));
on("pending", (prompts) => decisions.onPending(prompts));
on("step", (data) => decisions.closeIfSettled(data.attack, data.step));
on("resolved", (record) => decisions.attackSettled(record.id));
on("failed", (data) => decisions.attackSettled(data.id));
on("disconnected", () => decisions.dropAll());
on("resynced", () => chat.markInterrupted());
on("whatif", (card) => openWhatIf(card));
on("rulesets", () => {
  attack.fillRulesetSelects();
  announce("tokens");
});

// -- server events ----------------------------------------------------------------------

handle("attack.step", chat.onStep);
handle("attack.resolved", (data) => chat.onResolved(data.attack));
handle("attack.failed", chat.onFailed);
handle("attack.undone", (data) => chat.onUndone(data.undo));
handle("token.updated", (data) => putToken(data.token));
handle("token.created", (data) => putToken(data.token));
handle("token.deleted", (data) => dropToken(data.id));
handle("table.updated", (data) => {
  const packs = JSON.stringify(state.table?.settings?.packs);
  state.table = data.table;
  renderHeader();
  renderGMTools();
  // Other packs at the table: other Charms to declare, other options (rulesets.list).
  if (JSON.stringify(data.table?.settings?.packs) !== packs) reloadRulesets();
});
handle("decision", (data, ack) => decisions.enqueueDecision(data, ack));
handle("decision.closed", decisions.onDecisionClosed);
handle("decision.asked", decisions.onAsked);
handle("decision.settled", decisions.onDecisionClosed);

// -- the page's own controls ------------------------------------------------------------

function init() {
  const hash = new URLSearchParams(location.hash.slice(1));
  let remembered = {};
  try {
    remembered = JSON.parse(sessionStorage.getItem("vtt-bridge") || "{}");
  } catch (e) {
    remembered = {};
  }
  const table = hash.get("table") || remembered.table || "";
  const key = hash.get("key") || remembered.key || "";
  $("join-table").value = table;
  $("join-key").value = key;
  $("join-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    join($("join-table").value.trim(), $("join-key").value.trim());
  });
  $("leave").addEventListener("click", () => leave());
  $("attack-ruleset").addEventListener("change", (ev) => attack.setRuleset(ev.target.value));
  $("scene-ruleset").addEventListener("change", (ev) => {
    if (ev.target.value) attack.setRuleset(ev.target.value);
    else {
      state.sceneRuleset = "";
      renderScene();
    }
  });
  $("attack-attacker").addEventListener("change", (ev) => {
    state.attacker = ev.target.value;
    attack.renderAttackers();
    renderScene();
  });
  $("attack-form").addEventListener("submit", attack.submitAttack);
  $("zoom-in").addEventListener("click", () => {
    state.zoom = Math.min(80, state.zoom + 6);
    renderScene();
  });
  $("zoom-out").addEventListener("click", () => {
    state.zoom = Math.max(14, state.zoom - 6);
    renderScene();
  });
  $("history-refresh").addEventListener("click", chat.refreshHistory);
  $("history-all").addEventListener("change", chat.refreshHistory);
  wireGMTools();
  wireViews();
  $("decision").addEventListener("cancel", (ev) => ev.preventDefault()); // Esc: the rules still want an answer
  $("confirm").addEventListener("cancel", () => {}); // Esc on "are you sure?" means no
  window.addEventListener("offline", () => banner("This device is offline — the page reconnects when the network is back.", { kind: "warn" }));
  if (table && key) join(table, key);
}

init();
