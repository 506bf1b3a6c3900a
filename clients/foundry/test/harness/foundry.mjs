// A small simulation of exactly the Foundry VTT globals src/foundry/ touches, per
// version (12, 13, 14), in jsdom; the module's BUILT bundle (dist/vtt-bridge.js) is
// imported into it. Nothing of the bridge is simulated: scenarios start a real
// `vtt-bridge serve` (test/helpers.mjs) and the module talks to it over socket.io.
//
// Every simulated behaviour says where it comes from. "types:" is a file of
// @league-of-foundry-developers/foundry-vtt-types 13.345.1 (node_modules, under
// src/foundry/), "api:" a page of https://foundryvtt.com/api/, "issue:" a thread of
// github.com/foundryvtt/foundryvtt, "notes:" a release-notes page of
// https://foundryvtt.com/releases/. Where only a review of Foundry's behaviour backs a
// simulation (no public page found), the comment says so.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { JSDOM } from "jsdom";

import { exaltedActor } from "../helpers.mjs";
import { socketSim } from "./features.mjs";

export const MODULE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const EN = JSON.parse(readFileSync(join(MODULE_ROOT, "lang", "en.json"), "utf8"));

// ---------------------------------------------------------------------------------------
// foundry.utils
// ---------------------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const clone = (v) => (v === undefined ? undefined : structuredClone(v));

/**
 * `foundry.utils.expandObject`: dotted keys become nested objects
 * (types: common/utils/helpers.d.mts, expandObject).
 */
export function expandObject(flat) {
  const out = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split(".");
    let at = out;
    for (const p of parts.slice(0, -1)) at = at[p] = isObject(at[p]) ? at[p] : {};
    at[parts.at(-1)] = isObject(value) ? expandObject(value) : value;
  }
  return out;
}

/**
 * `foundry.utils.mergeObject(original, other, {performDeletions: true})` as a document
 * update applies it: objects merge key by key (keys the update does not name survive),
 * `"-=key": null` deletes `key`, `"==key": value` replaces `key` wholesale
 * (types: common/utils/helpers.d.mts, mergeObject examples "-=k1" and "==k1";
 * api: v13/functions/foundry.utils.mergeObject.html). Arrays and scalars replace.
 * The `==` replacement key is new in v13 (api: v12/functions/foundry.utils.mergeObject.html
 * names only `-=`): with `replaceKeys: false` (v12) it is an ordinary key.
 */
export function mergeObject(original, other, { replaceKeys = true } = {}) {
  for (const [key, value] of Object.entries(other)) {
    if (key.startsWith("-=")) {
      delete original[key.slice(2)];
    } else if (key.startsWith("==") && replaceKeys) {
      original[key.slice(2)] = clone(value);
    } else if (isObject(value) && isObject(original[key])) {
      mergeObject(original[key], value, { replaceKeys });
    } else if (isObject(value)) {
      original[key] = mergeObject({}, value, { replaceKeys });
    } else {
      original[key] = clone(value);
    }
  }
  return original;
}

// ---------------------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------------------

/**
 * `Hooks.on/once/callAll` (types: client/helpers/hooks.d.mts): handlers run in order,
 * synchronously; an exception in one is logged and the rest still run.
 */
class SimHooks {
  constructor() {
    this.handlers = new Map();
    this.errors = [];
  }
  on(name, fn, { once = false } = {}) {
    if (!this.handlers.has(name)) this.handlers.set(name, []);
    this.handlers.get(name).push({ fn, once });
    return this.handlers.get(name).length;
  }
  once(name, fn) {
    return this.on(name, fn, { once: true });
  }
  has(name) {
    return (this.handlers.get(name) ?? []).length > 0;
  }
  callAll(name, ...args) {
    const list = this.handlers.get(name) ?? [];
    this.handlers.set(name, list.filter((h) => !h.once));
    for (const h of list) {
      try {
        h.fn(...args);
      } catch (err) {
        this.errors.push({ hook: name, err });
      }
    }
    return true;
  }
}

// ---------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------

let nextId = 0;
const newId = (prefix) => `${prefix}${String(++nextId).padStart(16 - prefix.length, "0")}`;

/** `Collection` as the world's collections expose it: get, contents (types: common/utils/collection.d.mts). */
class SimCollection extends Map {
  get contents() {
    return [...this.values()];
  }
}

/** An embedded item: `toObject()` (types: common/abstract/document.d.mts, toObject). */
class SimItem {
  constructor(data) {
    this._source = { _id: data._id ?? newId("item"), ...clone(data) };
    this.type = data.type;
    this.name = data.name;
  }
  get id() {
    return this._source._id;
  }
  get system() {
    return this._source.system;
  }
  toObject() {
    return clone(this._source);
  }
}

