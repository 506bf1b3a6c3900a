// @ts-check
/**
 * vtt-bridge for Foundry VTT: the Foundry-facing part. Everything that decides
 * something lives in ../logic (plain modules the Node tests run); this file wires
 * it to Foundry: settings, the connection, the sheet tab, the Token HUD control,
 * the dialogs and the chat cards.
 */

import { io } from "socket.io-client";

import { collect, fieldModel, walk, errorsAt, applyErrors, setValues } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { doubleFaces, parseDouble } from "../../../../vtt_bridge/server/static/common/rolls.js";
import { BridgeConnection, BridgeError, questionId } from "../logic/connection.js";
import { defaultAdapters } from "../logic/adapters.js";
import { bridgeTokenId, bridgeUserName } from "../logic/ids.js";
import { MODULE_ID, actorUpdateFromToken, bridgeFlags, isWriter, syncRequest, tokenFromActor } from "../logic/tokens.js";
import { answerFor, decisionModel, secondsLeft } from "../logic/decisions.js";
import { collectDeclaration, declarationModel } from "../logic/declaration.js";
import { esc } from "../logic/chat.js";
import { oddsHtml } from "../logic/odds.js";
import { applyControl, formHtml, rawValues } from "../logic/form.js";
import { extensions } from "./extensions.js";
import { registerSheetAttack } from "./sheet-attack.js";
import { registerTemplates } from "./templates.js";
import { registerCards } from "./cards.js";
import { registerCombat } from "./combat.js";
import { registerCharms } from "./charms.js";
import { registerErrors } from "./errors.js";

const adapters = defaultAdapters();

/**
 * The element of a rendered application or hook argument: an HTMLElement (v13), a
 * jQuery object (v12 hooks) or an application with `element`.
 * @param {any} html
 * @returns {HTMLElement|null}
 */
const rootOf = (html) => {
  if (html instanceof HTMLElement) return html;
  if (html?.element instanceof HTMLElement) return html.element;
  return html?.[0] instanceof HTMLElement ? html[0] : null;
};

/** The module's state on this client. */
const state = {
  /** @type {BridgeConnection|null} */
  connection: null,
  /** @type {any[]} */
  rulesets: [],
};

const t = (/** @type {string} */ key, /** @type {Record<string, string>} */ data = {}) =>
  game.i18n ? game.i18n.format(`VTTBRIDGE.${key}`, data) : key;

/** The feature modules (sheet attacks, templates, cards, combat, Charms, errors), set up at init. */
const features = /** @type {any} */ ({});

/** @param {unknown} err */
function report(err) {
  const message = err instanceof BridgeError ? `${err.code}: ${err.message}` : String(err);
  ui.notifications?.error(`vtt-bridge — ${message}`);
  console.error("vtt-bridge |", err);
}

// ---------------------------------------------------------------------------------------
// Settings and the connection
// ---------------------------------------------------------------------------------------

function registerSettings() {
  const reconnect = () => void connect();
  for (const [key, hint] of [
    ["url", "URL of the vtt-bridge server (http://127.0.0.1:8000)"],
    ["table", "The bridge table id (t-…)"],
    ["key", "Your key for that table (the GM key on the GM's machine; players paste the key the GM gave them)"],
  ]) {
    game.settings?.register(MODULE_ID, /** @type {"url"|"table"|"key"} */ (key), {
      name: t(`Settings.${key}.Name`),
      hint: t(`Settings.${key}.Hint`) || hint,
      // Client scope: stored on this machine only, never in the world where players could read it.
      scope: "client",
      config: true,
      type: String,
      default: key === "url" ? "http://127.0.0.1:8000" : "",
      onChange: reconnect,
    });
  }
  // The newest audit seq this client saw, per table ("<table> <seq>"), so a Foundry
  // restarted mid-game catches up from there (table.sync) instead of from the start.
  game.settings?.register(MODULE_ID, "seen", { scope: "client", config: false, type: String, default: "" });
}

