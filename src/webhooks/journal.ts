import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a delivery came from: the marketplace relay stream or the local HTTP receiver. */
export type DeliverySource = 'relay' | 'local';

/** The state of a delivery: `received` until it is forwarded, fails for good, is refused or filtered out. */
export type DeliveryStatus = 'received' | 'forwarded' | 'failed' | 'refused' | 'filtered';

/**
 * A journal line recording a delivery as it arrived: the exact body (as text when its bytes are
 * UTF-8, else `body_b64`), its headers and the SHA-256 of the bytes (replays under a new id).
 */
export interface ReceivedRecord {
  t: 'received';
  id: string;
  at: string;
  source: DeliverySource;
  seq?: number;
  event?: string;
  headers: Record<string, string>;
  body?: string;
  body_b64?: string;
  digest?: string;
  forward_to?: string;
}

/** The fields of a received record that hold `bytes`, exactly. */
export function bodyFields(bytes: Buffer): Pick<ReceivedRecord, 'body' | 'body_b64' | 'digest'> {
  const digest = createHash('sha256').update(bytes).digest('hex');
  return isUtf8(bytes)
    ? { body: bytes.toString('utf8'), digest }
    : { body_b64: bytes.toString('base64'), digest };
}

/** The exact bytes of a received record's body. */
export function bodyBytes(record: ReceivedRecord): Buffer {
  return record.body_b64 !== undefined
    ? Buffer.from(record.body_b64, 'base64')
    : Buffer.from(record.body ?? '', 'utf8');
}

/** A journal line updating the state of a delivery named by id. */
export interface StatusRecord {
  t: 'status';
  id: string;
  at: string;
  status: DeliveryStatus;
  attempts?: number;
  response_status?: number;
  error?: string;
  reason?: string;
  forward_to?: string;
}

/**
 * A journal line recording the relay position: the sequence number the relay stream told us it was at
 * when we connected without `Last-Event-ID` (or after a reset). It is the resume point before any
 * relay delivery has arrived, and is repeated at the top of each new file when the journal rotates.
 */
export interface PositionRecord {
  t: 'position';
  at: string;
  seq: number;
}

/** One journal line. */
export type JournalRecord = ReceivedRecord | StatusRecord | PositionRecord;

/** What `mkt webhooks deliveries` shows for one delivery: its received record folded with its last status. */
export interface DeliverySummary {
  id: string;
  event: string | null;
  source: DeliverySource;
  seq: number | null;
  received_at: string;
  status: DeliveryStatus;
  updated_at: string;
  attempts: number;
  response_status: number | null;
  reason: string | null;
  forward_to: string | null;
}

/** Settings of a journal: rotation size and how many files are kept. */
export interface JournalOptions {
  maxFileBytes?: number;
  keepFiles?: number;
  /** Told about a torn last line or unreadable lines found on open. */
  warn?: (message: string) => void;
}

/** The longest a write waits for the records of the callers its last write released. */
const GATHER_MS = 1;

const FILE_PATTERN = /^journal-(\d+)\.jsonl$/;
/** How many delivery ids are remembered for de-duplication (the newest ones). */
const INDEX_CAP = 20_000;

/** The journal folder of an app (or "local" without one) under the data folder. */
export function journalDir(dataDir: string, appId: string | undefined): string {
  return join(dataDir, 'webhooks', appId ?? 'local');
}

