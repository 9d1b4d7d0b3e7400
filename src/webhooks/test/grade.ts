// How one answer is graded against its case (docs/PROTOCOL.md, "Grading a handler").
import type { BatteryCase, Expected } from './battery.js';

/** What one request of a case got back. */
export interface Answer {
  /** The HTTP status, or null when there was none (refused, reset, timed out). */
  status: number | null;
  /** Why there was no status (`ECONNRESET`, `no answer within 10 s`). */
  error: string | null;
  ms: number;
  /** The start of the answer's body (bounded), as text. */
  excerpt: string | null;
}

/** `ok`, or `slow`: the answer took more than half the marketplace's delivery timeout. */
export type TimeGrade = 'ok' | 'slow';

/** The result of one case: what it expected and got, how long it took, and what to fix. */
export interface CaseResult {
  id: string;
  title: string;
  expected: Expected;
  /** The status of each request (`204`, `401, 204`), or why there was none. */
  got: string;
  /** The status of the request that decided the verdict (null: no answer). */
  status: number | null;
  /** The longest answer time of the case's requests, in ms. */
  ms: number;
  time: TimeGrade;
  verdict: 'pass' | 'fail';
  /** One line of how to fix it; null when it passed. */
  fix: string | null;
  /** The start of the answer of the deciding request, as the handler sent it (bounded). */
  answer: string | null;
}

/** How long an answer may take before it is graded slow: half the timeout, the margin a busy server needs. */
export const slowAfterMs = (timeoutMs: number) => timeoutMs / 2;

/** Grades the answers of a case's requests (in order; the first that fails decides). */
export function grade(c: BatteryCase, answers: Answer[], timeoutMs: number): CaseResult {
  const ms = Math.max(...answers.map((a) => a.ms));
  const time: TimeGrade = answers.some((a) => a.status === null || a.ms > slowAfterMs(timeoutMs))
    ? 'slow'
    : 'ok';
  const failed = answers.find((a) => gradeOne(c, a, timeoutMs) !== null);
  const decisive = failed ?? answers[answers.length - 1]!;
  return {
    id: c.id,
    title: c.title,
    expected: c.expected,
    got: answers.map((a) => (a.status === null ? (a.error ?? 'no answer') : String(a.status))).join(', '),
    status: decisive.status,
    ms,
    time,
    verdict: failed ? 'fail' : 'pass',
    fix: failed ? gradeOne(c, failed, timeoutMs) : null,
    answer: decisive.excerpt,
  };
}

/** Null when the answer is what the case expects in time; else the line that says how to fix it. */
function gradeOne(c: BatteryCase, a: Answer, timeoutMs: number): string | null {
  const s = a.status;
  if (s === null) {
    return a.error?.startsWith('no answer')
      ? `answer within ${timeoutMs / 1000} s (the marketplace's timeout; it retries): acknowledge first, do the work after`
      : `the handler closed the connection (${a.error ?? 'no answer'}): catch every error and answer ${c.expected}`;
  }
  if (s >= 300 && s < 400)
    return `the marketplace does not follow redirects (${s}): point --forward-to at the handler's own URL`;
  const inClass = c.expected === '2xx' ? s >= 200 && s < 300 : s >= 400 && s < 500;
  if (!inClass) {
    if (c.expected === '4xx' && s >= 500)
      return `a refusal must be 4xx, never 5xx (a 5xx is retried 5 more times): ${c.fix}`;
    return c.fix;
  }
  if (a.ms > slowAfterMs(timeoutMs))
    return `answer at once (it took ${(a.ms / 1000).toFixed(1)} s of the marketplace's ${timeoutMs / 1000} s): do the work after answering, e.g. in a queue`;
  return null;
}
