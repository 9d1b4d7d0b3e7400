import { open, readdir, readFile, rename, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, LOG_NAME, logPath } from './journal.js';
import type { Change } from './records.js';

/** The single state file of sandboxes before the log (version 1), and their delivery logs. */
const LEGACY_STATE = 'state.json';
const LEGACY_DELIVERIES = 'deliveries';

/** The snapshot: every change needed to rebuild the state before log generation `gen`. */
export interface Snapshot {
  version: 2;
  gen: number;
  changes: Change[];
}

const snapshotPath = (dir: string): string => join(dir, 'snapshot.json');

/** The snapshot in `dir`, or an empty one at generation 0. */
export async function readSnapshot(dir: string): Promise<Snapshot> {
  let text: string;
  try {
    text = await readFile(snapshotPath(dir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 2, gen: 0, changes: [] };
    throw error;
  }
  const snap = JSON.parse(text) as Snapshot;
  if (snap.version !== 2)
    throw new Error(`Unsupported sandbox snapshot version in ${dir}; start with reset.`);
  return snap;
}

/** Replaces the snapshot atomically (tmp + fsync + rename + fsync of the folder). */
export async function writeSnapshot(dir: string, text: string): Promise<void> {
  const tmp = `${snapshotPath(dir)}.tmp`;
  const handle = await open(tmp, 'w', FILE_MODE);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, snapshotPath(dir));
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** The generations of the logs in `dir`, oldest first. */
export async function logGenerations(dir: string): Promise<number[]> {
  const gens = (await readdir(dir)).flatMap((name) => LOG_NAME.exec(name)?.[1] ?? []);
  return gens.map(Number).sort((a, b) => a - b);
}

/** Removes the logs older than generation `gen` (the snapshot covers them). */
export async function dropLogsBefore(dir: string, gen: number): Promise<void> {
  for (const g of await logGenerations(dir)) if (g < gen) await rm(logPath(dir, g), { force: true });
}

/**
 * Reads the changes of one log. A torn last record (cut short by a crash: no newline, or not JSON)
 * is dropped and the file truncated before it, so the next record never glues to it; a bad record
 * followed by good ones is damage, not a crash, and is refused. Answers the valid length.
 */
export async function replayLog(path: string, apply: (change: Change) => void): Promise<number> {
  const bytes = await readFile(path);
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(10, start);
    let change: Change | undefined;
    if (end >= 0) {
      try {
        change = JSON.parse(bytes.toString('utf8', start, end)) as Change;
      } catch {
        change = undefined;
      }
    }
    if (change === undefined) {
      const rest = end < 0 ? -1 : bytes.indexOf(10, end + 1);
      if (end >= 0 && rest >= 0) throw new Error(`The sandbox log ${path} is damaged at byte ${start}.`);
      await truncate(path, start);
      return start;
    }
    apply(change);
    start = end + 1;
  }
  return start;
}

/**
 * The changes that rebuild a version-1 data folder (`state.json` and `deliveries/*.jsonl`), or
 * undefined when there is none; an upgrade keeps the developer's sandbox.
 */
export async function readLegacyState(dir: string): Promise<Change[] | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, LEGACY_STATE), 'utf8');
  } catch {
    return undefined;
  }
  const old = JSON.parse(text) as { version: number } & Record<string, never[]>;
  if (old.version !== 1) throw new Error(`Unsupported sandbox state version in ${dir}; start with reset.`);
  const changes: Change[] = [{ op: 'seed', v: old.seed as never }];
  const kinds = [
    ['users', 'user'],
    ['apps', 'app'],
    ['plans', 'plan'],
    ['keys', 'key'],
    ['subscriptions', 'sub'],
    ['tokens', 'token'],
  ] as const;
  for (const [field, op] of kinds) for (const v of old[field] ?? []) changes.push({ op, v } as Change);
  const names = await readdir(join(dir, LEGACY_DELIVERIES)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.jsonl'))) {
    const lines = (await readFile(join(dir, LEGACY_DELIVERIES, name), 'utf8')).split('\n');
    for (const line of lines) {
      try {
        if (line !== '') changes.push({ op: 'delivery', v: JSON.parse(line) as never });
      } catch {
        // A line cut short by a crash of the old version.
      }
    }
  }
  return changes;
}

/** Removes the version-1 files (on reset). */
export async function removeLegacyState(dir: string): Promise<void> {
  await rm(join(dir, LEGACY_STATE), { force: true });
  await rm(join(dir, LEGACY_DELIVERIES), { recursive: true, force: true });
}
