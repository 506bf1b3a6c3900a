/* What the page knows: the table, its rulesets and tokens, the attack form's choices,
 * the cards in the chat, the questions asked. One object, shared by the modules, and a
 * tiny hub so a module can say "tokens changed" without knowing who draws them. */

export const state = {
  socket: null,
  table: null,
  user: null,
  role: null,
  users: [], // connected users (table.get)
  rulesets: new Map(), // id → description from rulesets.list
  plugins: [],
  tokens: new Map(), // id → token
  lastSeq: 0, // the newest audit seq this page has seen (for table.sync after a reconnect)
  loaded: false,
  sceneRuleset: "",
  zoom: 36, // pixels per scene unit
  fit: true, // fit the zoom to the next scene drawn
  origin: null, // the scene's top-left corner, in scene units
  selected: null, // token id shown in the inspector
  editing: null, // {mode: "create"|"edit", ...} the token form on screen
  lastOwnership: null, // who owned the token last saved here: a new token starts with them
  attacker: "",
  targets: [], // in the order chosen
  declaration: null, // {for, read()} of the generated form
  cards: new Map(), // attack id → card
  pending: [], // this client's attack requests awaiting their first step
  history: [],
  odds: { timer: null, asked: 0 },
  decisions: [], // queued {data, ack}
  decision: null, // the one on screen
  waiting: new Map(), // "attack/key" → {attack, key, token, prompt, deadline}: questions the table waits on
};

export const ownLevel = (token) =>
  state.role === "gm" ? 3 : Number(token.ownership?.[state.user] ?? token.ownership?.default ?? 0);
export const canEdit = (token) => ownLevel(token) >= 3;
export const tokenName = (id) => state.tokens.get(id)?.name ?? id;
export const isGM = () => state.role === "gm";

const listeners = new Map();

/** Call fn whenever `name` is announced. */
export function on(name, fn) {
  if (!listeners.has(name)) listeners.set(name, []);
  listeners.get(name).push(fn);
}

/** Announce `name` to every listener (in the order they subscribed). */
export function announce(name, ...args) {
  for (const fn of listeners.get(name) || []) fn(...args);
}

/** A token arrived (created, updated, synced): keep it and tell the views. */
export function putToken(token) {
  state.tokens.set(token.id, token);
  announce("tokens");
}

export function dropToken(id) {
  state.tokens.delete(id);
  if (state.selected === id) state.selected = null;
  announce("tokens");
}
