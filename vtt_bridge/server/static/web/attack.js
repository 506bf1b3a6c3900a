/* The attack form: ruleset, attacker (a token you own), targets, the declaration (a form
 * from the ruleset's declaration schema, the attacker's weapons as a list; each field
 * with its plain title and one-line help, the fields the schema marks `situational`
 * folded under "More options"), what the
 * packs let an attacker declare (Charms and abilities as checkboxes with their typed
 * parameters, from `rulesets.list` `declarables`), GM dice, and the odds before the roll. */

import { declarablesFor } from "../common/declarables.js";
import { oddsModel } from "../common/odds.js";
import { errorsAt } from "../common/schema-form.js";
import { failCard, onResolved } from "./chat.js";
import { call, whenOffline, whenOnline } from "./connection.js";
import { $, confirmAction, describeError, h, human, requestId, sameJSON, toast, fill } from "./dom.js";
import { paramsSchema, SchemaForm } from "./fields.js";
import { announce, canEdit, state, tokenName } from "./state.js";
import { outOfFight } from "./tracks.js";
import { followAttack } from "./views.js";

export const currentRuleset = () => $("attack-ruleset").value;

export function fillRulesetSelects() {
  const rulesets = [...state.rulesets.values()];
  const counts = new Map();
  for (const t of state.tokens.values()) counts.set(t.ruleset, (counts.get(t.ruleset) || 0) + 1);
  const withTokens = rulesets.filter((r) => counts.get(r.id));
  const keep = state.formRuleset;
  const preferred =
    (keep && state.rulesets.has(keep) && keep) ||
    (state.sceneRuleset && state.rulesets.has(state.sceneRuleset) && state.sceneRuleset) ||
    withTokens.find((r) => [...state.tokens.values()].some((t) => t.ruleset === r.id && canEdit(t)))?.id ||
    withTokens[0]?.id ||
    rulesets[0]?.id ||
    "";
  fill($("attack-ruleset"), 
    ...rulesets.map((r) => h("option", { value: r.id }, `${r.title} (${counts.get(r.id) || 0})`)),
  );
  fill($("scene-ruleset"), 
    h("option", { value: "" }, "all rulesets"),
    ...rulesets.map((r) => h("option", { value: r.id }, r.title)),
  );
  setRuleset(preferred);
}

export function setRuleset(id) {
  $("attack-ruleset").value = id;
  $("scene-ruleset").value = id;
  if (state.sceneRuleset !== id) state.fit = true;
  state.sceneRuleset = id;
  if (state.formRuleset !== id) {
    // Another ruleset: its own attacker and targets. (The same one again, after a
    // reconnect say, keeps what was chosen.)
    state.formRuleset = id;
    state.attacker = "";
    state.targets = [];
  }
  const ruleset = state.rulesets.get(id);
  $("ruleset-description").textContent = ruleset?.description || "";
  const max = ruleset?.targets?.max;
  $("targets-limit").textContent = max && max > 1 ? `(up to ${max})` : "";
  renderAttackers();
  announce("scene");
}

export function renderAttackers() {
  const rid = currentRuleset();
  if (!rid) return;
  const mine = [...state.tokens.values()].filter((t) => t.ruleset === rid && canEdit(t)).sort((a, b) => a.name.localeCompare(b.name));
  const select = $("attack-attacker");
  const previous = state.attacker;
  fill(select, 
    h("option", { value: "" }, mine.length ? "— choose —" : state.role === "gm" ? "(no token of this ruleset yet: New token)" : "(you own no token of this ruleset)"),
    ...mine.map((t) => h("option", { value: t.id }, t.name)),
  );
  state.attacker = mine.some((t) => t.id === previous) ? previous : mine[0]?.id || "";
  select.value = state.attacker;
  state.targets = state.targets.filter((id) => state.tokens.get(id)?.ruleset === rid && id !== state.attacker);
  renderTargets();
  if (!state.declaration || state.declaration.for !== declarationFor(rid)) buildDeclaration();
  else scheduleOdds();
}