/**
 * The seq this client saw last at `table`; null on a machine that never played there
 * (it starts from now rather than carding the table's whole history).
 * @param {string} table
 */
function seenAt(table) {
  const [at, seq] = String(game.settings?.get(MODULE_ID, "seen") ?? "").split(" ");
  return at === table && /^\d+$/.test(seq ?? "") ? Number(seq) : null;
}

/** @param {BridgeConnection} connection @param {string} table */
function remember(connection, table) {
  if (connection.seq > (seenAt(table) ?? -1)) void game.settings?.set(MODULE_ID, "seen", `${table} ${connection.seq}`);
}

/** @param {"url"|"table"|"key"} key */
function setting(key) {
  return String(game.settings?.get(MODULE_ID, key) ?? "").trim();
}

async function connect() {
  state.connection?.close();
  state.connection = null;
  const url = setting("url");
  const table = setting("table");
  const key = setting("key");
  if (!url || !table || !key) return null;
  const connection = new BridgeConnection({ io, url, table, key, since: seenAt(table) });
  connection.onDecision((decision, { signal }) => askDialog(decision, signal));
  connection.on("token.updated", ({ token }) => void writeBack(token));
  connection.on("connect", () => void refreshRulesets());
  connection.on("attack.resolved", () => remember(connection, table));
  connection.on("attack.undone", () => remember(connection, table));
  connection.onSync((sync, { reconnect }) => caughtUp(connection, table, sync, reconnect), report);
  try {
    await connection.connect();
    state.connection = connection;
    await refreshRulesets();
    ui.notifications?.info(t("Connected", { user: connection.user ?? "?" }));
    if (game.user?.isGM && isWriter(game.user, gameUsers())) await syncAll();
    return connection;
  } catch (err) {
    report(err);
    connection.close();
    return null;
  }
}

/**
 * After a connect or a reconnection (table.sync): post the cards of this user's own
 * attacks that no chat message shows yet (the attack went on while this Foundry was
 * away), let the writer bring actors up to the tokens' versions, and say which
 * questions the table still waits for.
 * @param {BridgeConnection} connection @param {string} table @param {any} sync @param {boolean} reconnect
 */
async function caughtUp(connection, table, sync, reconnect) {
  let posted = 0;
  for (const record of sync.attacks) {
    if (record.user === connection.user && !cardPosted(record.id)) {
      await postCard(record);
      posted += 1;
    }
  }
  if (game.user && isWriter(game.user, gameUsers())) {
    for (const token of sync.tokens) {
      const actor = actorOf(token.id);
      if (actor && bridgeFlags(actor.toObject()).version !== token.version) await writeBack(token);
    }
  }
  for (const question of sync.pending) {
    if (connection.open.has(questionId(question))) continue;
    const who = (question.waiting ?? []).join(", ");
    ui.notifications?.info(t("Pending", { prompt: String(question.prompt ?? question.key), who, left: String(Math.round(question.remaining ?? 0)) }));
  }
  if (reconnect) ui.notifications?.info(t("CaughtUp", { count: String(sync.attacks.length), posted: String(posted) }));
  remember(connection, table);
}

async function refreshRulesets() {
  if (!state.connection) return;
  state.rulesets = (await state.connection.rulesets()).rulesets;
}

function need() {
  if (!state.connection?.connected) throw new BridgeError("not_connected", t("NotConnected"));
  return state.connection;
}

/** @returns {{id: string, isGM: boolean, active: boolean}[]} */
function gameUsers() {
  return (game.users?.contents ?? []).map((u) => ({ id: String(u.id), isGM: u.isGM, active: u.active }));
}

// ---------------------------------------------------------------------------------------
// Actors as bridge tokens
// ---------------------------------------------------------------------------------------

/**
 * The bridge token id of a canvas token or an actor.
 * @param {any} thing  a Token (placeable), a TokenDocument or an Actor
 */
