/* The scene: every token of the chosen ruleset as a disc with its name and track.
 * Tokens with a position (Warmachine) stand where they are and can be dragged by
 * their owners; the others stand in rows below. A short press selects a token. */

import { call } from "./connection.js";
import { $, describeError, h, toast, fill } from "./dom.js";
import { announce, canEdit, putToken, state, tokenName } from "./state.js";
import { renderTrack } from "./tracks.js";

const currentRuleset = () => $("attack-ruleset").value;

// Pixels of room around the scene's squares: a token at the edge is drawn whole, its
// name and track included (labels are at most 120 px wide, centred on the token).
const EDGE = 64;


export const positional = (rulesetId) => {
  const props = state.rulesets.get(rulesetId)?.token_schema?.properties?.position?.properties;
  return !!(props && props.x && props.y);
};

function hasPosition(token) {
  const p = token.system?.position;
  return p && typeof p.x === "number" && typeof p.y === "number";
}

/** A token's disc diameter in scene units (a Warmachine base is in millimetres). */
const diameter = (token) => (Number.isFinite(token.system?.base) ? token.system.base / 25.4 : 1);

function sceneTokens() {
  const rid = state.sceneRuleset;
  return [...state.tokens.values()]
    .filter((t) => !rid || t.ruleset === rid)
    .sort((a, b) => a.ruleset.localeCompare(b.ruleset) || a.id.localeCompare(b.id));
}

/**
 * Where each token stands on the scene, in scene units. Positioned tokens stand at their
 * position; the view starts a little above and left of the nearest one (state.origin, kept
 * while the scene is shown, so a drag does not shift the view). Tokens without a position
 * stand in rows below.
 */
function layout(tokens) {
  const placed = new Map();
  const positions = tokens.filter((t) => positional(t.ruleset) && hasPosition(t)).map((t) => [t.id, t.system.position]);
  const minX = Math.min(...positions.map(([, p]) => p.x));
  const minY = Math.min(...positions.map(([, p]) => p.y));
  const origin = state.origin;
  if (state.fit || !origin || minX - 1 < origin.x || minY - 1 < origin.y) {
    state.origin = positions.length ? { x: Math.floor(minX) - 1, y: Math.floor(minY) - 1 } : { x: 0, y: 0 };
  }
  const { x: ox, y: oy } = state.origin;
  let maxX = ox;
  let maxY = oy;
  for (const [id, p] of positions) {
    placed.set(id, { x: p.x, y: p.y, free: true });
    maxX = Math.max(maxX, p.x);
    maxY = Math.max(maxY, p.y);
  }
  const rest = tokens.filter((t) => !placed.has(t.id));
  const top = positions.length ? Math.ceil(maxY) + 3 : oy + 1.5;
  // As many to a row as the scene's width holds (two on a phone, six on a desk).
  const room = ($("scene-wrap").clientWidth - 2 * EDGE) / state.zoom;
  const perRow = Math.max(2, Math.min(6, Math.floor(room / 4) + 1));
  rest.forEach((t, i) => {
    const spot = { x: ox + 1 + (i % perRow) * 4, y: top + Math.floor(i / perRow) * 4, free: positional(t.ruleset) };
    placed.set(t.id, spot);
    maxX = Math.max(maxX, spot.x);
    maxY = Math.max(maxY, spot.y);
  });
  return { placed, width: Math.max(maxX - ox + 1, 8), height: Math.max(maxY - oy + 2, 6) };
}

