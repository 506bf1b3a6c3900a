/* Sending a request again when the store could not serve it (docs/protocol.md, "Error codes").
 *
 * `store_unavailable` means the server's store (Redis) could not be reached just now, and
 * nothing unconfirmed was applied. Its `details.retry_after` says how many seconds to
 * wait. The client then sends the *same* request — the same payload, so the same
 * `request_id`: an attack that did land meanwhile is answered as resolved, once, not
 * rolled twice — and says "store unavailable, retrying in N s" meanwhile. It gives up
 * after about 30 s of waiting (or 12 tries) and shows the error as it came.
 *
 * The web table (static/web/connection.js) and the Foundry module
 * (clients/foundry/src/logic/connection.js) both send every request through
 * `sendRetrying`. Plain ES module, no imports. */

/** The rule: how long in all, how many tries, and the bounds on one wait (seconds). */
export const STORE_RETRY = Object.freeze({ budget: 30, tries: 12, least: 0.2, most: 10 });

/** The code this module retries. */
export const RETRYABLE = "store_unavailable";

/**
 * Seconds to wait before sending again, or null: answer `ack` as it is.
 * @param {any} ack  the acknowledgement envelope (`{ok, error: {code, details}}`)
 * @param {number} waited  seconds already waited for this request
 * @param {number} tries  how many times it was sent
 * @param {typeof STORE_RETRY} [rule]
 * @returns {number|null}
 */
export function retryDelay(ack, waited, tries, rule = STORE_RETRY) {
  if (!ack || ack.ok !== false || ack.error?.code !== RETRYABLE) return null;
  if (tries >= rule.tries) return null;
  const asked = Number(ack.error.details?.retry_after);
  const wait = Math.min(rule.most, Math.max(rule.least, Number.isFinite(asked) ? asked : 1));
  if (waited + wait > rule.budget) return null;
  return wait;
}

/** What the user reads while a request waits: "store unavailable, retrying in N s". */
export function retryingText(seconds) {
  return `store unavailable, retrying in ${Math.max(1, Math.ceil(seconds))} s`;
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Send a request until it is answered with anything but `store_unavailable`, or the rule
 * gives up; resolves with the last acknowledgement.
 *
 * @param {() => Promise<any>} send  sends the same request again (same payload and
 *   `request_id`) and resolves with its acknowledgement envelope
 * @param {object} [options]
 * @param {(seconds: number|null, ack: any) => void} [options.onWait]  called with the
 *   seconds left before the next try (once a second, counting down), then with null
 *   once the request is answered for good
 * @param {(ms: number) => Promise<void>} [options.sleep]  the pause (tests pass their own clock)
 * @param {typeof STORE_RETRY} [options.rule]
 */
export async function sendRetrying(send, { onWait = () => {}, sleep = pause, rule = STORE_RETRY } = {}) {
  let waited = 0;
  let waitedOnce = false;
  for (let tries = 1; ; tries += 1) {
    const ack = await send();
    const wait = retryDelay(ack, waited, tries, rule);
    if (wait === null) {
      if (waitedOnce) onWait(null, ack);
      return ack;
    }
    waitedOnce = true;
    // Count down in whole seconds, so the text can say how long is left.
    for (let left = wait; left > 0; ) {
      onWait(left, ack);
      const step = Math.min(1, left);
      await sleep(step * 1000);
      left = Math.round((left - step) * 1000) / 1000;
    }
    waited += wait;
  }
}
