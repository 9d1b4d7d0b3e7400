import { unlinkSync, readFileSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { Clock } from './clock.js';
import { MktError } from '../errors.js';
import { processStartMs } from './processes.js';

/** What a lock file holds: which process holds it, since when, on which host, plus the holder's own fields. */
export interface LockHolder {
  pid: number;
  started_at: string;
  host: string;
  /** Which taking of the lock this is: two takings by one process in one millisecond differ. */
  take?: string;
  [field: string]: unknown;
}

/** A lock file whose content cannot be read is this old (ms) before it counts as abandoned. */
const UNREADABLE_GRACE_MS = 2_000;

/**
 * The takings of locks this process holds or is making now (a lock naming our pid whose taking is
 * not here was left by a previous run of the same pid: a restarted container).
 */
const takesHere = new Set<string>();

function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(h.pid) || (h.pid ?? 0) <= 0 || typeof h.started_at !== 'string') return null;
    return {
      ...h,
      pid: h.pid!,
      started_at: h.started_at,
      host: typeof h.host === 'string' ? h.host : '',
      take: typeof h.take === 'string' ? h.take : undefined,
    };
  } catch {
    return null;
  }
}

/**
 * Puts the lock file `path` in place with `text` in it, whole: written to a draft of this process
 * first, then linked to the name (link(2) fails with EEXIST on an existing name, as O_EXCL does) or,
 * to `replace` an abandoned lock, renamed over it (the name is never free in between). So no process
 * ever finds a lock made but not yet written: a holder that stalls between the two (a loaded
 * machine) would look like one that died while starting, and be taken over while it runs. Where a
 * folder takes no hard links, O_EXCL then a write.
 */
