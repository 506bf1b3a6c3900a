// common/sequence.js: the client's rule for broadcast_seq (docs/protocol.md, "Broadcast order").
import { test } from "node:test";
import assert from "node:assert/strict";

import { BroadcastSequence } from "../../vtt_bridge/server/static/common/sequence.js";

/** Feed `seqs` after a sync that answered `start`; which were applied, and the gaps seen. */
function feed(start, seqs, { syncAnswers = [] } = {}) {
  const answers = [...syncAnswers];
  const sequence = new BroadcastSequence(() => {
    // The app's table.sync: answered at once here, with the seq it reports.
    if (answers.length) sequence.reset(answers.shift());
  });
  sequence.reset(start);
  const applied = seqs.filter((seq) => sequence.accept({ broadcast_seq: seq }));
  return { applied, gaps: sequence.gaps, last: sequence.last };
}

test("1, 2, 4: the 4 is a gap: not applied, one table.sync", () => {
  const { applied, gaps } = feed(0, [1, 2, 4]);
  assert.deepEqual(applied, [1, 2]);
  assert.equal(gaps, 1);
});

test("after the gap's sync the client goes on from the sync's broadcast_seq", () => {
  const { applied, gaps, last } = feed(0, [1, 2, 4, 4, 5, 6], { syncAnswers: [4] });
  assert.deepEqual(applied, [1, 2, 5, 6]); // 4 is in the sync's state
  assert.equal(gaps, 1);
  assert.equal(last, 6);
});

test("1, 2, 2, 3: the second 2 is a duplicate, dropped; no sync", () => {
  const { applied, gaps } = feed(0, [1, 2, 2, 3]);
  assert.deepEqual(applied, [1, 2, 3]);
  assert.equal(gaps, 0);
});

test("5, 1: the numbering started again (a wiped store): one table.sync", () => {
  const { applied, gaps } = feed(4, [5, 1]);
  assert.deepEqual(applied, [5]);
  assert.equal(gaps, 1);
});

test("while a sync is on its way nothing is applied and no second sync starts", () => {
  const { applied, gaps } = feed(0, [1, 3, 4, 7]);
  assert.deepEqual(applied, [1]);
  assert.equal(gaps, 1);
});

test("events without broadcast_seq (replies to one connection) always apply", () => {
  const sequence = new BroadcastSequence(() => assert.fail("no gap"));
  sequence.reset(3);
  assert.equal(sequence.accept({ attack: {} }), true);
  assert.equal(sequence.accept(undefined), true);
  assert.equal(sequence.last, 3);
});

test("table.resync from the server is a gap too; reset(null) after a disconnect takes the next as it comes", () => {
  let syncs = 0;
  const sequence = new BroadcastSequence(() => (syncs += 1));
  sequence.reset(10);
  sequence.gap();
  sequence.gap();
  assert.equal(syncs, 1);
  sequence.reset(null);
  assert.equal(sequence.accept({ broadcast_seq: 42 }), true);
  assert.equal(sequence.accept({ broadcast_seq: 43 }), true);
  assert.equal(syncs, 1);
});

test("an event newer than the sync's answer, dropped while the sync was out, is one more sync", () => {
  let syncs = 0;
  const sequence = new BroadcastSequence(() => (syncs += 1));
  sequence.reset(2);
  assert.equal(sequence.accept({ broadcast_seq: 4 }), false); // gap: sync 1 goes out
  assert.equal(sequence.accept({ broadcast_seq: 5 }), false); // arrives meanwhile, dropped
  sequence.reset(4); // the sync was made before 5
  assert.equal(syncs, 2);
  sequence.reset(5);
  assert.equal(syncs, 2);
  assert.equal(sequence.accept({ broadcast_seq: 6 }), true);
});
