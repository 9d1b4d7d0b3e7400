/** The window each key's limit (wire.ts RATE_LIMITS) counts over. */
const WINDOW_MS = 60_000;

/** Whether a request may pass, and the rate-limit headers to answer with. */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

/** A fixed one-minute window per API key, driven by the sandbox clock. */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number) {}

  /** Counts one request for `key` (refused requests are not counted) and returns the headers to send. */
  take(key: string, limit: number): RateDecision {
    const now = this.now();
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    let w = this.windows.get(key);
    if (w === undefined || w.start !== start) {
      w = { start, count: 0 };
      this.windows.set(key, w);
    }
    const resetMs = start + WINDOW_MS;
    const allowed = w.count < limit;
    if (allowed) w.count++;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - w.count)),
      'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
    };
    if (!allowed) headers['retry-after'] = String(Math.max(1, Math.ceil((resetMs - now) / 1000)));
    return { allowed, headers };
  }
}
