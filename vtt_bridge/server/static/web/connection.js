/* The connection: joining a table, every request with its acknowledgement, and coming
 * back after the server restarts or the network drops.
 *
 * socket.io reconnects by itself after a lost connection. A server that says goodbye
 * (`io server disconnect`, what a stopping server sends) is not retried by socket.io,
 * so the page retries itself, with a growing pause. On every reconnect the page asks
 * what it missed — `table.sync {since: lastSeq}` (tokens, the attacks after the last
 * one it saw, the questions out for this user). When it cannot catch up it says so in
 * the banner, with a button to try again. A key replaced or revoked (`session.closed`)
 * ends the session: the page says so and does not reconnect with that key. */

import { retryingText, sendRetrying } from "../common/retry.js";
import { BroadcastSequence } from "../common/sequence.js";
import { $, describeError, h, toast, fill } from "./dom.js";
import { announce, state } from "./state.js";

/** Broadcast order (common/sequence.js): a gap, or the server's `table.resync`, is one catch-up. */
export const sequence = new BroadcastSequence(() => {
  announce("gap", sequence.last);
  if (state.loaded && state.socket?.connected) void resync({ quiet: true });
  else sequence.reset(null);
});

/**
 * Emit with an acknowledgement. No answer in time, or the connection lost before the
 * answer, becomes an error envelope too (`timeout`, `disconnected`, `offline`). A
 * `store_unavailable` answer is sent again by itself (the same data, so the same
 * `request_id`; common/retry.js) for up to about 30 s, the banner saying
 * "store unavailable, retrying in N s" meanwhile.
 */
export async function call(event, data, timeoutMs = 15000) {
  const payload = data ?? {};
  let waiting = false;
  const onWait = (seconds) => {
    if (seconds !== null && !waiting) storeWaits += 1;
    else if (seconds === null && waiting) storeWaits -= 1;
    waiting = seconds !== null;
    if (waiting) banner(retryingText(seconds), { kind: "warn" });
    else if (storeWaits === 0 && $("banner").textContent.startsWith("store unavailable")) banner(null);
  };
  return sendRetrying(() => callOnce(event, payload, timeoutMs), { onWait });
}

/** Requests of this page waiting for the store (the banner says so until none is left). */
let storeWaits = 0;

async function callOnce(event, data, timeoutMs) {
  const socket = state.socket;
  if (!socket || !socket.connected) return { ok: false, error: { code: "offline", message: "not connected" } };
  let onLost;
  const lost = new Promise((resolve) => {
    onLost = () => resolve({ ok: false, error: { code: "disconnected", message: `the connection was lost before ${event} was answered` } });
    socket.once("disconnect", onLost);
  });
  try {
    return await Promise.race([socket.timeout(timeoutMs).emitWithAck(event, data), lost]);
  } catch (err) {
    return { ok: false, error: { code: "timeout", message: `no answer to ${event}` } };
  } finally {
    socket.off("disconnect", onLost);
  }
}

/** Resolves true when the page is connected and caught up again (false after `ms`). */
export function whenOnline(ms) {
  if (state.socket?.connected && !resyncing) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const done = (value) => {
      clearTimeout(timer);
      waiters.delete(done);
      resolve(value);
    };
    waiters.add(done);
  });
}

/** Resolves once the page has lost its connection (at once if it has), or after `ms`. */
export function whenOffline(ms) {
  const socket = state.socket;
  if (!socket?.connected) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket.off("disconnect", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    socket.once("disconnect", done);
  });
}

const waiters = new Set();
let resyncing = false;

function online() {
  for (const done of [...waiters]) done(true);
}

export function setStatus(text, stateName) {
  const el = $("status");
  el.textContent = text;
  el.dataset.state = stateName;
}

/** The banner under the top bar: what the page cannot do right now, and what to do. */
export function banner(message, { kind = "info", action = null } = {}) {
  const el = $("banner");
  if (!message) {
    el.hidden = true;
    el.replaceChildren();
    return;
  }
  el.hidden = false;
  el.dataset.kind = kind;
  fill(el, 
    h("span", { class: "banner-text" }, message),
    action ? h("button", { type: "button", class: "small", onclick: action.run }, action.label) : null,
  );
}

const handlers = {}; // event → handler, registered by the modules before join()

/** Have `fn` called for a server event on every socket this page opens. */
export function handle(event, fn) {
  handlers[event] = fn;
}

let retry = { timer: null, delay: 1000 };

