// @ts-check
/** Attacking: the declaration dialog (with the odds) and `api.attack()`. */

import { walk } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { BridgeError } from "../logic/connection.js";
import { bridgeFlags } from "../logic/tokens.js";
import { collectDeclaration, declarationModel } from "../logic/declaration.js";
import { esc } from "../logic/chat.js";
import { oddsHtml } from "../logic/odds.js";
import { formHtml, rawValues } from "../logic/form.js";
import { need, report, rulesetInfo, t } from "./context.js";
import { idOf, wantedToken } from "./actors.js";
import { postCard } from "./cards.js";
import { openDialog } from "./dialogs.js";
import { extensions } from "./extensions.js";
import { charmsHtml } from "./charms.js";

/**
 * The declaration dialog: only what the attacking token knows, with the odds of the
 * attack as declared under it (asked again whenever a field changes). Resolves with
 * the declaration, or null when cancelled.
 * @param {any} ruleset @param {any} token  the attacker as the bridge keeps it (its flags)
 * @param {((declaration: object) => Promise<any>)|null} [askOdds]  `attack.odds` for a declaration
 * @param {(id: string) => string} [nameOf]  a bridge token id → the name the odds show
 * @param {Record<string, any>} [prefill]  a declaration to start the form with (e.g. the weapon clicked on the sheet)
 * @param {string} [extra]  HTML shown above the odds (the character's Charms not automated)
 * @returns {Promise<object|null>}
 */
export async function declarationDialog(ruleset, token, askOdds = null, nameOf = (id) => id, prefill = {}, extra = "") {
  const model = declarationModel(ruleset, prefill, token);
  const options = model.options.length
    ? `<p class="hint">${esc(t("Attack.Options"))}</p><ul class="hint">${model.options.map((o) => `<li title="${esc(o.description)}">${esc(o.label)}</li>`).join("")}</ul>`
    : "";
  const declarables = model.declarables
    .map(
      (d) =>
        `<fieldset><legend><label><input type="checkbox" name="declare:${esc(d.id)}"> ${esc(d.label)}</label> <span class="plugin">${esc(d.plugin)}</span></legend>` +
        `${d.description ? `<p class="hint">${esc(d.description)}</p>` : ""}${formHtml(d.fields)}</fieldset>`,
    )
    .join("");
  const odds = askOdds ? `<section class="vtt-bridge-odds"><h4>${esc(t("Attack.Odds"))}</h4><div class="body"></div></section>` : "";
  /** The declaration the form holds. @param {HTMLFormElement} form */
  const read = (form) => {
    const entries = [...new FormData(form).entries()].map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)]));
    const chosen = entries.filter(([k]) => k.startsWith("declare:")).map(([k]) => k.slice("declare:".length));
    const allFields = [...model.fields, ...model.declarables.flatMap((d) => d.fields)];
    return collectDeclaration(model, rawValues(allFields, entries, walk), chosen);
  };
  /** Ask the odds of what the form holds and show them (the latest answer only). */
  let asked = 0;
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;
  const showOdds = (/** @type {HTMLElement} */ root) => {
    const body = /** @type {HTMLElement|null} */ (root.querySelector(".vtt-bridge-odds .body"));
    const form = root.querySelector("form") ?? root.closest("form");
    if (!askOdds || !body || !form) return;
    const mine = ++asked;
    let declaration;
    try {
      declaration = read(/** @type {HTMLFormElement} */ (form));
    } catch (err) {
      body.innerHTML = `<p class="hint">${esc(t("Attack.OddsNone", { reason: err instanceof Error ? err.message : String(err) }))}</p>`;
      return;
    }
    body.innerHTML = `<p class="hint">${esc(t("Attack.OddsWorking"))}</p>`;
    askOdds(declaration).then(
      (answer) => {
        if (mine === asked) body.innerHTML = oddsHtml(answer, nameOf);
      },
      (err) => {
        const reason = err instanceof BridgeError ? `${err.code}: ${err.message}` : String(err);
        if (mine === asked) body.innerHTML = `<p class="hint">${esc(t("Attack.OddsNone", { reason }))}</p>`;
      },
    );
  };
  const { result } = openDialog({
    window: { title: t("Attack.Title", { ruleset: model.title }) },
    content: `<div class="vtt-bridge-declare">${formHtml(model.fields)}${declarables}${options}${extra}${odds}</div>`,
    buttons: [
      {
        action: "attack",
        label: t("Attack.Go"),
        default: true,
        callback: (/** @type {Event} */ _event, /** @type {any} */ button) => read(/** @type {HTMLFormElement} */ (button.form)),
      },
      { action: "cancel", label: t("Cancel") },
    ],
    render: (_dialog, root) => {
      if (!root || !askOdds) return;
      const later = () => {
        clearTimeout(timer);
        timer = setTimeout(() => showOdds(root), 350);
      };
      root.addEventListener("change", later);
      root.addEventListener("input", later);
      showOdds(root);
    },
  });
  const chosen = await result;
  clearTimeout(timer);
  return chosen && typeof chosen === "object" ? chosen : null;
}

/**
 * Attack with a token against the user's targets: `game.modules.get("vtt-bridge").api.attack()`.
 * @param {{attacker?: any, targets?: any[], declaration?: object, dialog?: boolean, prefill?: Record<string, any>}} [options]  `prefill`: a declaration the dialog starts with
 */
export async function attack(options = {}) {
  const connection = need();
  const attacker = options.attacker ?? canvas?.tokens?.controlled?.[0];
  if (!attacker) throw new BridgeError("invalid_request", t("Attack.NoAttacker"));
  const targets = options.targets ?? [...(game.user?.targets ?? [])];
  if (!targets.length) throw new BridgeError("invalid_request", t("Attack.NoTargets"));
  const actor = attacker.actor ?? attacker;
  const flags = bridgeFlags(actor.toObject());
  if (!flags.enabled || !flags.ruleset) throw new BridgeError("invalid_request", t("Attack.NotMarked", { name: actor.name }));
  const ruleset = rulesetInfo(flags.ruleset);
  if (!ruleset) throw new BridgeError("unknown_ruleset", flags.ruleset);
  let declaration = options.declaration ?? {};
  if (options.dialog !== false && !options.declaration) {
    // What the attacker knows, as the bridge has it (it refuses the rest); else as this world has it.
    const id = idOf(attacker);
    const token = await connection.request("token.get", { id }).then((ack) => ack.token, () => wantedToken(actor, id));
    const request = { ruleset: ruleset.id, attacker: id, targets: targets.map(idOf) };
    // The odds name every model a blast may catch: any token on the scene, not only the targets.
    const names = new Map([...(canvas?.tokens?.placeables ?? []), attacker, ...targets].map((x) => [idOf(x), String(x.name ?? x.document?.name ?? idOf(x))]));
    const askOdds = (/** @type {object} */ d) => connection.request("attack.odds", { ...request, declaration: d }, { timeout: 30000 }).then((ack) => ack.odds);
    const chosen = await declarationDialog(ruleset, token, askOdds, (tid) => names.get(tid) ?? tid, options.prefill, charmsHtml(actor, ruleset));
    if (!chosen) return null;
    declaration = chosen;
  }
  // The feature modules may change the request (a spray's models from its template) and see the record (an AOE drawn).
  const context = { ruleset, attacker, targets };
  const request = await extensions.prepare({ ruleset: ruleset.id, attacker: idOf(attacker), targets: targets.map(idOf), declaration }, context);
  const record = await connection.attack(request);
  await postCard(record);
  await extensions.resolved(record, context, report);
  return record;
}
