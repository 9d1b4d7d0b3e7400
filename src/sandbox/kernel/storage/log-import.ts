import { readdirSync, readFileSync } from 'node:fs';
import { renameSyncChecked } from '../../../platform/fs-atomic.js';
import { join } from 'node:path';
import type { Change } from './records.js';

/**
 * The files of earlier sandboxes: the JSON-lines log with its snapshot (0.1), and before it one
 * `state.json` with `deliveries/*.jsonl`. They are read once, imported, and kept renamed.
 */
const SNAPSHOT = 'snapshot.json';
const LOG_NAME = /^log-(\d+)\.jsonl$/;
const STATE_V1 = 'state.json';
const DELIVERIES_V1 = 'deliveries';
/** What an imported file is renamed to: kept for the developer, never read again. */
export const IMPORTED_SUFFIX = '.imported';

/** The earlier version's files present in `dir`, in the order they are read. */
export function earlierFiles(dir: string): string[] {
  const names = readdirSync(dir);
  const logs = names
    .flatMap((n) => (LOG_NAME.test(n) ? [n] : []))
    .sort((a, b) => Number(LOG_NAME.exec(a)![1]) - Number(LOG_NAME.exec(b)![1]));
  const v1 = [STATE_V1, DELIVERIES_V1].filter((n) => names.includes(n));
  return [...(names.includes(SNAPSHOT) ? [SNAPSHOT] : []), ...logs, ...v1];
}

/** Every change the earlier files hold, oldest first (a log's torn last record is left out). */
export function readEarlierChanges(dir: string): Change[] {
  const names = earlierFiles(dir);
  if (names.includes(STATE_V1)) return readStateV1(dir);
  const changes: Change[] = [];
  let fromGen = 0;
  if (names.includes(SNAPSHOT)) {
    const snap = JSON.parse(readFileSync(join(dir, SNAPSHOT), 'utf8')) as {
      version: number;
      gen: number;
      changes: Change[];
    };
    if (snap.version !== 2)
      throw new Error(`Unsupported sandbox snapshot version in ${dir}; start with reset.`);
    for (const change of snap.changes) changes.push(change);
    fromGen = snap.gen;
  }
  for (const name of names) {
    const gen = LOG_NAME.exec(name)?.[1];
    if (gen !== undefined && Number(gen) >= fromGen)
      for (const change of readLog(join(dir, name))) changes.push(change);
  }
  return changes;
}

/** The records of one log; a torn last record (a crash mid-write) ends it, damage before the end is refused. */
function readLog(path: string): Change[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: Change[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') continue;
    try {
      out.push(JSON.parse(lines[i]!) as Change);
    } catch {
      if (lines.slice(i + 1).some((l) => l !== ''))
        throw new Error(`The sandbox log ${path} is damaged at line ${i + 1}.`);
    }
  }
  return out;
}

/** The changes that rebuild a version-1 folder (`state.json` and `deliveries/*.jsonl`). */
function readStateV1(dir: string): Change[] {
  const old = JSON.parse(readFileSync(join(dir, STATE_V1), 'utf8')) as { version: number } & Record<
    string,
    never[]
  >;
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
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, DELIVERIES_V1)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    // No deliveries were ever made.
  }
  for (const name of names) {
    for (const line of readFileSync(join(dir, DELIVERIES_V1, name), 'utf8').split('\n')) {
      try {
        if (line !== '') changes.push({ op: 'delivery', v: JSON.parse(line) as never });
      } catch {
        // A line cut short by a crash of the old version.
      }
    }
  }
  return changes;
}

/** Renames the earlier files once their import has committed (they are never read again). */
export function setAsideEarlierFiles(dir: string): void {
  for (const name of earlierFiles(dir)) renameSyncChecked(join(dir, name), join(dir, name + IMPORTED_SUFFIX));
}
