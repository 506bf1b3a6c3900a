/* Decisions: the rules ask this user something (dodge or parry? spend a reroll?).
 *
 * The server calls `decision` with an acknowledgement; the dialog shows the options,
 * each option's typed parameters as fields (stunt dice 0–3 as a number with − and +),
 * the rules' default and a countdown, and answers through the acknowledgement. The bar
 * above the chat says whom the table waits for, with the countdown, for every question
 * this page knows of: its own, those a server announces to the table
 * (`decision.asked`) and those `table.sync` reports pending
 * after a reconnect. The GM can take the default at once: on their own question by
 * answering it, on anyone's through `decision.default`. */

import { diceSizes, readFaces } from "../common/faces.js";
import { optionDetail, optionText } from "../common/decisions.js";
import { FormErrors } from "../common/schema-form.js";
import { ensureCard, renderCardHead } from "./chat.js";
import { call } from "./connection.js";
import { $, describeError, h, human, toast, fill } from "./dom.js";
import { paramsSchema, SchemaForm } from "./fields.js";
import { isGM, state, tokenName } from "./state.js";

const keyOf = (attack, key) => `${attack}/${key}`;

// -- the bar: whom the table waits for -----------------------------------------------

/** Note a question out at the table (who is asked, until when). */
function waitFor(entry) {
  state.waiting.set(keyOf(entry.attack, entry.key), entry);
  const card = state.cards.get(entry.attack);
  if (card) {
    card.waiting = `waiting for ${entry.who}`;
    renderCardHead(card);
  }
  renderWaiting();
}

function settled(attack, key) {
  const id = keyOf(attack, key);
  if (!state.waiting.delete(id)) return;
  const card = state.cards.get(attack);
  if (card && ![...state.waiting.values()].some((w) => w.attack === attack)) {
    card.waiting = null;
    renderCardHead(card);
  }
  renderWaiting();
}

/** Everything about an attack is settled (it resolved or failed). */
export function attackSettled(attack) {
  for (const w of [...state.waiting.values()]) if (w.attack === attack) settled(w.attack, w.key);
  closeIfSettled(attack, null);
}

function whoIsAsked(data, mine) {
  if (mine) return "you";
  if (Array.isArray(data.users) && data.users.length) return data.users.join(", ");
  return data.token ? `${tokenName(data.token)}'s owner` : "an answer";
}

function entryFrom(data, mine) {
  const timeout = Math.max(0, Number(data.timeout) || 0);
  const attack = data.attack?.id ?? data.attack;
  return {
    attack,
    key: data.key,
    token: data.token,
    prompt: data.prompt || human(data.name || data.key),
    who: whoIsAsked(data, mine),
    mine,
    default: data.default,
    defaultLabel: (data.options || []).find((o) => o.id === data.default)?.label || (data.default ? human(data.default) : "the rules' default"),
    deadline: timeout ? performance.now() + timeout * 1000 : null,
  };
}

let barTimer = null;

function renderWaiting() {
  const bar = $("waiting");
  const entries = [...state.waiting.values()];
  bar.hidden = entries.length === 0;
  clearInterval(barTimer);
  if (!entries.length) {
    bar.replaceChildren();
    return;
  }
  const rows = entries.map((w) => {
    const left = h("span", { class: "left" });
    const row = h(
      "div",
      { class: "waiting-row", dataset: { attack: w.attack, decision: w.key } },
      h("span", { class: "spinner", "aria-hidden": "true" }),
      h("span", {}, "The table waits for ", h("strong", { class: "who" }, w.who), `: ${w.prompt} `),
      left,
      isGM()
        ? h("button", { type: "button", class: "small take-default", dataset: { action: "take-default" }, onclick: () => takeDefault(w) }, "Take the default now")
        : null,
    );
    return { w, left, row };
  });
  const tick = () => {
    for (const { w, left } of rows) {
      if (!w.deadline) {
        left.textContent = "";
        continue;
      }
      const s = Math.max(0, Math.ceil((w.deadline - performance.now()) / 1000));
      left.textContent = `${s} s left, then: ${w.defaultLabel}`;
    }
  };
  fill(bar, ...rows.map((r) => r.row));
  tick();
  barTimer = setInterval(tick, 250);
}

