import type { ForwardResult } from '../forward.js';

/** How forwards are retried: `tries` (first included) or none for as long as listen runs. */
export interface RetryPolicy {
  tries?: number;
  initialMs: number;
  maxMs: number;
}

/** The default: retry a target that is down for as long as listen runs, waits doubling up to 30 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialMs: 1_000, maxMs: 30_000 };

/**
 * True when the target did not take the delivery but may later: no answer (refused, reset, timeout),
 * 408, 429 or 5xx. Any other 4xx is the handler.s final word.
 */
export function isRetryable(result: ForwardResult): boolean {
  if (result.unsendable) return false;
  const s = result.status;
  return s === null || s === 408 || s === 429 || s >= 500;
}

/** The wait before retry `n` (1-based) of a target that is down: doubling, capped. */
export function backoffMs(policy: RetryPolicy, n: number): number {
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(n - 1, 30));
}

/** True when a delivery has used the tries it was given. */
export function triesExhausted(policy: RetryPolicy, attempts: number): boolean {
  return policy.tries !== undefined && attempts >= policy.tries;
}
