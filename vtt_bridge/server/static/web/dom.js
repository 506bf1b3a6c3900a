/* Small DOM helpers shared by the web table's modules: elements built with h(), text
 * always set as text, toasts, error messages, a confirmation dialog. */

export const $ = (id) => document.getElementById(id);

/** Build an element: h("div", {class: "x", onclick: f, dataset: {a: 1}}, child, "text", ...). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[k] = String(v);
    } else if (key === "style") Object.assign(el.style, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children (null, undefined and false are skipped, never written as text). */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export const human = (name) => String(name ?? "").replace(/[_-]+/g, " ");
export const sameJSON = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function toast(message, kind = "info") {
  const el = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  $("toasts").append(el);
  setTimeout(() => el.remove(), kind === "error" ? 8000 : 4000);
}

export function describeError(error) {
  if (!error) return "unknown error";
  if (error.code === "rate_limited") return rateLimited(error.details || {});
  // The page sends such an attack again by itself once the server is back (same request).
  if (error.code === "store_unavailable") return "The server's store is unavailable: nothing was applied. The page tried again for about 30 s; try again in a while.";
  if (error.code === "server_stopping") return "The server stopped before this attack finished; nothing was applied. It is sent again when the page is back.";
  let text = error.message || error.code || "error";
  const details = error.details && typeof error.details === "object" ? flattenDetails(error.details) : [];
  if (details.length) text += ` — ${details.join("; ")}`;
  return text;
}

/** `rate_limited` in words: nothing was done; when to try again. */
function rateLimited(details) {
  if (details.limit === "odds_per_user") return "Still working out your previous odds: nothing new was asked. Try again when they are shown.";
  const wait = Number(details.retry_after);
  const when = Number.isFinite(wait) && wait > 0 ? `in ${wait < 1 ? "a moment" : `${Math.ceil(wait)} s`}` : "in a moment";
  return `Too many requests from this page at once: nothing was done. Try again ${when}.`;
}

export function flattenDetails(details, prefix = "") {
  const out = [];
  for (const [key, value] of Object.entries(details)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (Array.isArray(value)) out.push(`${path}: ${value.join(" ")}`);
    else if (value && typeof value === "object") out.push(...flattenDetails(value, path));
    else if (!["hook", "step", "plugin", "request_id"].includes(key)) out.push(`${path}: ${value}`);
  }
  return out;
}

export function requestId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Ask "are you sure?" in the page's own dialog (works the same on a phone).
 * @returns {Promise<boolean>}
 */
export function confirmAction(message, okLabel = "OK") {
  const dialog = $("confirm");
  $("confirm-text").textContent = message;
  $("confirm-ok").textContent = okLabel;
  return new Promise((resolve) => {
    const done = (value) => {
      dialog.removeEventListener("close", onClose);
      resolve(value);
    };
    const onClose = () => done(dialog.returnValue === "ok");
    dialog.returnValue = "";
    dialog.addEventListener("close", onClose);
    dialog.showModal();
  });
}
