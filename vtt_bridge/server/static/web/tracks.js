/* Tracks: a token's health or damage, per data shape. The page knows no ruleset: each
 * entry recognises one shape of token state, draws it, and knows how to heal it by one
 * step and how to reset it (an unhurt token), and whether it is out of the fight
 * (the attack form warns before attacking such a token). A shape nobody knows is still
 * listed on the sheet. */

import { h, human } from "./dom.js";


const DAMAGE_MARKS = { B: "/", L: "X", A: "✱" };
const ASPECTS = ["M", "M", "B", "B", "S", "S"]; // a Warmachine life spiral: mind, body, spirit
const FLAGS = ["knocked_down", "disabled", "boxed", "destroyed", "removed"];
/** Conditions and flags that put a token out of the fight. */
const OUT = ["dead", "dying", "incapacitated", "unconscious", "destroyed", "removed", "boxed", "wrecked", "routed"];

/** One box fewer marked, in the last column (or branch) that has any. */
function unmarkOne(s) {
  const marked = Array.isArray(s.marked) ? [...s.marked] : null;
  const last = marked ? marked.map((m) => m > 0).lastIndexOf(true) : -1;
  if (last < 0) return null;
  marked[last] -= 1;
  return { marked };
}

function box(marked, label, title, extra = "") {
  return h("span", { class: `box${marked ? " marked" : ""}${extra}`, title }, label ?? "");
}

/** Each entry draws one shape of token state; all that match are drawn. */
export const TRACKS = [
  {
    // Exalted 2e health levels: {penalties: [0, -1, ..., "I", "D"], damage: [null, "B", "L", "A"]}.
    name: "health-levels",
    // Heal: the last marked level clears (aggravated damage last of all is not this page's call).
    heal(s) {
      const damage = [...s.health.damage];
      const last = damage.map((d) => !!d).lastIndexOf(true);
      if (last < 0) return null;
      damage[last] = null;
      return { health: { damage } };
    },
    reset: (s) => ({ health: { damage: s.health.damage.map(() => null) } }),
    // Damage marked into the Incapacitated level, the Dying ones, or every level.
    out(s) {
      const last = s.health.damage.map((d) => !!d).lastIndexOf(true);
      if (last < 0) return null;
      if (last === s.health.damage.length - 1 && s.health.penalties.includes("D")) return "dead";
      const at = s.health.penalties[last];
      return at === "D" ? "dying" : at === "I" ? "incapacitated" : null;
    },
    test: (s) => Array.isArray(s.health?.penalties) && Array.isArray(s.health?.damage),
    render(s, full) {
      const taken = s.health.damage.filter(Boolean).length;
      return h(
        "div",
        { class: "track levels", title: `${taken}/${s.health.penalties.length} health levels marked` },
        s.health.penalties.map((penalty, i) => {
          const mark = s.health.damage[i];
          const label = typeof penalty === "number" ? (penalty === 0 ? "−0" : `${penalty}`.replace("-", "−")) : penalty;
          return h(
            "span",
            { class: `level${mark ? " marked" : ""}`, title: `${label}${mark ? `: ${mark} damage` : ""}` },
            box(!!mark, mark ? DAMAGE_MARKS[mark] || mark : "", undefined, mark ? ` dmg-${mark}` : ""),
            full ? h("small", {}, label) : null,
          );
        }),
      );
    },
  },
  {
    // GODSGLOOM and similar: {health: {current, max}}.
    name: "health-points",
    heal: (s) => (s.health.current < s.health.max ? { health: { current: s.health.current + 1 } } : null),
    reset: (s) => ({ health: { current: s.health.max } }),
    out: (s) => (s.health.current <= 0 ? "down, no health left" : null),
    test: (s) => typeof s.health?.current === "number" && typeof s.health?.max === "number",
    render(s) {
      const { current, max } = s.health;
      const pips = max <= 20;
      return h(
        "div",
        { class: "track points", title: `health ${current}/${max}` },
        pips
          ? Array.from({ length: max }, (_, i) => box(i >= current, "", undefined, i < current ? " alive" : ""))
          : h("span", { class: "bar" }, h("span", { style: { width: `${(100 * current) / max}%` } })),
        h("small", {}, `${current}/${max}`),
      );
    },
  },
  {
    // Warmachine damage grid: six columns top down ("-" blank box, letter system box, "." none); marked per column.
    name: "damage-grid",
    heal: unmarkOne,
    reset: () => ({ marked: [0, 0, 0, 0, 0, 0], crippled: [] }),
    test: (s) => Array.isArray(s.grid) && s.grid.length === 6,
    render(s) {
      const marked = Array.isArray(s.marked) ? s.marked : [0, 0, 0, 0, 0, 0];
      const rows = Math.max(...s.grid.map((c) => c.length));
      const columns = s.grid.map((column, c) => {
        let n = 0;
        return h(
          "span",
          { class: "column" },
          h("small", {}, c + 1),
          Array.from({ length: rows }, (_, r) => {
            const ch = column[r] ?? ".";
            if (ch === ".") return h("span", { class: "box none" });
            n += 1;
            return box(n <= marked[c], ch === "-" ? "" : ch, `column ${c + 1}${ch === "-" ? "" : `: ${ch}`}`);
          }),
        );
      });
      return h("div", { class: "track grid", title: `damage grid, ${marked.reduce((a, b) => a + b, 0)} marked` }, columns);
    },
  },
  {
    // Warmachine life spiral: six branches of boxes, marked from the outside in.
    name: "life-spiral",
    heal: unmarkOne,
    reset: () => ({ marked: [0, 0, 0, 0, 0, 0], crippled: [] }),
    test: (s) => Array.isArray(s.spiral) && s.spiral.length === 6,
    render(s) {
      const marked = Array.isArray(s.marked) ? s.marked : [0, 0, 0, 0, 0, 0];
      return h(
        "div",
        { class: "track spiral", title: "life spiral (branches 1–6: mind, body, spirit)" },
        s.spiral.map((count, b) =>
          h(
            "span",
            { class: "branch" },
            h("small", {}, `${b + 1}${ASPECTS[b]}`),
            Array.from({ length: count }, (_, i) => box(i < marked[b], "")),
          ),
        ),
      );
    },
  },
  {
    // A row of damage boxes: {boxes: N, marked: n} (one box: a single-wound model).
    name: "damage-boxes",
    heal: (s) => (Number.isInteger(s.marked) && s.marked > 0 ? { marked: s.marked - 1 } : null),
    reset: () => ({ marked: 0 }),
    out: (s) => (Number.isInteger(s.marked) && s.boxes > 0 && s.marked >= s.boxes ? "every damage box marked" : null),
    test: (s) => Number.isInteger(s.boxes) && !Array.isArray(s.grid) && !Array.isArray(s.spiral),
    render(s) {
      const marked = Number.isInteger(s.marked) ? s.marked : 0;
      if (s.boxes > 40) {
        return h(
          "div",
          { class: "track boxes", title: `${marked}/${s.boxes} damage` },
          h("span", { class: "bar damage" }, h("span", { style: { width: `${(100 * marked) / s.boxes}%` } })),
          h("small", {}, `${marked}/${s.boxes}`),
        );
      }
      return h(
        "div",
        { class: "track boxes", title: `${marked}/${s.boxes} damage boxes marked` },
        Array.from({ length: s.boxes }, (_, i) => box(i < marked, "")),
      );
    },
  },
  {
    // A plain number of hit points (test rulesets, simple systems).
    name: "hit-points",
    test: (s) => typeof s.hp === "number",
    out: (s) => (s.hp <= 0 ? "down, no hit points left" : null),
    render: (s) => h("div", { class: "track hp", title: "hit points" }, h("small", {}, `hp ${s.hp}`)),
  },
  {
    // Conditions and state flags, in any ruleset that keeps them.
    name: "conditions",
    heal: null,
    reset(s) {
      const patch = {};
      if (Array.isArray(s.conditions) && s.conditions.length) patch.conditions = [];
      for (const f of FLAGS) if (s[f] === true) patch[f] = false;
      return patch;
    },
    out(s) {
      const names = [...(Array.isArray(s.conditions) ? s.conditions.map(String) : []), ...FLAGS.filter((f) => s[f] === true)];
      return names.find((c) => OUT.includes(c.toLowerCase())) ?? null;
    },
    test: (s) => (Array.isArray(s.conditions) && s.conditions.length > 0) || FLAGS.some((f) => s[f] === true),
    render(s) {
      const names = [...(Array.isArray(s.conditions) ? s.conditions : []), ...FLAGS.filter((f) => s[f] === true)];
      return h(
        "div",
        { class: "track conditions" },
        names.map((c) => h("span", { class: "condition", dataset: { condition: c } }, human(c))),
      );
    },
  },
];