/**
 * An Actor. `update(changes, options)` expands dotted keys and merges them into the
 * source (mergeObject above), then fires `updateActor(actor, changes, options, userId)`
 * on every client (types: client/hooks.d.mts, updateDocument hooks; api:
 * v13/classes/foundry.abstract.Document.html#update). A synthetic actor
 * (`isToken: true`, the actor of an unlinked token) shares its base actor's `id` and
 * keeps its changes in the token's delta (notes: 11.293, "ActorDelta"; types:
 * client/documents/actor.d.mts, isToken and token).
 */
export class SimActor {
  constructor(world, data, { token = null } = {}) {
    this.world = world;
    this.documentName = "Actor";
    this._source = { _id: data._id ?? newId("actor"), name: "Actor", type: "character", system: {}, flags: {}, ownership: { default: 0 }, ...clone(data) };
    // actor.items: an EmbeddedCollection — `get(id)` and the array methods the module uses
    // (types: common/utils/collection.d.mts, Collection#get, #map); each item's `parent`
    // is its actor (types: common/abstract/document.d.mts, parent).
    this.items = Object.assign((data.items ?? []).map((i) => Object.assign(new SimItem(i), { parent: this, actor: this })), {
      get(id) {
        return this.find((i) => i.id === id);
      },
    });
    this.token = token;
    this.openSheet = null;
  }
  /**
   * `actor.sheet`: the actor's sheet application, made on first use — an AppV2 sheet from
   * v13 (the core sheets are ApplicationV2 there), a v1 sheet on v12
   * (types: client/documents/abstract/client-document.d.mts, sheet).
   */
  get sheet() {
    return this.openSheet ?? new (this.world.version >= 13 ? this.world.ActorSheetV2 : this.world.ActorSheetV1)(this);
  }
  set sheet(app) {
    this.openSheet = app;
  }
  /** `Document.create(data)` / `document.delete()` (api: v13/classes/foundry.abstract.Document.html). */
  static async create(data) {
    return SimActor.world.addActor(data);
  }
  async delete() {
    this.world.actors.delete(this.id);
    return this;
  }
  get id() {
    return this._source._id;
  }
  get name() {
    return this.token?.name ?? this._source.name;
  }
  get isToken() {
    return !!this.token;
  }
  get uuid() {
    return this.token ? `Scene.${this.token.scene.id}.Token.${this.token.id}.Actor.${this.id}` : `Actor.${this.id}`;
  }
  get system() {
    return this._source.system;
  }
  get flags() {
    return this._source.flags;
  }
  /** The GM owns everything; a player owns what grants them level 3 (types: common/abstract/document.d.mts, isOwner). */
  get isOwner() {
    const user = this.world.user;
    return user.isGM || (this._source.ownership?.[user.id] ?? this._source.ownership?.default ?? 0) >= 3;
  }
  toObject() {
    const data = clone(this._source);
    data.items = this.items.map((i) => i.toObject());
    return data;
  }
  getFlag(scope, key) {
    return this._source.flags?.[scope]?.[key];
  }
  async setFlag(scope, key, value) {
    return this.update({ [`flags.${scope}.${key}`]: value });
  }
  async update(changes, options = {}) {
    this.world.updates.push({ actor: this, changes: clone(changes), options });
    mergeObject(this._source, expandObject(changes), { replaceKeys: this.world.version >= 13 });
    this.world.hooks.callAll("updateActor", this, changes, options, this.world.user.id);
    // Open sheets of the document re-render (api: v13/classes/foundry.abstract.Document.html,
    // _onUpdate re-renders the document's apps).
    await this.openSheet?.rerender();
    return this;
  }
}

/** A TokenDocument on a scene (types: common/documents/token.d.mts: actorId, actorLink; client/documents/token.d.mts: actor). */
export class SimTokenDocument {
  constructor(world, scene, { id, name, actor, actorLink }) {
    this.documentName = "Token";
    this.world = world;
    this.scene = scene;
    this.id = id ?? newId("token");
    this.name = name ?? actor.name;
    this.actorId = actor.id;
    this.actorLink = actorLink;
    // A linked token's actor is the world actor; an unlinked one gets a synthetic actor.
    this.actor = actorLink ? actor : new SimActor(world, actor.toObject(), { token: this });
  }
  /** The canvas placeable: `document`, `actor`, `name` (types: client/canvas/placeables/token.d.mts). */
  get object() {
    return { document: this, actor: this.actor, name: this.name, id: this.id };
  }
}

// ---------------------------------------------------------------------------------------
// The DOM bits Foundry adds
// ---------------------------------------------------------------------------------------

