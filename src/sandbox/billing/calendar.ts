import type { Kind } from './records.js';

export const DAY_MS = 86_400_000;

/**
 * The end of period `n` counted from `anchor` (ms): `n` calendar months (monthly) or years (annual)
 * later, at the same time of day; a day the target month lacks becomes its last day (Jan 31 → Feb 28),
 * and later periods go back to the anchor's day (→ Mar 31), so periods never drift.
 */
export function periodEnd(anchor: number, kind: Kind, n: number): number | null {
  if (kind !== 'monthly' && kind !== 'annual') return null;
  const d = new Date(anchor);
  const months = d.getUTCMonth() + (kind === 'monthly' ? n : 12 * n);
  const year = d.getUTCFullYear() + Math.floor(months / 12);
  const month = ((months % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Date.UTC(
    year,
    month,
    day,
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };

/** Parses a duration such as `31d`, `12h`, `90m`, `2w`, `45s` (or `1d12h`) into milliseconds, else null. */
export function parseDuration(text: string): number | null {
  const parts = /^(?:\d+[smhdw])+$/.test(text) ? text.match(/\d+[smhdw]/g) : null;
  if (!parts) return null;
  let ms = 0;
  for (const part of parts) ms += Number(part.slice(0, -1)) * UNITS[part.slice(-1)]!;
  return Number.isSafeInteger(ms) ? ms : null;
}
