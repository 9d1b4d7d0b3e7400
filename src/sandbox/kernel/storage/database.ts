import { chmodSync, closeSync, existsSync } from 'node:fs';
import {
  openOwnFileSync,
  readOwnFileSync,
  removeSync,
  writeFileAtomicSync,
} from '../../../platform/fs-atomic.js';
import { privateFolderSync } from '../../../platform/private-folder.js';
import { RefusedError } from '../../../platform/refused.js';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { checkDatabaseFile, checkRows, checkSchema, damageOf } from './folder-check.js';
import { MIGRATIONS } from './migrations.js';

/** Files are the owner's alone, whatever the umask (docs/DECISIONS.md, durability). */
export const FILE_MODE = 0o600;
/** The database file in a data folder. */
export const DATABASE_FILE = 'sandbox.sqlite';
/** Who holds the folder: written once the sandbox listens, read by a second start to name it. */
const HOLDER_FILE = 'holder.json';

/** SQLite's result code for a full disk (SQLITE_FULL) and for a lock held elsewhere (SQLITE_BUSY). */
const SQLITE_FULL = 13;
const SQLITE_BUSY = 5;

/** Another process holds the data folder; its URL and process id when it said them. */
export class FolderInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: { url: string; pid: number } | undefined,
  ) {
    const who = holder ? ` at ${holder.url} (process ${holder.pid})` : '';
    super(`Another sandbox is running on ${dataDir}${who}; stop it first or use another data folder.`);
  }
}

/** True for SQLite's "database or disk is full". */
export function isDiskFull(error: unknown): boolean {
  const e = error as { errcode?: number; message?: string } | undefined;
  return e?.errcode === SQLITE_FULL || /disk is full/i.test(e?.message ?? '');
}

let sqlite: typeof import('node:sqlite') | undefined;

/**
 * `node:sqlite`, loaded without its ExperimentalWarning (Node 22 prints one on first load; the
 * sandbox's users have nothing to act on). Exactly that warning is dropped; every other one passes.
 */