export function chooseAttacker(token) {
  if (token.ruleset !== currentRuleset()) setRuleset(token.ruleset);
  state.attacker = token.id;
  state.targets = state.targets.filter((id) => id !== token.id);
  renderAttackers();
  announce("scene");
}

export function toggleTarget(token) {
  if (token.ruleset !== currentRuleset()) setRuleset(token.ruleset);
  const max = state.rulesets.get(token.ruleset)?.targets?.max ?? 1;
  if (state.targets.includes(token.id)) state.targets = state.targets.filter((id) => id !== token.id);
  else if (max <= 1) state.targets = [token.id];
  else if (state.targets.length < max) state.targets = [...state.targets, token.id];
  else toast(`At most ${max} targets`, "error");
  renderTargets();
  announce("scene");
  scheduleOdds();
}

function renderTargets() {
  const rid = currentRuleset();
  const candidates = [...state.tokens.values()]
    .filter((t) => t.ruleset === rid && t.id !== state.attacker)
    .sort((a, b) => a.name.localeCompare(b.name));
  fill($("attack-targets"), 
    ...candidates.map((t) => {
      const on = state.targets.includes(t.id);
      const out = outOfFight(t.system);
      return h(
        "button",
        {
          type: "button",
          class: `chip${on ? " on" : ""}${out ? " out" : ""}`,
          "aria-pressed": on ? "true" : "false",
          title: out ? `${t.name} is out of the fight: ${out}` : undefined,
          dataset: { token: t.id },
          onclick: () => toggleTarget(t),
        },
        t.name,
        out ? h("span", { class: "out-mark" }, ` (${out})`) : null,
      );
    }),
  );
}

// -- a form from a JSON Schema (the subset rulesets.list describes) ----------------

class FormError extends Error {}

/** What the declaration form is built for: the ruleset, the attacker and what it knows. */
function declarationFor(rid) {
  const known = declarablesOf(rid, state.tokens.get(state.attacker));
  return `${rid}/${state.attacker}/${[...known.declare, ...known.options].map((d) => d.id).join(",")}`;
}

/** Build the declaration fieldset for the current ruleset and attacker. */
function buildDeclaration() {
  const rid = currentRuleset();
  const schema = state.rulesets.get(rid)?.declaration_schema;
  const attacker = state.tokens.get(state.attacker);
  const fieldset = $("declaration");
  const legend = h("legend", {}, "Declaration");
  const known = declarablesOf(rid, attacker);
  const installed = declarablesOf(rid, null).declare.length + declarablesOf(rid, null).options.length;
  if (!schema || !schema.properties || !Object.keys(schema.properties).length || (Object.keys(schema.properties).length === 1 && schema.properties.charms && !installed)) {
    fill(fieldset, legend, h("p", { class: "hint" }, "This ruleset takes no declaration."));
    state.declaration = { for: declarationFor(rid), read: () => ({}) };
    scheduleOdds();
    return;
  }
  // `charms` is never typed as JSON: the ruleset's declarables are checkboxes instead.
  const props = { ...schema.properties };
  delete props.charms;
  const form = objectFields({ ...schema, properties: props }, { attacker, rid, path: [] });
  const charms = schema.properties.charms && installed ? declarables(known, attacker) : null;
  // What most attacks set stays in view; what only some situations need is folded.
  const main = form.fields.filter((f) => !f.situational).map((f) => f.node);
  const more = form.fields.filter((f) => f.situational);
  // The summary names the first few situations the ruleset has, by their titles.
  const names = more.map((f) => f.title.toLowerCase());
  const count = h("span", { class: "more-set" });
  const folded = more.length
    ? h(
        "details",
        { class: "more-options", dataset: { more: "" } },
        h("summary", {}, `More options (${more.length})`, count, h("span", { class: "hint" }, ` — ${names.slice(0, 3).join(", ")}${names.length > 3 ? "…" : ""}`)),
        h("div", { class: "more-body" }, more.map((f) => f.node)),
      )
    : null;
  if (folded) {
    // Folded away but not forgotten: the summary says how many of them are set.
    const recount = () => {
      const set = more.filter((f) => {
        try {
          return f.read() !== undefined;
        } catch (err) {
          return true; // typed but not valid yet: still something set
        }
      }).length;
      count.textContent = set ? ` · ${set} set` : "";
    };
    folded.addEventListener("input", recount);
    folded.addEventListener("change", recount);
    folded.addEventListener("click", () => setTimeout(recount, 0)); // token chips are buttons
  }
  fill(fieldset, legend, ...main, ...(charms ? [charms.node] : []), folded);
  state.declaration = {
    for: declarationFor(rid),
    read() {
      const out = form.read() ?? {};
      const picked = charms ? charms.read() : [];
      if (picked.length) out.charms = picked;
      return out;
    },
  };
  scheduleOdds();
}

