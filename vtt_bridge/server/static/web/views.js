/* The jump bar (a phone only, where the columns stack): Table, Attack and Chat, each one
 * tap away wherever the page is scrolled. A card that arrives while the chat is off
 * screen marks the Chat button "new"; rolling an attack goes to the chat, where its card
 * appears. */

import { $ } from "./dom.js";

const TARGETS = { scene: "scene-column", attack: "attack-form", chat: "chat-column" };

const stacked = () => getComputedStyle($("views")).display !== "none";

/** Bring one part of the page to the top of the screen (on a phone). */
export function show(view) {
  const el = $(TARGETS[view]);
  if (!el) return;
  el.scrollIntoView({ block: "start" });
  if (view === "chat") $("chat-unread").hidden = true;
}

/** Is the chat column on screen now? */
function chatInView() {
  const box = $("chat-column").getBoundingClientRect();
  return box.top < window.innerHeight && box.bottom > 0;
}

export function wireViews() {
  for (const button of $("views").querySelectorAll("button[data-view]")) {
    button.addEventListener("click", () => show(button.dataset.view));
  }
  // A card added (or one changing) while the chat is off screen: say so on the button.
  new MutationObserver(() => {
    if (stacked() && !chatInView()) $("chat-unread").hidden = false;
  }).observe($("chat"), { childList: true });
  window.addEventListener(
    "scroll",
    () => {
      if (chatInView()) $("chat-unread").hidden = true;
    },
    { passive: true },
  );
}

/** An attack was sent from this page: on a phone, go where its card appears. */
export function followAttack() {
  if (stacked()) show("chat");
}
