/* Tokens: the inspector (a selected token's sheet and what may be done with it) and the
 * token form. The GM creates, edits, duplicates and deletes tokens of any installed
 * ruleset, heals or resets their tracks and sets who owns them; a player edits the
 * tokens they own. Forms come from the ruleset's token schema and each pack's flags
 * schema (`rulesets.list`); the server's field errors are shown at their fields. */

import { errorsAt } from "../common/schema-form.js";
import { call } from "./connection.js";
import { $, confirmAction, describeError, h, human, toast, fill } from "./dom.js";
import { SchemaForm } from "./fields.js";
import { announce, canEdit, dropToken, isGM, putToken, state } from "./state.js";
import { renderTrack, trackPatch } from "./tracks.js";

const LEVELS = [
  [0, "none"],
  [1, "limited"],
  [2, "observer"],
  [3, "owner"],
];

const currentRuleset = () => $("attack-ruleset").value;

// -- the inspector ------------------------------------------------------------------

export function renderInspector() {
  const panel = $("inspector");
  const token = state.tokens.get(state.selected);
  if (!token) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const owners = Object.entries(token.ownership || {})
    .filter(([, level]) => level >= 3)
    .map(([user]) => (user === "default" ? "everyone" : user));
  const sameRuleset = token.ruleset === currentRuleset();
  const isTarget = state.targets.includes(token.id);
  const mine = canEdit(token);
  const heal = mine ? trackPatch(token.system, "heal") : null;
  const reset = mine ? trackPatch(token.system, "reset") : null;
  const flags = Object.keys(token.flags || {});
  fill(panel, 
    h(
      "header",
      {},
      h("h3", {}, token.name),
      h("span", { class: "hint" }, `${token.id} · ${token.ruleset} · v${token.version} · owner: ${owners.join(", ") || "GM"}`),
      h("button", { type: "button", class: "small", onclick: () => closeInspector() }, "Close"),
    ),
    renderTrack(token.system, true),
    h(
      "div",
      { class: "inline token-actions" },
      mine ? h("button", { type: "button", class: "small", dataset: { action: "attack-with" }, onclick: () => announce("choose-attacker", token) }, "Attack with it") : null,
      token.id !== state.attacker || !sameRuleset
        ? h(
            "button",
            { type: "button", class: "small", onclick: () => announce("toggle-target", token), dataset: { action: "target" } },
            sameRuleset && isTarget ? "Untarget" : "Target",
          )
        : null,
      mine ? h("button", { type: "button", class: "small", dataset: { action: "edit" }, onclick: () => openEditor({ mode: "edit", token }) }, "Edit") : null,
      mine && heal
        ? h("button", { type: "button", class: "small", dataset: { action: "heal" }, title: "clear one step of damage", onclick: () => patchTrack(token, "heal") }, "Heal 1")
        : null,
      mine && reset
        ? h("button", { type: "button", class: "small", dataset: { action: "reset" }, title: "unhurt: clear the track and conditions", onclick: () => patchTrack(token, "reset") }, "Reset track")
        : null,
      isGM() ? h("button", { type: "button", class: "small", dataset: { action: "duplicate" }, onclick: () => openEditor({ mode: "create", from: token }) }, "Duplicate") : null,
      mine ? h("button", { type: "button", class: "small undo", dataset: { action: "delete" }, onclick: () => deleteToken(token) }, "Delete") : null,
    ),
    flags.length ? h("p", { class: "hint" }, `Pack data: ${flags.map(human).join(", ")}`) : null,
    h("details", {}, h("summary", {}, "Sheet (all data)"), h("pre", { class: "sheet" }, JSON.stringify({ system: token.system, flags: token.flags ?? {} }, null, 1))),
  );
}

function closeInspector() {
  state.selected = null;
  announce("selected");
}

async function patchTrack(token, how) {
  const patch = trackPatch(token.system, how);
  if (!patch) return;
  const ack = await call("token.update", { id: token.id, version: token.version, system: patch });
  if (ack.ok) {
    putToken(ack.token);
    toast(how === "heal" ? `${token.name}: healed one step` : `${token.name}: track reset`);
  } else toast(`Could not change ${token.name}: ${describeError(ack.error)}`, "error");
}

