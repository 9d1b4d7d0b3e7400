import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../clock.js';
import { MktError } from '../errors.js';

/** A lock older than this is taken over even when its owner seems alive (a refresh takes seconds). */
const STALE_MS = 30_000;

/**
 * Runs `fn` while holding an exclusive lock file (created with O_EXCL, so only one process across
 * the machine holds it). A lock whose owner died, or that is older than 30 s, is taken over.
 */
export async function withFileLock<T>(
  path: string,
  clock: Clock,
  fn: () => Promise<T>,
  options: { waitMs?: number; pollMs?: number } = {},
): Promise<T> {
  const deadline = clock.now() + (options.waitMs ?? 20_000);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, at: clock.now() }));
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isStale(path, clock)) {
        await rm(path, { force: true });
        continue;
      }
      if (clock.now() >= deadline) {
        throw new MktError('lock_timeout', `Another mkt process holds ${path}; gave up waiting for it.`, 1, {
          hints: [`If no other mkt is running, remove the lock: rm "${path}"`],
        });
      }
      await clock.sleep(options.pollMs ?? 50);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
  }
}

async function isStale(path: string, clock: Clock): Promise<boolean> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    if (clock.now() - info.mtimeMs > STALE_MS) return true;
    const { pid } = JSON.parse(text) as { pid?: number };
    if (typeof pid !== 'number') return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    // Gone already (the holder finished) or half-written: not stale, try again shortly.
    return false;
  }
}
