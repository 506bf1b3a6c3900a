// @ts-check
/**
 * The sheet's Bridge tab: the actor's bridge flags as a form generated from the
 * ruleset's token schema.
 *
 * The tab lives inside the sheet's <form> but is not part of it: its fields sit in a
 * <form> of their own (so FormDataExtended, which reads the sheet form's elements, never
 * sees them) and its input, change and submit events stop at the tab (so
 * `submitOnChange` never fires for them). What was typed is kept per actor until it
 * is saved, so a re-render of the sheet (any update of the actor) keeps it. The tab is
 * put back on every render: ApplicationV2 sheets redraw only their parts, v1 sheets
 * their whole form, and both forget that the Bridge tab was the one shown.
 */

import { collect, fieldModel, walk, errorsAt, applyErrors, setValues } from "../../../../vtt_bridge/server/static/common/schema-form.js";
import { BridgeError } from "../logic/connection.js";
import { bridgeFlags } from "../logic/tokens.js";
import { esc } from "../logic/chat.js";
import { applyControl, formHtml, rawValues } from "../logic/form.js";
import { MODULE_ID, adapters, report, rulesetInfo, state, t } from "./context.js";
import { replaceFlags, syncActor } from "./actors.js";
import { openDialog } from "./dialogs.js";

export const TAB = "vtt-bridge";

/**
 * The Bridge tab's form state for an actor: the field models of its rules data and
 * pack data, kept while the tab is open so list items and map keys added stay.
 * @param {any} actor
 */
function tabForm(actor) {
  const data = actor.toObject();
  const f = bridgeFlags(data);
  const ruleset = f.ruleset ? rulesetInfo(f.ruleset) : null;
  // What the system's adapter maps shows as the bridge will get it (it wins over the tab).
  const adapter = adapters.for(game.system?.id ?? "");
  const mapped = ruleset && adapter.ruleset === ruleset.id ? adapter.toSystem(data) : {};
  return {
    actor,
    flags: f,
    ruleset,
    system: ruleset ? fieldModel(ruleset.token_schema, { ...f.system, ...mapped }, "system") : [],
    /** @type {Record<string, any[]>} */
    packs: Object.fromEntries(Object.entries(ruleset?.flags || {}).map(([plugin, schema]) => [plugin, fieldModel(schema, f.packs[plugin], `packs.${plugin}`)])),
  };
}

/** @typedef {ReturnType<typeof tabForm>} TabForm */

/**
 * Unsaved edits per actor (uuid): the form state (list items added stay) and the
 * values typed, by path.
 * @type {Map<string, {form: TabForm, typed: Record<string, any>}>}
 */
const drafts = new Map();

/** The actor's tab form, with what was typed and not saved yet. @param {any} actor */
function draftOf(actor) {
  const key = String(actor.uuid ?? actor.id);
  let draft = drafts.get(key);
  const flags = bridgeFlags(actor.toObject());
  if (!draft || draft.form.flags.ruleset !== flags.ruleset) {
    draft = { form: tabForm(actor), typed: {} };
    drafts.set(key, draft);
  }
  return draft;
}

/** @param {any} actor */
const dropDraft = (actor) => drafts.delete(String(actor.uuid ?? actor.id));

/** The Bridge tab's HTML. @param {TabForm} form */
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

/** Every model of the form. @param {TabForm} form */
const models = (form) => [form.system, ...Object.values(form.packs)];

/**
 * The element the tab draws into: a <form> of its own, whose events stay inside it.
 * @param {HTMLElement} host
 */
function isolate(host) {
  const form = document.createElement("form");
  form.className = "vtt-bridge-form";
  form.autocomplete = "off";
  for (const type of ["input", "change", "submit", "keydown"]) {
    form.addEventListener(type, (ev) => {
      ev.stopPropagation();
      if (type === "submit") ev.preventDefault();
    });
  }
  host.replaceChildren(form);
  return form;
}

/**
 * Draw the tab into `host` and wire it: save, ruleset choice, list and map controls.
 * @param {any} actor @param {HTMLElement} host
 */
export function mountTab(actor, host) {
  const draft = draftOf(actor);
  const { form, typed } = draft;
  for (const m of models(form)) setValues(m, typed);
  if ("enabled" in typed) form.flags = { ...form.flags, enabled: typed.enabled === true };
  const root = isolate(host);
  root.innerHTML = tabHtml(form);
  const remember = (/** @type {Event} */ ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target);
    if (input?.name && input.name !== "ruleset") typed[input.name] = input.type === "checkbox" ? input.checked : input.value;
  };
  root.addEventListener("input", remember);
  root.addEventListener("change", remember);
  root.querySelector("select[name=ruleset]")?.addEventListener("change", async (ev) => {
    const ruleset = /** @type {HTMLSelectElement} */ (ev.target).value || null;
    dropDraft(actor);
    await actor.setFlag(MODULE_ID, "ruleset", ruleset);
    if (host.isConnected) mountTab(actor, host);
  });
  root.querySelector(".vtt-bridge-save")?.addEventListener("click", () => void saveTab(actor, root).catch(report));
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
      for (const m of models(form)) if (m !== model) setValues(m, raw);
      // The control redrew the model from the widgets: what is typed is in it now.
      draft.typed = { enabled: raw.enabled === true };
      mountTab(actor, host);
    });
  }
}

