// @ts-check
/**
 * Chat cards: posting the card of a resolution (once), binding its Undo button, and
 * drawing the rolls' core dice HTML into it — Foundry draws a message's rolls only when
 * the message has no HTML content of its own, and the card has.
 */

import { chatCard } from "../logic/chat.js";
import { MODULE_ID, need, report, t } from "./context.js";

/** Is there a chat card of this attack already? @param {string} id */
export function cardPosted(id) {
  return !!game.messages?.contents.some((/** @type {any} */ m) => m.flags?.[MODULE_ID]?.attack === id && !m.flags?.[MODULE_ID]?.gm);
}

/**
 * The attacker's client posts one card per resolution (once: a resolution caught up
 * after a reconnection and its late acknowledgement post one card). @param {any} record
 */
export async function postCard(record) {
  if (cardPosted(record.id)) return;
  const card = chatCard(record, { undo: true });
  const RollClass = foundry.dice.Roll;
  const rolls = card.rolls.map((data) => RollClass.fromData(/** @type {any} */ (data)));
  const speaker = ChatMessage.getSpeaker({ token: canvas?.tokens?.controlled?.[0]?.document ?? null });
  await ChatMessage.create({
    content: card.content,
    rolls,
    speaker,
    flags: { [MODULE_ID]: { attack: record.id } },
  });
  const gms = (game.users?.contents ?? []).filter((u) => u.isGM).map((u) => String(u.id));
  await ChatMessage.create({ content: card.gmContent, whisper: gms, speaker, flags: { [MODULE_ID]: { attack: record.id, gm: true } } });
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
 * A card drawn in the chat log: Undo (GM only; players do not see the button) and the dice.
 * @param {any} message @param {HTMLElement} root
 */
export function bindCard(message, root) {
  void showDice(message, root).catch(report);
  const button = /** @type {HTMLElement|null} */ (root.querySelector(".vtt-bridge-undo"));
  if (!button || button.dataset.bound) return;
  button.dataset.bound = "1";
  if (!game.user?.isGM) {
    button.remove();
    return;
  }
  button.addEventListener("click", async () => {
    try {
      const id = String(message.getFlag(MODULE_ID, "attack") ?? button.getAttribute("data-attack"));
      await need().undo(id);
      ui.notifications?.info(t("Undone"));
    } catch (err) {
      report(err);
    }
  });
}
