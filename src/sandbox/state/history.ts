import type { DeliveryRecord } from './records.js';

/** Deliveries kept per app for relay resume (docs/PROTOCOL.md, Relay stream). */
export const RING_CAPACITY = 10_000;

/** A fixed-size ring of the newest deliveries of one app, addressed by sequence number. */
export class AppHistory {
  private readonly items: DeliveryRecord[] = [];
  private head = 0;
  /** The newest sequence number ever given out (never reused, even after a crash). */
  lastSeq = 0;
  /** The newest sequence number that is on disk and was offered to listeners. */
  offeredSeq = 0;

  /** Keeps `d` unless it is not newer than what is kept (replaying a change twice is harmless). */
  push(d: DeliveryRecord): void {
    if (d.seq <= this.lastSeq) return;
    if (this.items.length < RING_CAPACITY) this.items.push(d);
    else {
      this.items[this.head] = d;
      this.head = (this.head + 1) % RING_CAPACITY;
    }
    this.lastSeq = d.seq;
  }

  /** The oldest kept delivery with a sequence number above `seq`, if any. */
  after(seq: number): DeliveryRecord | undefined {
    const oldest = this.lastSeq - this.items.length + 1;
    const next = Math.max(seq + 1, oldest);
    if (next > this.lastSeq) return undefined;
    return this.items[(this.head + (next - oldest)) % RING_CAPACITY];
  }

  /** Every kept delivery, oldest first. */
  all(): DeliveryRecord[] {
    return [...this.items.slice(this.head), ...this.items.slice(0, this.head)];
  }

  get size(): number {
    return this.items.length;
  }
}
