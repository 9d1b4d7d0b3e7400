// The journal's files: where they are, how they are read, and how one line is written beside a
// running listener.
import { readdir, type FileHandle } from 'node:fs/promises';
import { openNoFollow } from '../../platform/fs-atomic.js';
import { constants as fsConstants, write } from 'node:fs';
import { dirname, join } from 'node:path';
import { MktError } from '../../errors.js';
import { checkPrivateFolder, privateFolder, type PrivateFolder } from '../../platform/private-folder.js';
import type { JournalRecord } from './records.js';

const FILE_PATTERN = /^journal-(\d+)\.jsonl$/;
/** O_DSYNC where the platform has it (log.ts: WRITE_FLAGS); else an explicit datasync after each write. */
export const DSYNC = fsConstants.O_DSYNC;

/** Opening a journal file never follows a symbolic link planted at its name (ELOOP instead). */
export const NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

const FOLDER: PrivateFolder = {
  label: 'journal folder',
  code: 'journal_unsafe',
  hints: ['MKT_DATA_DIR=~/.local/share/mkt mkt …   (a folder you own)'],
  follow: false,
};

/**
 * Checks (and with `create`, makes) the journal folder `dir` and the `webhooks` folder above it as
 * the credentials' folder is checked: real folders (no link), this user's, writable by nobody else
 * (tightened to 0700 with one warning), and the data folder above them this user's.
 */
export async function journalFolder(
  dir: string,
  warn: (message: string) => void,
  options: { create?: boolean } = {},
): Promise<void> {
  const data = dirname(dirname(dir));
  const check = async () => {
    await checkPrivateFolder(data, { ...FOLDER, label: 'data folder', follow: true }, warn);
    await checkPrivateFolder(dirname(dir), FOLDER, warn);
    await checkPrivateFolder(dir, FOLDER, warn);
  };
  await check(); // before anything is made through a link
  if (!options.create) return;
  await privateFolder(dir, FOLDER, warn);
  await check();
}

/** A journal file's open failed: a link at its name is said as such, anything else as it is. */
export function journalOpenError(path: string): (err: NodeJS.ErrnoException) => never {
  return (err) => {
    if (err.code !== 'ELOOP') throw err;
    throw new MktError(
      'journal_unsafe',
      `The journal file ${path} is a symbolic link; mkt never reads or writes deliveries through a link.`,
      1,
      { hints: [`rm "${path}"   (after looking at what it points to)`] },
    );
  };
}

/** The bytes of a journal file, never through a link. */
export async function readJournalFile(path: string): Promise<Buffer> {
  const handle = await openNoFollow(path, fsConstants.O_RDONLY).catch(journalOpenError(path));
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Cuts a journal file to `length` bytes, never through a link. */
export async function truncateJournalFile(path: string, length: number): Promise<void> {
  const handle = await openNoFollow(path, fsConstants.O_WRONLY).catch(journalOpenError(path));
  try {
    await handle.truncate(length);
  } finally {
    await handle.close();
  }
}

/** The journal folder of an app (or "local" without one) under the data folder. */
export function journalDir(dataDir: string, appId: string | undefined): string {
  return join(dataDir, 'webhooks', appId ?? 'local');
}

export async function journalFiles(dir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map((n) => FILE_PATTERN.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

export const fileName = (dir: string, n: number) => join(dir, `journal-${n}.jsonl`);

function isDeliveryRecord(r: JournalRecord | null): boolean {
  return !!r && (r.t === 'received' || r.t === 'status') && typeof r.id === 'string';
}

export function parseLines(text: string, onBad: () => void): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as JournalRecord;
      if (r && r.t === 'position' ? Number.isSafeInteger(r.seq) && r.seq >= 0 : isDeliveryRecord(r)) {
        records.push(r);
      } else onBad();
    } catch {
      onBad();
    }
  }
  return records;
}

/** One write(2) of `bytes` from `offset` at `position`: fs.write, as a FileHandle write costs more. */
function writeAt(fd: number, bytes: Buffer, offset: number, position: number | null): Promise<number> {
  return new Promise((resolve, reject) =>
    write(fd, bytes, offset, bytes.length - offset, position, (err, written) =>
      err ? reject(err) : resolve(written),
    ),
  );
}

/**
 * Writes all of `bytes` at `position` (or where the descriptor appends); how many reached the disk,
 * and what stopped it.
 */
export async function writeAll(
  handle: FileHandle,
  bytes: Buffer,
  position: number | null = null,
): Promise<{ bytes: number; error?: unknown }> {
  let n = 0;
  try {
    while (n < bytes.length) {
      const at = position === null ? null : position + n;
      n += await writeAt(handle.fd, bytes, n, at);
    }
    if (DSYNC === undefined) await handle.datasync();
    return { bytes: n };
  } catch (error) {
    return { bytes: n, error: error ?? new Error('write failed') };
  }
}

/** True when `line` is one journal record. */
export function parsesAsRecord(line: Buffer): boolean {
  let bad = false;
  parseLines(line.toString('utf8'), () => (bad = true));
  return !bad;
}

/** Every record of the journal in `dir`, oldest first (lines that do not parse are skipped). */
export async function readJournal(dir: string): Promise<JournalRecord[]> {
  const records: JournalRecord[] = [];
  for (const n of await journalFiles(dir)) {
    let text: string;
    try {
      text = (await readJournalFile(fileName(dir, n))).toString('utf8');
    } catch (err) {
      // A running listener rotated the journal and removed its oldest file since we listed them.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    // A line a running listener is writing right now has no newline yet: it is skipped like a bad one.
    records.push(...parseLines(text, () => {}));
  }
  return records;
}

/**
 * Appends one record to the newest journal file of `dir` (for `resend`, beside a running `listen`).
 * Safe beside a running listener: the line goes out in one write on its own O_APPEND descriptor, so
 * it lands whole after whatever the listener wrote, never inside a line of it; the listener neither
 * reads the file back nor counts on its size for more than when to rotate. Should the listener rotate
 * meanwhile, the line lands in the file before the new one, which is read in order all the same.
 */
export async function appendRecord(dir: string, record: JournalRecord): Promise<void> {
  await journalFolder(dir, () => undefined, { create: true });
  const files = await journalFiles(dir);
  const path = fileName(dir, files.at(-1) ?? 1);
  const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | NOFOLLOW;
  const handle = await openNoFollow(path, flags).catch(journalOpenError(path));
  try {
    await handle.write(`${JSON.stringify(record)}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * What a rotation must not drop from the file `path` it is about to remove: the received record of
 * each delivery `keep` names (not yet forwarded, or failed and so for `resend`), with its latest
 * status line in that file, as journal lines.
 */
export async function linesToCarry(path: string, keep: (id: string) => boolean): Promise<string> {
  let text: string;
  try {
    text = (await readJournalFile(path)).toString('utf8');
  } catch {
    return '';
  }
  const received = new Map<string, JournalRecord>();
  const status = new Map<string, JournalRecord>();
  for (const r of parseLines(text, () => undefined)) {
    if (r.t === 'received' && keep(r.id)) received.set(r.id, r);
    else if (r.t === 'status' && received.has(r.id)) status.set(r.id, r);
  }
  let lines = '';
  for (const [id, r] of received) {
    lines += `${JSON.stringify(r)}\n`;
    if (status.has(id)) lines += `${JSON.stringify(status.get(id))}\n`;
  }
  return lines;
}
