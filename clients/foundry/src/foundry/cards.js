// @ts-check
/**
 * Chat cards: posting the cards of a resolution (once) — one public card (the summary
 * line names who was struck and how the target defended; every step folded under it)
 * and one whispered to the GMs (dice seed, numbers before and after) — throwing the
 * rolls with Dice So Nice one after another in step order (the attack roll before the
 * damage roll; a roll a later one superseded thrown in a muted colourset, labelled so),
 * the GM's Apply and Undo buttons, and drawing the rolls' core dice HTML into the card
 * — Foundry draws a message's rolls only when the message has no HTML content of its
 * own, and the card has.
 */

import { chatCard, throwOrder } from "../logic/chat.js";
import { MODULE_ID, need, report, t } from "./context.js";
import { writeBack } from "./actors.js";

/** Dice So Nice's colourset for superseded throws. */
export const SUPERSEDED_COLORSET = "black";

/** Attacks whose cards are being posted (the dice take a while to settle). */
const posting = new Set();

/** Is there a chat card of this attack already? @param {string} id */
export function cardPosted(id) {
  return !!game.messages?.contents.some((/** @type {any} */ m) => m.flags?.[MODULE_ID]?.attack === id && !m.flags?.[MODULE_ID]?.gm);
}

/**
 * Throw the rolls with Dice So Nice in step order, each awaited (`showForRoll` resolves
 * once the dice settle). Returns whether DSN threw them (the message must then not
 * throw them again).
 * @param {any[]} rolls  Foundry Roll instances, in card order @param {any} record
 */
export async function throwDice(rolls, record) {
  const dice3d = /** @type {any} */ (game).dice3d;
  if (!dice3d?.showForRoll || !rolls.length) return false;
  for (const { index, superseded, label } of throwOrder(record)) {
    const roll = rolls[index];
    if (!roll) continue;
    if (superseded) {
      roll.options.flavor = `${label} (superseded)`;
      for (const die of roll.dice ?? []) die.options.appearance = { ...(die.options.appearance ?? {}), colorset: SUPERSEDED_COLORSET };
    }
    // showForRoll(roll, user, synchronize, whisper, blind): everyone sees the public card's dice.
    await dice3d.showForRoll(roll, game.user, true, null, false);
  }
  return true;
}

/**
 * The attacker's client posts the cards of one resolution (once: a resolution caught up
 * after a reconnection and its late acknowledgement post one). @param {any} record
 */
export async function postCard(record) {
  if (cardPosted(record.id) || posting.has(record.id)) return;
  posting.add(record.id);
  try {
    await postNow(record);
  } finally {
    posting.delete(record.id);
  }
}

/** @param {any} record */
async function postNow(record) {
  const card = chatCard(record, { undo: true });
  const RollClass = foundry.dice.Roll;
  const rolls = card.rolls.map((data) => RollClass.fromData(/** @type {any} */ (data)));
  const thrown = await throwDice(rolls, record).catch((err) => {
    report(err);
    return false;
  });
  const speaker = ChatMessage.getSpeaker({ token: canvas?.tokens?.controlled?.[0]?.document ?? null });
  /** @type {Record<string, any>} */
  const flags = { [MODULE_ID]: { attack: record.id } };
  // Dice So Nice leaves a message flagged `dice-so-nice.skip` alone: its dice were thrown above.
  if (thrown) flags["dice-so-nice"] = { skip: true };
  await ChatMessage.create(/** @type {any} */ ({ content: card.content, rolls, speaker, flags }));
  const gms = (game.users?.contents ?? []).filter((u) => u.isGM).map((u) => String(u.id));
  await ChatMessage.create({ content: card.gmContent, whisper: gms, speaker, flags: { [MODULE_ID]: { attack: record.id, gm: true } } });
}

/** Apply: write the bridge's numbers of every token the attack changed to their actors now. @param {string} id */
export async function applyAttack(id) {
  const connection = need();
  const record = (await connection.request("attack.get", { id })).attack;
  let count = 0;
  for (const tokenId of Object.keys(record.changes ?? {})) {
    const token = (await connection.request("token.get", { id: tokenId })).token;
    if (await writeBack(token, { force: true })) count += 1;
  }
  ui.notifications?.info(t("Card.Applied", { count: String(count) }));
  return count;
}

/**
 * The core HTML of each of the message's rolls (formula, dice tooltip, total) under the
 * card, so the dice tooltips show as on any roll message.
 * @param {any} message @param {HTMLElement} root
 */
async function showDice(message, root) {
  const card = root.querySelector(".vtt-bridge-card");
  if (!card || !message.rolls?.length || card.querySelector(".vtt-bridge-dice")) return;
  const dice = document.createElement("section");
  dice.className = "vtt-bridge-dice";
  card.append(dice);
  const html = await Promise.all(message.rolls.map((/** @type {any} */ roll) => roll.render()));
  dice.innerHTML = html.join("");
}

/**
 * A card drawn in the chat log: Apply and Undo (GM only; players lose the buttons) and the dice.
 * @param {any} message @param {HTMLElement} root
 */
export function bindCard(message, root) {
  void showDice(message, root).catch(report);
  const box = /** @type {HTMLElement|null} */ (root.querySelector(".vtt-bridge-buttons"));
  if (!box || box.dataset.bound) return;
  box.dataset.bound = "1";
  if (!game.user?.isGM) {
    box.remove();
    return;
  }
  const id = () => String(message.getFlag?.(MODULE_ID, "attack") ?? box.querySelector("[data-attack]")?.getAttribute("data-attack"));
  box.querySelector(".vtt-bridge-apply")?.addEventListener("click", () => void applyAttack(id()).catch(report));
  box.querySelector(".vtt-bridge-undo")?.addEventListener("click", async () => {
    try {
      await need().undo(id());
      ui.notifications?.info(t("Undone"));
    } catch (err) {
      report(err);
    }
  });
}
