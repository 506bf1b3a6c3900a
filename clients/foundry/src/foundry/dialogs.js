// @ts-check
/**
 * DialogV2, the same on every Foundry version: the module makes the dialog itself, so
 * it holds the application whatever a version passes to `render` callbacks (v12 the
 * dialog's element, v13 the dialog) and can close it.
 */

import { rootOf } from "./context.js";

/**
 * Open a DialogV2. `render(dialog, root)` runs once it is drawn. `result` resolves with
 * the pressed button's callback result, or null when the dialog is closed otherwise.
 * @param {Record<string, any> & {render?: (dialog: any, root: HTMLElement|null) => void}} config
 * @returns {{dialog: any, result: Promise<any>}}
 */
export function openDialog({ render, ...config }) {
  const DialogV2 = /** @type {any} */ (foundry.applications.api.DialogV2);
  /** @type {(value: any) => void} */
  let settle = () => {};
  const result = new Promise((resolve) => (settle = resolve));
  const dialog = new DialogV2({ ...config, submit: async (/** @type {any} */ value) => settle(value) });
  dialog.addEventListener("close", () => settle(null), { once: true });
  if (render) dialog.addEventListener("render", () => render(dialog, rootOf(dialog)), { once: true });
  void dialog.render({ force: true });
  return { dialog, result };
}