export async function loadSqlite(): Promise<typeof import('node:sqlite')> {
  if (sqlite) return sqlite;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const name = typeof warning === 'string' ? type : warning.name;
    if (name === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    return (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    sqlite = await import('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
  return sqlite;
}

/**
 * Makes sure `dataDir` exists and is the owner's alone: created 0700; one that others may write is
 * tightened to 0700, and the answer says so (a line for the log).
 */
export function claimFolder(dataDir: string): string | undefined {
  // The folder door: refused when it is another user's (whoever owns it could plant links for our
  // log, lock and running files), a link's place is not checked (a --data-dir may be one), a file is
  // refused in words; one that others may write is tightened to 0700, and the answer says so.
  return privateFolderSync(dataDir, {
    label: 'sandbox data folder',
    code: 'data_folder_unsafe',
    hints: ['mkt sandbox start --data-dir ~/.local/share/mkt/sandbox   (a folder of yours)'],
  });
}

/** The file whose lock says which process holds the folder (an empty SQLite database). */
export const LOCK_FILE = 'sandbox.lock';
/** SQLite's page cache for the writer connection, in KiB (negative: a size, not a page count). */
export const CACHE_KIB = -65_536;

/**
 * The connections to a data folder's database: the writer (holding the database's exclusive lock
 * between long transactions), a way to open a read-only reader (while one runs), and the folder's lock.
 */
export interface Connections {
  db: DatabaseSync;
  openReader: () => DatabaseSync;
  lock: DatabaseSync;
}

/**
 * Takes the folder's lock: an exclusive lock on {@link LOCK_FILE}, the operating system's (so a killed
 * sandbox never blocks the next start), held until the process ends or closes it. A second sandbox
 * gets {@link FolderInUseError}. Answers the lock and whether its file was made now.
 */
export async function takeLock(dataDir: string): Promise<{ lock: DatabaseSync; made: boolean }> {
  const path = join(dataDir, LOCK_FILE);
  const made = !existsSync(path);
  // Never through a link planted at its name (it would create or open the link's target).
  closeSync(openOwnFileSync(path, 'data_folder_unsafe'));
  const { DatabaseSync } = await loadSqlite();
  const lock = new DatabaseSync(path);
  try {
    lock.exec('PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    lock.close();
    if (made) removeSync(path);
    if ((error as { errcode?: number }).errcode === SQLITE_BUSY || /locked|busy/i.test(String(error))) {
      throw new FolderInUseError(dataDir, readHolder(dataDir));
    }
    throw error;
  }
  return { lock, made };
}

/**
 * Opens the folder's database for this process alone (see {@link takeLock}): checked first (a
 * damaged or foreign file is refused before anything in it changes: folder-check.ts), then WAL with
 * `synchronous=NORMAL` (the ledger fsyncs the WAL itself before it acknowledges anything: see
 * GroupCommit) and the schema brought up to date; with a read-only second connection that sees the
 * last committed state while the writer is in a long transaction.
 */
export async function openDatabase(dataDir: string): Promise<Connections> {
  const { lock, made } = await takeLock(dataDir);
  const path = join(dataDir, DATABASE_FILE);
  try {
    checkDatabaseFile(path);
    const { DatabaseSync } = await loadSqlite();
    closeSync(openOwnFileSync(path, 'data_damaged'));
    const db = new DatabaseSync(path);
    try {
      checkSchema(DatabaseSync, db, path);
      chmodSync(path, FILE_MODE);
      try {
        db.exec('PRAGMA busy_timeout = 1000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
        db.exec(`PRAGMA foreign_keys = OFF; PRAGMA cache_size = ${CACHE_KIB}`);
      } catch (error) {
        throw damageOf(path, error);
      }
      migrate(db);
      checkRows(db, path);
      // WAL's index in shared memory (opened in normal locking mode), then the database's own lock
      // held between transactions: a transaction takes no lock of its own (about half the cost of
      // a small one); a long transaction gives it up for its reader (GroupCommit.long).
      db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; COMMIT');
      const openReader = () => {
        const reader = new DatabaseSync(path, { readOnly: true });
        reader.exec('PRAGMA busy_timeout = 1000');
        return reader;
      };
      return { db, openReader, lock };
    } catch (error) {
      if (db.isOpen) db.close();
      throw error;
    }
  } catch (error) {
    lock.close();
    if (made) removeSync(join(dataDir, LOCK_FILE));
    throw error;
  }
}

/** Applies every migration past the database's `user_version`, each in one transaction. */
function migrate(db: DatabaseSync): void {
  const { user_version: at } = db.prepare('PRAGMA user_version').get() as { user_version: number };
  if (at > MIGRATIONS.length) {
    const file = db.location() ?? 'in this folder';
    db.close();
    throw new RefusedError(
      'data_newer',
      `The sandbox database ${file} is from a newer mkt (schema ${at}, this one knows ${MIGRATIONS.length}); its data was left as it is.`,
      [
        'Upgrade mkt, or start with another --data-dir, or with --reset (which first keeps a copy of the folder).',
      ],
    );
  }
  for (let v = at; v < MIGRATIONS.length; v++) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(MIGRATIONS[v]!.sql);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      db.close();
      throw error;
    }
  }
}

/** Records who holds the folder (after listening), so that a second start can name it. */
export function writeHolder(dataDir: string, url: string): void {
  try {
    writeFileAtomicSync(join(dataDir, HOLDER_FILE), JSON.stringify({ url, pid: process.pid }), {
      mode: FILE_MODE,
    });
  } catch {
    // Only a courtesy to a second start: a full disk must not stop this one.
  }
}

function readHolder(dataDir: string): { url: string; pid: number } | undefined {
  try {
    const h = JSON.parse(
      readOwnFileSync(join(dataDir, HOLDER_FILE), { maxBytes: 4096, code: 'data_folder_unsafe' }) ?? '',
    ) as {
      url?: unknown;
      pid?: unknown;
    };
    return typeof h.url === 'string' && typeof h.pid === 'number' ? { url: h.url, pid: h.pid } : undefined;
  } catch {
    return undefined;
  }
}
