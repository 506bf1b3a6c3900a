/**
 * One user's connection to a bridge table, over an injected socket.io `io`
 * (the bundled socket.io-client in Foundry, the npm one in Node tests).
 *
 * Every request is an event with an acknowledgement; `request` resolves with the
 * result fields or rejects with a `BridgeError` carrying the bridge's stable code.
 * Questions (`decision`) go to `onDecision`'s handler: what it resolves with is the
 * answer; `undefined` (the dialog was closed) sends nothing, so the rules' default
 * applies when the question times out. `decision.closed` closes the open question.
 */

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
   */
  constructor({ io, url, table, key, timeout = 15000, attackTimeout = 15 * 60 * 1000 }) {
    if (typeof io !== "function") throw new TypeError("io is socket.io-client's io()");
    if (!url || !table || !key) throw new BridgeError("invalid_request", "the bridge URL, table id and key are needed", {});
    this.timeout = timeout;
    this.attackTimeout = attackTimeout;
    this.socket = io(url, { auth: { table, key }, autoConnect: false, reconnection: true, transports: ["websocket", "polling"] });
    this.user = null;
    this.role = null;
    this.table = null;
    /** @type {Map<string, {decision: object, close: Function}>} */
    this.open = new Map();
    this._decide = null;
    this.socket.on("decision", (decision, reply) => this._asked(decision, reply));
    this.socket.on("decision.closed", (info) => this._closed(info));
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
    return info;
  }

  get connected() {
    return this.socket.connected;
  }

  /** Listen to a broadcast (`attack.resolved`, `token.updated`, ...). Returns an unsubscribe function. */
  on(event, fn) {
    this.socket.on(event, fn);
    return () => this.socket.off(event, fn);
  }

  /**
   * Send a request and wait for its acknowledgement.
   * @returns {Promise<object>} the acknowledgement without `ok`
   * @throws {BridgeError}
   */
  async request(event, payload = {}, { timeout = this.timeout } = {}) {
    let ack;
    try {
      ack = await this.socket.timeout(timeout).emitWithAck(event, payload);
    } catch {
      throw new BridgeError("timeout", `the bridge did not answer ${event} within ${Math.round(timeout / 1000)} s`, { event });
    }
    if (!ack || ack.ok !== true) {
      const e = ack?.error || {};
      throw new BridgeError(e.code || "internal", e.message || `${event} failed`, e.details || {});
    }
    const { ok, ...rest } = ack;
    return rest;
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
        return (await this.request("attack", payload, { timeout: this.attackTimeout })).attack;
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
    this.open.set(id, { decision, close: () => controller.abort() });
    try {
      if (!this._decide) return;
      const answer = await this._decide(decision, { signal: controller.signal });
      if (answer !== undefined && !controller.signal.aborted && typeof reply === "function") reply(answer);
    } finally {
      this.open.delete(id);
    }
  }

  _closed(info) {
    const id = `${info?.attack ?? "?"}/${info?.key}`;
    this.open.get(id)?.close();
  }

  close() {
    for (const q of this.open.values()) q.close();
    this.socket.disconnect();
  }
}