function idOf(thing) {
  const doc = thing?.document ?? thing;
  if (doc?.documentName === "Token") {
    return bridgeTokenId({ actorId: doc.actorId, tokenId: doc.id, actorLink: doc.actorLink });
  }
  return bridgeTokenId({ actorId: doc.id });
}

/** @param {any} actor */
function wantedToken(actor, id = idOf(actor), name = actor.name) {
  const data = actor.toObject();
  data.items = actor.items.map((/** @type {any} */ i) => i.toObject());
  const token = tokenFromActor(data, { id, adapter: adapters.for(game.system?.id ?? ""), users: gameUsers(), name });
  return features.charms ? features.charms.withCharms(token, data) : token;
}

/** GM: make the bridge hold what the actor says. @param {any} actor */
async function syncActor(actor, id = idOf(actor), name = actor.name) {
  const connection = need();
  const wanted = wantedToken(actor, id, name);
  if (!wanted) return null;
  let current = null;
  try {
    current = (await connection.request("token.get", { id })).token;
  } catch (err) {
    if (!(err instanceof BridgeError && err.code === "not_found")) throw err;
  }
  const req = syncRequest(current, wanted);
  if (!req) return current;
  if (req.event === "recreate") {
    await connection.request("token.delete", { id });
    return (await connection.request("token.create", wanted)).token;
  }
  return (await connection.request(req.event, req.payload)).token;
}

async function syncAll() {
  for (const actor of /** @type {any[]} */ (game.actors?.contents ?? [])) {
    if (bridgeFlags(actor.toObject()).enabled) await syncActor(actor).catch(report);
  }
  for (const scene of game.scenes?.contents ?? []) {
    for (const token of scene.tokens.contents) {
      if (!token.actorLink && token.actor && bridgeFlags(token.actor.toObject()).enabled) await syncActor(token.actor, idOf(token), token.name).catch(report);
    }
  }
}

/**
 * Find the actor a bridge token stands for.
 * @param {string} id
 * @returns {any}
 */
function actorOf(id) {
  if (id.startsWith("a-")) return game.actors?.get(id.slice(2)) ?? null;
  if (id.startsWith("t-")) {
    for (const scene of game.scenes?.contents ?? []) {
      const token = scene.tokens.get(id.slice(2));
      if (token) return token.actor;
    }
  }
  return null;
}

/**
 * The active GM's client writes bridge changes to the actors (`force`: any GM, the
 * card's Apply). @param {any} token @param {{force?: boolean}} [options] @returns {Promise<boolean>} written
 */
async function writeBack(token, options = {}) {
  if (!game.user || !(options.force ? game.user.isGM : isWriter(game.user, gameUsers()))) return false;
  const actor = actorOf(token.id);
  if (!actor) return false;
  const update = actorUpdateFromToken(token, actor.toObject(), adapters.for(game.system?.id ?? ""));
  await actor.update(update, { vttBridge: true });
  return true;
}

// ---------------------------------------------------------------------------------------
// The sheet's Bridge tab
// ---------------------------------------------------------------------------------------

/** @param {string} id */
function rulesetInfo(id) {
  return state.rulesets.find((r) => r.id === id) ?? null;
}

/**
 * The Bridge tab's form state for an actor: the field models of its rules data and
 * pack data, kept while the tab is open so list items and map keys added stay.
 * @param {any} actor
 */
function tabForm(actor) {
  const f = bridgeFlags(actor.toObject());
  const ruleset = f.ruleset ? rulesetInfo(f.ruleset) : null;
  return {
    actor,
    flags: f,
    ruleset,
    system: ruleset ? fieldModel(ruleset.token_schema, f.system, "system") : [],
    /** @type {Record<string, any[]>} */
    packs: Object.fromEntries(Object.entries(ruleset?.flags || {}).map(([plugin, schema]) => [plugin, fieldModel(schema, f.packs[plugin], `packs.${plugin}`)])),
  };
}

