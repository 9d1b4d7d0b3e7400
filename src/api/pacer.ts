import { RATE_LIMITS } from '../wire.js';
import type { Clock } from '../platform/clock.js';

/** Requests per minute allowed for a credential (docs/INTERFACE.md §8); tokens are not paced. */
export function limitFor(secret: string | undefined): number | undefined {
  if (secret?.startsWith('test_')) return RATE_LIMITS.test;
  if (secret?.startsWith('live_')) return RATE_LIMITS.live;
  return undefined;
}

/**
 * Keeps a process under its key's limit: a token bucket refilled at limit/minute, and a pause until
 * the window resets whenever the server says nothing remains (X-RateLimit-Remaining: 0).
 */
export class Pacer {
  private tokens: number;
  private last: number;
  private blockedUntil = 0;

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {
    this.tokens = perMinute;
    this.last = clock.now();
  }

  /** Waits, if needed, until one more request fits. */
  async take(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.last) * this.perMinute) / 60_000);
      this.last = now;
      if (now < this.blockedUntil) {
        await this.clock.sleep(this.blockedUntil - now);
        continue;
      }
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await this.clock.sleep(Math.ceil(((1 - this.tokens) * 60_000) / this.perMinute));
    }
  }

  /** Learns from the server's X-RateLimit-* headers. */
  observe(headers: Record<string, string | string[] | undefined>): void {
    const remaining = Number(headers['x-ratelimit-remaining']);
    const reset = Number(headers['x-ratelimit-reset']);
    if (Number.isFinite(remaining)) this.tokens = Math.min(this.tokens, remaining);
    if (remaining === 0 && Number.isFinite(reset)) {
      // X-RateLimit-Reset is epoch seconds in our contract; a small number is read as seconds from now.
      const resetMs = reset > 1e9 ? reset * 1000 : this.clock.now() + reset * 1000;
      this.blockedUntil = Math.max(this.blockedUntil, resetMs);
    }
  }
}
