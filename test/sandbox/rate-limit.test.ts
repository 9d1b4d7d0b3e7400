import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { startTestSandbox } from '../support/sandbox.js';
import { call, fakeClock } from './helpers.js';

let sb: Sandbox;
afterEach(async () => {
  await sb?.close();
});

describe('rate limits per API key', () => {
  it('allows 100 requests a minute to a test key, then answers 429 with Retry-After', async () => {
    // 10 s into a minute, so the window resets 50 s later.
    const clock = fakeClock(Math.floor(Date.now() / 60_000) * 60_000 + 10_000);
    sb = await startTestSandbox({ now: clock.now });
    const resetAt = String(Math.ceil((clock.now() + 50_000) / 1000));
    for (let i = 1; i <= 100; i++) {
      const res = await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.test_key });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
      expect(res.headers.get('x-ratelimit-reset')).toBe(resetAt);
    }
    const limited = await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.test_key });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('50');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(resetAt);
    // Errors on keyed requests carry the headers too, and other keys are counted apart.
    const other = await call(sb, 'GET', '/api/v1/apps/app_unknown', { key: sb.seed.live_key });
    expect(other.status).toBe(404);
    expect(other.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(other.headers.get('x-ratelimit-remaining')).toBe('999');
    clock.advance(49_000);
    expect(
      (await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.test_key })).headers.get('retry-after'),
    ).toBe('1');
    clock.advance(1_000);
    const fresh = await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.test_key });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('allows 1000 a minute to a live key', async () => {
    const clock = fakeClock(Math.floor(Date.now() / 60_000) * 60_000);
    sb = await startTestSandbox({ now: clock.now });
    const path = `/api/v1/entitlements?user_id=${sb.seed.users[0]!.id}`;
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => call(sb, 'GET', path, { key: sb.seed.live_key })),
      );
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    const over = await call(sb, 'GET', path, { key: sb.seed.live_key });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('60');
  });
});

describe('rate limits per Bearer token', () => {
  it('gives a token’s grant 1000 a minute of its own: 1,050 parallel requests get 1,000 answers and 50 × 429', async () => {
    const clock = fakeClock(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
    sb = await startTestSandbox({ now: clock.now });
    const authorize = () =>
      call(sb, 'POST', '/api/v1/simulator/authorize', {
        key: sb.seed.test_key,
        body: { app_id: sb.seed.app.id, user_id: sb.seed.users[0]!.id },
      });
    const token = (await authorize()).json.access_token as string;
    const answers = await Promise.all(
      Array.from({ length: 1050 }, () => call(sb, 'GET', '/api/v1/whoami', { token })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.json.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('1000');
    // Another grant counts apart, and the key that asked for both still has its own count.
    const other = await call(sb, 'GET', '/api/v1/whoami', { token: (await authorize()).json.access_token });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('999');
    const byKey = await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.test_key });
    expect(byKey.headers.get('x-ratelimit-remaining')).toBe('97');
    clock.advance(30_000);
    expect((await call(sb, 'GET', '/api/v1/whoami', { token })).status).toBe(200);
  });
});