async function takeDefault(w) {
  // The GM's own question: answer it with the default.
  const own = state.decision && keyOf(state.decision.data.attack?.id, state.decision.data.key) === keyOf(w.attack, w.key);
  if (own) {
    const option = (state.decision.data.options || []).find((o) => o.id === state.decision.data.default);
    answer(state.decision, option ? option.id : state.decision.data.default, {});
    return;
  }
  const ack = await call("decision.default", { attack: w.attack, key: w.key });
  if (ack.ok) {
    settled(w.attack, w.key);
    toast(`Took the default: ${w.defaultLabel}`);
  } else toast(`Could not take the default: ${describeError(ack.error)}`, "error");
}

/** Another page was asked (the server announces it to the table). */
export function onAsked(data) {
  const attack = data.attack?.id ?? data.attack;
  if (state.decision && state.decision.data.attack?.id === attack && state.decision.data.key === data.key) return;
  waitFor(entryFrom(data, false));
}

/** After a reconnect: the questions out for this user, as table.sync lists them. */
export function onPending(prompts) {
  for (const w of [...state.waiting.values()]) if (!w.mine) settled(w.attack, w.key);
  for (const data of prompts || []) waitFor(entryFrom(data, true));
}

// -- the dialog: this user is asked ------------------------------------------------------

export function enqueueDecision(data, ack) {
  const item = { data, ack, received: performance.now() };
  state.decisions.push(item);
  waitFor({ ...entryFrom(data, true), item });
  if (!state.decision) nextDecision();
}

function nextDecision() {
  const item = state.decisions.shift();
  state.decision = item || null;
  const dialog = $("decision");
  clearInterval(state.decisionTimer);
  if (!item) {
    if (dialog.open) dialog.close();
    return;
  }
  const { data } = item;
  const attack = data.attack || {};
  if (attack.id) ensureCard(attack.id, attack.attacker ? { ...attack, authoritative: false } : undefined);
  $("decision-context").textContent = `${tokenName(data.token)} · ${tokenName(attack.attacker)} attacks ${(attack.targets || []).map(tokenName).join(", ")}`;
  $("decision-prompt").textContent = data.prompt || human(data.name);
  dialog.dataset.decision = data.key;
  const chosen = (data.options || []).find((o) => o.id === data.default);
  const defaultLabel = chosen ? optionText(chosen, data.options) : data.default;
  if (data.dice) fill($("decision-options"), facesForm(item));
  else fill($("decision-options"), 
    ...(data.options || []).map((option) => {
      const schema = paramsSchema(option.params);
      const legacy = !!option.params && option.params.type !== "object";
      const form = schema ? new SchemaForm(schema, undefined, { name: `opt-${option.id}` }) : null;
      const button = h(
        "button",
        {
          type: "button",
          class: `option${option.id === data.default ? " default" : ""}`,
          dataset: { option: option.id },
          onclick: () => {
            let params = {};
            if (form) {
              try {
                params = form.value();
              } catch (err) {
                if (err instanceof FormErrors) return;
                throw err;
              }
              if (legacy) params = legacyParams(params);
            }
            answer(item, option.id, params);
          },
        },
        h("span", { class: "option-label" }, option.label || option.id),
        // What choosing it means, where the rules know: "Dodge DV 7", "Parry DV 5 (daiklave)".
        optionDetail(option, data.options) ? h("span", { class: "option-detail" }, optionDetail(option, data.options)) : null,
        option.id === data.default ? h("span", { class: "hint" }, " (default)") : null,
      );
      return h("div", { class: "option-row", dataset: { optionRow: option.id } }, button, form ? h("div", { class: "params" }, form.node) : null);
    }),
  );
  $("decision-default").hidden = !data.default;
  $("decision-default").textContent = `Take the default now (${defaultLabel})`;
  $("decision-default").onclick = () => answer(item, data.default, {});
  const total = Math.max(0, Number(data.timeout) || 0) * 1000;
  const deadline = item.received + total;
  const tick = () => {
    if (state.decision !== item) return;
    const left = Math.max(0, deadline - performance.now());
    $("decision-countdown").textContent = total ? `${Math.ceil(left / 1000)} s, then: ${defaultLabel}` : "";
    $("decision-bar").style.width = total ? `${(100 * left) / total}%` : "0";
    if (total && left <= 0) {
      toast(`No answer in time: the rules chose ${defaultLabel}`);
      finishDecision(item);
    }
  };
  state.decisionTimer = setInterval(tick, 200);
  tick();
  if (!dialog.open) dialog.showModal();
}