/** The Bridge tab's HTML. @param {ReturnType<typeof tabForm>} form */
function tabHtml(form) {
  const { flags: f, ruleset } = form;
  const options = state.rulesets
    .map((r) => `<option value="${esc(r.id)}"${r.id === f.ruleset ? " selected" : ""}>${esc(r.title || r.id)}</option>`)
    .join("");
  const adapter = adapters.for(game.system?.id ?? "");
  const parts = [
    `<div class="form-group"><label>${esc(t("Sheet.Enabled"))}</label><input type="checkbox" name="enabled"${f.enabled ? " checked" : ""}></div>`,
    `<div class="form-group"><label>${esc(t("Sheet.Ruleset"))}</label><select name="ruleset"><option value=""></option>${options}</select></div>`,
    `<p class="hint">${esc(t("Sheet.Adapter", { adapter: adapter.label }))}</p>`,
  ];
  if (ruleset) {
    parts.push(`<fieldset class="vtt-bridge-system"><legend>${esc(ruleset.title || ruleset.id)}</legend>${formHtml(form.system)}</fieldset>`);
    for (const [plugin, model] of Object.entries(form.packs)) {
      parts.push(`<fieldset class="vtt-bridge-pack"><legend>${esc(plugin)}</legend>${formHtml(model)}</fieldset>`);
    }
  } else if (!state.connection) {
    parts.push(`<p class="notes">${esc(t("NotConnected"))}</p>`);
  }
  parts.push(`<button type="button" class="vtt-bridge-save"><i class="fa-solid fa-floppy-disk"></i> ${esc(t("Sheet.Save"))}</button>`);
  return `<div class="vtt-bridge-tab">${parts.join("")}</div>`;
}

/** The tab's widget values by path. @param {HTMLElement} root @returns {Record<string, any>} */
function tabEntries(root) {
  /** @type {Record<string, any>} */
  const entries = {};
  for (const el of root.querySelectorAll("input[name], select[name]")) {
    const input = /** @type {HTMLInputElement} */ (el);
    entries[input.name] = input.type === "checkbox" ? input.checked : input.value;
  }
  return entries;
}

/**
 * Draw the tab into `root` and wire it: save, ruleset choice, list and map controls.
 * @param {ReturnType<typeof tabForm>} form @param {HTMLElement} root
 */
function mountTab(form, root) {
  root.innerHTML = tabHtml(form);
  root.querySelector("select[name=ruleset]")?.addEventListener("change", async (ev) => {
    const ruleset = /** @type {HTMLSelectElement} */ (ev.target).value || null;
    await form.actor.setFlag(MODULE_ID, "ruleset", ruleset);
    mountTab(tabForm(form.actor), root);
  });
  root.querySelector(".vtt-bridge-save")?.addEventListener("click", () => void saveTab(form, root).catch(report));
  for (const button of root.querySelectorAll("[data-add], [data-remove], [data-add-key], [data-remove-key]")) {
    button.addEventListener("click", () => {
      const b = /** @type {HTMLElement} */ (button);
      const path = b.dataset.add ?? b.dataset.remove ?? b.dataset.addKey ?? b.dataset.removeKey ?? "";
      const model = path.startsWith("packs.") ? form.packs[path.split(".")[1]] : form.system;
      const raw = tabEntries(root);
      const newKey = /** @type {HTMLInputElement|null} */ (root.querySelector(`[data-new-key="${CSS.escape(path)}"]`));
      applyControl(model, raw, {
        add: b.dataset.add,
        remove: b.dataset.remove,
        index: Number(b.dataset.index),
        addKey: b.dataset.addKey,
        removeKey: b.dataset.removeKey,
        key: b.dataset.key ?? newKey?.value.trim(),
      });
      for (const m of [form.system, ...Object.values(form.packs)]) if (m !== model) setValues(m, raw);
      form.flags = { ...form.flags, enabled: raw.enabled === true };
      mountTab(form, root);
    });
  }
}

/**
 * Read the tab back and save it to the actor's flags (the GM's client then updates the bridge).
 * @param {ReturnType<typeof tabForm>} form @param {HTMLElement} root
 */
