// @ts-check
/**
 * The chat cards of an attack: posted by the attacker's client, one public card (the
 * summary line names who was struck and how the target defended; every step folded
 * under it) and one whispered to the GMs (dice seed, numbers before and after). With
 * Dice So Nice the rolls are thrown one after another in step order (the attack roll
 * before the damage roll) before the card appears; a roll a later one superseded is
 * thrown in a muted colourset and labelled so. The GM's copy of the card has Apply
 * and Undo; players never see them.
 */

import { chatCard, throwOrder } from "../logic/chat.js";
import { MODULE_ID } from "../logic/tokens.js";

/** Dice So Nice's colourset for superseded throws. */
export const SUPERSEDED_COLORSET = "black";

/**
 * @param {any} ctx  {need, report, t, writeBack, actorOf}
 */
export function registerCards(ctx) {
  /** Attacks whose cards are being posted (the dice take a while to settle). */
  const posting = new Set();
  /** Is there a chat card of this attack already? @param {string} id */
  function posted(id) {
    return !!game.messages?.contents.some((/** @type {any} */ m) => m.flags?.[MODULE_ID]?.attack === id && !m.flags?.[MODULE_ID]?.gm);
  }

  /**
   * Throw the rolls with Dice So Nice in step order, each awaited (DSN resolves once the
   * dice settle). Returns whether DSN threw them (then the message must not throw them again).
   * @param {any[]} rolls  Foundry Roll instances, card order @param {any} record
   */
  async function throwDice(rolls, record) {
    const dice3d = /** @type {any} */ (game).dice3d;
    if (!dice3d?.showForRoll || !rolls.length) return false;
    const order = throwOrder(record);
    for (const { index, superseded, label } of order) {
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
   * Post the cards of one resolution (once per attack: one caught up after a reconnection
   * and its late acknowledgement post one). @param {any} record
   */
  async function post(record) {
    if (posted(record.id) || posting.has(record.id)) return;
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
      ctx.report(err);
      return false;
    });
    const speaker = ChatMessage.getSpeaker({ token: canvas?.tokens?.controlled?.[0]?.document ?? null });
    /** @type {Record<string, any>} */
    const flags = { [MODULE_ID]: { attack: record.id } };
    // Dice So Nice leaves a message flagged `dice-so-nice.skip` alone: its dice were thrown above.
    if (thrown) flags["dice-so-nice"] = { skip: true };
    await ChatMessage.create(/** @type {any} */ ({ content: card.content, rolls, speaker, flags }));
    const gms = (game.users?.contents ?? []).filter((u) => u.isGM).map((u) => String(u.id));
    await ChatMessage.create(/** @type {any} */ ({ content: card.gmContent, whisper: gms, speaker, flags: { [MODULE_ID]: { attack: record.id, gm: true } } }));
  }

  /** Apply: write the bridge's numbers of every token the attack changed to their actors now. @param {string} id */
  async function apply(id) {
    const connection = ctx.need();
    const record = (await connection.request("attack.get", { id })).attack;
    let count = 0;
    for (const tokenId of Object.keys(record.changes ?? {})) {
      const token = (await connection.request("token.get", { id: tokenId })).token;
      if (await ctx.writeBack(token, { force: true })) count += 1;
    }
    ui.notifications?.info(ctx.t("Card.Applied", { count: String(count) }));
  }

  /** Wire a rendered card: Apply and Undo for the GM; players lose the buttons. @param {any} message @param {HTMLElement} root */
  function bind(message, root) {
    const box = /** @type {HTMLElement|null} */ (root.querySelector(".vtt-bridge-buttons"));
    if (!box || box.dataset.bound) return;
    box.dataset.bound = "1";
    if (!game.user?.isGM) {
      box.remove();
      return;
    }
    const id = () => String(message.getFlag?.(MODULE_ID, "attack") ?? box.querySelector("[data-attack]")?.getAttribute("data-attack"));
    box.querySelector(".vtt-bridge-apply")?.addEventListener("click", () => void apply(id()).catch(ctx.report));
    box.querySelector(".vtt-bridge-undo")?.addEventListener("click", async () => {
      try {
        await ctx.need().undo(id());
        ui.notifications?.info(ctx.t("Undone"));
      } catch (err) {
        ctx.report(err);
      }
    });
  }

  return { post, posted, bind, apply, throwDice };
}
