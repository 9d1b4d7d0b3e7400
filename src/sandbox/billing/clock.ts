import { DAY_MS } from './calendar.js';

/** Where the business clock keeps its offset (persisted, so the clock survives a restart). */
export interface OffsetStore {
  clockOffset(): number;
  setClockOffset(ms: number): void;
}

/**
 * How far ahead of real time business time may go: 100 years of 365.25 days, one bound for
 * `advance_s` and `to` alike (docs/PROTOCOL.md, business clock).
 */
export const MAX_AHEAD_MS = 36_525 * DAY_MS;

/**
 * Business time (docs/DECISIONS.md §5): the real time plus an offset that only moves forward.
 * Subscriptions, trials, periods, retries and usage periods follow it; transport time (tokens,
 * codes, rate limits, envelope timestamps, signatures) never does.
 */
export class BusinessClock {
  constructor(
    private readonly real: () => number,
    private readonly store: OffsetStore,
  ) {}

  now(): number {
    return this.real() + this.store.clockOffset();
  }

  offsetMs(): number {
    return this.store.clockOffset();
  }

  /** The latest business time the clock may be moved to now ({@link MAX_AHEAD_MS} past real time). */
  latest(): number {
    return this.real() + MAX_AHEAD_MS;
  }

  /** Moves the clock forward by `ms` from where it stood (real time that passed meanwhile is kept). */
  advanceBy(ms: number): void {
    if (ms > 0) this.store.setClockOffset(this.store.clockOffset() + ms);
  }

  /** Moves the clock to `target` (ms); a target in the past is refused by the caller, never applied. */
  moveTo(target: number): void {
    const offset = target - this.real();
    if (offset > this.store.clockOffset()) this.store.setClockOffset(offset);
  }
}
