import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { withFileLock } from '../../src/platform/lock-file.js';
import type { Clock } from '../../src/platform/clock.js';
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
  await writeFile(
    path,
    JSON.stringify({ pid: 2 ** 22 + 12345, started_at: new Date().toISOString(), host: hostname() }),
  );
  const clock = manualClock(Date.now());
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

it('takes over a lock whose pid now belongs to a process that started after the lock was written', async () => {
  const path = join(dir.path, 'x.lock');
  // A live process of that pid, started long after the recorded holder took the lock: the pid was reused.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => other.once('spawn', resolve));
    const lockedAt = new Date(Date.now() - 3_600_000).toISOString();
    await writeFile(path, JSON.stringify({ pid: other.pid, started_at: lockedAt, host: hostname() }));
    const clock = manualClock(Date.now());
    expect(await withFileLock(path, clock, async () => 'taken')).toBe('taken');
    expect(clock.slept).toBe(0);
    // The same pid with the lock written after it started is a live holder: waited for, then refused.
    await writeFile(
      path,
      JSON.stringify({ pid: other.pid, started_at: new Date().toISOString(), host: hostname() }),
    );
    await expect(
      withFileLock(path, clock, async () => 'never', { waitMs: 200, pollMs: 100 }),
    ).rejects.toMatchObject({
      code: 'lock_timeout',
      message: expect.stringContaining(`pid ${other.pid}`),
    });
  } finally {
    other.kill('SIGKILL');
  }
});

it('is never found made but not yet written: a slow holder is waited for, never taken over', async () => {
  // 100 takers at once in this process, and a reader between every step of theirs: with the lock
  // created first and written after (O_EXCL, then a write), the reader would find it empty, as a
  // taker does while its holder is descheduled (a loaded machine), and after 2 s takes it over.
  const path = join(dir.path, 'x.lock');
  const clock = manualClock(Date.now());
  let reading = true;
  const seen = { whole: 0, empty: 0 };
  const reader = (async () => {
    while (reading) {
      let text: string | null = null;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        // not there between two holders
      }
      if (text === '') seen.empty++;
      else if (text !== null) seen.whole++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 100 }, () =>
      withFileLock(
        path,
        clock,
        async () => {
          most = Math.max(most, ++inside);
          await new Promise((r) => setImmediate(r));
          inside--;
        },
        { pollMs: 1 },
      ),
    ),
  );
  reading = false;
  await reader;
  expect(most).toBe(1);
  expect(seen.whole).toBeGreaterThan(0);
  expect(seen.empty).toBe(0);
  // No draft is left behind.
  expect((await readdir(dir.path)).filter((f) => f !== 'x.lock')).toEqual([]);
});
