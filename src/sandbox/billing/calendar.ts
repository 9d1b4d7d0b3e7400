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
