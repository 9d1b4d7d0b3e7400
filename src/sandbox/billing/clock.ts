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

/** An ISO 8601 date (`2026-03-01`) or date and time (`2026-03-01T10:00`, seconds, fraction, `Z` or `+01:00`). */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The time `text` names, in ms, when it is an ISO 8601 time whose every field is real (a date that
 * does not round-trip, `2026-02-30`, is not; nor a year of more than four digits); else undefined.
 */
export function parseBusinessTime(text: string): number | undefined {
  const m = ISO_TIME.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d, h = 0, mi = 0, s = 0] = m
    .slice(1, 7)
    .map((v) => (v === undefined ? undefined : Number(v)));
  const day = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s));
  const real =
    day.getUTCFullYear() === y &&
    day.getUTCMonth() === mo! - 1 &&
    day.getUTCDate() === d &&
    day.getUTCHours() === h &&
    day.getUTCMinutes() === mi &&
    day.getUTCSeconds() === s;
  const offset = m[7];
  if (!real || (offset !== undefined && !/^(z|[+-](0\d|1[0-4]):?[0-5]\d)$/i.test(offset))) return undefined;
  const ms = Date.parse(text.trim().replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
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