function objectFields(schema, ctx) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, sub]) =>
    field(name, sub, required.has(name), { ...ctx, path: [...ctx.path, name] }),
  );
  return {
    fields,
    nodes: fields.map((f) => f.node),
    read() {
      const out = {};
      for (const f of fields) {
        const value = f.read();
        if (value !== undefined) out[f.name] = value;
      }
      return Object.keys(out).length ? out : undefined;
    },
  };
}

function weaponChoices(attacker) {
  const weapons = attacker?.system?.weapons;
  if (!Array.isArray(weapons)) return null;
  const choices = weapons
    .filter((w) => w && typeof w === "object" && (w.id || w.name))
    .map((w) => ({ value: String(w.id ?? w.name), label: String(w.name ?? w.id) }));
  return choices.length ? choices : null;
}

function field(name, schema, required, ctx) {
  const made = makeField(name, schema, required, ctx);
  return { ...made, situational: schema.situational === true, title: schema.title || human(name) };
}

function makeField(name, schema, required, ctx) {
  const id = `decl-${ctx.path.join("-")}`;
  const label = schema.title || human(name);
  const title = schema.description || undefined;
  const def = schema.default;
  const changed = () => scheduleOdds();
  // The label, and under it the one-line help the schema gives.
  const caption = () => h("span", {}, label, title ? h("small", { class: "help" }, title) : null);
  const wrap = (input, cls = "") => h("label", { class: `field ${cls}`, title, for: id }, caption(), input);
  const omitDefault = (value) => (!required && def !== undefined && sameJSON(value, def) ? undefined : value);

  // A weapon named on the attacker's sheet: choose from its weapons (by id if they have ids, else by name).
  const weapons = name === "weapon" && schema.type === "string" ? weaponChoices(ctx.attacker) : null;
  if (weapons) {
    const select = h(
      "select",
      { id, onchange: changed, dataset: { field: ctx.path.join(".") } },
      required ? null : h("option", { value: "" }, "(default)"),
      weapons.map((w) => h("option", { value: w.value }, w.label)),
    );
    return { name, node: wrap(select), read: () => (select.value === "" ? undefined : select.value) };
  }
  if (schema.type === "boolean") {
    const input = h("input", { id, type: "checkbox", checked: def === true, onchange: changed, dataset: { field: ctx.path.join(".") } });
    return { name, node: wrap(input, "check"), read: () => omitDefault(input.checked) };
  }
  if (schema.enum) {
    const noDefault = def === undefined || def === null;
    const select = h(
      "select",
      { id, onchange: changed, dataset: { field: ctx.path.join(".") } },
      noDefault ? h("option", { value: "" }, required ? "— choose —" : "(default)") : null,
      schema.enum.map((v) => h("option", { value: JSON.stringify(v) }, String(v))),
    );
    select.value = noDefault ? "" : JSON.stringify(def);
    return {
      name,
      node: wrap(select),
      read() {
        if (select.value === "") {
          if (required) throw new FormError(`${label} is required`);
          return undefined;
        }
        return omitDefault(JSON.parse(select.value));
      },
    };
  }
  if (schema.type === "integer" || schema.type === "number") {
    const input = h("input", {
      id,
      type: "number",
      step: schema.type === "integer" ? "1" : "any",
      min: schema.minimum,
      max: schema.maximum,
      value: def ?? "",
      placeholder: def === null || def === undefined ? "—" : undefined,
      oninput: changed,
      dataset: { field: ctx.path.join(".") },
    });
    return {
      name,
      node: wrap(input, "number"),
      read() {
        if (input.value === "") {
          if (required) throw new FormError(`${label} is required`);
          return undefined;
        }
        const value = Number(input.value);
        if (!Number.isFinite(value) || (schema.type === "integer" && !Number.isInteger(value)))
          throw new FormError(`${label} must be ${schema.type === "integer" ? "a whole number" : "a number"}`);
        return omitDefault(value);
      },
    };
  }
  if (schema.type === "string") {
    const input = h("input", { id, value: typeof def === "string" ? def : "", oninput: changed, dataset: { field: ctx.path.join(".") } });
    return {
      name,
      node: wrap(input),
      read() {
        if (input.value === "") {
          if (required) throw new FormError(`${label} is required`);
          return undefined;
        }
        return omitDefault(input.value);
      },
    };
  }
  if (schema.type === "object" && schema.properties) {
    const inner = objectFields(schema, ctx);
    const node = h("details", { class: "group", title }, h("summary", {}, label, title ? h("small", { class: "help" }, title) : null), inner.nodes);
    return { name, node, read: () => inner.read() };
  }
  if (schema.type === "array" && schema.items?.type === "string" && !schema.items.enum) {
    // Every plain list of strings in a declaration names tokens (models under a template,
    // allies near the target, the order damage is applied): pick them, in order.
    return tokenList(name, schema.title || label, title, ctx);
  }
  // Anything else (lists of Charm uses, maps): JSON.
  const area = h("textarea", {
    id,
    rows: 2,
    placeholder: def !== undefined ? JSON.stringify(def) : "JSON",
    oninput: changed,
    dataset: { field: ctx.path.join(".") },
  });
  return {
    name,
    node: wrap(area, "json"),
    read() {
      if (area.value.trim() === "") return undefined;
      try {
        return omitDefault(JSON.parse(area.value));
      } catch (e) {
        throw new FormError(`${label}: not valid JSON`);
      }
    },
  };
}

