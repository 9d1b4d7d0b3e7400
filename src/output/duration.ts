/**
 * A length of time as people say it: "45 seconds", "12 minutes", "36 hours", "418 days",
 * "2 days 6 hours" (the largest unit, and the next when it is not zero; days from 2 days up).
 * The one way mkt shows ages and offsets.
 */
export function humanDuration(seconds: number): string {
  const s = Math.round(Math.abs(seconds));
  const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (s < 60) return count(s, 'second');
  if (s < 3600) return count(Math.floor(s / 60), 'minute');
  if (s < 2 * 86_400) {
    const m = Math.floor((s % 3600) / 60);
    return count(Math.floor(s / 3600), 'hour') + (m ? ` ${count(m, 'minute')}` : '');
  }
  const h = Math.floor((s % 86_400) / 3600);
  return count(Math.floor(s / 86_400), 'day') + (h ? ` ${count(h, 'hour')}` : '');
}