function scheduleReconnect(socket) {
  clearTimeout(retry.timer);
  retry.timer = setTimeout(() => {
    if (state.socket === socket && !socket.connected) socket.connect();
    retry.delay = Math.min(retry.delay * 2, 8000);
  }, retry.delay);
}

export function join(table, key) {
  if (state.socket) state.socket.disconnect();
  $("join-error").textContent = "";
  $("join-button").disabled = true;
  setStatus("connecting", "connecting");
  if (state.table && state.table.id !== table) forget();
  // batch: broadcasts that leave together (an attack's result and its token updates)
  // arrive as one message; the single events still come from a server of several processes.
  const socket = io({ auth: { table, key, batch: true }, reconnectionDelayMax: 5000 });
  state.socket = socket;
  state.loaded = false;

  socket.on("connect", async () => {
    clearTimeout(retry.timer);
    retry.delay = 1000;
    setStatus("online", "online");
    try {
      sessionStorage.setItem("vtt-bridge", JSON.stringify({ table, key }));
    } catch (e) {
      /* private mode: no memory, no harm */
    }
    if (state.loaded) await resync();
    else await load();
  });
  socket.on("connect_error", (err) => {
    if (!socket.active) {
      // Refused by the server (bad key): socket.io will not retry, and neither do we.
      const reason = err?.data?.message || err?.message || "refused";
      clearTimeout(retry.timer);
      if (state.loaded) {
        banner(`The server no longer lets this page in: ${reason}. Join again with a valid key.`, { kind: "error" });
      }
      $("join-error").textContent = `Could not join: ${reason}`;
      $("join").hidden = false;
      $("app").hidden = true;
      $("join-button").disabled = false;
      setStatus("offline", "offline");
      state.socket = null;
    } else {
      setStatus("reconnecting", "connecting");
    }
  });
  // The GM replaced or revoked this page's key: the server closes the connection next.
  socket.on("session.closed", (data) => closedByServer(socket, data || {}));
  socket.on("disconnect", (reason) => {
    if (state.socket !== socket) return;
    sequence.reset(null); // the reconnect's table.sync says where the table is
    setStatus("reconnecting", "connecting");
    announce("disconnected", reason);
    if (state.loaded) banner("Connection lost — reconnecting… (the table goes on; this page catches up when it is back)", { kind: "warn" });
    // A stopping server says goodbye; socket.io takes that as final. The page does not.
    if (reason === "io server disconnect") scheduleReconnect(socket);
  });
  // After a failed reconnection attempt of our own, try again later.
  socket.io.on("error", () => {
    if (state.socket === socket && !socket.active) scheduleReconnect(socket);
  });
  for (const [event, fn] of Object.entries(handlers)) socket.on(event, (...args) => sequence.accept(args[0]) && fn(...args));
  socket.on("batch", (items) => {
    for (const [event, data] of items) if (sequence.accept(data)) handlers[event]?.(data);
  });
  socket.on("table.resync", () => sequence.gap());
}

const CLOSED = {
  key_replaced: "A new key was issued for this user, so this page's key no longer opens the table",
  key_revoked: "The GM revoked this page's key",
};

/** `session.closed`: stop for good (no reconnect with this key) and say why. */
function closedByServer(socket, { code, message }) {
  if (state.socket !== socket) return;
  clearTimeout(retry.timer);
  state.socket = null;
  socket.disconnect();
  try {
    sessionStorage.removeItem("vtt-bridge");
  } catch (e) {
    /* nothing remembered */
  }
  setStatus("closed", "offline");
  const why = CLOSED[code] || message || "The server closed this session";
  banner(`${why}. The table shown is no longer updated. Ask the GM for a new key.`, {
    kind: "error",
    action: { label: "Join with a new key", run: () => leave() },
  });
  $("join-error").textContent = `${why}${message && CLOSED[code] ? ` (${message})` : ""}.`;
  announce("closed", { code, message });
}

/** Forget the table this page showed (before leaving, or joining another). */
function forget() {
  state.loaded = false;
  state.table = null;
  state.lastSeq = 0;
  state.cards.clear();
  state.waiting.clear();
  state.selected = null;
  state.editing = null;
  fill($("chat"));
  fill($("waiting"));
  $("waiting").hidden = true;
  $("token-editor").hidden = true;
}

export function leave() {
  try {
    sessionStorage.removeItem("vtt-bridge");
  } catch (e) {
    /* nothing remembered */
  }
  clearTimeout(retry.timer);
  const socket = state.socket;
  state.socket = null;
  socket?.disconnect();
  forget();
  $("app").hidden = true;
  $("join").hidden = false;
  $("leave").hidden = true;
  banner(null);
  setStatus("offline", "offline");
}