async function deleteToken(token) {
  if (!(await confirmAction(`Delete ${token.name}? Its attacks stay in the history.`, "Delete"))) return;
  const ack = await call("token.delete", { id: token.id });
  if (ack.ok) {
    dropToken(token.id);
    if (state.editing?.token?.id === token.id) closeEditor();
    toast(`${token.name} deleted`);
  } else toast(`Could not delete ${token.name}: ${describeError(ack.error)}`, "error");
}

// -- the token form -------------------------------------------------------------------

/**
 * Open the token form.
 * @param {{mode: "create"|"edit", token?: object, from?: object, ruleset?: string}} what
 *   create (empty, or a copy of `from`) or edit `token`
 */
export function openEditor(what) {
  const base = what.mode === "edit" ? what.token : what.from;
  const ruleset = base?.ruleset || what.ruleset || currentRuleset() || [...state.rulesets.keys()][0];
  state.editing = {
    mode: what.mode,
    token: what.mode === "edit" ? what.token : null,
    ruleset,
    name: base ? (what.mode === "edit" ? base.name : `${base.name} (copy)`) : "",
    // A new token starts with the players of the token last saved here (a party's
    // characters one after another); the GM sets an NPC's to none.
    ownership: { ...(base ? base.ownership || {} : state.lastOwnership || {}) },
    system: base ? JSON.parse(JSON.stringify(base.system)) : undefined,
    flags: base ? JSON.parse(JSON.stringify(base.flags || {})) : {},
  };
  drawEditor();
  $("token-editor").scrollIntoView({ block: "nearest" });
  $("token-name").focus();
}

export function closeEditor() {
  state.editing = null;
  $("token-editor").hidden = true;
  $("token-editor").replaceChildren();
}

function knownUsers() {
  const users = new Set(state.users.filter((u) => u !== "gm"));
  for (const t of state.tokens.values()) for (const u of Object.keys(t.ownership || {})) users.add(u);
  users.delete("default");
  users.delete("gm");
  return [...users].sort();
}

function drawEditor() {
  const ed = state.editing;
  const panel = $("token-editor");
  panel.hidden = false;
  const ruleset = state.rulesets.get(ed.ruleset);
  const creating = ed.mode === "create";
  const gm = isGM();

  // The ruleset's sheet and each pack's flags: forms from their schemas.
  ed.system = ed.systemForm ? safeRaw(ed) : ed.system;
  ed.systemForm = new SchemaForm(ruleset?.token_schema || { type: "object", properties: {} }, ed.system, { name: "tok", compact: true });
  const packs = Object.entries(ruleset?.flags || {});
  ed.flagForms = packs.map(([plugin, schema]) => {
    const has = ed.flags[plugin] !== undefined;
    const form = new SchemaForm(schema, ed.flags[plugin], { name: `flag-${plugin}`, compact: false, choiceLabels: declarableNames(ruleset) });
    const use = h("input", {
      type: "checkbox",
      checked: has,
      dataset: { flagsOn: plugin },
      onchange: () => {
        form.node.hidden = !use.checked;
      },
    });
    form.node.hidden = !has;
    return { plugin, schema, form, use };
  });

  const nameInput = h("input", { id: "token-name", value: ed.name, required: true, maxlength: 200, dataset: { path: "name" } });
  const idInput = creating ? h("input", { id: "token-id", placeholder: "made up if left blank", maxlength: 200, dataset: { path: "id" } }) : null;
  const rulesetSelect = creating
    ? h(
        "select",
        {
          id: "token-ruleset",
          onchange: (ev) => {
            ed.name = nameInput.value;
            if (ed.ownershipEditor) ed.ownership = ed.ownershipEditor.value(); // kept across rulesets
            ed.ruleset = ev.target.value;
            ed.system = undefined;
            ed.systemForm = null;
            ed.flags = {};
            drawEditor();
          },
        },
        [...state.rulesets.values()].map((r) => h("option", { value: r.id }, r.title)),
      )
    : null;
  if (rulesetSelect) rulesetSelect.value = ed.ruleset;

  const ownership = gm ? ownershipEditor(ed) : null;
  fill(panel, 
    h(
      "form",
      { id: "token-form", class: "token-form", autocomplete: "off", novalidate: true, onsubmit: (ev) => saveToken(ev) },
      h(
        "header",
        {},
        h("h3", {}, creating ? (ed.token ? "Copy of a token" : "New token") : `Edit ${ed.token.name}`),
        h("button", { type: "button", class: "small", onclick: () => closeEditor() }, "Cancel"),
      ),
      h("p", { id: "token-form-error", class: "error", role: "alert" }),
      h(
        "div",
        { class: "token-basics" },
        h("label", { class: "field", dataset: { for: "name" } }, h("span", {}, "Name"), nameInput),
        creating ? h("label", { class: "field" }, h("span", {}, "Ruleset"), rulesetSelect) : h("p", { class: "hint" }, `${ruleset?.title ?? ed.ruleset} · ${ed.token.id}`),
        creating ? h("label", { class: "field", dataset: { for: "id" } }, h("span", {}, "Id"), idInput) : null,
      ),
      ownership ? ownership.node : null,
      h("fieldset", { class: "sheet-form" }, h("legend", {}, `${ruleset?.title ?? ed.ruleset} sheet`), ed.systemForm.node),
      ed.flagForms.length
        ? h(
            "fieldset",
            { class: "flags-form" },
            h("legend", {}, "Pack data"),
            ed.flagForms.map((f) =>
              h(
                "div",
                { class: "pack", dataset: { plugin: f.plugin } },
                h("label", { class: "field check" }, h("span", {}, `${human(f.plugin)}`), f.use),
                f.form.node,
              ),
            ),
          )
        : null,
      h("div", { class: "inline" }, h("button", { type: "submit", id: "token-save" }, creating ? "Create token" : "Save")),
    ),
  );
  ed.ownershipEditor = ownership;
}