function tokenList(name, label, title, ctx) {
  const chosen = [];
  const box = h("div", { class: "chips small", dataset: { field: ctx.path.join(".") } });
  const draw = () => {
    const tokens = [...state.tokens.values()].filter((t) => t.ruleset === ctx.rid).sort((a, b) => a.name.localeCompare(b.name));
    fill(box, 
      ...tokens.map((t) => {
        const at = chosen.indexOf(t.id);
        return h(
          "button",
          {
            type: "button",
            class: `chip${at >= 0 ? " on" : ""}`,
            dataset: { token: t.id },
            onclick: () => {
              if (at >= 0) chosen.splice(at, 1);
              else chosen.push(t.id);
              draw();
              scheduleOdds();
            },
          },
          at >= 0 ? `${at + 1}. ${t.name}` : t.name,
        );
      }),
    );
  };
  draw();
  const node = h("div", { class: "field tokens", title }, h("span", {}, label, title ? h("small", { class: "help" }, title) : null), box);
  return { name, node, read: () => (chosen.length ? [...chosen] : undefined) };
}

function attackRequest() {
  const ruleset = currentRuleset();
  if (!ruleset) throw new FormError("choose a ruleset");
  if (!state.attacker) throw new FormError("choose an attacker");
  const min = state.rulesets.get(ruleset)?.targets?.min ?? 1;
  if (state.targets.length < min) throw new FormError(min === 1 ? "choose a target" : `choose at least ${min} targets`);
  return {
    ruleset,
    attacker: state.attacker,
    targets: [...state.targets],
    declaration: state.declaration ? state.declaration.read() : {},
  };
}