export function renderScene() {
  const scene = $("scene");
  const tokens = sceneTokens();
  const { placed, width, height } = layout(tokens);
  if (state.fit) {
    // A new scene: fit its width to the window, within reason.
    state.fit = false;
    const room = $("scene-wrap").clientWidth - 4 - 2 * EDGE;
    if (room > 0) state.zoom = Math.max(18, Math.min(48, Math.floor(room / width)));
  }
  const z = state.zoom;
  scene.style.width = `${width * z + 2 * EDGE}px`;
  scene.style.height = `${height * z + 2 * EDGE}px`;
  scene.style.backgroundSize = `${z}px ${z}px`;
  scene.style.backgroundPosition = `${EDGE}px ${EDGE}px`;
  const rid = state.sceneRuleset;
  $("scene-unit").textContent = rid && positional(rid) ? "1 square = 1 unit · drag to move" : "";
  fill(scene, 
    ...tokens.map((t) => {
      const spot = placed.get(t.id);
      const size = Math.max(diameter(t) * z, 28);
      const classes = ["token"];
      if (canEdit(t)) classes.push("mine");
      if (t.id === state.attacker && t.ruleset === currentRuleset()) classes.push("attacker");
      if (state.targets.includes(t.id) && t.ruleset === currentRuleset()) classes.push("target");
      if (t.id === state.selected) classes.push("selected");
      const disc = h(
        "div",
        {
          class: "disc",
          style: { width: `${size}px`, height: `${size}px`, fontSize: `${Math.max(11, size / 3)}px` },
          title: `${t.name} (${t.ruleset})`,
        },
        initials(t.name),
      );
      const el = h(
        "div",
        {
          class: classes.join(" "),
          dataset: { token: t.id, ruleset: t.ruleset },
          style: { left: `${EDGE + (spot.x - state.origin.x) * z}px`, top: `${EDGE + (spot.y - state.origin.y) * z - size / 2}px` },
        },
        disc,
        h("div", { class: "label" }, t.name),
        renderTrack(t.system),
      );
      dragOrClick(el, disc, t, spot.free && canEdit(t));
      return el;
    }),
  );
}

const initials = (name) =>
  String(name)
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0].toUpperCase())
    .join("");

/** Pointer handling on a token: a short press selects it, a drag moves it (when allowed). */
function dragOrClick(el, disc, token, movable) {
  disc.addEventListener("pointerdown", (down) => {
    if (down.button !== 0) return;
    down.preventDefault();
    const startX = down.clientX;
    const startY = down.clientY;
    const left = parseFloat(el.style.left);
    const top = parseFloat(el.style.top);
    let dragging = false;
    disc.setPointerCapture(down.pointerId);
    const move = (ev) => {
      const dx = ev.clientX - startX;
      const dy = ev.clientY - startY;
      if (!dragging && Math.hypot(dx, dy) > 4 && movable) {
        dragging = true;
        el.classList.add("dragging");
      }
      if (dragging) {
        el.style.left = `${left + dx}px`;
        el.style.top = `${top + dy}px`;
      }
    };
    const up = async (ev) => {
      disc.removeEventListener("pointermove", move);
      disc.removeEventListener("pointerup", up);
      disc.removeEventListener("pointercancel", up);
      if (!dragging) {
        select(token.id);
        return;
      }
      el.classList.remove("dragging");
      const z = state.zoom;
      const size = parseFloat(disc.style.width);
      const x = Math.round(((parseFloat(el.style.left) - EDGE) / z + state.origin.x) * 10) / 10;
      const y = Math.round(((parseFloat(el.style.top) - EDGE + size / 2) / z + state.origin.y) * 10) / 10;
      if (ev.type === "pointercancel") return renderScene();
      await moveToken(token.id, Math.max(0, x), Math.max(0, y));
    };
    disc.addEventListener("pointermove", move);
    disc.addEventListener("pointerup", up);
    disc.addEventListener("pointercancel", up);
  });
}

async function moveToken(id, x, y) {
  const ack = await call("token.update", { id, system: { position: { x, y } } });
  if (ack.ok) putToken(ack.token);
  else {
    toast(`Could not move ${tokenName(id)}: ${describeError(ack.error)}`, "error");
    renderScene();
  }
}

export function select(id) {
  state.selected = state.selected === id ? null : id;
  announce("selected");
}
