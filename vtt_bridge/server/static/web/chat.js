/* The chat: one card per attack. A card opens as one summary line (who attacked whom
 * with what, hit or miss, damage, conditions) and who was struck and how each target
 * defended; the steps and their dice are folded under
 * it. Steps arrive live (`attack.step`) and the card is redrawn from the whole record
 * when it resolves (`attack.resolved`, `attack.get`, `table.sync`), with the same model
 * the Foundry module uses (../common/card.js): empty steps are left out, nothing reads
 * `null`, and GODSGLOOM's red and blue dice are coloured and named, not drawn as emoji.
 * Also the history list (the audit log) and undo, which asks first. */

import { cardModel, plain, segments, show, stepCard } from "../common/card.js";
import { describeRoll } from "../common/rolls.js";
import { call, sawSeq } from "./connection.js";
import { $, confirmAction, describeError, h, human, toast, fill } from "./dom.js";
import { announce, isGM, putToken, state, tokenName } from "./state.js";
import { renderTrack } from "./tracks.js";

const MAX_CARDS = 60;

/** Text with the rulesets' symbols as words (coloured for dice). */
export function rich(text) {
  return segments(text).map((s) =>
    s.colour ? h("span", { class: `dieword die-${s.colour}`, title: s.title }, s.text) : s.title ? h("span", { class: "symbol", title: s.title }, s.text) : s.text,
  );
}

const names = (id) => tokenName(id);

export function ensureCard(id, about) {
  let card = state.cards.get(id);
  if (!card) {
    // A card whose first step arrives before we know more: if this client has an
    // attack of its own waiting for its first step, this is it.
    if (!about) {
      const mine = state.pending.find((p) => !p.card);
      if (mine) {
        about = mine;
        mine.card = id;
      }
    }
    const steps = h("ol", { class: "steps" });
    const fold = h("details", { class: "fold" }, h("summary", { class: "fold-title" }, "Steps and dice"), steps);
    const head = h("header", {});
    const foot = h("footer", {});
    const el = h("article", { class: "card", dataset: { attack: id, status: "running" } }, head, fold, foot);
    card = { id, el, head, fold, steps, foot, about: null, stepItems: new Map(), status: "running", seq: 0 };
    state.cards.set(id, card);
    placeCard(card);
  }
  if (about && (!card.about || about.authoritative)) card.about = about;
  renderCardHead(card);
  return card;
}

/** Newest on top: a card being rolled first, then the others by seq, newest first. */
function placeCard(card) {
  const chat = $("chat");
  if (card.seq) {
    const older = [...chat.children].find((el) => {
      const other = state.cards.get(el.dataset.attack);
      return other && other !== card && other.seq && other.seq < card.seq;
    });
    if (older) chat.insertBefore(card.el, older);
    else chat.append(card.el);
  } else chat.prepend(card.el);
  // Keep the chat bounded: the oldest cards go (History still lists them).
  while (chat.children.length > MAX_CARDS) {
    const last = chat.lastElementChild;
    state.cards.delete(last.dataset.attack);
    last.remove();
  }
}