/** The newest audit seq seen: table.sync starts after it. */
export function sawSeq(seq) {
  if (Number.isInteger(seq) && seq > state.lastSeq) state.lastSeq = seq;
}

async function loadTableAndRulesets() {
  const [table, rulesets] = await Promise.all([call("table.get"), call("rulesets.list")]);
  for (const ack of [table, rulesets]) {
    if (!ack.ok) throw new Error(describeError(ack.error));
  }
  state.table = table.table;
  state.user = table.user;
  state.role = table.role;
  state.users = table.users || [];
  state.rulesets = new Map(rulesets.rulesets.map((r) => [r.id, r]));
  state.plugins = rulesets.plugins || [];
}

/** The rulesets as the table now runs them (its packs changed): the forms follow. */
export async function reloadRulesets() {
  const rulesets = await call("rulesets.list");
  if (!rulesets.ok) return;
  state.rulesets = new Map(rulesets.rulesets.map((r) => [r.id, r]));
  state.plugins = rulesets.plugins || [];
  announce("rulesets");
}

const RECENT_CARDS = 10;

/** First load after joining: the table, its tokens, the recent cards, questions out. */
async function load() {
  try {
    await loadTableAndRulesets();
    // The recent attacks, newest first: their cards go in the chat (oldest at the bottom).
    const history = await call("attack.history", { limit: 50 });
    if (!history.ok) throw new Error(describeError(history.error));
    const entries = history.attacks || [];
    state.lastSeq = entries.reduce((m, e) => Math.max(m, e.seq || 0), 0);
    await syncTokensAndPending();
    const undone = new Set(entries.filter((e) => e.kind === "undo").map((e) => e.id));
    const recent = entries.filter((e) => e.kind === "attack").slice(0, RECENT_CARDS).reverse();
    await showRecords(recent.map((e) => e.id), undone);
  } catch (err) {
    if (!state.socket) return; // left, or the key was closed (the banner says so already)
    toast(`Loading the table failed: ${err.message}`, "error");
    banner(`Could not load the table: ${err.message}`, { kind: "error", action: { label: "Try again", run: () => load() } });
    return;
  }
  state.loaded = true;
  $("join").hidden = true;
  $("app").hidden = false;
  $("join-button").disabled = false;
  $("leave").hidden = false;
  document.body.dataset.role = state.role;
  banner(null);
  announce("loaded");
  online();
}

/** Tokens and pending questions (table.sync since now). */
async function syncTokensAndPending() {
  const ack = await call("table.sync", { since: state.lastSeq });
  if (!ack.ok) throw new Error(describeError(ack.error));
  applySync(ack);
  return ack;
}

function applySync(ack) {
  sequence.reset(ack.broadcast_seq);
  state.tokens = new Map((ack.tokens || []).map((t) => [t.id, t]));
  if (ack.role) state.role = ack.role;
  for (const record of ack.attacks || []) announce("record", record);
  sawSeq(ack.seq);
  for (const record of ack.attacks || []) sawSeq(record.seq);
  announce("pending", ack.pending || []);
}

async function showRecords(ids, undone = new Set()) {
  const acks = await Promise.all(ids.map((id) => call("attack.get", { id })));
  for (const ack of acks) {
    if (!ack.ok) continue;
    announce("record", ack.attack, { undone: ack.undone || undone.has(ack.attack.id) });
    sawSeq(ack.attack.seq);
  }
}

/** After a reconnect, or a gap in the broadcasts (`quiet`): what happened while this page was away. */
export async function resync({ quiet = false } = {}) {
  if (!quiet) banner("Back online — catching up…", { kind: "info" });
  resyncing = true;
  try {
    await loadTableAndRulesets();
    // Page through what was missed (200 records a page), within reason.
    for (let page = 0; page < 20; page += 1) {
      const ack = await call("table.sync", { since: state.lastSeq });
      if (!ack.ok) throw new Error(describeError(ack.error));
      applySync(ack);
      if (!ack.more) break;
      if (page === 19) {
        banner("Much happened while this page was away: the chat shows part of it; History has all of it.", { kind: "warn" });
      }
    }
  } catch (err) {
    resyncing = false;
    if (!state.socket) return false; // left, or the key was closed (the banner says so already)
    banner(`Reconnected, but could not catch up with the table: ${err.message}. What you see may be out of date.`, {
      kind: "error",
      action: { label: "Try again", run: () => resync() },
    });
    sequence.reset(null);
    return false;
  }
  resyncing = false;
  banner(null);
  announce("loaded");
  announce("resynced");
  online();
  return true;
}