async function putWhole(path: string, text: string, replace = false): Promise<void> {
  const draft = `${path}.${process.pid}.${process.hrtime.bigint()}.new`;
  const handle = await open(draft, 'wx', 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  try {
    if (replace) return await rename(draft, path);
    await link(draft, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    const direct = await open(path, 'wx', 0o600);
    try {
      await direct.writeFile(text);
    } finally {
      await direct.close();
    }
  } finally {
    await rm(draft, { force: true });
  }
}

/** How long ago (ms) the file `path` was last written; 0 when it is gone. */
const ageOf = (path: string, now: () => number) =>
  stat(path).then(
    (s) => now() - s.mtimeMs,
    () => 0,
  );

/** How long a taker holds the breaker of a lock at most (µs in fact); an older one's taker died. */
const BREAKER_STALE_MS = 5_000;

/**
 * Replaces the abandoned lock `path`, whose holder was `found`, with `text`: under its breaker (one
 * taker at a time), and only if it still holds `found` (a lock released and taken again since is a
 * live one). Answers whether it did.
 */
async function replaceAbandoned(
  path: string,
  found: LockHolder | 'unreadable',
  text: string,
  now: () => number,
): Promise<boolean> {
  const breaker = `${path}.break`;
  try {
    await putWhole(breaker, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = await ageOf(breaker, now);
    if (age > BREAKER_STALE_MS) await rm(breaker, { force: true });
    else await new Promise((r) => setTimeout(r, 10));
    return false;
  }
  try {
    if (!same(await readHolder(path), found)) return false;
    await putWhole(path, text, true);
    return true;
  } finally {
    await rm(breaker, { force: true });
  }
}

/** The holder recorded in `path`: null when the file is absent, 'unreadable' when it holds no holder. */
async function readHolder(path: string): Promise<LockHolder | 'unreadable' | null> {
  try {
    return parseHolder(await readFile(path, 'utf8')) ?? 'unreadable';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Whether the holder may still be running: a process of that pid exists on this host (EPERM: it
 * exists, owned by someone else), and did not start after the lock was written (then the pid was
 * given to another process since). A holder on another host (a shared folder) cannot be checked and
 * counts as alive. Our own pid holds it only if this process took it (else a container restarted
 * with the same pid as the run that was killed).
 */
function alive(h: LockHolder): boolean {
  if (h.host && h.host !== hostname()) return true;
  if (h.pid === process.pid) return h.take !== undefined && takesHere.has(h.take);
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  const started = processStartMs(h.pid);
  const locked = Date.parse(h.started_at);
  // Some slack for clock steps; in doubt, alive.
  return started === undefined || Number.isNaN(locked) || started <= locked + 10_000;
}

const same = (a: LockHolder | 'unreadable' | null, b: LockHolder | 'unreadable') =>
  a === b ||
  (a !== null &&
    a !== 'unreadable' &&
    b !== 'unreadable' &&
    a.pid === b.pid &&
    a.started_at === b.started_at &&
    a.take === b.take);

/** The running process that holds the lock file `path`, if any. */
async function liveHolder(path: string): Promise<LockHolder | null> {
  const h = await readHolder(path);
  return h && h !== 'unreadable' && alive(h) ? h : null;
}

export interface LockOptions {
  /** Extra fields written into the lock file for whoever finds it held. */
  fields?: Record<string, unknown>;
  /** Says that a dead holder's lock was taken over; `label` names the lock in that message. */
  warn?(message: string): void;
  label?: string;
  now?: () => number;
}

/** An exclusive lock file (created with O_EXCL) holding our pid, host and start time. */
export class FileLock {
  private released = false;
  private readonly onExit = () => this.releaseSync();

  private constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    // process.exit (a second Ctrl-C) skips `finally` blocks; the lock still goes.
    process.once('exit', this.onExit);
  }

  /**
   * Takes the lock at `path`, or answers the running process that holds it. A lock whose process is
   * gone (killed, crashed, its pid reused since) is taken over, and `warn` says so.
   */
  static async tryAcquire(path: string, options: LockOptions = {}): Promise<FileLock | LockHolder> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const now = options.now ?? Date.now;
    const label = options.label ?? `lock ${path}`;
    const me: LockHolder = {
      pid: process.pid,
      started_at: new Date(now()).toISOString(),
      host: hostname(),
      take: process.hrtime.bigint().toString(36),
      ...options.fields,
    };
    // Take-overs tried (a lock released between our look and our try is only looked at again).
    for (let attempt = 0; ;) {
      takesHere.add(me.take!);
      try {
        await putWhole(path, `${JSON.stringify(me)}\n`);
        return new FileLock(path, me);
      } catch (err) {
        takesHere.delete(me.take!);
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (attempt >= 50) {
        throw new MktError('lock_contended', `Could not take the lock ${path} (it keeps changing hands).`);
      }
      const found = await readHolder(path);
      if (found === null) continue; // released meanwhile
      if (found === 'unreadable') {
        // Not one this version writes (putWhole): an older mkt's, created and not yet written, or
        // left so by a crash.
        const age = await ageOf(path, now);
        if (age < UNREADABLE_GRACE_MS) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
      } else if (alive(found)) {
        return found;
      }
      attempt++;
      // Abandoned: replaced by ours in one step, if it is still the one we judged.
      takesHere.add(me.take!);
      if (!(await replaceAbandoned(path, found, `${JSON.stringify(me)}\n`, now))) {
        takesHere.delete(me.take!);
        continue;
      }
      options.warn?.(
        found === 'unreadable'
          ? `Took over the ${label} ${path}, which held no process (one that died while starting).`
          : `Took over the ${label} of process ${found.pid} (started ${found.started_at}), which is no longer running.`,
      );
      return new FileLock(path, me);
    }
  }

  /** Removes the lock file, if it is still ours. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    const found = await readHolder(this.path).catch(() => null);
    if (same(found, this.holder)) await rm(this.path, { force: true });
    // Ours until it is gone: a taker of this process must not judge it abandoned before.
    takesHere.delete(this.holder.take!);
  }

  private releaseSync(): void {
    if (this.released) return;
    this.released = true;
    try {
      if (same(parseHolder(readFileSync(this.path, 'utf8')), this.holder)) unlinkSync(this.path);
    } catch {
      // gone already, or unreadable: nothing of ours to remove
    }
  }
}

/**
 * Runs `fn` while holding the lock at `path`, waiting (up to `waitMs`) while a running process
 * holds it; a dead holder's lock is taken over.
 */
export async function withFileLock<T>(
  path: string,
  clock: Clock,
  fn: () => Promise<T>,
  options: { waitMs?: number; pollMs?: number } = {},
): Promise<T> {
  const deadline = clock.now() + (options.waitMs ?? 20_000);
  for (;;) {
    const lock = await FileLock.tryAcquire(path, { now: () => clock.now() });
    if (lock instanceof FileLock) {
      try {
        return await fn();
      } finally {
        await lock.release();
      }
    }
    if (clock.now() >= deadline) {
      throw new MktError(
        'lock_timeout',
        `Another mkt process (pid ${lock.pid}) holds ${path}; gave up waiting for it.`,
        1,
        { hints: [`If pid ${lock.pid} is not an mkt process, remove the lock: rm "${path}"`] },
      );
    }
    await clock.sleep(options.pollMs ?? 50);
  }
}

/** The lock file of a webhook journal folder. */
export const lockPath = (dir: string) => join(dir, 'listen.lock');

/** The journal lock's holder: a `mkt webhooks listen`, forwarding to `forward_to` or not. */
export type JournalHolder = LockHolder & { forward_to: string | null };

const asJournalHolder = (h: LockHolder): JournalHolder => ({
  ...h,
  forward_to: typeof h.forward_to === 'string' ? h.forward_to : null,
});

/** Which `mkt webhooks listen` holds the journal in `dir` now, if any (for `resend`). */
export async function lockHolder(dir: string): Promise<JournalHolder | null> {
  const h = await liveHolder(lockPath(dir));
  return h && asJournalHolder(h);
}

/** The exclusive lock of one journal folder, held by one `mkt webhooks listen`. */
export const JournalLock = {
  /** Takes the lock of the journal folder `dir`; a running holder is a MktError naming it. */
  async acquire(
    dir: string,
    options: { forwardTo?: string; app?: string; warn(message: string): void; now?: () => number },
  ): Promise<FileLock> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const lock = await FileLock.tryAcquire(lockPath(dir), {
      fields: { forward_to: options.forwardTo ?? null },
      warn: options.warn,
      label: 'journal lock',
      now: options.now,
    });
    if (lock instanceof FileLock) return lock;
    throw lockedError(dir, asJournalHolder(lock), options.app);
  },
};

function lockedError(dir: string, h: JournalHolder, app: string | undefined): MktError {
  const where = h.host && h.host !== hostname() ? ` on ${h.host}` : '';
  return new MktError(
    'listener_running',
    `Another \`mkt webhooks listen\` (pid ${h.pid}${where}, started ${h.started_at}) is using the journal ${dir}. ` +
      'Two listeners on one journal would forward every delivery twice.',
    1,
    {
      hints: [
        `mkt webhooks deliveries${app ? ` --app ${app}` : ''}   (works while it runs)`,
        'Stop the other listener first (Ctrl-C in its terminal), then start this one again.',
        `rm ${lockPath(dir)}   (only if pid ${h.pid}${where} is not a \`mkt webhooks listen\`)`,
      ],
    },
  );
}