export function renderCardHead(card) {
  card.el.dataset.status = card.status;
  const a = card.about;
  const ruleset = a ? state.rulesets.get(a.ruleset) : null;
  const status = { running: "rolling…", resolved: "resolved", failed: "failed", undone: "undone" }[card.status];
  const model = card.attack ? cardModel(card.attack, { names }) : null;
  const summary = model?.summary;
  let line;
  if (summary) {
    line = h(
      "div",
      { class: "summary-line" },
      h("strong", { class: "who" }, summary.attacker),
      " → ",
      summary.targets.join(", "),
      summary.what ? h("span", { class: "what" }, ` (${summary.what})`) : null,
      " ",
      h("span", { class: `result ${summary.hit ? "hit" : "miss"}` }, summary.hit ? "hit" : "miss"),
      summary.damage !== null && (summary.hit || summary.damage > 0) ? h("span", { class: "damage" }, ` · ${summary.damage} damage`) : null,
      summary.ended && summary.ended !== "miss" ? h("span", { class: "ended" }, ` · ${human(summary.ended)}`) : null,
      summary.conditions.length
        ? h("span", { class: "conditions" }, " · ", summary.conditions.map((c) => `${c.name}: ${c.conditions.map(human).join(", ")}`).join("; "))
        : null,
    );
    line.title = summary.text;
  } else {
    line = h(
      "div",
      { class: "summary-line" },
      a ? h("strong", { class: "who" }, tokenName(a.attacker)) : h("strong", {}, "Attack"),
      a ? " → " : null,
      a ? (a.targets || []).map(tokenName).join(", ") : null,
    );
  }
  fill(card.head, 
    line,
    // Who was struck and how each target defended ("struck Anoria; Anoria defended: Parry").
    summary?.detail ? h("div", { class: "summary-detail" }, plain(summary.detail)) : null,
    h(
      "div",
      { class: "meta" },
      ruleset ? ruleset.title : a?.ruleset || "",
      a?.user ? ` · by ${a.user}` : "",
      card.waiting ? h("span", { class: "waiting-note" }, ` · ${card.waiting}`) : null,
      h("span", { class: `badge ${card.status}` }, status),
    ),
  );
  const count = card.steps.children.length;
  card.fold.querySelector("summary").textContent = count ? `Steps and dice (${count})` : "Steps and dice";
}

export function onStep(data) {
  // Every step says whose attack it is, so the card is titled from its first step.
  const about = data.ruleset
    ? { ruleset: data.ruleset, attacker: data.attacker, targets: data.targets, user: data.user, authoritative: true }
    : null;
  const card = ensureCard(data.attack, about);
  addStep(card, data.index, stepCard(data.step, { names }));
  announce("step", data);
}

function addStep(card, index, model) {
  if (card.stepItems.has(index)) return;
  card.stepItems.set(index, null);
  if (!model) return; // nothing to show: the step stays out of the card
  const li = renderStep(model);
  li.dataset.index = index;
  // Keep the steps in trace order whatever order they are drawn in.
  const after = [...card.stepItems.entries()].filter(([i, el]) => el && i > index).sort((a, b) => a[0] - b[0])[0];
  if (after) card.steps.insertBefore(li, after[1]);
  else card.steps.append(li);
  card.stepItems.set(index, li);
  renderCardHead(card);
}

/** A change or note made by a pack (named), not by a ruleset's own plugin (left unnamed). */
const packPlugin = (plugin) => !!plugin && !state.rulesets.has(plugin);

export function renderStep(step) {
  return h(
    "li",
    { class: `step${step.ended ? " ended" : ""}`, dataset: { step: step.step } },
    h("div", { class: "step-title" }, rich(step.title), step.item ? h("span", { class: "item" }, ` — ${step.item.name}`) : null),
    step.rolls.map(renderRoll),
    step.changes.length
      ? h(
          "ul",
          { class: "changes" },
          step.changes.map((c) =>
            h(
              "li",
              { title: c.plugin ? `by ${c.plugin}` : undefined },
              h("span", { class: "number" }, rich(c.label)),
              ` ${c.from} → `,
              h("strong", {}, c.to),
              packPlugin(c.plugin) ? h("span", { class: "plugin" }, ` ${c.plugin}`) : null,
            ),
          ),
        )
      : null,
    step.notes.length
      ? h("ul", { class: "notes" }, step.notes.map((n) => h("li", {}, rich(n.text), packPlugin(n.plugin) ? h("span", { class: "plugin" }, ` (${n.plugin})`) : null)))
      : null,
    step.decisions.length
      ? h(
          "ul",
          { class: "asked" },
          step.decisions.map((d) =>
            h(
              "li",
              { dataset: { decision: d.key } },
              h("span", { class: "hint" }, `${d.token ? `${tokenName(d.token)}: ` : ""}${d.prompt} `),
              h("strong", {}, d.answer),
              d.params.length ? ` (${d.params.map((p) => `${p.label} ${p.value}`).join(", ")})` : null,
              d.how !== "answered" ? h("span", { class: "how" }, ` (${d.how})`) : null,
            ),
          ),
        )
      : null,
    step.children.map(renderNested),
    step.ended ? h("div", { class: "ended-line" }, `ends: ${human(step.ended)}`) : null,
  );
}