/**
 * A jQuery-like wrapper: what v1 Applications and v12 hooks pass as `html` — only
 * index 0 (the element) and `length` are read by the module (api: v12/functions/
 * hookEvents.renderApplication.html "html: jQuery"; issue 11333, notes for V13
 * Prototype 1: renderChatMessage passes jQuery, renderChatMessageHTML an HTMLElement).
 */
const jq = (el) => Object.assign([el], { jquery: "3.7.1" });

// ---------------------------------------------------------------------------------------
// DialogV2
// ---------------------------------------------------------------------------------------

function dialogClass(world) {
  const { window } = world;
  /**
   * `foundry.applications.api.DialogV2`: an ApplicationV2 (an event target dispatching
   * "render" and "close"; types: client/applications/api/application.d.mts) whose
   * element is a <dialog> holding a <form>; a button's `callback(event, button, dialog)`
   * gives the result, `submit(result, dialog)` gets it, then the dialog closes
   * (types: client/applications/api/dialog.d.mts, ButtonCallback, SubmitCallback).
   * What `dialog` is differs per version: v12 passed the dialog's ELEMENT to `render`
   * and button callbacks, v13 the DialogV2 instance (issue 12525: "The dialog argument
   * passed to DialogV2ButtonCallback and DialogV2RenderCallback, which was previously
   * the DialogV2#element (HTMLDialogElement), has been changed to the DialogV2 instance").
   * `wait()` resolves with the pressed button's result, or null when closed
   * (api: v13/classes/foundry.applications.api.DialogV2.html#wait).
   */
  return class DialogV2 extends window.EventTarget {
    constructor(options = {}) {
      super();
      this.options = options;
      this.element = null;
      this.rendered = false;
      this.closed = false;
    }
    get arg() {
      return world.version >= 13 ? this : this.element;
    }
    async render() {
      const doc = window.document;
      this.element = doc.createElement("dialog");
      this.element.className = "application dialog";
      this.element.innerHTML = `<header class="window-header"><h1 class="window-title"></h1></header><form class="window-content"><div class="dialog-content">${this.options.content ?? ""}</div><footer class="form-footer"></footer></form>`;
      this.element.querySelector(".window-title").textContent = this.options.window?.title ?? "";
      const footer = this.element.querySelector("footer");
      for (const b of this.options.buttons ?? []) {
        const button = doc.createElement("button");
        button.type = "submit";
        button.dataset.action = b.action;
        button.textContent = b.label;
        footer.append(button);
      }
      doc.body.append(this.element);
      this.rendered = true;
      world.dialogs.push(this);
      this.dispatchEvent(new window.Event("render"));
      return this;
    }
    /** What a click on a footer button does (DialogV2#_onSubmit). */
    async press(action) {
      const b = this.options.buttons.find((x) => x.action === action);
      const button = this.element.querySelector(`button[data-action="${action}"]`);
      const event = new window.Event("submit");
      const result = b.callback ? await b.callback(event, button, this.arg) : action;
      await this.options.submit?.(result, this.arg);
      await this.close();
      return result;
    }
    async close() {
      if (this.closed) return this;
      this.closed = true;
      this.element?.remove();
      world.dialogs.splice(world.dialogs.indexOf(this), 1);
      this.dispatchEvent(new window.Event("close"));
      return this;
    }
    static async wait({ rejectClose = false, close, render, ...options } = {}) {
      return new Promise((resolve, reject) => {
        const submit = options.submit;
        const dialog = new this({
          ...options,
          submit: async (result, d) => {
            await submit?.(result, d);
            resolve(result);
          },
        });
        dialog.addEventListener("close", (event) => {
          close?.(event, dialog.arg);
          if (rejectClose) reject(new Error("Dialog was dismissed without pressing a button."));
          else resolve(null);
        }, { once: true });
        if (render) dialog.addEventListener("render", (event) => render(event, dialog.arg), { once: true });
        void dialog.render({ force: true });
      });
    }
  };
}

// ---------------------------------------------------------------------------------------
// Actor sheets
// ---------------------------------------------------------------------------------------

/**
 * The fields a sheet form submits: `form.elements` with a name — what
 * FormDataExtended reads (api: v13/classes/foundry.applications.ux.FormDataExtended.html:
 * "the elements of the form"); checkboxes as booleans.
 */
function formFields(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name || el.disabled) continue;
    out[el.name] = el.type === "checkbox" ? el.checked : el.type === "number" ? Number(el.value) : el.value;
  }
  return out;
}

