/** Where the business clock keeps its offset (persisted, so the clock survives a restart). */
export interface OffsetStore {
  clockOffset(): number;
  setClockOffset(ms: number): void;
}

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