function renderNested(child) {
  const s = child.summary;
  return h(
    "section",
    { class: "nested" },
    h(
      "div",
      { class: "nested-title" },
      `${human(s.kind)}: `,
      h("strong", {}, s.attacker),
      " → ",
      s.targets.join(", "),
      s.resolved ? h("span", { class: `result ${s.hit ? "hit" : "miss"}` }, ` ${s.hit ? "hit" : "miss"}${s.damage !== null && s.hit ? `, ${s.damage} damage` : ""}`) : null,
    ),
    h("ol", { class: "steps" }, child.steps.map(renderStep)),
  );
}

/** One roll, die by die: successes marked, doubles counted, dropped dice struck through. */
export function renderRoll(roll) {
  const d = describeRoll(roll);
  const colour = d.faces.find((f) => f.colour)?.colour;
  const successes = (roll.terms || []).some((t) => (t.modifiers || []).some((m) => /^c[sf]/.test(m)));
  return h(
    "div",
    { class: `roll${d.superseded ? " superseded" : ""}${colour ? ` dice-${colour}` : ""}`, dataset: { colour } },
    h(
      "div",
      { class: "roll-head" },
      h("span", { class: "flavor" }, d.label ? rich(d.label) : "roll"),
      h("code", {}, d.formula || ""),
      d.physical === "entered"
        ? h("span", { class: "physical-badge", dataset: { physical: "entered" }, title: "faces entered from real dice" }, "real dice")
        : d.physical === "rolled"
          ? h("span", { class: "physical-badge rolled", dataset: { physical: "rolled" }, title: "no faces were entered in time: the bridge rolled" }, "rolled by the bridge")
          : null,
    ),
    h(
      "div",
      { class: "dice" },
      d.faces.map((f) => {
        const classes = ["die", `d${f.sides}`];
        const states = [];
        if (f.colour) classes.push(`die-${f.colour}`), states.push(`${f.colour} die`);
        if (f.success) classes.push("success"), states.push(f.count > 1 ? `success ×${f.count}` : "success");
        if (f.discarded) classes.push("discarded"), states.push("dropped");
        if (f.rerolled) classes.push("rerolled"), states.push("rerolled");
        if (!f.active && !f.discarded && !f.rerolled) classes.push("inactive");
        if (f.count > 1) classes.push("double");
        return h(
          "span",
          { class: classes.join(" "), title: `d${f.sides}: ${f.value}${states.length ? ` (${states.join(", ")})` : ""}`, dataset: { face: f.value } },
          String(f.value),
        );
      }),
      h("span", { class: "total" }, `= ${show(d.total)}${successes ? (d.total === 1 ? " success" : " successes") : ""}`),
    ),
  );
}

/**
 * A whole record (resolved attack): redraw the card from it.
 * @param {object} attack
 * @param {{undone?: object|boolean}} [options]
 */