/**
 * Read the tab back and save it to the actor's flags; on the GM's client, update the
 * bridge token (once: the actor update of the save is not synced again by `updateActor`).
 * @param {any} actor @param {HTMLElement} root
 */
async function saveTab(actor, root) {
  const { form } = draftOf(actor);
  const { ruleset } = form;
  const entries = tabEntries(root);
  /** @type {Record<string, any>} */
  const flags = { enabled: entries.enabled === true, ruleset: ruleset?.id ?? null };
  /** @type {Record<string, any>} */
  let system = {};
  /** @type {Record<string, any>} */
  const packs = {};
  if (ruleset) {
    try {
      system = pruneNullGroups(collect(form.system, rawValues(form.system, Object.entries(entries), walk)), ruleset.token_schema);
      for (const [plugin, model] of Object.entries(form.packs)) packs[plugin] = collect(model, rawValues(model, Object.entries(entries), walk));
    } catch (err) {
      const errors = /** @type {any} */ (err).errors;
      if (!errors) throw err;
      for (const m of models(form)) applyErrors(m, errors);
      ui.notifications?.warn(Object.entries(errors).map(([k, v]) => `${k}: ${v}`).join("; "));
      return;
    }
  }
  dropDraft(actor);
  await replaceFlags(
    actor,
    { [`flags.${MODULE_ID}.enabled`]: flags.enabled, [`flags.${MODULE_ID}.ruleset`]: flags.ruleset, [`flags.${MODULE_ID}.system`]: system, [`flags.${MODULE_ID}.packs`]: packs },
    { vttBridgeSave: true },
  );
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
 * Drop the groups of the rules data that the form read as a group of nothing: an
 * optional group (a health track the actor has none of) whose required lists came back
 * null is the group left out (the bridge then takes its default), not a half-filled one.
 * @param {Record<string, any>} system @param {any} schema  the ruleset's token schema
 */
function pruneNullGroups(system, schema) {
  const out = { ...system };
  for (const [key, value] of Object.entries(system)) {
    const sub = schema?.properties?.[key];
    if (!sub || sub.type !== "object" || !sub.properties || !value || typeof value !== "object") continue;
    const missing = (sub.required ?? []).some((/** @type {string} */ r) => value[r] === null || value[r] === undefined);
    if (missing) delete out[key];
  }
  return out;
}

/** Which v1 sheets show the Bridge tab (a v1 re-render falls back to the first tab). */
const shownV1 = new WeakMap();

/**
 * Put the Bridge tab into an actor sheet that has tabs (on every render); sheets without
 * get a header button.
 * @param {any} app @param {HTMLElement} root
 */
export function injectTab(app, root) {
  const actor = app.document ?? app.actor;
  if (!actor || actor.documentName !== "Actor" || !actor.isOwner) return;
  const nav = root.querySelector("nav.sheet-tabs, nav.tabs");
  const body = root.querySelector(".sheet-body") ?? nav?.parentElement;
  if (!nav || !body) return;
  const group = nav.getAttribute("data-group") ?? "primary";
  const appV2 = typeof app.changeTab === "function";
  if (!nav.querySelector(`[data-tab="${TAB}"]`)) {
    const link = document.createElement("a");
    link.className = "item";
    link.dataset.tab = TAB;
    link.dataset.group = group;
    if (appV2) link.dataset.action = "tab"; // ApplicationV2 switches tabs through this action
    link.innerHTML = `<i class="fa-solid fa-dice-d10"></i> ${esc(t("Sheet.Tab"))}`;
    nav.append(link);
  }
  if (!appV2) {
    nav.addEventListener("click", (ev) => {
      const item = /** @type {HTMLElement|null} */ (/** @type {HTMLElement} */ (ev.target).closest("[data-tab]"));
      if (item) shownV1.set(app, item.dataset.tab === TAB);
    });
  }
  let section = /** @type {HTMLElement|null} */ (root.querySelector(`section[data-tab="${TAB}"]`));
  if (!section) {
    section = document.createElement("section");
    section.className = "tab vtt-bridge";
    section.dataset.tab = TAB;
    section.dataset.group = group;
    body.append(section);
    mountTab(actor, section);
  }
  if (appV2 && app.tabGroups?.[group] === TAB) app.changeTab(TAB, group, { force: true });
  else if (!appV2 && shownV1.get(app)) app.activateTab?.(TAB, { group });
}

/** A dialog with the Bridge tab, for sheets without tabs. @param {any} actor */
export async function openTabDialog(actor) {
  const { result } = openDialog({
    window: { title: `${t("Sheet.Tab")}: ${actor.name}` },
    content: `<div class="vtt-bridge-mount"></div>`,
    buttons: [{ action: "close", label: t("Close"), default: true }],
    render: (_dialog, root) => {
      const mount = /** @type {HTMLElement|null} */ (root?.querySelector(".vtt-bridge-mount") ?? null);
      if (mount) mountTab(actor, mount);
    },
  });
  await result;
}
