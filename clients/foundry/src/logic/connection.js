/**
 * One user's connection to a bridge table, over an injected socket.io `io`
 * (the bundled socket.io-client in Foundry, the npm one in Node tests).
 *
 * Every request is an event with an acknowledgement; `request` resolves with the
 * result fields or rejects with a `BridgeError` carrying the bridge's stable code.
 * Questions (`decision`) go to `onDecision`'s handler: what it resolves with is the
 * answer; `undefined` (the dialog was closed) sends nothing, so the rules' default
 * applies when the question times out. `decision.closed` closes the open question.
 *
 * After every connect — the first, and each reconnection socket.io makes after a
 * drop or a bridge restart — the connection catches up with `table.sync` from the
 * newest audit `seq` it has seen (`since`, kept by the caller across restarts of
 * Foundry) and hands what it missed to `onSync`'s handler: the attacks committed
 * meanwhile, the undos, every token, and the questions still out for this user.
 *
 * Broadcasts are applied in the table's order (`broadcast_seq`, the shared rule of
 * common/sequence.js): a duplicate is dropped; a gap, a numbering that starts again,
 * or the bridge's `table.resync` is one catch-up like a reconnection's (`onSync` with
 * `{reconnect: true}`), after which the connection goes on from the sync's
 * `broadcast_seq`. Listeners added with `on` see only the broadcasts applied.
 *
 * A request answered `store_unavailable` (the bridge's Redis is away for a moment) is
 * sent again by itself, the same payload and so the same `request_id`, after the
 * `retry_after` it names, for up to about 30 s (the shared rule of common/retry.js);
 * `onStoreWait`'s handler hears the seconds left meanwhile. Past that it rejects with
 * the error.
 */

import { sendRetrying } from "../../../../vtt_bridge/server/static/common/retry.js";
import { BROADCASTS, BroadcastSequence } from "../../../../vtt_bridge/server/static/common/sequence.js";

export class BridgeError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    this.details = details;
  }
}

const newId = () => (globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : `r-${Date.now()}-${Math.random().toString(36).slice(2)}`);

/** The identity of one question: an attack may ask the same user several things. */
export const questionId = (d) => `${d.attack?.id ?? "?"}/${d.key}`;

export class BridgeConnection {
  /**
   * @param {object} options
   * @param {Function} options.io  socket.io-client's `io`
   * @param {string} options.url  the bridge (`http://127.0.0.1:8000`)
   * @param {string} options.table  the table id
   * @param {string} options.key  this user's key (the GM key on the GM's machine)
   * @param {number} [options.timeout]  ms to wait for an ordinary acknowledgement
   * @param {number} [options.attackTimeout]  ms to wait for `attack` (questions included)
   * @param {number|null} [options.since]  the newest audit seq this client saw before (0: catch
   *   up from the table's first record; null: nothing to catch up on, start from now)
   * @param {object} [options.socket]  more socket.io-client options (reconnection delays)
   */
  constructor({ io, url, table, key, timeout = 15000, attackTimeout = 15 * 60 * 1000, since = 0, socket = {} }) {
    if (typeof io !== "function") throw new TypeError("io is socket.io-client's io()");
    if (!url || !table || !key) throw new BridgeError("invalid_request", "the bridge URL, table id and key are needed", {});
    this.timeout = timeout;
    this.attackTimeout = attackTimeout;
    this.socket = io(url, { auth: { table, key }, autoConnect: false, reconnection: true, transports: ["websocket", "polling"], ...socket });
    /** The newest audit seq seen (`attack.resolved`, `attack.undone`, `table.sync`). */
    this.seq = typeof since === "number" && Number.isInteger(since) && since > 0 ? since : 0;
    this._fromNow = since === null;
    this._ready = false;
    this._onSync = null;
    this._onSyncError = null;
    /** @type {((seconds: number|null, event: string, ok?: boolean) => void)|null} */
    this._onStoreWait = null;
    this.user = null;
    this.role = null;
    this.table = null;
    /** @type {Map<string, {decision: object, close: Function}>} */
    this.open = new Map();
    this._decide = null;
    /** Broadcast order (common/sequence.js): a gap is one catch-up. */
    this.sequence = new BroadcastSequence(() => this._gap());
    /** @type {Map<string, Set<Function>>} listeners of the broadcasts, by event */
    this._listeners = new Map();
    for (const event of BROADCASTS) {
      this.socket.on(event, (data) => {
        if (!this.sequence.accept(data)) return;
        for (const fn of [...(this._listeners.get(event) || [])]) fn(data);
      });
    }
    this.socket.on("table.resync", () => this.sequence.gap());
    this.socket.on("disconnect", () => this.sequence.reset(null)); // the reconnect's sync says where the table is
    this.socket.on("decision", (decision, reply) => this._asked(decision, reply));
    this.socket.on("decision.closed", (info) => this._closed(info));
    this.socket.on("attack.resolved", (data) => this._saw(data?.attack?.seq));
    this.socket.on("attack.undone", (data) => this._saw(data?.undo?.seq));
    // socket.io reconnected on its own (a drop, a bridge restart): catch up.
    this.socket.on("connect", () => {
      if (this._ready) void this._catchUp(true).catch((err) => this._onSyncError?.(err));
    });
  }