export function onResolved(attack, options = {}) {
  if (!attack || !attack.id) return;
  if (attack.kind === "undo") return onUndoRecord(attack);
  // A resync may list other audit entries (token edits): only attacks have cards.
  if (attack.kind && attack.kind !== "attack") return sawSeq(attack.seq);
  if (!Array.isArray(attack.steps)) return sawSeq(attack.seq);
  const about = { ruleset: attack.ruleset, attacker: attack.attacker, targets: attack.targets, user: attack.user, authoritative: true };
  const existed = state.cards.has(attack.id);
  const card = ensureCard(attack.id, about);
  card.attack = attack;
  card.seq = attack.seq || 0;
  if (attack.request_id) card.requestId = attack.request_id;
  replaceFailed(attack);
  if (!existed) placeCard(card);
  const model = cardModel(attack, { names });
  card.steps.replaceChildren();
  card.stepItems = new Map();
  model.steps.forEach((step, i) => {
    const li = renderStep(step);
    li.dataset.index = i;
    card.steps.append(li);
    card.stepItems.set(i, li);
  });
  if (card.status === "running" || card.status === "failed") card.status = "resolved";
  if (options.undone) card.status = "undone";
  card.waiting = null;
  renderCardHead(card);
  renderCardFoot(card);
  sawSeq(attack.seq);
  announce("resolved", attack);
  scheduleHistory();
}

export function renderCardFoot(card) {
  const attack = card.attack;
  if (!attack) return;
  // Tokens whose track the attack changed (motes spent and the like show on the sheet, not here).
  const tokens = Object.entries(attack.tokens || {}).filter(
    ([, t]) => t.after && t.before && renderTrack(t.before.system).outerHTML !== renderTrack(t.after.system).outerHTML,
  );
  fill(card.foot, 
    tokens.length
      ? h(
          "div",
          { class: "changed-tokens" },
          tokens.map(([id, t]) => h("div", { class: "changed", dataset: { token: id } }, h("span", {}, t.after.name), renderTrack(t.after.system))),
        )
      : null,
    h(
      "div",
      { class: "card-tools" },
      // (The seed is a 63-bit integer: JavaScript cannot show it exactly, so it is not shown.)
      h(
        "span",
        { class: "hint" },
        `${attack.dice === "scripted" ? "scripted dice" : "seeded dice"}${attack.seq ? ` · #${attack.seq}` : ""}`,
        // An applied what-if (whatif.js) names the attack it replays.
        attack.whatif ? h("span", { class: "whatif-of" }, ` · what if of #${attack.whatif.seq}`) : null,
      ),
      // What if… (whatif.js): the GM of any attack, a player of their own.
      (card.status === "resolved" || card.status === "undone") && (isGM() || attack.user === state.user)
        ? h("button", { type: "button", class: "small whatif-open", onclick: () => announce("whatif", card) }, "What if…")
        : null,
      isGM() && card.status === "resolved" ? h("button", { type: "button", class: "small undo", onclick: () => undo(attack.id) }, "Undo") : null,
    ),
  );
}

export function failCard(id, error) {
  const card = ensureCard(id);
  card.status = "failed";
  card.waiting = null;
  renderCardHead(card);
  fill(card.foot, h("div", { class: "error" }, describeError(error)));
}

export function onFailed(data) {
  // A card already replaced by the attack sent again (same request) stays gone.
  if (data.request_id && [...state.cards.values()].some((c) => c.requestId === data.request_id && c.id !== data.id && c.status === "resolved")) return;
  failCard(data.id, data.error);
  const card = state.cards.get(data.id);
  if (card && data.request_id) card.requestId = data.request_id;
  announce("failed", data);
}

/** The attack sent again after a stop resolved: its card takes the failed one's place. */
function replaceFailed(attack) {
  if (!attack.request_id) return;
  for (const card of [...state.cards.values()]) {
    if (card.id !== attack.id && card.requestId === attack.request_id && card.status === "failed") {
      card.el.remove();
      state.cards.delete(card.id);
    }
  }
}

export function onUndone(undo) {
  const card = state.cards.get(undo.attack);
  if (card) {
    card.status = "undone";
    renderCardHead(card);
    renderCardFoot(card);
  }
  for (const t of Object.values(undo.tokens || {})) if (t.after) putToken(t.after);
  sawSeq(undo.seq);
  scheduleHistory();
}

/** An undo entry seen in a resync (`table.sync`, history): the card reads undone. */
function onUndoRecord(entry) {
  const card = state.cards.get(entry.attack ?? entry.id);
  if (card) {
    card.status = "undone";
    renderCardHead(card);
    renderCardFoot(card);
  }
  sawSeq(entry.seq);
}