async function journalFiles(dir: string): Promise<number[]> {
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

const fileName = (dir: string, n: number) => join(dir, `journal-${n}.jsonl`);

function isDeliveryRecord(r: JournalRecord | null): boolean {
  return !!r && (r.t === 'received' || r.t === 'status') && typeof r.id === 'string';
}

function parseLines(text: string, onBad: () => void): JournalRecord[] {
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

/** The newest received record of `id` (a refused one may be followed by the verified one). */
export function receivedRecord(records: JournalRecord[], id: string): ReceivedRecord | undefined {
  return records.findLast((r): r is ReceivedRecord => r.t === 'received' && r.id === id);
}

/** Every record of the journal in `dir`, oldest first (lines that do not parse are skipped). */
export async function readJournal(dir: string): Promise<JournalRecord[]> {
  const records: JournalRecord[] = [];
  for (const n of await journalFiles(dir)) {
    let text: string;
    try {
      text = await readFile(fileName(dir, n), 'utf8');
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

/** Folds the journal into one summary per delivery, oldest first. */
export function summarize(records: JournalRecord[]): DeliverySummary[] {
  const byId = new Map<string, DeliverySummary>();
  for (const r of records) {
    if (r.t === 'received') {
      // A delivery refused for its signature does not hold its id: a verified one replaces it.
      if (byId.has(r.id) && byId.get(r.id)!.status !== 'refused') continue;
      byId.set(r.id, {
        id: r.id,
        event: r.event ?? null,
        source: r.source,
        seq: r.seq ?? null,
        received_at: r.at,
        status: 'received',
        updated_at: r.at,
        attempts: 0,
        response_status: null,
        reason: null,
        forward_to: r.forward_to ?? null,
      });
      continue;
    }
    if (r.t !== 'status') continue;
    const s = byId.get(r.id);
    if (!s) continue;
    s.status = r.status;
    s.updated_at = r.at;
    s.attempts += r.attempts ?? 0;
    if (r.response_status !== undefined) s.response_status = r.response_status;
    s.reason = r.reason ?? r.error ?? (r.status === 'forwarded' ? null : s.reason);
    if (r.forward_to) s.forward_to = r.forward_to;
  }
  return [...byId.values()];
}

/**
 * Appends one record to the newest journal file of `dir` (for `resend`, beside a running `listen`).
 * Safe beside a running listener: the line goes out in one write on its own O_APPEND descriptor, so
 * it lands whole after whatever the listener wrote, never inside a line of it; the listener neither
 * reads the file back nor counts on its size for more than when to rotate. Should the listener rotate
 * meanwhile, the line lands in the file before the new one, which is read in order all the same.
 */
export async function appendRecord(dir: string, record: JournalRecord): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = await journalFiles(dir);
  const handle = await open(fileName(dir, files.at(-1) ?? 1), 'a', 0o600);
  try {
    await handle.write(`${JSON.stringify(record)}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Flags that make each write reach the disk before it returns (`O_DSYNC`): one system call per group
 * commit instead of write + fdatasync. Where the platform has no `O_DSYNC` (Windows), plain append
 * and an explicit datasync after each write.
 */
const DSYNC_APPEND =
  fsConstants.O_DSYNC !== undefined
    ? fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_DSYNC
    : undefined;

/**
 * The delivery journal: append-only JSON Lines, each write on disk (O_DSYNC, or fdatasync) before it
 * resolves, records that arrive meanwhile sharing the next write (group commit); rotated at
 * `maxFileBytes` keeping `keepFiles` files. Opening it drops a torn last line left by a crash (never
 * an earlier line) and recovers the state: relay position, known ids, pending deliveries.
 */
export class DeliveryLog {
  /**
   * The relay resume point: the highest relay sequence number recorded, or the position the relay
   * gave us (a position record); undefined when the relay never told us where it was.
   */
  lastSeq: number | undefined;
  private readonly statuses = new Map<string, DeliveryStatus>();
  private readonly pendingRecords = new Map<string, ReceivedRecord>();
  private readonly digests = new Map<string, { id: string; at: number }>();
  /** A failed write may have left part of a line: the next write starts on a new line. */
  private torn = false;
  private handle: FileHandle | undefined;
  private fileNo = 1;
  private size = 0;
  private queue: Array<{
    records: JournalRecord[];
    line: string;
    done: () => void;
    fail: (e: unknown) => void;
  }> = [];
  private writing: Promise<void> | undefined;
  /** Told when a record is queued while the writer waits for the next crowd. */
  private queued: (() => void) | undefined;

  private constructor(
    readonly dir: string,
    private readonly options: Required<Omit<JournalOptions, 'warn'>>,
  ) {}

  /** Opens (creating) the journal in `dir` and recovers its state. */
  static async open(dir: string, options: JournalOptions = {}): Promise<DeliveryLog> {
    const log = new DeliveryLog(dir, {
      maxFileBytes: options.maxFileBytes ?? 10 * 1024 * 1024,
      keepFiles: options.keepFiles ?? 5,
    });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const files = await journalFiles(dir);
    let bad = 0;
    for (const n of files) {
      const path = fileName(dir, n);
      let text = await readFile(path, 'utf8');
      if (n === files.at(-1) && text.length > 0 && !text.endsWith('\n')) {
        // A crash in the middle of an append leaves a line without its newline: drop only that line.
        const keep = text.lastIndexOf('\n') + 1;
        options.warn?.(
          `The journal ${path} ended with a partly written line (a crash during a write); it was removed.`,
        );
        text = text.slice(0, keep);
        await truncate(path, Buffer.byteLength(text));
      }
      for (const r of parseLines(text, () => bad++)) log.apply(r);
    }
    if (bad > 0) options.warn?.(`${bad} unreadable line(s) in the journal ${dir} were skipped.`);
    log.fileNo = files.at(-1) ?? 1;
    await log.openFile();
    log.size = (await stat(fileName(dir, log.fileNo))).size;
    return log;
  }

  private async openFile(): Promise<void> {
    this.handle = await open(fileName(this.dir, this.fileNo), DSYNC_APPEND ?? 'a', 0o600);
  }

  private apply(r: JournalRecord): void {
    if (r.t === 'position') {
      // The relay's word: after a marketplace reset it may be lower than what we had.
      this.lastSeq = r.seq;
    } else if (r.t === 'received') {
      if (r.seq !== undefined && r.seq > (this.lastSeq ?? -1)) this.lastSeq = r.seq;
      const known = this.statuses.get(r.id);
      // A delivery refused for its signature does not hold its id: the genuine one may follow.
      if (known !== undefined && known !== 'refused') return;
      this.remember(r.id, 'received');
      this.pendingRecords.set(r.id, r);
      if (r.digest) this.digests.set(r.digest, { id: r.id, at: Date.parse(r.at) });
    } else {
      if (!this.statuses.has(r.id) && r.status === 'received') return;
      this.remember(r.id, r.status);
      const record = this.pendingRecords.get(r.id);
      // The digest of bytes that did not verify proves nothing about later deliveries.
      if (r.status === 'refused' && record?.digest) this.digests.delete(record.digest);
      if (r.status !== 'received') this.pendingRecords.delete(r.id);
    }
  }

  private remember(id: string, status: DeliveryStatus): void {
    this.statuses.delete(id);
    this.statuses.set(id, status);
    if (this.statuses.size > INDEX_CAP) {
      const oldest = this.statuses.keys().next().value as string;
      this.statuses.delete(oldest);
    }
    if (this.digests.size > INDEX_CAP) this.digests.delete(this.digests.keys().next().value as string);
  }

  /** The delivery journaled with these body bytes (SHA-256 hex), and when it arrived. */
  digestOf(digest: string): { id: string; at: number } | undefined {
    return this.digests.get(digest);
  }

  /** The recorded state of a delivery id, or undefined when it has not been seen (recently). */
  statusOf(id: string): DeliveryStatus | undefined {
    return this.statuses.get(id);
  }

  /** Deliveries recorded as received that were neither forwarded nor given up (e.g. after a crash). */
  pending(): ReceivedRecord[] {
    return [...this.pendingRecords.values()];
  }

  /**
   * Appends records; resolves once they are on disk. The in-memory state (statusOf, lastSeq,
   * digestOf) changes only then: a record that could not be written is not remembered. Records
   * appended later are written after these, in order.
   */
  append(...records: JournalRecord[]): Promise<void> {
    let line = '';
    for (const r of records) line += `${JSON.stringify(r)}\n`;
    return new Promise((done, fail) => {
      this.queue.push({ records, line, done, fail });
      this.queued?.();
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    await Promise.resolve(); // let `append` store this promise before the loop can finish
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      // The resume point as of this batch (records appended while it is written are not in it).
      let seq = this.lastSeq;
      for (const b of batch)
        for (const r of b.records) {
          if (r.t === 'position') seq = r.seq;
          else if (r.t === 'received' && r.seq !== undefined && r.seq > (seq ?? -1)) seq = r.seq;
        }
      let written = 0;
      try {
        let text = this.torn ? '\n' : '';
        for (const b of batch) text += b.line;
        let data = Buffer.from(text);
        if (this.size > 0 && this.size + data.length > this.options.maxFileBytes) {
          await this.rotate();
          // Each file holds the resume point, so that it survives when old files are removed; it
          // goes after the batch, so that a write cut short never leaves it without the records it counts.
          if (seq !== undefined) {
            const position: PositionRecord = { t: 'position', at: new Date().toISOString(), seq };
            data = Buffer.concat([data, Buffer.from(`${JSON.stringify(position)}\n`)]);
          }
        }
        if (!this.handle) throw new Error('The journal is closed.');
        while (written < data.length) {
          written += (await this.handle.write(data, written, data.length - written)).bytesWritten;
        }
        if (DSYNC_APPEND === undefined) await this.handle.datasync();
        this.size += data.length;
        this.torn = false;
        for (const b of batch) {
          for (const r of b.records) this.apply(r);
          b.done();
        }
      } catch (err) {
        // ENOSPC, EIO, EROFS: nothing of the batch counts; a part written is cut off by a newline.
        this.size += written;
        this.torn = true;
        for (const b of batch) b.fail(err);
      }
      // Under load the callers of this batch come back at once with the next records (a sender's
      // next delivery, the outcome of a forward): a moment's wait lets them share the next sync
      // instead of each waiting for one in progress and then its own.
      if (GATHER_MS > 0 && this.queue.length < batch.length) await this.gather(batch.length);
    }
    this.writing = undefined;
  }

  /** Waits until `count` appends are queued or GATHER_MS passed. */
  private gather(count: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.queued = undefined;
        resolve();
      };
      const timer = setTimeout(done, GATHER_MS);
      this.queued = () => {
        if (this.queue.length >= count) done();
      };
    });
  }

  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    this.fileNo += 1;
    await this.openFile();
    this.size = 0;
    for (const n of await journalFiles(this.dir)) {
      if (n <= this.fileNo - this.options.keepFiles) await rm(fileName(this.dir, n), { force: true });
    }
  }

  /** Waits for pending writes and closes the file. */
  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await this.handle?.close();
    this.handle = undefined;
  }
}