export async function submitAttack(ev) {
  ev.preventDefault();
  $("attack-error").textContent = "";
  let request;
  try {
    request = attackRequest();
    if (state.role === "gm") {
      const dice = $("attack-dice").value.trim();
      if (dice) {
        const faces = dice.split(/[\s,;]+/).map(Number);
        if (faces.some((f) => !Number.isInteger(f) || f < 1)) throw new FormError("scripted faces are whole numbers from 1");
        request.dice = faces;
      }
      const seed = $("attack-seed").value.trim();
      if (seed) request.seed = Number(seed);
    }
  } catch (err) {
    if (!(err instanceof FormError)) throw err;
    $("attack-error").textContent = err.message;
    return;
  }
  // A target already out of the fight (dying, destroyed): ask before attacking it.
  const down = request.targets.map((id) => [id, outOfFight(state.tokens.get(id)?.system)]).filter(([, why]) => why);
  if (down.length) {
    const what = down.map(([id, why]) => `${tokenName(id)} is already out of the fight (${why})`).join("; ");
    if (!(await confirmAction(`${what}. Attack anyway?`, "Attack anyway"))) return;
  }
  request.request_id = requestId();
  $("declaration").querySelectorAll(".field-error").forEach((el) => el.remove());
  const button = $("attack-button");
  button.disabled = true;
  button.textContent = "Rolling…";
  const mine = { ruleset: request.ruleset, attacker: request.attacker, targets: request.targets, user: state.user };
  state.pending.push(mine);
  // An attack waits for every decision it asks: give it as long as the answers may take.
  // If the connection drops meanwhile, or the server stops before the attack is
  // resolved (`server_stopping`: nothing applied), send it again when the page is back:
  // the same request_id makes that safe (a finished attack is answered, not rolled twice).
  let ack;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    ack = await call("attack", request, 30 * 60 * 1000);
    if (!["disconnected", "offline", "server_stopping"].includes(ack.error?.code)) break;
    button.textContent = "Waiting for the server…";
    // A stopping server drops the connection next: resend to the server that comes back.
    if (ack.error.code === "server_stopping") await whenOffline(10000);
    if (!(await whenOnline(60000))) break;
    // Sent again: its steps (perhaps under a new attack id) start a card of their own.
    mine.card = null;
    button.textContent = "Rolling…";
  }
  state.pending = state.pending.filter((p) => p !== mine);
  button.disabled = false;
  button.textContent = "Roll the attack";
  if (ack.ok) {
    onResolved(ack.attack);
    followAttack(); // on a phone: to the card (an error stays here, at the form)
  } else {
    $("attack-error").textContent = describeError(ack.error);
    showDeclarationErrors(ack.error);
    if (mine.card) failCard(mine.card, ack.error);
  }
}

// -- odds before the roll ---------------------------------------------------------------

export function scheduleOdds() {
  clearTimeout(state.odds.timer);
  state.odds.timer = setTimeout(fetchOdds, 350);
}

async function fetchOdds() {
  const body = $("odds-body");
  let request;
  try {
    request = attackRequest();
  } catch (err) {
    if (!(err instanceof FormError)) throw err;
    body.className = "hint";
    fill(body, err.message.startsWith("choose") ? "Choose an attacker and a target." : err.message);
    return;
  }
  const asked = ++state.odds.asked;
  body.className = "hint";
  fill(body, "Working out the odds…");
  const ack = await call("attack.odds", request, 30000);
  if (asked !== state.odds.asked) return; // the form changed meanwhile
  if (ack.ok) {
    body.className = "";
    fill(body, renderOdds(ack.odds ?? ack));
  } else {
    body.className = "hint error";
    fill(body, `No odds: ${describeError(ack.error)}`);
  }
}

