// @ts-check
/** The bridge's questions to this user, and the GM's Players dialog. */

import { walk } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { BridgeError } from "../logic/connection.js";
import { bridgeUserName } from "../logic/ids.js";
import { answerFor, decisionModel, secondsLeft } from "../logic/decisions.js";
import { esc } from "../logic/chat.js";
import { formHtml, rawValues } from "../logic/form.js";
import { need, report, setting, t } from "./context.js";
import { actorOf } from "./actors.js";
import { openDialog } from "./dialogs.js";

/**
 * A `decision` for this user: a dialog with the options, their parameters and a
 * countdown. Closing it resolves with undefined, so nothing is sent and the rules'
 * default applies; the bridge's `decision.closed` (signal) closes it.
 * @param {any} decision @param {AbortSignal} signal
 */
export async function askDialog(decision, signal) {
  const names = (/** @type {string} */ id) => actorOf(id)?.name ?? id;
  const model = decisionModel(decision, { names });
  const params = model.options
    .filter((o) => o.fields.length)
    .map((o) => `<fieldset data-option="${esc(o.id)}"><legend>${esc(o.label)}</legend>${formHtml(o.fields)}</fieldset>`)
    .join("");
  const who = model.tokenName ? `<p><b>${esc(model.tokenName)}</b>${model.attacker ? ` ← ${esc(model.attacker)}` : ""}</p>` : "";
  const left = secondsLeft(model);
  const countdown = left === null ? "" : `<p class="vtt-bridge-countdown">${esc(t("Decision.Left"))} <span>${left}</span> s</p>`;
  /** @type {ReturnType<typeof setInterval>|undefined} */
  let timer;
  const { dialog, result } = openDialog({
    window: { title: model.prompt },
    content: `<div class="vtt-bridge-decision">${who}${countdown}${params}</div>`,
    buttons: model.options.map((o) => ({
      action: o.id,
      // What the option gives where the rules know it: "Parry DV 5 (daiklave)", "Do nothing (DV 0)".
      label: o.isDefault ? `${o.text} (${t("Decision.Default")})` : o.text,
      default: o.isDefault,
      callback: (/** @type {Event} */ _event, /** @type {any} */ button) => {
        const form = /** @type {HTMLFormElement} */ (button.form);
        const entries = [...new FormData(form).entries()].map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)]));
        return answerFor(model, o.id, rawValues(o.fields, entries, walk));
      },
    })),
    render: (_dialog, root) => {
      const span = root?.querySelector(".vtt-bridge-countdown span");
      if (span) timer = setInterval(() => (span.textContent = String(secondsLeft(model))), 500);
    },
  });
  const onAbort = () => void dialog.close();
  signal.addEventListener("abort", onAbort);
  if (signal.aborted) onAbort();
  try {
    return (await result) ?? undefined;
  } finally {
    if (timer) clearInterval(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/** The GM's Players dialog: a key per player. */
export async function playersDialog() {
  const connection = need();
  if (connection.role !== "gm") throw new BridgeError("forbidden", t("Players.GMOnly"));
  const players = (game.users?.contents ?? []).filter((u) => !u.isGM);
  const rows = players
    .map((u) => `<tr><td>${esc(u.name)}</td><td><code>${esc(bridgeUserName({ id: String(u.id) }))}</code></td><td><button type="button" data-user="${esc(u.id)}">${esc(t("Players.Create"))}</button></td><td><input type="text" readonly class="key" data-user="${esc(u.id)}"></td></tr>`)
    .join("");
  const { result } = openDialog({
    window: { title: t("Players.Title") },
    content: `<p>${esc(t("Players.Hint", { table: setting("table"), url: setting("url") }))}</p><table class="vtt-bridge-players"><tr><th>${esc(t("Players.User"))}</th><th>${esc(t("Players.Name"))}</th><th></th><th>${esc(t("Players.Key"))}</th></tr>${rows}</table>`,
    buttons: [{ action: "close", label: t("Close"), default: true }],
    render: (_dialog, root) => {
      for (const button of root?.querySelectorAll("button[data-user]") ?? []) {
        button.addEventListener("click", async () => {
          const id = String(button.getAttribute("data-user"));
          try {
            const key = await connection.createKey(bridgeUserName({ id }));
            const out = /** @type {HTMLInputElement|null} */ (root?.querySelector(`input.key[data-user="${CSS.escape(id)}"]`));
            if (out) {
              out.value = key;
              out.select();
            }
          } catch (err) {
            report(err);
          }
        });
      }
    },
  });
  await result;
}
