import { describe, expect, it } from 'vitest';
import { Pacer, limitFor } from '../../src/api/pacer.js';
import type { Clock } from '../../src/platform/clock.js';

/** A clock that only moves when something sleeps on it. */
function manualClock(): Clock & { slept: number[] } {
  let now = 1_700_000_000_000;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

describe('Pacer', () => {
  it('knows the published limits', () => {
    expect(limitFor('test_x')).toBe(100);
    expect(limitFor('live_x')).toBe(1000);
    expect(limitFor('at_x')).toBeUndefined();
  });

  it('lets a burst of 100 through, then spaces requests at 600 ms for a test key', async () => {
    const clock = manualClock();
    const pacer = new Pacer(100, clock);
    for (let i = 0; i < 100; i++) await pacer.take();
    expect(clock.slept).toEqual([]);
    await pacer.take();
    await pacer.take();
    expect(clock.slept).toEqual([600, 600]);
  });

  it('waits for the window to reset when the server says nothing remains', async () => {
    const clock = manualClock();
    const pacer = new Pacer(1000, clock);
    const reset = Math.floor(clock.now() / 1000) + 30;
    pacer.observe({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) });
    await pacer.take();
    expect(clock.now()).toBeGreaterThanOrEqual(reset * 1000);
  });
});
