/* Broadcast order: the client's side of `broadcast_seq` (docs/protocol.md, "Broadcast order").
 *
 * Every event the server sends to all of a table's connections carries `broadcast_seq`,
 * consecutive per table (1, 2, 3 …, one numbering across every server process). A
 * client keeps the last one it applied:
 *
 * - `last + 1`: apply it, and it is the new last;
 * - `last` or lower: already applied (a process catching up sends one again): drop it —
 *   unless it is 1 after a higher one, which means the numbering started again (the
 *   server's store was wiped): resync;
 * - higher than `last + 1`: events were missed: stop applying, call `table.sync`, and go
 *   on from its answer's `broadcast_seq`;
 * - `table.resync` from the server says the same: call `table.sync`.
 *
 * Nothing is buffered: while the sync is on its way events are dropped; if one of them
 * was newer than the sync's `broadcast_seq`, the sync's state does not hold it, so one
 * more sync follows at once. The web table (static/web/) and the Foundry module
 * (clients/foundry/) both use this module. Plain ES module, no imports. */

export class BroadcastSequence {
  /** @param {() => void} onGap  called once per gap: the app calls `table.sync`, then `reset()`. */
  constructor(onGap) {
    this.onGap = onGap;
    /** @type {number|null} the newest broadcast_seq applied; null: none known yet */
    this.last = null;
    this.syncing = false;
    /** @type {number|null} the newest broadcast_seq dropped while a sync was on its way */
    this.missed = null;
    /** gaps seen (each one `table.sync` call) */
    this.gaps = 0;
  }

  /** After a `table.sync` answer (its `broadcast_seq`), or null after a disconnect. */
  reset(seq) {
    const missed = this.missed;
    this.last = Number.isInteger(seq) ? seq : null;
    this.syncing = false;
    this.missed = null;
    if (this.last !== null && missed !== null && missed > this.last) this.gap();
  }

  /** Whether to apply an event; `data.broadcast_seq` missing (a reply to one connection): yes. */
  accept(data) {
    const seq = data?.broadcast_seq;
    if (!Number.isInteger(seq)) return true;
    if (this.syncing) {
      if (this.missed === null || seq > this.missed) this.missed = seq;
      return false;
    }
    if (this.last === null || seq === this.last + 1) {
      this.last = seq;
      return true;
    }
    if (seq <= this.last && !(seq === 1 && this.last > 1)) return false;
    this.gap();
    return false;
  }

  /** Events were missed (a gap, or the server's `table.resync`): one sync until `reset`. */
  gap() {
    if (this.syncing) return;
    this.syncing = true;
    this.gaps += 1;
    this.onGap();
  }
}

/** The events a server sends to every connection of a table (each with a `broadcast_seq`). */
export const BROADCASTS = Object.freeze([
  "attack.step",
  "attack.resolved",
  "attack.failed",
  "attack.undone",
  "token.created",
  "token.updated",
  "token.deleted",
  "table.updated",
  "decision.asked",
  "decision.settled",
]);