/** Declarable id → its name (a pack's flags list the Charms a token knows by id). */
function declarableNames(ruleset) {
  const out = {};
  for (const d of ruleset?.declarables || []) out[d.id] = d.label || human(d.id);
  return out;
}

function safeRaw(ed) {
  try {
    return ed.systemForm.value();
  } catch (e) {
    return ed.system;
  }
}

function ownershipEditor(ed) {
  const rows = h("div", { class: "owners" });
  const users = new Set([...knownUsers(), ...Object.keys(ed.ownership).filter((u) => u !== "default")]);
  const levelSelect = (user) => {
    const select = h(
      "select",
      { dataset: { owner: user }, "aria-label": `${user}: ownership` },
      LEVELS.map(([level, label]) => h("option", { value: String(level) }, label)),
    );
    select.value = String(ed.ownership[user] ?? 0);
    return select;
  };
  const draw = () => {
    fill(rows, 
      ...[...users].sort().map((user) => h("label", { class: "owner-row" }, h("span", {}, user), levelSelect(user))),
      h("label", { class: "owner-row" }, h("span", {}, "everyone else"), levelSelect("default")),
    );
  };
  draw();
  const newUser = h("input", { placeholder: "player name", "aria-label": "add a player", dataset: { newOwner: "" } });
  const add = () => {
    const name = newUser.value.trim();
    if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(name) || name === "gm" || name === "default") {
      toast("A player name is 1–64 of A-Z a-z 0-9 _ . @ - (not gm or default)", "error");
      return;
    }
    for (const select of rows.querySelectorAll("select[data-owner]")) ed.ownership[select.dataset.owner] = Number(select.value);
    users.add(name);
    ed.ownership[name] = 3;
    newUser.value = "";
    draw();
  };
  newUser.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      add();
    }
  });
  const node = h(
    "fieldset",
    { class: "ownership", dataset: { path: "ownership" } },
    h("legend", {}, "Who owns it"),
    rows,
    h("div", { class: "inline" }, newUser, h("button", { type: "button", class: "small", dataset: { action: "add-owner" }, onclick: add }, "Add player")),
    h("small", { class: "field-error", id: "ownership-error" }),
  );
  return {
    node,
    value() {
      const out = {};
      for (const select of rows.querySelectorAll("select[data-owner]")) {
        const level = Number(select.value);
        if (level > 0) out[select.dataset.owner] = level;
      }
      return out;
    },
  };
}

