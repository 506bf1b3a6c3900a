/**
 * An attack record as a chat card, without a DOM: the web table and the Foundry
 * module draw the same card from it.
 *
 * `cardModel(attack)` gives one summary line (who attacked whom with what, hit or
 * miss, damage, conditions) and the steps worth showing under it: a step with no
 * roll, no change, no note, no decision and no nested attack is left out, and no
 * text ever reads `null`. Rolls stay Foundry roll JSON (`rolls.js` describes them
 * die by die); `segments(text)` splits a line into words and coloured dice so a
 * client never depends on emoji a machine may lack (GODSGLOOM's 🟥 and 🟦 dice).
 */

/** `martial_arts` → `Martial arts`; `MAT` stays `MAT`. */
export function humanize(name) {
  const text = String(name ?? "").replace(/[_-]+/g, " ").trim();
  if (text === text.toUpperCase()) return text;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A number or value as a card shows it: never `null`/`undefined`, objects compact. */
export function show(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(show).join(", ") : "none";
  if (typeof value === "object") {
    const parts = Object.entries(value).map(([k, v]) => `${k} ${show(v)}`);
    return parts.length ? parts.join(", ") : "—";
  }
  return String(value);
}

/**
 * Symbols the rulesets write in their notes and roll flavors, and what a card says
 * instead: a word, and for dice a colour the client paints (`colour` is a CSS class
 * suffix: `die-red`, `die-blue`, ...).
 */
export const SYMBOLS = Object.freeze({
  "🟥": { text: "red", colour: "red", title: "red die" },
  "🟦": { text: "blue", colour: "blue", title: "blue die" },
  "🟡": { text: "Boost", colour: "yellow", title: "Boost token" },
  "🟣": { text: "Weak", colour: "purple", title: "Weak token" },
  "⚔️": { text: "hits", title: "Hits" },
  "⚔": { text: "hits", title: "Hits" },
  "🛡️": { text: "blocks", title: "Blocks" },
  "🛡": { text: "blocks", title: "Blocks" },
  "🩸": { text: "wounds", title: "Wounds" },
});

const SYMBOL_RE = new RegExp(
  Object.keys(SYMBOLS)
    .sort((a, b) => b.length - a.length)
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("|"),
  "gu",
);

/**
 * A line of text as plain and marked parts: `"attacker 🟥"` →
 * `[{text: "attacker "}, {text: "red", colour: "red", title: "red die"}]`.
 */
export function segments(text) {
  const source = text === null || text === undefined ? "" : String(text);
  const out = [];
  let at = 0;
  for (const match of source.matchAll(SYMBOL_RE)) {
    if (match.index > at) out.push({ text: source.slice(at, match.index) });
    const symbol = SYMBOLS[match[0]];
    out.push({ text: symbol.text, ...(symbol.colour ? { colour: symbol.colour } : {}), title: symbol.title });
    at = match.index + match[0].length;
    // "🟥 die 3" reads "red die 3"; "3 🩸" reads "3 wounds": keep the spacing as it was.
  }
  if (at < source.length) out.push({ text: source.slice(at) });
  return out;
}

/** The text of a line with its symbols in words. */
export function plain(text) {
  return segments(text)
    .map((s) => s.text)
    .join("");
}

/** The die colour a roll's flavor names (`"attacker 🟥"` → `"red"`), or null. */
export function rollColour(roll) {
  const flavor = roll?.options?.flavor;
  if (!flavor) return null;
  const marked = segments(flavor).find((s) => s.colour);
  return marked ? marked.colour : null;
}

function namer(attack, names) {
  if (typeof names === "function") return (id) => names(id) ?? id;
  const known = {};
  const collectNames = (record) => {
    for (const [id, t] of Object.entries(record?.tokens || {})) {
      const name = t?.after?.name ?? t?.before?.name;
      if (name) known[id] = name;
    }
  };
  collectNames(attack);
  if (names && typeof names === "object") Object.assign(known, names instanceof Map ? Object.fromEntries(names) : names);
  return (id) => (id === null || id === undefined ? "—" : known[id] ?? String(id));
}

/** What the attack was made with, as the record says it (weapon, attack kind, ability). */
function what(attack) {
  const outcome = attack.outcome || {};
  const declaration = attack.declaration || {};
  const weapon = outcome.weapon ?? declaration.weapon;
  const parts = [];
  if (weapon !== undefined && weapon !== null && weapon !== "") parts.push(String(weapon));
  else if (outcome.attack) parts.push(`${humanize(outcome.attack)} attack`);
  const charms = Array.isArray(declaration.charms) ? declaration.charms.filter((c) => c && c.id) : [];
  if (charms.length) parts.push(`with ${charms.map((c) => humanize(c.id)).join(", ")}`);
  return parts.join(" ");
}

/**
 * The conditions an attack inflicted, per token: `[{token, name, conditions: [...]}]`,
 * tokens without any left out.
 */
function conditionsOf(outcome, name) {
  return Object.entries(outcome?.conditions || {})
    .filter(([, list]) => Array.isArray(list) && list.length)
    .map(([token, list]) => ({ token, name: name(token), conditions: list.map(String) }));
}

/**
 * Which models the attack struck and how each target defended, for the summary line:
 * `struck` from the outcome's per-model results (a Warmachine blast, spray or Shield
 * Guard names every model, with how it was hit), else the targets when it hit;
 * `defended` from this attack's decisions named `defense` asked of a target (the
 * answer's label; a counterattack's own defense is its card's), else
 * the outcome's `defense`. `detail` is the two as one short text ("" when neither).
 */
export function struckAndDefended(attack, name) {
  const outcome = attack.outcome || {};
  const struck = [];
  if (outcome.models && typeof outcome.models === "object") {
    for (const [token, m] of Object.entries(outcome.models)) {
      if (m && m.hit === true) struck.push({ token, name: name(token), how: m.how ? String(m.how) : null });
    }
  } else if (outcome.hit === true) {
    for (const token of attack.targets || []) struck.push({ token, name: name(token), how: null });
  }
  const defended = [];
  const targets = new Set(attack.targets || []);
  for (const d of attack.decisions || []) {
    // This attack's own defense questions: a nested attack's (a counterattack's) are keyed under it.
    if (d.name !== "defense" || !d.answer || String(d.key).includes("/") || (d.token != null && !targets.has(d.token))) continue;
    const line = decisionLine(d);
    defended.push({ token: d.token ?? null, name: name(d.token), answer: line.answer, how: line.how });
  }
  if (!defended.length && typeof outcome.defense === "string" && attack.targets?.length) {
    defended.push({ token: attack.targets[0], name: name(attack.targets[0]), answer: humanize(outcome.defense), how: null });
  }
  const parts = [];
  if (struck.length) parts.push(`struck ${struck.map((s) => (s.how && s.how !== "roll" ? `${s.name} (${s.how})` : s.name)).join(", ")}`);
  for (const d of defended) parts.push(`${d.name} defended: ${d.answer}`);
  return { struck, defended, detail: parts.join("; ") };
}

/** How an answer to a decision reads: the option's label, its parameters, how it came. */
function decisionLine(decision) {
  const answer = decision.answer || {};
  const option = (decision.options || []).find((o) => o.id === answer.option);
  const params = answer.params && typeof answer.params === "object" ? Object.entries(answer.params) : [];
  return {
    key: decision.key,
    token: decision.token ?? null,
    prompt: decision.prompt || humanize(decision.name || decision.key),
    answer: option?.label ?? (answer.option === undefined || answer.option === null ? "—" : String(answer.option)),
    params: params.map(([k, v]) => ({ name: k, label: humanize(k), value: show(v) })),
    how: decision.how || "answered",
  };
}

function changeLine(change) {
  return {
    number: change.number,
    label: humanize(change.number),
    from: show(change.from),
    to: show(change.to),
    plugin: change.plugin ?? null,
  };
}

/** Is there anything in this step to show? */
export function stepIsEmpty(step) {
  return (
    !step.rolls.length && !step.changes.length && !step.notes.length && !step.decisions.length && !step.children.length && !step.ended
  );
}

function stepModel(step, decisions, name) {
  const model = {
    step: step.step,
    title: step.title ? String(step.title) : humanize(step.step),
    item: step.item === undefined || step.item === null ? null : { token: step.item, name: name(step.item) },
    rolls: (step.rolls || []).filter(Boolean),
    changes: (step.changes || []).filter(Boolean).map(changeLine),
    notes: (step.notes || [])
      .filter((n) => n && n.text !== null && n.text !== undefined && String(n.text).trim() !== "")
      .map((n) => ({ text: String(n.text), plugin: n.plugin ?? null })),
    // A step broadcast live names its decisions before the record has their answers.
    decisions: (step.decisions || []).map((key) =>
      decisions.has(key)
        ? decisionLine(decisions.get(key))
        : { key, token: null, prompt: humanize(String(key).split("/").pop()), answer: "…", params: [], how: "asked" },
    ),
    children: (step.children || []).filter(Boolean).map((child) => cardModel(child, { names: name, decisions })),
    ended: step.ended ? String(step.ended) : null,
  };
  return model;
}

/**
 * The card of an attack record.
 * @param {object} attack  an attack record (`attack`'s acknowledgement, `attack.resolved`,
 *   `attack.get`, `table.sync`), or a nested attack under a step's `children`
 * @param {object} [options]
 * @param {Function|Object|Map} [options.names]  token id → name (else the names the
 *   record carries in `tokens`, else the id)
 * @returns {{summary: object, steps: object[], decisions: object[]}}
 */
export function cardModel(attack, options = {}) {
  const name = namer(attack, options.names);
  const decisions = options.decisions ?? new Map((attack.decisions || []).map((d) => [d.key, d]));
  const outcome = attack.outcome || {};
  const hit = outcome.hit === true;
  const damage = typeof outcome.damage === "number" ? outcome.damage : null;
  const conditions = conditionsOf(outcome, name);
  const ended = attack.ended ? String(attack.ended) : null;
  const attacker = name(attack.attacker);
  const targets = (attack.targets || []).map(name);
  const made = what(attack);
  const resolved = attack.outcome !== undefined && attack.outcome !== null;
  let result = "";
  if (resolved) {
    result = hit ? "hit" : "miss";
    if (damage !== null && (hit || damage > 0)) result += `, ${damage} damage`;
    if (ended && ended !== "miss") result += ` (${plain(ended)})`;
    for (const c of conditions) result += `; ${c.name}: ${c.conditions.map(humanize).join(", ")}`;
  }
  const head = `${attacker} → ${targets.join(", ") || "—"}${made ? ` (${made})` : ""}`;
  const summary = {
    kind: attack.kind || "attack",
    attacker,
    targets,
    what: made,
    hit,
    damage,
    conditions,
    ended,
    resolved,
    text: result ? `${head}: ${result}` : head,
    ...(resolved ? struckAndDefended(attack, name) : { struck: [], defended: [], detail: "" }),
  };
  const steps = (attack.steps || [])
    .filter(Boolean)
    .map((step) => stepModel(step, decisions, name))
    .filter((step) => !stepIsEmpty(step));
  return {
    summary,
    steps,
    // Every decision of the record, those nested attacks asked included (top level only).
    decisions: options.decisions ? [] : (attack.decisions || []).map(decisionLine),
  };
}

/** One step as it arrives in `attack.step`, ready to draw, or null when it shows nothing. */
export function stepCard(step, options = {}) {
  const model = stepModel(step, options.decisions ?? new Map(), namer({}, options.names));
  return stepIsEmpty(model) ? null : model;
}