/** A system's sheet template: the fields of the actor's own data it has (a template.json system draws its fields). */
const SHEET_BODY = (actor) => `
  <nav class="sheet-tabs tabs" data-group="primary">
    <a class="item" data-tab="main" data-group="primary">Main</a>
    <a class="item" data-tab="notes" data-group="primary">Notes</a>
  </nav>
  <section class="sheet-body">
    <div class="tab" data-tab="main" data-group="primary"><input type="text" name="name" value="${actor.name}">
      ${actor.system?.essence ? `<input type="number" name="system.essence.value" value="${actor.system.essence.value}">` : ""}</div>
    <div class="tab" data-tab="notes" data-group="primary">${actor.system?.notes !== undefined ? `<textarea name="system.notes">${actor.system.notes}</textarea>` : ""}</div>
  </section>`;

function sheetClasses(world) {
  const { window } = world;
  const doc = window.document;

  /**
   * A v1 `ActorSheet` (FormApplication; api: v12/classes/client.ActorSheet.html,
   * v13 keeps it as foundry.appv1.sheets.ActorSheet, deprecated — notes: 13.341).
   * Render: the form's inner HTML is replaced, then core listeners bind the tabs
   * (`Tabs#bind` activates the remembered tab, or the FIRST tab when no nav item has
   * that name — api: v12/classes/client.Tabs.html#activate), then the
   * `renderActorSheet` hook gets (app, html: jQuery, data), html being the whole
   * window on the first render and the form only on a re-render (issue 3088).
   * `submitOnChange`: a change event bubbling to the form submits it;
   * `submitOnClose`: closing submits it (api: v12/interfaces/client.FormApplicationOptions.html).
   * A submission updates the actor with the expanded form data.
   */
  class ActorSheetV1 {
    constructor(actor, { submitOnChange = true, submitOnClose = true } = {}) {
      this.actor = actor;
      this.document = actor;
      this.options = { submitOnChange, submitOnClose };
      this.element = null;
      this.form = null;
      this.activeTabName = "main";
      this.renders = 0;
      actor.sheet = this;
    }
    get id() {
      return `ActorSheet-${this.actor.id}`;
    }
    async render() {
      const first = !this.element;
      if (first) {
        this.element = doc.createElement("div");
        this.element.className = "app window-app sheet actor";
        this.element.innerHTML = `<header class="window-header"></header><section class="window-content"><form class="editable"></form></section>`;
        doc.body.append(this.element);
        this.form = this.element.querySelector("form");
        this.form.addEventListener("change", (ev) => {
          if (this.options.submitOnChange && ev.target.name) void this.submit();
        });
        this.form.addEventListener("submit", (ev) => {
          ev.preventDefault();
          void this.submit();
        });
      }
      if (first) {
        // Application#_getHeaderButtons: `get<Class>HeaderButtons(app, buttons)` for each class
        // of the sheet (api: v12/classes/client.Application.html#_getHeaderButtons).
        this.headerButtons = [{ label: "Close", class: "close", onclick: () => this.close() }];
        world.hooks.callAll("getActorSheetHeaderButtons", this, this.headerButtons);
      }
      this.form.innerHTML = SHEET_BODY(this.actor);
      // Tabs#bind: listen on the nav, activate the remembered tab or the first one.
      const nav = this.form.querySelector("nav.sheet-tabs");
      nav.addEventListener("click", (ev) => {
        const item = ev.target.closest("[data-tab]");
        if (item) this.activateTab(item.dataset.tab);
      });
      this.activateTab(this.activeTabName);
      this.renders += 1;
      world.hooks.callAll("renderActorSheet", this, jq(first ? this.element : this.form), {});
      return this;
    }
    async rerender() {
      if (this.element) await this.render();
    }
    /** `Application#activateTab` / `Tabs#activate` (api: v12/classes/client.Application.html#activateTab). */
    activateTab(name) {
      const items = [...this.form.querySelectorAll("nav.sheet-tabs [data-tab]")];
      if (!items.some((i) => i.dataset.tab === name)) name = items[0].dataset.tab;
      this.activeTabName = name;
      for (const el of this.form.querySelectorAll("[data-tab]")) el.classList.toggle("active", el.dataset.tab === name);
    }
    async submit() {
      const data = formFields(this.form);
      world.sheetSubmits.push(data);
      await this.actor.update(data);
    }
    async close() {
      if (this.options.submitOnClose) await this.submit();
      this.element?.remove();
      this.element = null;
      this.actor.sheet = null;
    }
  }

  /**
   * An ApplicationV2 `ActorSheetV2` with Handlebars parts (api:
   * v13/classes/foundry.applications.sheets.ActorSheetV2.html; types:
   * client/applications/api/handlebars-application.d.mts, PARTS): the element is the
   * <form>; each part is an element with `data-application-part`, and a re-render
   * REPLACES ONLY THE PARTS, anything else inserted into the element stays (issue 14417:
   * "where prior it was enough to check that the relevant part id was in options.parts").
   * Hooks `renderActorSheetV2(app, element, context, options)` after every render
   * (types: client/hooks.d.mts, renderApplicationV2). Tabs: a nav item with
   * `data-action="tab"` calls `changeTab(tab, group)`, remembered in `tabGroups`;
   * a re-render marks the remembered tab active in the parts it draws — only the tabs
   * the sheet itself declares (api: v13/classes/foundry.applications.api.ApplicationV2.html#changeTab).
   * `form.submitOnChange`: a change event submits the form
   * (types: client/applications/api/document-sheet.d.mts).
   */
  class ActorSheetV2 {
    constructor(actor, { submitOnChange = true } = {}) {
      this.document = actor;
      this.options = { form: { submitOnChange } };
      this.tabGroups = { primary: "main" };
      this.element = null;
      this.renders = 0;
      actor.sheet = this;
    }
    get id() {
      return `ActorSheetV2-${this.document.id}`;
    }
    get form() {
      return this.element;
    }
    async render() {
      const first = !this.element;
      if (first) {
        this.element = doc.createElement("form");
        this.element.className = "application sheet actor";
        this.element.innerHTML = `<header class="window-header"></header><div class="window-content"><div data-application-part="tabs"></div><div data-application-part="body"></div></div>`;
        doc.body.append(this.element);
        this.element.addEventListener("change", (ev) => {
          if (this.options.form.submitOnChange && ev.target.name) void this.submit();
        });
        this.element.addEventListener("submit", (ev) => {
          ev.preventDefault();
          void this.submit();
        });
        this.element.addEventListener("click", (ev) => {
          const item = ev.target.closest("[data-action=tab]");
          if (item) this.changeTab(item.dataset.tab, item.dataset.group);
        });
      }
      if (first) {
        // ApplicationV2#_headerControls: `getHeaderControls<Class>(app, controls)` for each class
        // (types: client/applications/api/application.d.mts, HeaderControlsEntry; client/hooks.d.mts).
        this.headerControls = [];
        world.hooks.callAll("getHeaderControlsActorSheetV2", this, this.headerControls);
      }
      const body = doc.createElement("div");
      body.innerHTML = SHEET_BODY(this.document);
      const parts = {
        tabs: Object.assign(doc.createElement("div"), { className: "sheet-tabs-part" }),
        body: Object.assign(doc.createElement("div"), { className: "sheet-body-part" }),
      };
      const nav = body.querySelector("nav");
      for (const a of nav.querySelectorAll("a")) a.dataset.action = "tab";
      parts.tabs.append(nav);
      parts.body.append(body.querySelector(".sheet-body"));
      for (const [name, el] of Object.entries(parts)) {
        el.dataset.applicationPart = name;
        for (const t of el.querySelectorAll("[data-tab]")) t.classList.toggle("active", this.tabGroups.primary === t.dataset.tab);
        this.element.querySelector(`[data-application-part="${name}"]`).replaceWith(el);
      }
      this.renders += 1;
      world.hooks.callAll("renderActorSheetV2", this, this.element, {}, { isFirstRender: first });
      return this;
    }
    async rerender() {
      if (this.element) await this.render();
    }
    changeTab(tab, group, { force = false } = {}) {
      if (!force && this.tabGroups[group] === tab) return;
      this.tabGroups[group] = tab;
      for (const el of this.element.querySelectorAll(`[data-group="${group}"][data-tab]`)) el.classList.toggle("active", el.dataset.tab === tab);
    }
    async submit() {
      const data = formFields(this.element);
      world.sheetSubmits.push(data);
      await this.document.update(data);
    }
    async close() {
      this.element?.remove();
      this.element = null;
      this.document.sheet = null;
    }
  }
  return { ActorSheetV1, ActorSheetV2 };
}

