import { parseBusinessTime } from '../wire/iso-time.js';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { requireTestCredential } from './events.js';

type ClockDeps = Pick<Deps, 'api' | 'session'>;

/** The marketplace's business clock (`GET /simulator/clock`). */
export interface BusinessTime {
  now: string;
  offset_s: number;
}

/** One thing that happened to one subscription while time moved. */
export interface ClockTransition {
  at: string;
  app_id: string;
  user_id: string;
  plan: string;
  transition: string;
  from: string | null;
  to: string;
  payment?: { id: string; kind: string; outcome: string; amount: number; currency: string };
  events: Array<{ event: string; data: Record<string, unknown> }>;
}

/** What an advance answers: the clock after it and every transition in time order. */
export interface Advance extends BusinessTime {
  from: string;
  transitions: ClockTransition[];
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
/** Calendar units, in months: a month or a year from a date is as long as the calendar says. */
const MONTHS: Record<string, number> = { mo: 1, y: 12 };
const PART = /(\d+)(mo|[smhdwy])/g;

/** How far to move: whole calendar months (`1y`, `1mo`) and seconds (`2w`, `36h`, `1d12h`). */
export interface Duration {
  months: number;
  seconds: number;
}

/** `1y`, `6mo`, `2w`, `31d`, `36h`, `90m`, `45s` and sums (`1y2mo`, `1d12h`); anything else is a usage error. */
export function parseDuration(text: string): Duration {
  const whole = /^(?:\d+(?:mo|[smhdwy]))+$/.test(text);
  const d: Duration = { months: 0, seconds: 0 };
  for (const [, n, unit] of whole ? text.matchAll(PART) : []) {
    if (unit! in MONTHS) d.months += Number(n) * MONTHS[unit!]!;
    else d.seconds += Number(n) * UNITS[unit!]!;
  }
  if (!whole || d.months + d.seconds <= 0 || !Number.isSafeInteger(d.seconds) || d.months > 1200) {
    throw new UsageError(`"${text}" is not a duration; write it like 1y, 1mo, 2w, 31d, 36h or 1d12h.`, {
      code: 'invalid_duration',
      hints: ['mkt simulator clock advance 1mo'],
    });
  }
  return d;
}

/**
 * Seconds from `from` (ms) to the same moment `months` calendar months later, plus `seconds`; a day
 * past the end of the target month ends on its last day (Jan 31 + 1mo = Feb 28 or 29), as periods do.
 */
export function durationFrom(from: number, d: Duration): number {
  const start = new Date(from);
  const target = new Date(from);
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + d.months);
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(start.getUTCDate(), last));
  return Math.round((target.getTime() - from) / 1000) + d.seconds;
}

/** The business clock now. */
export async function showClock(deps: ClockDeps): Promise<BusinessTime> {
  await requireTestCredential(deps);
  return (await deps.api.get<BusinessTime>('/simulator/clock')).data;
}

/**
 * Moves business time forward by `seconds` (or to `to`), in steps of at most `stepSeconds` when given
 * (so a long advance can show its progress); `onStep` hears each step's answer.
 */
export async function moveBusinessTime(
  deps: ClockDeps,
  input: {
    seconds?: number;
    to?: string;
    stepSeconds?: number;
    onStep?: (step: Advance, done: number) => void;
  },
): Promise<Advance> {
  await requireTestCredential(deps);
  if (input.to !== undefined) {
    if (parseBusinessTime(input.to) === undefined) {
      throw new UsageError(
        `--to "${input.to}" is not a real ISO 8601 date or time (such as 2027-01-31 or 2027-01-31T00:00:00Z).`,
      );
    }
    const step = (await deps.api.post<Advance>('/simulator/clock', { to: input.to })).data;
    input.onStep?.(step, 1);
    return step;
  }
  const total = input.seconds ?? 0;
  const stepSize = input.stepSeconds ?? total;
  const transitions: ClockTransition[] = [];
  let first: Advance | undefined;
  let last: Advance | undefined;
  for (let moved = 0; moved < total;) {
    const n = Math.min(stepSize, total - moved);
    last = (await deps.api.post<Advance>('/simulator/clock', { advance_s: n })).data;
    first ??= last;
    moved += n;
    transitions.push(...(Array.isArray(last.transitions) ? last.transitions : []));
    input.onStep?.(last, moved / total);
  }
  return { ...last!, from: first!.from, transitions };
}

/** Counts by transition and by event, for the summary after a long advance. */
export function summarize(transitions: ClockTransition[]): {
  transitions: Record<string, number>;
  events: Record<string, number>;
} {
  const byTransition: Record<string, number> = {};
  const byEvent: Record<string, number> = {};
  for (const t of transitions) {
    byTransition[t.transition] = (byTransition[t.transition] ?? 0) + 1;
    for (const e of t.events ?? []) byEvent[e.event] = (byEvent[e.event] ?? 0) + 1;
  }
  return { transitions: byTransition, events: byEvent };
}

/** One line per transition, then one per event it sent (indented). */
export function transitionLines(t: ClockTransition): string[] {
  const pay = t.payment ? `  ${t.payment.kind} charge ${t.payment.outcome} (${t.payment.id})` : '';
  const lines = [`${t.at}  ${t.user_id}  ${t.plan}  ${t.transition}  ${t.from ?? '-'} → ${t.to}${pay}`];
  for (const e of t.events ?? []) {
    const reason = typeof e.data?.reason === 'string' ? ` (${e.data.reason})` : '';
    lines.push(`    event ${e.event}${reason}`);
  }
  return lines;
}
