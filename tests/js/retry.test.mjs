// common/retry.js: the clients' rule for `store_unavailable` (docs/protocol.md, "Error codes").
import { test } from "node:test";
import assert from "node:assert/strict";

import { STORE_RETRY, retryDelay, retryingText, sendRetrying } from "../../vtt_bridge/server/static/common/retry.js";

const down = (retry_after) => ({ ok: false, error: { code: "store_unavailable", message: "Redis is unavailable", details: { retry_after } } });
const fine = { ok: true, attack: { id: "a1" } };

/** A server scripted answer by answer; what was sent, the waits (a fake clock) and the texts shown. */
function scripted(answers) {
  const sent = [];
  const slept = [];
  const shown = [];
  const payload = { ruleset: "duel", request_id: "web-1" };
  const run = sendRetrying(
    async () => {
      sent.push(payload);
      return answers.length > 1 ? answers.shift() : answers[0];
    },
    { sleep: async (ms) => void slept.push(ms), onWait: (s) => shown.push(s === null ? null : retryingText(s)) },
  );
  return { run, sent, slept, shown, payload };
}

test("store_unavailable, then the store is back: the same request is sent again and answered", async () => {
  const { run, sent, slept, shown, payload } = scripted([down(2), down(1), fine]);
  assert.deepEqual(await run, fine);
  assert.equal(sent.length, 3);
  assert.ok(sent.every((p) => p === payload)); // the same payload, so the same request_id
  assert.deepEqual(slept, [1000, 1000, 1000]); // 2 s, then 1 s, a second at a time
  assert.deepEqual(shown, [
    "store unavailable, retrying in 2 s",
    "store unavailable, retrying in 1 s",
    "store unavailable, retrying in 1 s",
    null, // answered: the text goes
  ]);
});

test("it gives up after about 30 s of waiting and answers the error as it came", async () => {
  const { run, sent, slept, shown } = scripted([down(4)]);
  const ack = await run;
  assert.equal(ack.error.code, "store_unavailable");
  assert.equal(slept.reduce((a, b) => a + b, 0), 28000); // seven waits of 4 s; an eighth would pass 30 s
  assert.equal(sent.length, 8);
  assert.equal(shown.at(-1), null);
});

test("the number of tries is bounded too, however short the waits", async () => {
  const { run, sent } = scripted([down(0)]);
  await run;
  assert.equal(sent.length, STORE_RETRY.tries);
});

test("other answers are not retried: an error, a success, a rate limit, no answer", async () => {
  for (const ack of [fine, { ok: false, error: { code: "conflict", details: {} } }, { ok: false, error: { code: "rate_limited", details: { retry_after: 1 } } }, { ok: false, error: { code: "timeout" } }]) {
    const { run, sent, shown } = scripted([ack]);
    assert.deepEqual(await run, ack);
    assert.equal(sent.length, 1);
    assert.deepEqual(shown, []);
  }
});

test("a retry_after that is missing, nonsense or huge is bounded", () => {
  assert.equal(retryDelay(down(undefined), 0, 1), 1);
  assert.equal(retryDelay(down("soon"), 0, 1), 1);
  assert.equal(retryDelay(down(-3), 0, 1), STORE_RETRY.least);
  assert.equal(retryDelay(down(3600), 0, 1), STORE_RETRY.most);
  assert.equal(retryDelay(down(5), 26, 2), null); // would pass the 30 s
});