  /** Broadcasts were missed: catch up as after a reconnection (once connected and loaded). */
  _gap() {
    if (!this._ready || !this.socket.connected) {
      this.sequence.reset(null);
      return;
    }
    void this._catchUp(true).catch((err) => {
      this.sequence.reset(null);
      this._onSyncError?.(err);
    });
  }

  _saw(seq) {
    if (Number.isInteger(seq) && seq > this.seq) this.seq = seq;
  }

  /**
   * What the client missed: `handler(sync, {reconnect})` after every connect, where
   * `sync` is `{attacks, undone, tokens, pending, user, role, table, seq, more}` —
   * the attacks (oldest first) and undos committed after the seq seen before, every
   * token, the questions put to this user that are still out. `onError(err)` hears
   * a catch-up that failed after a reconnection (the first one rejects `connect`).
   * @param {(sync: any, how: {reconnect: boolean}) => unknown} handler
   * @param {((err: unknown) => void)|null} [onError]
   */
  onSync(handler, onError = null) {
    this._onSync = handler;
    this._onSyncError = onError;
  }

  /**
   * `table.sync` from the newest seq seen, paged (at most `pages` pages of 200
   * records); advances `seq`.
   */
  async sync({ pages = 20 } = {}) {
    const out = { attacks: [], undone: [], tokens: [], pending: [], user: null, role: null, table: null, seq: this.seq, more: false, broadcast_seq: null };
    for (let page = 0; page < pages; page += 1) {
      // From now: past every record, so the table, tokens and questions come without the history.
      const ack = await this.request("table.sync", { since: this._fromNow ? Number.MAX_SAFE_INTEGER : this.seq });
      this._fromNow = false;
      out.attacks.push(...(ack.attacks || []).filter((a) => !a.kind || a.kind === "attack"));
      out.undone.push(...(ack.undone || []));
      Object.assign(out, { tokens: ack.tokens || [], pending: ack.pending || [], user: ack.user, role: ack.role, table: ack.table, more: !!ack.more, broadcast_seq: ack.broadcast_seq ?? null });
      if (ack.more && Number.isInteger(ack.next)) this._saw(ack.next);
      else this._saw(ack.seq);
      out.seq = this.seq;
      if (!ack.more) break;
    }
    return out;
  }

  async _catchUp(reconnect) {
    const sync = await this.sync();
    this.sequence.reset(sync.broadcast_seq);
    if (sync.user) this.user = sync.user;
    if (sync.role) this.role = sync.role;
    if (sync.table) this.table = sync.table;
    if (this._onSync) await this._onSync(sync, { reconnect });
    return sync;
  }

  /** Connect and learn who we are (`table.get`). Rejects with the refusal's code. */
  async connect() {
    await new Promise((resolve, reject) => {
      const ok = () => {
        this.socket.off("connect_error", bad);
        resolve();
      };
      const bad = (err) => {
        this.socket.off("connect", ok);
        this.socket.disconnect();
        const data = err?.data || {};
        reject(new BridgeError(data.code || "unreachable", err?.message || "cannot reach the bridge", data.details || {}));
      };
      this.socket.once("connect", ok);
      this.socket.once("connect_error", bad);
      this.socket.connect();
    });
    const info = await this.request("table.get");
    this.user = info.user;
    this.role = info.role;
    this.table = info.table;
    await this._catchUp(false);
    this._ready = true;
    return info;
  }

  get connected() {
    return this.socket.connected;
  }

