// @ts-check
/** The module's settings and its connection to the bridge. */

import { io } from "socket.io-client";

import { BridgeConnection, questionId } from "../logic/connection.js";
import { bridgeFlags } from "../logic/tokens.js";
import { MODULE_ID, report, setting, state, t } from "./context.js";
import { actorOf, syncAll, writeBack, writer } from "./actors.js";
import { cardPosted, postCard } from "./cards.js";
import { askDialog } from "./questions.js";

export function registerSettings() {
  const reconnect = () => void connect();
  for (const [key, hint] of [
    ["url", "URL of the vtt-bridge server (http://127.0.0.1:8000)"],
    ["table", "The bridge table id (t-…)"],
    ["key", "Your key for that table (the GM key on the GM's machine; players paste the key the GM gave them)"],
  ]) {
    game.settings?.register(MODULE_ID, /** @type {"url"|"table"|"key"} */ (key), {
      name: t(`Settings.${key}.Name`),
      hint: t(`Settings.${key}.Hint`) || hint,
      // Client scope: stored on this machine only, never in the world where players could read it.
      scope: "client",
      config: true,
      type: String,
      default: key === "url" ? "http://127.0.0.1:8000" : "",
      onChange: reconnect,
    });
  }
  // The newest audit seq this client saw, per table ("<table> <seq>"), so a Foundry
  // restarted mid-game catches up from there (table.sync) instead of from the start.
  game.settings?.register(MODULE_ID, "seen", { scope: "client", config: false, type: String, default: "" });
}

/**
 * The seq this client saw last at `table`; null on a machine that never played there
 * (it starts from now rather than carding the table's whole history).
 * @param {string} table
 */
function seenAt(table) {
  const [at, seq] = String(game.settings?.get(MODULE_ID, "seen") ?? "").split(" ");
  return at === table && /^\d+$/.test(seq ?? "") ? Number(seq) : null;
}

/** @param {BridgeConnection} connection @param {string} table */
function remember(connection, table) {
  if (connection.seq > (seenAt(table) ?? -1)) void game.settings?.set(MODULE_ID, "seen", `${table} ${connection.seq}`);
}

export async function connect() {
  state.connection?.close();
  state.connection = null;
  const url = setting("url");
  const table = setting("table");
  const key = setting("key");
  if (!url || !table || !key) return null;
  const connection = new BridgeConnection({ io, url, table, key, since: seenAt(table) });
  connection.onDecision((decision, { signal }) => askDialog(decision, signal));
  connection.on("token.updated", ({ token }) => void writeBack(token).catch(report));
  connection.on("connect", () => void refreshRulesets());
  connection.on("attack.resolved", () => remember(connection, table));
  connection.on("attack.undone", () => remember(connection, table));
  connection.onSync((sync, { reconnect }) => caughtUp(connection, table, sync, reconnect), report);
  connection.onStoreWait(storeWait());
  try {
    await connection.connect();
    state.connection = connection;
    await refreshRulesets();
    ui.notifications?.info(t("Connected", { user: connection.user ?? "?" }));
    if (game.user?.isGM && writer()) await syncAll();
    return connection;
  } catch (err) {
    report(err);
    connection.close();
    return null;
  }
}

/**
 * "store unavailable, retrying in N s": one notification as each wait begins (not one
 * a second), and one when the request got through after waiting (one given up is
 * reported by whoever sent it, as any error).
 */
function storeWait() {
  let left = null;
  return (/** @type {number|null} */ seconds, /** @type {string} */ _event, /** @type {boolean|undefined} */ ok) => {
    if (seconds !== null && (left === null || seconds > left)) ui.notifications?.warn(t("StoreRetrying", { seconds: String(Math.ceil(seconds)) }));
    if (seconds === null && left !== null && ok) ui.notifications?.info(t("StoreBack"));
    left = seconds;
  };
}

/**
 * After a connect or a reconnection (table.sync): post the cards of this user's own
 * attacks that no chat message shows yet (the attack went on while this Foundry was
 * away), let the writer bring actors up to the tokens' versions, and say which
 * questions the table still waits for.
 * @param {BridgeConnection} connection @param {string} table @param {any} sync @param {boolean} reconnect
 */
async function caughtUp(connection, table, sync, reconnect) {
  let posted = 0;
  for (const record of sync.attacks) {
    if (record.user === connection.user && !cardPosted(record.id)) {
      await postCard(record);
      posted += 1;
    }
  }
  if (writer()) {
    for (const token of sync.tokens) {
      const actor = actorOf(token.id);
      if (actor && bridgeFlags(actor.toObject()).version !== token.version) await writeBack(token);
    }
  }
  for (const question of sync.pending) {
    if (connection.open.has(questionId(question))) continue;
    const who = (question.waiting ?? []).join(", ");
    ui.notifications?.info(t("Pending", { prompt: String(question.prompt ?? question.key), who, left: String(Math.round(question.remaining ?? 0)) }));
  }
  if (reconnect) ui.notifications?.info(t("CaughtUp", { count: String(sync.attacks.length), posted: String(posted) }));
  remember(connection, table);
}

async function refreshRulesets() {
  if (!state.connection) return;
  state.rulesets = (await state.connection.rulesets()).rulesets;
}
