import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { withFileLock } from '../../src/auth/lock.js';
import type { Clock } from '../../src/clock.js';
import { tempDir } from '../support/cli.js';

/** A clock that only moves when someone sleeps on it. */
function manualClock(start = 1_000_000): Clock & { slept: number } {
  let now = start;
  return {
    slept: 0,
    now: () => now,
    async sleep(ms) {
      now += ms;
      this.slept += ms;
    },
  };
}

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

it('takes over a lock whose owner process is gone', async () => {
  const path = join(dir.path, 'locks', 'x.lock');
  await withFileLock(path, manualClock(), async () => undefined); // creates the folder
  await writeFile(path, JSON.stringify({ pid: 2 ** 22 + 12345, at: 0 }));
  const clock = manualClock();
  expect(await withFileLock(path, clock, async () => JSON.parse(await readFile(path, 'utf8')).pid)).toBe(
    process.pid,
  );
  expect(clock.slept).toBe(0);
});

it('waits for a live holder and gives up with a hint after the wait', async () => {
  const path = join(dir.path, 'x.lock');
  const clock = manualClock(Date.now());
  await withFileLock(path, clock, async () => {
    const inner = withFileLock(path, clock, async () => 'never', { waitMs: 1000, pollMs: 100 });
    await expect(inner).rejects.toMatchObject({
      code: 'lock_timeout',
      hints: [expect.stringContaining('rm ')],
    });
  });
  expect(clock.slept).toBe(1000);
  // Released afterwards: the next caller gets it at once.
  expect(await withFileLock(path, clock, async () => 'ok')).toBe('ok');
});