  /** Listen to a broadcast (`attack.resolved`, `token.updated`, ...), in the table's order. Returns an unsubscribe function. */
  on(event, fn) {
    if (!BROADCASTS.includes(event)) {
      this.socket.on(event, fn);
      return () => this.socket.off(event, fn);
    }
    if (!this._listeners.has(event)) this._listeners.set(event, new Set());
    this._listeners.get(event).add(fn);
    return () => this._listeners.get(event)?.delete(fn);
  }

  /**
   * Send a request and wait for its acknowledgement.
   * @returns {Promise<object>} the acknowledgement without `ok`
   * @throws {BridgeError}
   */
  async request(event, payload = {}, { timeout = this.timeout } = {}) {
    const once = async () => {
      try {
        return await this.socket.timeout(timeout).emitWithAck(event, payload);
      } catch {
        throw new BridgeError("timeout", `the bridge did not answer ${event} within ${Math.round(timeout / 1000)} s`, { event });
      }
    };
    const onWait = (/** @type {number|null} */ seconds, /** @type {any} */ last) => this._onStoreWait?.(seconds, event, last?.ok === true);
    const ack = await sendRetrying(once, { onWait });
    if (!ack || ack.ok !== true) {
      const e = ack?.error || {};
      throw new BridgeError(e.code || "internal", e.message || `${event} failed`, e.details || {});
    }
    const { ok, ...rest } = ack;
    return rest;
  }

  /**
   * Who hears that a request waits for the bridge's store: `handler(seconds, event)`
   * with the seconds left before it is sent again ("store unavailable, retrying in
   * N s"), once a second, then `handler(null, event, ok)` when it is answered (`ok`:
   * it went through) or given up.
   * @param {((seconds: number|null, event: string, ok?: boolean) => void)|null} handler
   */
  onStoreWait(handler) {
    this._onStoreWait = handler;
  }

  /** `rulesets.list`. */
  rulesets() {
    return this.request("rulesets.list");
  }

  /** GM: a key for a bridge user name, replacing their previous one. */
  async createKey(user) {
    return (await this.request("key.create", { user })).key;
  }

  /**
   * Resolve an attack (waits through every question). One `request_id` per user
   * action, so a resend after a reconnect applies nothing twice: an attack the
   * bridge cut short by stopping (`server_stopping`, nothing applied) is sent
   * again, with the same id, once the connection is back (a few times at most).
   */
  async attack({ ruleset, attacker, targets, declaration = {}, requestId = newId() }) {
    const payload = { ruleset, attacker, targets, declaration, request_id: requestId };
    for (let attempt = 1; ; attempt += 1) {
      try {
        const record = (await this.request("attack", payload, { timeout: this.attackTimeout })).attack;
        this._saw(record?.seq);
        return record;
      } catch (err) {
        if (!(err instanceof BridgeError) || err.code !== "server_stopping" || attempt >= 3) throw err;
        if (!(await this._reconnected(this.attackTimeout))) throw err;
      }
    }
  }

  /** Resolves true at the socket's next `connect` (a reconnection), false after `ms`. */
  _reconnected(ms) {
    return new Promise((resolve) => {
      const done = (value) => {
        clearTimeout(timer);
        this.socket.off("connect", back);
        resolve(value);
      };
      const back = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.socket.once("connect", back);
    });
  }

  /** GM: undo an attack. */
  async undo(id) {
    return (await this.request("attack.undo", { id })).undo;
  }

  /**
   * Who answers questions: `handler(decision, {signal})` resolves with an answer
   * (an option id or `{option, params}`), or `undefined` to send nothing. The
   * signal aborts when the bridge closes the question (`decision.closed`).
   */
  onDecision(handler) {
    this._decide = handler;
  }

  async _asked(decision, reply) {
    const id = questionId(decision);
    const controller = new AbortController();
    // The same question put again (after a dropped connection: its first reply goes
    // nowhere now) replaces the one open: that one closes, this one is answered.
    this.open.get(id)?.close();
    const entry = { decision, close: () => controller.abort() };
    this.open.set(id, entry);
    try {
      if (!this._decide) return;
      const answer = await this._decide(decision, { signal: controller.signal });
      if (answer !== undefined && !controller.signal.aborted && typeof reply === "function") reply(answer);
    } finally {
      if (this.open.get(id) === entry) this.open.delete(id);
    }
  }

  _closed(info) {
    const id = `${info?.attack ?? "?"}/${info?.key}`;
    this.open.get(id)?.close();
  }

  close() {
    this._ready = false;
    for (const q of this.open.values()) q.close();
    this.socket.disconnect();
  }
}
