import { mkdir, open, readdir, readFile, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a delivery came from: the marketplace relay stream or the local HTTP receiver. */
export type DeliverySource = 'relay' | 'local';

/** The state of a delivery: `received` until it is forwarded, fails for good, is refused or filtered out. */
export type DeliveryStatus = 'received' | 'forwarded' | 'failed' | 'refused' | 'filtered';

/** A journal line recording a delivery as it arrived: the exact body and headers. */
export interface ReceivedRecord {
  t: 'received';
  id: string;
  at: string;
  source: DeliverySource;
  seq?: number;
  event?: string;
  headers: Record<string, string>;
  body: string;
  forward_to?: string;
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

/** One journal line. */
export type JournalRecord = ReceivedRecord | StatusRecord;

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

function parseLines(text: string, onBad: () => void): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as JournalRecord;
      if (r && typeof r.id === 'string' && (r.t === 'received' || r.t === 'status')) records.push(r);
      else onBad();
    } catch {
      onBad();
    }
  }
  return records;
}

/** Every record of the journal in `dir`, oldest first (lines that do not parse are skipped). */
export async function readJournal(dir: string): Promise<JournalRecord[]> {
  const records: JournalRecord[] = [];
  for (const n of await journalFiles(dir)) {
    records.push(...parseLines(await readFile(fileName(dir, n), 'utf8'), () => {}));
  }
  return records;
}

/** Folds the journal into one summary per delivery, oldest first. */
export function summarize(records: JournalRecord[]): DeliverySummary[] {
  const byId = new Map<string, DeliverySummary>();
  for (const r of records) {
    if (r.t === 'received') {
      if (byId.has(r.id)) continue;
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

/** Appends one record to the newest journal file of `dir` (for `resend`, beside a running `listen`). */
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
 * The delivery journal: append-only JSON Lines, each write fsync'd before it resolves (group commit),
 * rotated at `maxFileBytes` keeping `keepFiles` files. Opening it drops a torn last line left by a
 * crash (never an earlier line) and recovers the state: last relay sequence, known ids, pending deliveries.
 */
export class DeliveryLog {
  /** The highest relay sequence number recorded. */
  lastSeq = 0;
  private readonly statuses = new Map<string, DeliveryStatus>();
  private readonly pendingRecords = new Map<string, ReceivedRecord>();
  private handle: FileHandle | undefined;
  private fileNo = 1;
  private size = 0;
  private queue: Array<{ line: string; done: () => void; fail: (e: unknown) => void }> = [];
  private writing: Promise<void> | undefined;

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
    log.handle = await open(fileName(dir, log.fileNo), 'a', 0o600);
    log.size = (await stat(fileName(dir, log.fileNo))).size;
    return log;
  }

  private apply(r: JournalRecord): void {
    if (r.t === 'received') {
      if (r.seq !== undefined && r.seq > this.lastSeq) this.lastSeq = r.seq;
      if (this.statuses.has(r.id)) return;
      this.remember(r.id, 'received');
      this.pendingRecords.set(r.id, r);
    } else {
      if (!this.statuses.has(r.id) && r.status === 'received') return;
      this.remember(r.id, r.status);
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
  }

  /** The recorded state of a delivery id, or undefined when it has not been seen (recently). */
  statusOf(id: string): DeliveryStatus | undefined {
    return this.statuses.get(id);
  }

  /** Deliveries recorded as received that were neither forwarded nor given up (e.g. after a crash). */
  pending(): ReceivedRecord[] {
    return [...this.pendingRecords.values()];
  }

  /** Appends records; resolves once they are on disk (fsync'd). */
  append(...records: JournalRecord[]): Promise<void> {
    for (const r of records) this.apply(r);
    const line = records.map((r) => `${JSON.stringify(r)}\n`).join('');
    return new Promise((done, fail) => {
      this.queue.push({ line, done, fail });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    await Promise.resolve(); // let `append` store this promise before the loop can finish
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const data = Buffer.from(batch.map((b) => b.line).join(''));
        if (this.size > 0 && this.size + data.length > this.options.maxFileBytes) await this.rotate();
        if (!this.handle) throw new Error('The journal is closed.');
        await this.handle.write(data);
        await this.handle.datasync();
        this.size += data.length;
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    }
    this.writing = undefined;
  }

  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.fileNo += 1;
    this.handle = await open(fileName(this.dir, this.fileNo), 'a', 0o600);
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