async function saveTab(form, root) {
  const { actor, ruleset } = form;
  const entries = tabEntries(root);
  /** @type {Record<string, any>} */
  const flags = { enabled: entries.enabled === true, ruleset: ruleset?.id ?? null };
  if (ruleset) {
    try {
      flags.system = collect(form.system, rawValues(form.system, Object.entries(entries), walk));
      flags.packs = {};
      for (const [plugin, model] of Object.entries(form.packs)) flags.packs[plugin] = collect(model, rawValues(model, Object.entries(entries), walk));
    } catch (err) {
      const errors = /** @type {any} */ (err).errors;
      if (!errors) throw err;
      for (const m of [form.system, ...Object.values(form.packs)]) applyErrors(m, errors);
      ui.notifications?.warn(Object.entries(errors).map(([k, v]) => `${k}: ${v}`).join("; "));
      return;
    }
  }
  await actor.update({ [`flags.${MODULE_ID}`]: flags });
  if (game.user?.isGM && state.connection && flags.enabled) {
    try {
      await syncActor(actor);
    } catch (err) {
      if (err instanceof BridgeError && err.code === "invalid_request") {
        const messages = errorsAt(err.details, "token");
        ui.notifications?.warn(Object.entries(messages).map(([k, v]) => `${k}: ${v}`).join("; ") || err.message);
      } else report(err);
    }
  }
}

/**
 * Put the Bridge tab into an actor sheet that has tabs; sheets without get a header button.
 * @param {any} app @param {HTMLElement} root
 */
function injectTab(app, root) {
  const actor = app.document ?? app.actor;
  if (!actor || actor.documentName !== "Actor" || !actor.isOwner) return;
  const nav = root.querySelector("nav.sheet-tabs, nav.tabs");
  const body = root.querySelector(".sheet-body") ?? nav?.parentElement;
  if (!nav || !body || root.querySelector(".vtt-bridge-tab")) return;
  const group = nav.getAttribute("data-group") ?? "primary";
  const link = document.createElement("a");
  link.className = "item";
  link.dataset.tab = "vtt-bridge";
  link.dataset.group = group;
  link.dataset.action = "tab"; // ApplicationV2 sheets switch tabs through this action
  link.innerHTML = `<i class="fa-solid fa-dice-d10"></i> ${esc(t("Sheet.Tab"))}`;
  nav.append(link);
  const section = document.createElement("section");
  section.className = "tab vtt-bridge";
  section.dataset.tab = "vtt-bridge";
  section.dataset.group = group;
  body.append(section);
  mountTab(tabForm(actor), section);
}

/** A dialog with the Bridge tab, for sheets without tabs. @param {any} actor */
async function openTabDialog(actor) {
  const DialogV2 = foundry.applications.api.DialogV2;
  await DialogV2.wait({
    window: { title: `${t("Sheet.Tab")}: ${actor.name}` },
    content: `<div class="vtt-bridge-mount"></div>`,
    buttons: [{ action: "close", label: t("Close"), default: true }],
    render: (/** @type {Event} */ _event, /** @type {any} */ dialog) => {
      const mount = /** @type {HTMLElement|null} */ (rootOf(dialog)?.querySelector(".vtt-bridge-mount") ?? null);
      if (mount) mountTab(tabForm(actor), mount);
    },
    rejectClose: false,
  });
}

// ---------------------------------------------------------------------------------------
// Attacking
// ---------------------------------------------------------------------------------------

/**
 * The declaration dialog: only what the attacking token knows, with the odds of the
 * attack as declared under it (asked again whenever a field changes). Resolves with
 * the declaration, or null when cancelled.
 * @param {any} ruleset @param {any} token  the attacker as the bridge keeps it (its flags)
 * @param {((declaration: object) => Promise<any>)|null} [askOdds]  `attack.odds` for a declaration
 * @param {(id: string) => string} [nameOf]  a bridge token id → the name the odds show
 * @returns {Promise<object|null>}
 */
