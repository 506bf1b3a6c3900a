/* What if…: a card's attack again under its recorded dice with a pack toggled or a question
 * answered otherwise (`attack.whatif`), shown side by side with the logged card, step by
 * step, each step that differs marked. Nothing is applied unless the GM presses Apply
 * (`attack.whatif.apply`): a new attack, with its own card and undo. */

import { cardModel } from "../common/card.js";
import { renderStep } from "./chat.js";
import { call } from "./connection.js";
import { describeError, fill, h, human, requestId, toast } from "./dom.js";
import { isGM, state, tokenName } from "./state.js";

const names = (id) => tokenName(id);

/** The "What if…" form under a card: the installed packs (as the attack ran), and each
 * question it asked with the answer given; Run shows the what-if side by side. */
export function openWhatIf(card) {
  const attack = card.attack;
  if (!attack) return;
  if (card.whatif) {
    card.whatif.remove();
    card.whatif = null;
    return;
  }
  const installed = (state.table?.packs || []).map((p) => p.name);
  const ran = new Set(Object.keys(attack.packs || {}));
  const packs = installed.map((name) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", dataset: { pack: name }, checked: attack.packs ? ran.has(name) : true }), ` ${name}`),
  );
  const questions = (attack.decisions || [])
    .filter((d) => Array.isArray(d.options) && d.options.length)
    .map((d) =>
      h(
        "label",
        { class: "question" },
        `${d.prompt} `,
        h(
          "select",
          { dataset: { key: d.key, given: d.answer?.option ?? "" } },
          d.options.map((o) => h("option", { value: o.id, selected: o.id === d.answer?.option }, o.label || human(o.id))),
        ),
      ),
    );
  const result = h("div", { class: "whatif-result", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "whatif-form" },
    packs.length ? h("fieldset", { class: "whatif-packs" }, h("legend", {}, "Packs"), packs) : null,
    questions.length ? h("fieldset", { class: "whatif-answers" }, h("legend", {}, "Answers"), questions) : null,
    h("button", { type: "submit", class: "small" }, "Show what if"),
  );
  const panel = h("section", { class: "whatif", dataset: { attack: attack.id } }, h("h4", {}, "What if…"), form, result);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const payload = changes(form, attack, installed, ran);
    fill(result, h("p", { class: "hint" }, "Replaying…"));
    const ack = await call("attack.whatif", payload, 20000);
    if (!ack.ok) return fill(result, h("p", { class: "error" }, describeError(ack.error)));
    fill(result, sideBySide(ack.whatif, payload));
  });
  card.whatif = panel;
  card.foot.after(panel);
}

function changes(form, attack, installed, ran) {
  const payload = { attack: attack.id };
  const enable = [];
  const disable = [];
  for (const box of form.querySelectorAll("input[data-pack]")) {
    const was = attack.packs ? ran.has(box.dataset.pack) : true;
    if (box.checked && !was) enable.push(box.dataset.pack);
    if (!box.checked && was) disable.push(box.dataset.pack);
  }
  if (enable.length) payload.with = enable;
  if (disable.length) payload.without = disable;
  const answers = {};
  for (const select of form.querySelectorAll("select[data-key]")) {
    if (select.value !== select.dataset.given) answers[select.dataset.key] = select.value;
  }
  if (Object.keys(answers).length) payload.answers = answers;
  return payload;
}

function stepCell(record, index) {
  if (index === false || index === undefined || index === null) return h("td", { class: "missing" }, "— not reached");
  const step = record.steps[index];
  const model = cardModel({ ...record, steps: [step] }, { names }).steps[0];
  return h("td", {}, model ? h("ol", { class: "steps" }, renderStep(model)) : h("div", { class: "step-title" }, step.title));
}

function describeChanges(payload) {
  const parts = [];
  for (const p of payload.with || []) parts.push(`with ${p}`);
  for (const p of payload.without || []) parts.push(`without ${p}`);
  for (const [k, v] of Object.entries(payload.answers || {})) parts.push(`${human(k)}: ${human(v)}`);
  return parts.join(", ") || "nothing changed";
}

/** The two cards side by side: a row per step, ≠ on each that differs, then the outcome. */
export function sideBySide(whatif, payload) {
  const original = whatif.original;
  const replay = whatif.whatif;
  const rows = whatif.steps.map((pair) =>
    h(
      "tr",
      { class: pair.same ? "same" : "differs" },
      h("th", { scope: "row", class: "mark", title: pair.same ? "the same" : "differs" }, pair.same ? "" : "≠"),
      stepCell(original, pair.original),
      stepCell(replay, pair.whatif),
    ),
  );
  const outcome = Object.entries(whatif.outcome || {});
  const summary = (record) => cardModel(record, { names }).summary.text;
  const apply = isGM()
    ? h("button", { type: "button", class: "small apply", onclick: () => applyWhatIf(payload) }, "Apply as a new attack")
    : null;
  return h(
    "div",
    { class: "whatif-view" },
    h("p", { class: "hint" }, `${describeChanges(payload)} — same dice, nothing applied${whatif.dropped?.length ? `; left out: ${whatif.dropped.join(", ")}` : ""}`),
    h(
      "table",
      { class: "side-by-side" },
      h("thead", {}, h("tr", {}, h("th", { class: "mark" }, ""), h("th", {}, `Logged: ${summary(original)}`), h("th", {}, `What if: ${summary(replay)}`))),
      h("tbody", {}, rows),
    ),
    outcome.length
      ? h("ul", { class: "outcome-diff" }, outcome.map(([k, v]) => h("li", {}, `≠ ${human(k)}: ${JSON.stringify(v.original)} → ${JSON.stringify(v.whatif)}`)))
      : h("p", { class: "hint" }, "The outcome is the same."),
    apply,
    apply ? h("p", { class: "hint" }, "Applies on the tokens as they are now; undo the logged attack first to replace it.") : null,
  );
}

async function applyWhatIf(payload) {
  const ack = await call("attack.whatif.apply", { ...payload, request_id: requestId() }, 60000);
  if (ack.ok) toast("What-if applied as a new attack");
  else toast(`Apply refused: ${describeError(ack.error)}`, "error");
}