/** Physical dice: how many of which size and why, a field for the faces, and "let the bridge roll". */
function facesForm(item) {
  const { data } = item;
  const dice = data.dice;
  const sizes = diceSizes(dice);
  const top = Math.max(...sizes);
  const text = (data.options || []).find((o) => o.id === "enter")?.detail || `${dice.number}d${top}`;
  const input = h("input", {
    id: "faces-input",
    type: "text",
    inputmode: "numeric",
    autocomplete: "off",
    "aria-describedby": "faces-status",
    placeholder: sizes.slice(0, 4).map((s) => String(Math.ceil(s / 2))).join(" ") + (sizes.length > 4 ? " …" : ""),
  });
  const status = h("p", { id: "faces-status", class: "hint", "aria-live": "polite" }, `0 of ${sizes.length} faces entered.`);
  const enter = h("button", { type: "button", class: "option default-choice", dataset: { option: "enter" }, disabled: true }, `Enter ${text}`);
  input.addEventListener("input", () => {
    const read = readFaces(input.value, dice);
    status.textContent = read.faces ? `${sizes.length} of ${sizes.length} faces entered.` : read.error;
    status.classList.toggle("error", !read.faces && read.count >= sizes.length);
    enter.disabled = !read.faces;
  });
  const submit = () => {
    const read = readFaces(input.value, dice);
    if (read.faces) answer(item, "enter", { faces: read.faces });
  };
  enter.addEventListener("click", submit);
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      submit();
    }
  });
  const roll = (data.options || []).find((o) => o.id === "roll");
  setTimeout(() => input.focus(), 0);
  return h(
    "div",
    { class: "faces-form", dataset: { dice: text } },
    h("p", { class: "faces-what" }, h("strong", {}, text), ` — ${dice.label} roll: ${sizes.length} ${sizes.length === 1 ? "die" : "dice"} of ${[...new Set(sizes)].map((s) => `${s} sides`).join(" and ")}`),
    h("label", { for: "faces-input" }, `The faces your dice show, one number per die (1–${top})`),
    input,
    status,
    h("div", { class: "option-row" }, enter),
    roll
      ? h("div", { class: "option-row" }, h("button", { type: "button", class: "option", dataset: { option: "roll" }, onclick: () => answer(item, "roll", {}) }, roll.label))
      : null,
  );
}

/** Free-text parameters of an old pack: numbers typed as numbers are sent as numbers. */
function legacyParams(params) {
  const out = {};
  for (const [k, v] of Object.entries(params)) {
    const raw = String(v).trim();
    if (raw === "") continue;
    out[k] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

function answer(item, optionId, params) {
  item.ack(params && Object.keys(params).length ? { option: optionId, params } : optionId);
  finishDecision(item);
}

function finishDecision(item) {
  const attack = item.data.attack?.id;
  settled(attack, item.data.key);
  if (state.decision !== item) {
    state.decisions = state.decisions.filter((d) => d !== item);
    return;
  }
  clearInterval(state.decisionTimer);
  nextDecision();
}

/** The server settled a question this client was asked (another tab answered, or time ran out). */
export function onDecisionClosed(data) {
  settled(data.attack, data.key);
  const matches = (item) => item.data.attack?.id === data.attack && item.data.key === data.key;
  state.decisions = state.decisions.filter((item) => !matches(item));
  const current = state.decision;
  if (current && matches(current)) {
    if (data.how === "timeout") toast("No answer in time: the rules chose the default");
    else if (data.how === "answered") toast("Answered elsewhere");
    finishDecision(current);
  }
}

/** Another client answered (a step that asked it arrived, or the attack ended): drop it here. */
export function closeIfSettled(attackId, step) {
  const current = state.decision;
  const done = (item) =>
    item.data.attack?.id === attackId && (step === null || (step.decisions || []).some((d) => d === item.data.key || d === item.data.name));
  for (const item of state.decisions.filter(done)) settled(attackId, item.data.key);
  state.decisions = state.decisions.filter((item) => !done(item));
  if (current && done(current)) finishDecision(current);
  if (step) for (const key of step.decisions || []) settled(attackId, key);
}

/** The connection is gone: no question asked over it can be answered any more. */
export function dropAll() {
  const asked = [state.decision, ...state.decisions].filter(Boolean);
  state.decisions = [];
  if (state.decision) {
    state.decision = null;
    clearInterval(state.decisionTimer);
    if ($("decision").open) $("decision").close();
    toast("The connection was lost while you were asked; the server settles that question without you.", "error");
  }
  for (const item of asked) settled(item.data.attack?.id, item.data.key);
  for (const w of [...state.waiting.values()]) settled(w.attack, w.key);
}