// ---------------------------------------------------------------------------------------
// Rolls and chat
// ---------------------------------------------------------------------------------------

function rollClasses(world) {
  /**
   * `foundry.dice.Roll`: `fromData(json)` rebuilds an evaluated roll (formula, total,
   * terms; api: v13/classes/foundry.dice.Roll.html#fromData); `render()` draws the core
   * roll template, a `.dice-roll` with the formula, a `.dice-tooltip` of the dice and
   * the total (api: ...Roll.html#render, template templates/dice/roll.hbs).
   */
  class Roll {
    constructor(data) {
      // new Roll(formula).evaluate(): NdF rolled (api: v13/classes/foundry.dice.Roll.html#evaluate).
      if (typeof data === "string") {
        const [n, f] = data.split("d").map(Number);
        const results = Array.from({ length: n }, () => ({ result: 1 + Math.floor(Math.random() * f), active: true }));
        data = { formula: data, total: results.reduce((a, r) => a + r.result, 0), terms: [{ class: "Die", number: n, faces: f, results }] };
      }
      this.data = data;
      this.formula = data.formula;
      this.total = data.total;
      this.terms = data.terms ?? [];
      this.options = data.options ?? {};
    }
    static fromData(data) {
      world.rollsBuilt.push(data);
      return new Roll(data);
    }
    async evaluate() {
      return this;
    }
    async getTooltip() {
      const dice = this.terms.filter((t) => t.results).map((t) => `<ol class="dice-rolls">${t.results.map((r) => `<li class="roll die d${t.faces}">${r.result}</li>`).join("")}</ol>`);
      return `<div class="dice-tooltip">${dice.join("")}</div>`;
    }
    async render() {
      return `<div class="dice-roll"><div class="dice-result"><div class="dice-formula">${this.formula}</div>${await this.getTooltip()}<h4 class="dice-total">${this.total}</h4></div></div>`;
    }
  }
  /**
   * `foundry.dice.terms.Die.MODIFIERS`: modifier name → method, called with the term as
   * `this` and the modifier text (api: v13/classes/foundry.dice.terms.Die.html#MODIFIERS,
   * DiceTerm#_evaluateModifier).
   */
  class Die {
    static MODIFIERS = { r: "reroll", x: "explode", cs: "countSuccess" };
  }
  return { Roll, Die };
}

