// A time as the business clock takes it (`to`), read the same way by the sandbox and by mkt, so that
// mkt refuses before any request what the sandbox would refuse.

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