async function saveToken(ev) {
  ev.preventDefault();
  const ed = state.editing;
  if (!ed) return;
  const formError = $("token-form-error");
  formError.textContent = "";
  const name = $("token-name").value.trim();
  let system;
  const flags = {};
  let bad = false;
  try {
    system = ed.systemForm.value();
  } catch (err) {
    bad = true;
  }
  for (const f of ed.flagForms) {
    if (!f.use.checked) continue;
    try {
      flags[f.plugin] = f.form.value();
    } catch (err) {
      bad = true;
    }
  }
  if (!name) {
    formError.textContent = "A token needs a name.";
    bad = true;
  }
  if (bad) {
    if (!formError.textContent) formError.textContent = "Some fields need fixing (marked below).";
    return;
  }
  const button = $("token-save");
  button.disabled = true;
  let ack;
  if (ed.mode === "create") {
    const request = { name, ruleset: ed.ruleset, system };
    const id = $("token-id").value.trim();
    if (id) request.id = id;
    if (isGM()) request.ownership = ed.ownershipEditor.value();
    if (Object.keys(flags).length) request.flags = flags;
    ack = await call("token.create", request);
  } else {
    const request = { id: ed.token.id, version: ed.token.version, name, system };
    if (isGM()) request.ownership = ed.ownershipEditor.value();
    const known = ed.flagForms.map((f) => f.plugin);
    if (known.length) {
      const given = Object.fromEntries(known.filter((p) => flags[p] !== undefined).map((p) => [p, flags[p]]));
      if (Object.keys(given).length) request.flags = given;
    }
    ack = await call("token.update", request);
  }
  button.disabled = false;
  if (ack.ok) {
    putToken(ack.token);
    if (isGM()) state.lastOwnership = { ...(ack.token.ownership || {}) };
    toast(ed.mode === "create" ? `${ack.token.name} created` : `${ack.token.name} saved`);
    closeEditor();
    state.selected = ack.token.id;
    announce("selected");
    return;
  }
  showServerErrors(ed, ack.error);
}

/** Put an `invalid_request`'s messages at their fields; anything else on top of the form. */
function showServerErrors(ed, error) {
  const formError = $("token-form-error");
  if (error?.code !== "invalid_request" || !error.details) {
    formError.textContent = describeError(error);
    return;
  }
  const details = error.details;
  const system = { ...errorsAt(details, "token"), ...errorsAt(details, "system") };
  delete system[""];
  ed.systemForm.showErrors(system);
  const placed = new Set(["token", "system", "flags"]);
  for (const f of ed.flagForms) {
    const mine = { ...errorsAt(details, `flags.${f.plugin}`), ...errorsAt(details, `token.flags.${f.plugin}`) };
    f.form.showErrors(mine);
    if (Object.keys(mine).length) f.form.node.hidden = false;
  }
  const top = [];
  for (const [key, messages] of Object.entries(details)) {
    if (placed.has(key)) continue;
    const text = Array.isArray(messages) ? messages.join(" ") : typeof messages === "string" ? messages : JSON.stringify(messages);
    const at = document.querySelector(`#token-form [data-for="${key}"]`);
    if (at) {
      at.classList.add("invalid");
      at.append(h("small", { class: "field-error", role: "alert" }, text));
    } else top.push(`${key}: ${text}`);
  }
  // Flags of a pack the server does not know (or that declares no schema) are named at flags.<plugin>.
  const flagErrors = errorsAt(details, "flags");
  for (const [path, message] of Object.entries(flagErrors)) {
    if (!ed.flagForms.some((f) => path === f.plugin || path.startsWith(`${f.plugin}.`))) top.push(`${path ? `flags.${path}` : "flags"}: ${message}`);
  }
  formError.textContent = top.length ? top.join(" ") : error.message || "invalid token";
}