async function declarationDialog(ruleset, token, askOdds = null, nameOf = (id) => id, values = {}, extra = "") {
  const model = declarationModel(ruleset, values, token);
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
  const DialogV2 = foundry.applications.api.DialogV2;
  const result = await DialogV2.wait({
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
    render: (/** @type {Event} */ _event, /** @type {any} */ dialog) => {
      const root = rootOf(dialog);
      if (!root || !askOdds) return;
      const later = () => {
        clearTimeout(timer);
        timer = setTimeout(() => showOdds(root), 350);
      };
      root.addEventListener("change", later);
      root.addEventListener("input", later);
      showOdds(root);
    },
    rejectClose: false,
  });
  clearTimeout(timer);
  return result && typeof result === "object" ? result : null;
}

/**
 * Attack with a token against the user's targets: `game.modules.get("vtt-bridge").api.attack()`.
 * @param {{attacker?: any, targets?: any[], declaration?: object, dialog?: boolean, values?: object}} [options]
 *   `values`: what the dialog is prefilled with (a weapon from the sheet)
 */
async function attack(options = {}) {
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
    const charms = features.charms?.notAutomatedHtml(actor, ruleset) ?? "";
    const chosen = await declarationDialog(ruleset, token, askOdds, (tid) => names.get(tid) ?? tid, options.values ?? {}, charms);
    if (!chosen) return null;
    declaration = chosen;
  }
  const context = { ruleset, attacker, targets };
  const request = await extensions.prepare({ ruleset: ruleset.id, attacker: idOf(attacker), targets: targets.map(idOf), declaration }, context);
  const record = await connection.attack(request);
  await postCard(record);
  await extensions.resolved(record, context, report);
  return record;
}

// ---------------------------------------------------------------------------------------
// Chat cards
// ---------------------------------------------------------------------------------------

/** Is there a chat card of this attack already? @param {string} id */
function cardPosted(id) {
  return features.cards.posted(id);
}

/** The attacker's client posts the cards of one resolution (cards.js). @param {any} record */
async function postCard(record) {
  await features.cards.post(record);
}

/** Apply and Undo on the GM's card (cards.js). @param {any} message @param {HTMLElement} root */
function bindCard(message, root) {
  features.cards.bind(message, root);
}

// ---------------------------------------------------------------------------------------
// Questions
// ---------------------------------------------------------------------------------------

/**
 * A `decision` for this user: a dialog with the options, their parameters and a
 * countdown. Closing it resolves with undefined, so nothing is sent and the rules'
 * default applies; the bridge's `decision.closed` (signal) closes it.
 * @param {any} decision @param {AbortSignal} signal
 */
