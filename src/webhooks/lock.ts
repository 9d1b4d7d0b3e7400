import { unlinkSync, readFileSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MktError } from '../errors.js';

/** What a lock file holds: who listens on the journal, since when, and whether it forwards. */
export interface LockHolder {
  pid: number;
  started_at: string;
  host: string;
  /** The --forward-to of the holder (it then owns every delivery still `received`); null without. */
  forward_to: string | null;
}

/** The lock file of a journal folder. */
export const lockPath = (dir: string) => join(dir, 'listen.lock');

/** A lock file whose content cannot be read is this old (ms) before it counts as abandoned. */
const UNREADABLE_GRACE_MS = 2_000;

function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(h.pid) || (h.pid ?? 0) <= 0 || typeof h.started_at !== 'string') return null;
    return {
      pid: h.pid!,
      started_at: h.started_at,
      host: typeof h.host === 'string' ? h.host : '',
      forward_to: typeof h.forward_to === 'string' ? h.forward_to : null,
    };
  } catch {
    return null;
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
 * When the process `pid` started (ms since the epoch), where the system says (Linux /proc, in ticks
 * of 1/100 s since boot); undefined elsewhere or when it cannot be read.
 */
function processStart(pid: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder may still be running: a process of that pid exists on this host (EPERM: it
 * exists, owned by someone else), and did not start after the lock was written (then the pid was
 * given to another process since). A holder on another host (a shared data folder) cannot be checked
 * and counts as alive. Our own pid is never the holder: we are only now taking the lock (a container
 * restarted with the same pid as the run that was killed).
 */
function alive(h: LockHolder): boolean {
  if (h.host && h.host !== hostname()) return true;
  if (h.pid === process.pid) return false;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  const started = processStart(h.pid);
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
    a.started_at === b.started_at);

/** Which `mkt webhooks listen` holds the journal in `dir` now, if any (for `resend`). */
export async function lockHolder(dir: string): Promise<LockHolder | null> {
  const h = await readHolder(lockPath(dir));
  return h && h !== 'unreadable' && alive(h) ? h : null;
}

/** The exclusive lock of one journal folder, held by one `mkt webhooks listen`. */
export class JournalLock {
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
   * Takes the lock of the journal folder `dir`: a file created with `wx` holding our pid and start
   * time. A lock whose process is gone (killed, crashed) is taken over, and `warn` says so; a lock
   * held by a running process is a MktError naming it.
   */
  static async acquire(
    dir: string,
    options: { forwardTo?: string; app?: string; warn(message: string): void; now?: () => number },
  ): Promise<JournalLock> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = lockPath(dir);
    const now = options.now ?? Date.now;
    const me: LockHolder = {
      pid: process.pid,
      started_at: new Date(now()).toISOString(),
      host: hostname(),
      forward_to: options.forwardTo ?? null,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await open(path, 'wx', 0o600);
        try {
          await handle.writeFile(`${JSON.stringify(me)}\n`);
        } finally {
          await handle.close();
        }
        return new JournalLock(path, me);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (attempt >= 50) {
        throw new MktError(
          'journal_locked',
          `Could not take the lock ${path} (it keeps changing hands).`,
          1,
          {
            hints: ['mkt webhooks listen   (try again)'],
          },
        );
      }
      const found = await readHolder(path);
      if (found === null) continue; // released meanwhile
      if (found === 'unreadable') {
        // A holder that has created the file and not yet written it, or one that died in between.
        const age = await stat(path).then(
          (s) => now() - s.mtimeMs,
          () => 0,
        );
        if (age < UNREADABLE_GRACE_MS) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
      } else if (alive(found)) {
        throw lockedError(dir, found, options.app);
      }
      // Abandoned. Move it aside (atomic), then make sure what was moved is what we judged abandoned:
      // another listener may have taken it over between our read and the rename.
      const aside = `${path}.${process.pid}.stale`;
      try {
        await rename(path, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      const moved = await readHolder(aside);
      if (!same(moved, found)) {
        // We moved a live lock: put it back (unless yet another one appeared) and look again.
        await link(aside, path).catch(() => undefined);
        await rm(aside, { force: true });
        continue;
      }
      await rm(aside, { force: true });
      options.warn(
        found === 'unreadable'
          ? `Took over the journal lock ${path}, which held no process (a listener that died while starting).`
          : `Took over the journal lock of process ${found.pid} (started ${found.started_at}), which is no longer running.`,
      );
    }
  }

  /** Removes the lock file, if it is still ours. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    const found = await readHolder(this.path).catch(() => null);
    if (same(found, this.holder)) await rm(this.path, { force: true });
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

function lockedError(dir: string, h: LockHolder, app: string | undefined): MktError {
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