export async function undo(id) {
  const card = state.cards.get(id);
  const what = card?.attack ? cardModel(card.attack, { names }).summary.text : "this attack";
  if (!(await confirmAction(`Undo ${what}? Every token it changed goes back to how it was.`, "Undo the attack"))) return;
  const ack = await call("attack.undo", { id });
  if (ack.ok) {
    toast(`Attack undone (#${ack.undo.seq})`);
    onUndone(ack.undo);
  } else toast(`Undo refused: ${describeError(ack.error)}`, "error");
}

// -- history (the audit log) ------------------------------------------------------------------

export function scheduleHistory() {
  clearTimeout(state.historyTimer);
  state.historyTimer = setTimeout(refreshHistory, 300);
}

export async function refreshHistory() {
  if (!state.socket) return;
  const ack = await call("attack.history", { limit: 50 });
  if (!ack.ok) {
    if (ack.error?.code !== "offline") fill($("history"), h("li", { class: "error" }, describeError(ack.error)));
    return;
  }
  state.history = ack.attacks;
  const undone = new Set(ack.attacks.filter((e) => e.kind === "undo").map((e) => e.id));
  const all = $("history-all").checked;
  const undoneAttack = (id) => {
    const attack = ack.attacks.find((a) => a.kind === "attack" && a.id === id);
    return attack ? `#${attack.seq} ${tokenName(attack.attacker)} → ${(attack.targets || []).map(tokenName).join(", ")}` : id;
  };
  fill($("history"), 
    ...ack.attacks
      .filter((e) => all || e.kind === "attack" || e.kind === "undo")
      .map((e) => {
        const isAttack = e.kind === "attack";
        const line = isAttack
          ? [
              h("strong", {}, tokenName(e.attacker)),
              " → ",
              (e.targets || []).map(tokenName).join(", "),
              h("span", { class: `result ${e.outcome?.hit ? "hit" : "miss"}` }, e.outcome?.hit ? ` hit, ${show(e.outcome.damage)}` : " miss"),
            ]
          : e.kind === "undo"
            ? ["undo of ", undoneAttack(e.id)]
            : [human(e.kind), e.id ? ` ${tokenName(e.id)}` : ""];
        return h(
          "li",
          { class: `entry ${e.kind.replace(".", "-")}${undone.has(e.id) && isAttack ? " undone" : ""}`, dataset: { seq: e.seq, attack: isAttack ? e.id : undefined } },
          h("span", { class: "seq" }, `#${e.seq}`),
          h("span", { class: "what" }, line),
          h("span", { class: "by hint" }, ` ${e.user}`),
          isAttack ? h("button", { type: "button", class: "small", onclick: () => showAttack(e.id) }, "Card") : null,
          isAttack && isGM() && !undone.has(e.id) ? h("button", { type: "button", class: "small undo", onclick: () => undo(e.id) }, "Undo") : null,
        );
      }),
  );
}

async function showAttack(id) {
  const ack = await call("attack.get", { id });
  if (!ack.ok) return toast(describeError(ack.error), "error");
  onResolved(ack.attack, { undone: ack.undone });
  const card = state.cards.get(id);
  if (!card) return;
  card.el.scrollIntoView({ block: "nearest" });
  card.el.classList.add("flash");
  setTimeout(() => card.el.classList.remove("flash"), 1200);
}

/**
 * After a reconnect: a card still being rolled when the connection dropped may never
 * finish (a server that stopped mid-attack applies nothing of it). Say so; if the
 * attack does finish after all, its resolution redraws the card as usual.
 */
export function markInterrupted() {
  for (const card of state.cards.values()) {
    if (card.status !== "running") continue;
    card.status = "failed";
    card.waiting = null;
    renderCardHead(card);
    fill(
      card.foot,
      h("div", { class: "error" }, "Interrupted: the connection dropped while this attack was being rolled. If the server restarted, nothing of it was applied."),
    );
  }
}