function chatClass(world) {
  const { window } = world;
  /**
   * `ChatMessage`: `create(data)` stores the message and renders it into the log;
   * `getSpeaker({token})` (types: client/documents/chat-message.d.mts). Rendering:
   * a message whose content has elements of its own shows only that content — core
   * renders its rolls' HTML only when the content has no child elements (api:
   * v13/classes/foundry.documents.ChatMessage.html#renderHTML; the README's promise
   * of core dice tooltips on such cards is defect 8 of issue 25). Hooks: v13+
   * `renderChatMessageHTML(message, html: HTMLElement, context)` (types: client/hooks.d.mts);
   * v13 and v14 also still call the deprecated `renderChatMessage(message, html: jQuery)`
   * for modules that listen to it, logging a deprecation warning ("Deprecated since
   * Version 13, backwards-compatible support will be removed in Version 15": issue
   * pwatson100/symbaroum#673's log); v12 calls only `renderChatMessage` with jQuery.
   */
  return class ChatMessage {
    constructor(data) {
      this.id = newId("msg");
      this.content = data.content ?? "";
      this.rolls = data.rolls ?? [];
      this.flags = clone(data.flags ?? {});
      this.whisper = data.whisper ?? [];
      this.speaker = data.speaker ?? {};
      this.element = null;
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    async delete() {
      world.messages.delete(this.id);
      this.element?.remove();
      return this;
    }
    static getSpeaker({ token = null } = {}) {
      return { alias: token?.name ?? world.user.name, token: token?.id ?? null, actor: token?.actorId ?? null };
    }
    static async create(data) {
      const message = new ChatMessage(data);
      world.messages.set(message.id, message);
      await message.renderHTML();
      return message;
    }
    async renderHTML() {
      const li = window.document.createElement("li");
      li.className = "chat-message message";
      li.dataset.messageId = this.id;
      const content = window.document.createElement("div");
      content.className = "message-content";
      content.innerHTML = this.content;
      if (!content.childElementCount && this.rolls.length) content.innerHTML = (await Promise.all(this.rolls.map((r) => r.render()))).join("");
      li.append(content);
      window.document.querySelector("#chat-log").append(li);
      this.element = li;
      if (world.version >= 13) {
        world.hooks.callAll("renderChatMessageHTML", this, li, {});
        if (world.hooks.has("renderChatMessage")) {
          world.deprecations.push("renderChatMessage");
          world.hooks.callAll("renderChatMessage", this, jq(li), {});
        }
      } else {
        world.hooks.callAll("renderChatMessage", this, jq(li), {});
      }
      return li;
    }
  };
}

// ---------------------------------------------------------------------------------------
// Scene controls
// ---------------------------------------------------------------------------------------

/**
 * `getSceneControlButtons(controls)`: v12 passes an ARRAY of controls whose tools are an
 * array; a button tool's `onClick()` runs on click (api: v12/functions/
 * hookEvents.getSceneControlButtons.html). v13 passes a RECORD of controls whose tools
 * are a record; a tool has `onChange(event, active)` (types:
 * client/applications/ui/scene-controls.d.mts, Tool) — and a button tool that still has
 * the v12 `onClick` gets BOTH called, onChange then the deprecated onClick (the review
 * of v13's SceneControls in issue 25, defect 2; not found on a public page here).
 */
function sceneControls(world) {
  const tools = world.version >= 13 ? {} : [];
  const token = { name: "token", title: "Tokens", tools, activeTool: "select" };
  const controls = world.version >= 13 ? { tokens: token } : [token];
  world.hooks.callAll("getSceneControlButtons", controls);
  return {
    controls,
    tool: (name) => (Array.isArray(tools) ? tools.find((t) => t.name === name) : tools[name]),
    click(name) {
      const tool = this.tool(name);
      const event = new world.window.Event("click");
      if (world.version >= 13) {
        tool.onChange?.(event, true);
        tool.onClick?.(event);
      } else {
        tool.onClick?.(event);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------------

/** The globals this harness sets, so a file's scenarios run one world at a time. */
const DOM_GLOBALS = ["window", "document", "HTMLElement", "HTMLInputElement", "HTMLSelectElement", "HTMLFormElement", "HTMLDialogElement", "Element", "Node", "Event", "CustomEvent", "FormData", "WebSocket", "XMLHttpRequest", "CSS", "navigator", "location"];

/**
 * A Foundry world of `version` (12, 13 or 14) with `system` as its game system,
 * `users` (the first GM is this client unless `me` names another), ready for the module:
 * `await world.load()` imports the bundle and runs init/setup; `await world.ready()`
 * fires `ready` (the module connects when its settings are set).
 */
export function createWorld({ version = 13, system = "exalted2e", users, me } = {}) {
  const dom = new JSDOM(`<!doctype html><html><body><ol id="chat-log"></ol></body></html>`, { url: "http://foundry.test:30000/game", pretendToBeVisual: true });
  const { window } = dom;
  const world = {
    version,
    window,
    hooks: new SimHooks(),
    dialogs: [],
    updates: [],
    sheetSubmits: [],
    rollsBuilt: [],
    deprecations: [],
    notices: [],
    messages: new SimCollection(),
    actors: new SimCollection(),
    scenes: new SimCollection(),
    settings: new Map(),
    settingConfig: new Map(),
    users: new SimCollection(),
    user: null,
    controlled: [],
    targets: new Set(),
  };
  for (const u of users ?? [{ id: "gmUser00000001", name: "Gamemaster", isGM: true, active: true }]) world.users.set(u.id, { ...u });
  world.user = world.users.get(me ?? [...world.users.values()].find((u) => u.isGM)?.id ?? [...world.users.keys()][0]);

  const DialogV2 = dialogClass(world);
  const { ActorSheetV1, ActorSheetV2 } = sheetClasses(world);
  const { Roll, Die } = rollClasses(world);
  const ChatMessage = chatClass(world);
  Object.assign(world, { DialogV2, ActorSheetV1, ActorSheetV2, Roll, Die, ChatMessage });

  const notify = (level) => (message) => void world.notices.push({ level, message });
  // game.modules: each package's manifest data plus `active` (api: v13/classes/foundry.packages.Module.html).
  const modules = new Map([["vtt-bridge", { ...JSON.parse(readFileSync(join(MODULE_ROOT, "module.json"), "utf8")), active: true }]]);
  const game = {
    // game.release.generation: the major version (types: client/config.d.mts / api: v13/classes/foundry.config.ReleaseData.html).
    release: { generation: version, build: version === 12 ? 331 : version === 13 ? 351 : 359 },
    system: { id: system, documentTypes: { Actor: { character: {}, npc: {} } } },
    modules,
    get user() {
      return world.user;
    },
    users: world.users,
    // game.socket, there from init (features.mjs, socketSim).
    socket: socketSim(world),
    actors: world.actors,
    scenes: world.scenes,
    messages: world.messages,
    // Localization#format: the key's string with {name} placeholders filled (api: v13/classes/foundry.helpers.Localization.html#format).
    i18n: { format: (key, data = {}) => (EN[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => (k in data ? data[k] : `{${k}}`)) },
    // ClientSettings register/get/set; set calls the setting's onChange (api: v13/classes/foundry.helpers.ClientSettings.html).
    settings: {
      register(ns, key, config) {
        world.settingConfig.set(`${ns}.${key}`, config);
        if (!world.settings.has(`${ns}.${key}`)) world.settings.set(`${ns}.${key}`, config.default);
      },
      get(ns, key) {
        if (!world.settingConfig.has(`${ns}.${key}`)) throw new Error(`setting ${ns}.${key} is not registered`);
        return world.settings.get(`${ns}.${key}`);
      },
      async set(ns, key, value) {
        world.settings.set(`${ns}.${key}`, value);
        world.settingConfig.get(`${ns}.${key}`)?.onChange?.(value);
        return value;
      },
    },
  };
  world.game = game;
  SimActor.world = world;
  const globals = {
    game,
    // CONFIG.Actor.documentClass (api: v13/interfaces/foundry.CONFIG.html).
    CONFIG: { Actor: { documentClass: SimActor } },
    ui: {
      notifications: { info: notify("info"), warn: notify("warn"), error: notify("error") },
      // ui.chat.element: the chat log (v13 ChatLog is an ApplicationV2; api: v13/classes/foundry.applications.sidebar.tabs.ChatLog.html).
      chat: { element: window.document.querySelector("#chat-log") },
      // ui.controls.controls: what getSceneControlButtons made (types: client/applications/ui/scene-controls.d.mts).
      controls: {
        get controls() {
          return (world.controls ??= sceneControls(world)).controls;
        },
      },
    },
    Hooks: world.hooks,
    ChatMessage,
    canvas: {
      scene: null,
      tokens: {
        get controlled() {
          return world.controlled;
        },
        // The viewed scene's tokens (api: v13/classes/foundry.canvas.layers.TokenLayer.html,
        // placeables of the canvas's scene); without a viewed scene (canvas.scene unset),
        // every scene's.
        get placeables() {
          const viewed = globalThis.canvas?.scene;
          return (viewed ? [viewed] : world.scenes.contents).flatMap((s) => s.tokens.contents.map((t) => t.object));
        },
      },
    },
    foundry: {
      applications: { api: { DialogV2 } },
      dice: { Roll, terms: { Die } },
      utils: { mergeObject, expandObject },
    },
  };
  world.install = () => {
    for (const name of DOM_GLOBALS) {
      const value = name === "CSS" ? { escape: (s) => String(s).replace(/["\\\]\[]/g, "\\$&") } : window[name];
      Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
    }
    Object.assign(globalThis, globals);
  };
  for (const u of world.users.values()) Object.defineProperty(u, "targets", { value: world.targets, configurable: true, writable: true });
  world.install();

  world.addActor = (data) => {
    const actor = new SimActor(world, data);
    world.actors.set(actor.id, actor);
    return actor;
  };
  world.addScene = () => {
    const scene = { id: newId("scene"), tokens: new SimCollection() };
    world.scenes.set(scene.id, scene);
    return scene;
  };
  world.addToken = (scene, actor, { actorLink = true, name } = {}) => {
    const token = new SimTokenDocument(world, scene, { actor, actorLink, name });
    scene.tokens.set(token.id, token);
    return token;
  };
  world.sceneControls = () => sceneControls(world);
  world.api = () => modules.get("vtt-bridge").api;
  /** Import the built bundle (once per process: it registers its hooks) and run init and setup. */
  world.load = async () => {
    await import(join(MODULE_ROOT, "dist", "vtt-bridge.js"));
    world.hooks.callAll("init");
    world.hooks.callAll("setup");
    return world;
  };
  /** Set the module's client settings (url, table, key) and fire `ready`: the module connects. */
  world.ready = async (settings = {}) => {
    for (const [k, v] of Object.entries(settings)) world.settings.set(`vtt-bridge.${k}`, v);
    world.hooks.callAll("ready");
    await until(() => world.api().connection?.connected && world.notices.some((n) => /connected as/.test(n.message)), "the module connects");
    return world;
  };
  world.close = () => {
    world.api()?.connection?.close();
    window.close();
  };
  return world;
}

/** Wait until `check()` is truthy (polling; bounded). */
export async function until(check, what = "condition", timeout = 15000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting until ${typeof what === "function" ? what() : what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Type into an input and fire the events a browser fires (input, then change on commit). */
export function type(world, input, value) {
  const { window } = world;
  if (input.type === "checkbox") input.checked = !!value;
  else input.value = String(value);
  input.dispatchEvent(new window.Event("input", { bubbles: true }));
  input.dispatchEvent(new window.Event("change", { bubbles: true }));
}

let actors = 0;
/**
 * A world actor of the exalted2e system (test/helpers.mjs exaltedActor), marked for the
 * bridge, with a fresh id; `system`/`flags` overlay the defaults.
 */
export function exaltedWorldActor(world, { name = "Actor", owner = world.user.id, flags = {}, ...rest } = {}) {
  actors += 1;
  const data = exaltedActor({ id: `Act${world.version}n${String(actors).padStart(4, "0")}`.padEnd(16, "x"), name, owner, flags, ...rest });
  return world.addActor(data);
}

/** The Bridge tab section of an open sheet. */
export const bridgeTab = (sheet) => sheet.element?.querySelector("section.tab.vtt-bridge, section[data-tab='vtt-bridge']") ?? null;

/** Click an element. */
export function click(world, el) {
  el.dispatchEvent(new world.window.MouseEvent("click", { bubbles: true, cancelable: true }));
}