async function askDialog(decision, signal) {
  const names = (/** @type {string} */ id) => actorOf(id)?.name ?? id;
  const model = decisionModel(decision, { names });
  const DialogV2 = foundry.applications.api.DialogV2;
  const params = model.options
    .filter((o) => o.fields.length)
    .map((o) => `<fieldset data-option="${esc(o.id)}"><legend>${esc(o.label)}</legend>${formHtml(o.fields)}</fieldset>`)
    .join("");
  const who = model.tokenName ? `<p><b>${esc(model.tokenName)}</b>${model.attacker ? ` ← ${esc(model.attacker)}` : ""}</p>` : "";
  const left = secondsLeft(model);
  const countdown = left === null ? "" : `<p class="vtt-bridge-countdown">${esc(t("Decision.Left"))} <span>${left}</span> s</p>`;
  /** @type {any} */
  let dialog = null;
  /** @type {ReturnType<typeof setInterval>|undefined} */
  let timer;
  const onAbort = () => void dialog?.close();
  signal.addEventListener("abort", onAbort);
  try {
    const answer = await DialogV2.wait({
      window: { title: model.prompt },
      content: `<div class="vtt-bridge-decision">${who}${countdown}${params}</div>`,
      buttons: model.options.map((o) => ({
        action: o.id,
        label: o.isDefault ? `${o.label} (${t("Decision.Default")})` : o.label,
        default: o.isDefault,
        callback: (/** @type {Event} */ _event, /** @type {any} */ button) => {
          const form = /** @type {HTMLFormElement} */ (button.form);
          const entries = [...new FormData(form).entries()].map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)]));
          return answerFor(model, o.id, rawValues(o.fields, entries, walk));
        },
      })),
      render: (/** @type {Event} */ _event, /** @type {any} */ app) => {
        dialog = app;
        if (signal.aborted) void app.close();
        const span = rootOf(app)?.querySelector(".vtt-bridge-countdown span");
        if (span) timer = setInterval(() => (span.textContent = String(secondsLeft(model))), 500);
      },
      rejectClose: false,
    });
    return answer ?? undefined;
  } finally {
    if (timer) clearInterval(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

// ---------------------------------------------------------------------------------------
// The GM's Players dialog
// ---------------------------------------------------------------------------------------

async function playersDialog() {
  const connection = need();
  if (connection.role !== "gm") throw new BridgeError("forbidden", t("Players.GMOnly"));
  const players = (game.users?.contents ?? []).filter((u) => !u.isGM);
  const rows = players
    .map((u) => `<tr><td>${esc(u.name)}</td><td><code>${esc(bridgeUserName({ id: String(u.id) }))}</code></td><td><button type="button" data-user="${esc(u.id)}">${esc(t("Players.Create"))}</button></td><td><input type="text" readonly class="key" data-user="${esc(u.id)}"></td></tr>`)
    .join("");
  const DialogV2 = foundry.applications.api.DialogV2;
  await DialogV2.wait({
    window: { title: t("Players.Title") },
    content: `<p>${esc(t("Players.Hint", { table: setting("table"), url: setting("url") }))}</p><table class="vtt-bridge-players"><tr><th>${esc(t("Players.User"))}</th><th>${esc(t("Players.Name"))}</th><th></th><th>${esc(t("Players.Key"))}</th></tr>${rows}</table>`,
    buttons: [{ action: "close", label: t("Close"), default: true }],
    render: (/** @type {Event} */ _event, /** @type {any} */ app) => {
      const root = rootOf(app);
      if (!root) return;
      for (const button of root.querySelectorAll("button[data-user]")) {
        button.addEventListener("click", async () => {
          const id = String(button.getAttribute("data-user"));
          try {
            const key = await connection.createKey(bridgeUserName({ id }));
            const out = /** @type {HTMLInputElement|null} */ (root.querySelector(`input.key[data-user="${CSS.escape(id)}"]`));
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
    rejectClose: false,
  });
}

// ---------------------------------------------------------------------------------------
// Foundry hooks
// ---------------------------------------------------------------------------------------

/** Foundry's `dbl` modifier for the bridge's Exalted formulas (`cs>=7dbl10`). */
function registerDoubleModifier() {
  const Die = /** @type {any} */ (foundry.dice.terms.Die);
  Die.MODIFIERS.dbl = function doubleSuccesses(/** @type {string} */ modifier) {
    const face = parseDouble(modifier, this.faces);
    if (face !== null) doubleFaces(this.results, face);
  };
}


/** What the feature modules share of this file. */
const shared = {
  attack: (/** @type {any} */ options) => attack(options),
  need,
  idOf,
  actorOf,
  rulesetInfo,
  writeBack,
  report,
  t,
  rootOf,
  gameUsers,
  BridgeError,
  connected: () => !!state.connection?.connected,
  adapterFor: () => adapters.for(game.system?.id ?? ""),
};

Hooks.once("init", () => {
  registerSettings();
  registerDoubleModifier();
  Object.assign(features, {
    sheet: registerSheetAttack(shared),
    templates: registerTemplates(shared),
    cards: registerCards(shared),
    combat: registerCombat(shared),
    charms: registerCharms(shared),
    errors: registerErrors(shared),
  });
  const module = game.modules?.get(MODULE_ID);
  if (module) {
    /** @type {any} */ (module).api = {
      attack: (/** @type {any} */ options) => attack(options),
      attackWith: (/** @type {any} */ item, /** @type {any} */ options) => features.sheet.attackWith(item, options),
      registerTurnRule: (/** @type {string} */ ruleset, /** @type {any} */ rule) => features.combat.rules.register(ruleset, rule),
      registerCharmAliases: (/** @type {any} */ map) => features.charms.registerAliases(map),
      connect,
      players: playersDialog,
      sync: syncAll,
      openSheet: openTabDialog,
      registerAdapter: (/** @type {any} */ adapter) => adapters.register(adapter),
      get connection() {
        return state.connection;
      },
    };
  }
});

Hooks.once("ready", () => void connect());

Hooks.on("renderTokenHUD", (/** @type {any} */ hud, /** @type {any} */ html) => {
  const root = rootOf(html);
  const column = root?.querySelector(".col.right");
  const token = hud.object;
  if (!column || !token?.actor || !bridgeFlags(token.actor.toObject()).enabled) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "control-icon vtt-bridge-attack";
  button.dataset.tooltip = t("Attack.HUD");
  button.innerHTML = `<i class="fa-solid fa-khanda"></i>`;
  button.addEventListener("click", () => void attack({ attacker: token }).catch(report));
  column.append(button);
});

for (const hook of ["renderActorSheet", "renderActorSheetV2"]) {
  Hooks.on(/** @type {any} */ (hook), (/** @type {any} */ app, /** @type {any} */ html) => {
    const root = rootOf(html) ?? rootOf(app.element);
    if (root) injectTab(app, root);
  });
}

Hooks.on(/** @type {any} */ ("getHeaderControlsActorSheetV2"), (/** @type {any} */ app, /** @type {any} */ controls) => {
  controls.push({ icon: "fa-solid fa-dice-d10", label: t("Sheet.Tab"), action: "vttBridge", onClick: () => void openTabDialog(app.document) });
});

Hooks.on(/** @type {any} */ ("getActorSheetHeaderButtons"), (/** @type {any} */ app, /** @type {any} */ buttons) => {
  buttons.unshift({ label: t("Sheet.Tab"), class: "vtt-bridge", icon: "fa-solid fa-dice-d10", onclick: () => void openTabDialog(app.actor) });
});

// v13 renders chat messages as HTMLElement; v12 through renderChatMessage with jQuery.
for (const hook of ["renderChatMessageHTML", "renderChatMessage"]) {
  Hooks.on(/** @type {any} */ (hook), (/** @type {any} */ message, /** @type {any} */ html) => {
    const root = rootOf(html);
    if (root) bindCard(message, root);
  });
}

Hooks.on("updateActor", (/** @type {any} */ actor, /** @type {any} */ _change, /** @type {any} */ options, /** @type {string} */ userId) => {
  if (options?.vttBridge || !state.connection || !game.user || !isWriter(game.user, gameUsers())) return;
  // A refusal goes to the user who made the edit (errors.js), not only to this GM.
  if (bridgeFlags(actor.toObject()).enabled) void syncActor(actor).catch((err) => features.errors.relay(userId, actor, err));
});

Hooks.on(/** @type {any} */ ("getSceneControlButtons"), (/** @type {any} */ controls) => {
  if (!game.user?.isGM) return;
  const tokens = Array.isArray(controls) ? controls.find((c) => c.name === "token") : controls.tokens;
  if (!tokens) return;
  const tool = { name: "vtt-bridge-players", title: t("Players.Title"), icon: "fa-solid fa-key", button: true, order: 100, onClick: () => void playersDialog().catch(report), onChange: () => void playersDialog().catch(report) };
  if (Array.isArray(tokens.tools)) tokens.tools.push(tool);
  else tokens.tools[tool.name] = tool;
});