/** The odds panel: the chance(s) to hit, the target's damage chart, a row per model an
 * AOE or a spray can catch, conditions (the figures from ../common/odds.js). */
function renderOdds(odds) {
  const m = oddsModel(odds, tokenName);
  const { unit, damage } = m;
  const top = Math.max(...damage.map((d) => d.p), 0.0001);
  const W = 300;
  const H = 90;
  const barW = damage.length ? Math.min(28, (W - 10) / damage.length) : 0;
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H + 16}`);
  svg.setAttribute("class", "odds-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", m.damageTitle);
  damage.forEach((d, i) => {
    const height = Math.max(1, (d.p / top) * H);
    const rect = document.createElementNS(svgNS, "rect");
    rect.setAttribute("x", String(5 + i * barW));
    rect.setAttribute("y", String(H - height));
    rect.setAttribute("width", String(Math.max(1, barW - 2)));
    rect.setAttribute("height", String(height));
    rect.setAttribute("class", d.miss ? "miss" : "dmg");
    const tip = document.createElementNS(svgNS, "title");
    tip.textContent = d.tip;
    rect.append(tip);
    svg.append(rect);
    if (damage.length <= 16 || i % Math.ceil(damage.length / 16) === 0) {
      const label = document.createElementNS(svgNS, "text");
      label.setAttribute("x", String(5 + i * barW + (barW - 2) / 2));
      label.setAttribute("y", String(H + 12));
      label.setAttribute("text-anchor", "middle");
      label.textContent = String(d.damage);
      svg.append(label);
    }
  });
  const [first, ...others] = m.chances;
  return h(
    "div",
    { class: "odds-result" },
    h(
      "div",
      { class: "hit-line", dataset: { chance: first.key } },
      h("strong", { class: "hit-chance" }, first.text),
      h("span", { class: "hint" }, ` · ${m.meanText}`),
    ),
    h("div", { class: "meter", title: first.text }, h("span", { style: { width: `${100 * first.p}%` } })),
    others.map((c) =>
      h("div", { class: "hit-line other", dataset: { chance: c.key } }, h("strong", {}, c.text)),
    ),
    damage.length ? svg : null,
    damage.length ? h("div", { class: "hint" }, `${m.damageTitle} (bars: chance of each)`) : null,
    m.models.length
      ? h(
          "table",
          { class: "odds-models" },
          h("caption", { class: "hint" }, `Each model it can catch: chance to be hit, mean ${unit}, chance of any ${unit}`),
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Model"), h("th", { scope: "col" }, "Hit"), h("th", { scope: "col" }, "Mean"), h("th", { scope: "col" }, "Damaged"))),
          h(
            "tbody",
            {},
            m.models.map((row) =>
              h(
                "tr",
                { class: row.target ? "target" : "", dataset: { token: row.token } },
                h("th", { scope: "row" }, row.name, row.target ? h("span", { class: "hint" }, " (target)") : null),
                h("td", { dataset: { col: "hit" } }, row.hitText),
                h("td", { dataset: { col: "mean" } }, row.meanText),
                h("td", { dataset: { col: "damaged" } }, row.damagedText),
              ),
            ),
          ),
        )
      : null,
    m.conditions.length ? h("ul", { class: "odds-conditions" }, m.conditions.map((c) => h("li", {}, c.text))) : null,
    h("div", { class: "hint small" }, m.method),
  );
}

// -- declarables: Charms and abilities the packs offer --------------------------------

/**
 * What `attacker` may declare under a ruleset, and the decision options it knows
 * (../common/declarables.js: only what the token knows; none from a server without declarables).
 */
export function declarablesOf(rid, attacker) {
  return declarablesFor(state.rulesets.get(rid), attacker ?? null);
}

/**
 * Checkboxes, one per declarable the attacker knows, grouped by pack; a checked one
 * shows its parameters (typed fields). The decision options it knows are listed
 * under them, without a box: they are chosen when asked. `read()` gives
 * `declaration.charms`: `[{id, ...params}]`.
 */
function declarables(known, attacker) {
  const list = known.declare;
  const items = list.map((d) => {
    const schema = paramsSchema(d.params);
    const params = schema ? new SchemaForm(schema, undefined, { name: `charm-${d.id}`, onChange: () => scheduleOdds() }) : null;
    const box = h("input", {
      type: "checkbox",
      dataset: { charm: d.id },
      onchange: () => {
        if (params) params.node.hidden = !box.checked;
        scheduleOdds();
      },
    });
    if (params) params.node.hidden = true;
    const node = h(
      "div",
      { class: "declarable", dataset: { declarable: d.id, plugin: d.plugin } },
      h("label", { class: "field check", title: d.description || undefined }, h("span", {}, d.label || human(d.id), d.kind && d.kind !== "charm" ? h("span", { class: "hint" }, ` (${human(d.kind)})`) : null), box),
      d.description ? h("p", { class: "hint small declarable-text" }, d.description) : null,
      params ? params.node : null,
    );
    return { d, box, params, node };
  });
  const byPlugin = new Map();
  for (const item of items) {
    const key = item.d.plugin || "";
    if (!byPlugin.has(key)) byPlugin.set(key, []);
    byPlugin.get(key).push(item);
  }
  const node = h(
    "fieldset",
    { class: "declarables", dataset: { field: "charms" } },
    h("legend", {}, "Charms and abilities"),
    list.length ? null : h("p", { class: "hint small" }, `${attacker?.name ?? "This token"} knows nothing to declare here.`),
    [...byPlugin.entries()].map(([plugin, group]) =>
      h("div", { class: "declarable-pack" }, byPlugin.size > 1 && plugin ? h("div", { class: "pack-name hint" }, human(plugin)) : null, group.map((i) => i.node)),
    ),
    known.options.length
      ? h(
          "div",
          { class: "declarable-options" },
          h("div", { class: "hint small" }, "Chosen when the rules ask:"),
          h(
            "ul",
            { class: "hint small" },
            known.options.map((d) => h("li", { dataset: { option: d.id, plugin: d.plugin }, title: d.description || undefined }, d.label || human(d.id), d.description ? ` — ${d.description}` : "")),
          ),
        )
      : null,
  );
  return {
    node,
    read() {
      const out = [];
      for (const item of items) {
        if (!item.box.checked) continue;
        let params = {};
        if (item.params) {
          try {
            params = item.params.value();
          } catch (err) {
            throw new FormError(`${item.d.label || item.d.id}: ${err.message}`);
          }
        }
        out.push({ id: item.d.id, ...params });
      }
      return out;
    },
  };
}

/** The server refused the declaration: put its messages at the fields they name. */
function showDeclarationErrors(error) {
  if (error?.code !== "invalid_request" || !error.details) return;
  const errors = errorsAt(error.details, "declaration");
  for (const [path, message] of Object.entries(errors)) {
    // charms.<i>.<param> → the i-th checked declarable's field
    let at = null;
    const m = /^charms\.(\d+)(?:\.(.+))?$/.exec(path);
    if (m) {
      const checked = [...$("declaration").querySelectorAll("input[data-charm]:checked")][Number(m[1])];
      const box = checked?.closest(".declarable");
      at = (m[2] && box?.querySelector(`[data-for$="${m[2]}"]`)) || box;
    } else at = $("declaration").querySelector(`[data-field="${path}"]`)?.closest(".field, .group") ?? null;
    if (at) at.append(h("small", { class: "field-error", role: "alert" }, message));
  }
}