export function renderTrack(system, full = false) {
  const s = system || {};
  const parts = tracksOf(s).map((t) => {
    const el = t.render(s, full);
    el.dataset.track = t.name;
    return el;
  });
  return h("div", { class: "tracks" }, parts);
}

/** The tracks a token's state has (their entries). */
export function tracksOf(system) {
  const s = system || {};
  return TRACKS.filter((t) => {
    try {
      return t.test(s);
    } catch (e) {
      return false;
    }
  });
}

/** Why a token is out of the fight ("dying", "destroyed"), or null while it is in it. */
export function outOfFight(system) {
  const s = system || {};
  for (const track of tracksOf(s)) {
    if (!track.out) continue;
    try {
      const why = track.out(s);
      if (why) return why;
    } catch (e) {
      // a shape this entry half-knows: no verdict from it
    }
  }
  return null;
}

/** Merge two patches (nested objects key by key, as token.update merges). */
function merge(a, b) {
  const out = { ...a };
  for (const [k, v] of Object.entries(b || {})) {
    out[k] = v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object" ? merge(out[k], v) : v;
  }
  return out;
}

/**
 * The `system` patch that heals a token by one step on each track that has damage
 * (`"heal"`), or restores every track to unhurt (`"reset"`); null when nothing changes.
 */
export function trackPatch(system, how) {
  let patch = {};
  for (const track of tracksOf(system)) {
    const fn = track[how];
    if (!fn) continue;
    const part = fn(system);
    if (part) patch = merge(patch, part);
  }
  return Object.keys(patch).length ? patch : null;
}
