import { constants as fsConstants, fstatSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { makeFolderSync, openNoFollow, removeSync } from '../../platform/fs-atomic.js';
import { HEADER } from '../../wire.js';
import { IdTable } from '../id-table.js';
import { BoundedMap } from './bounded-map.js';
import { signatureKey } from '../signature.js';
import {
  DSYNC,
  fileName,
  journalFiles,
  journalOpenError,
  NOFOLLOW,
  readJournalFile,
  truncateJournalFile,
  linesToCarry,
  parseLines,
  parsesAsRecord,
  writeAll,
} from './files.js';
import type { DeliveryStatus, JournalRecord, PositionRecord, ReceivedRecord } from './records.js';

/** Settings of a journal: rotation size and how many files are kept. */
export interface JournalOptions {
  maxFileBytes?: number;
  keepFiles?: number;
  /** Told about a torn last line or unreadable lines found on open. */
  warn?: (message: string) => void;
}

/** How many delivery ids are remembered for de-duplication (the newest ones). */
const INDEX_CAP = 20_000;

/**
 * Flags that make each write reach the disk before it returns (`O_DSYNC`): one system call per group
 * commit instead of write + fdatasync. Where the platform has no `O_DSYNC` (Windows), an explicit
 * datasync after each write. O_APPEND: every write goes after whatever any writer (a `resend`)
 * appended, so the file is its lines and nothing else (no room reserved ahead, no empty lines).
 */
const WRITE_FLAGS =
  fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | (DSYNC ?? 0) | NOFOLLOW;
/** The most bytes of refused deliveries (bad signature, cross-site) one journal file keeps. */
const REFUSED_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

/** Records appended while a write is in progress: written together, settled together. */
class Batch {
  readonly records: JournalRecord[] = [];
  text = '';
  done!: () => void;
  fail!: (err: unknown) => void;
  /** Settles when the batch is on disk (or failed): one promise for all its callers. */
  readonly written = new Promise<void>((resolve, reject) => {
    this.done = resolve;
    this.fail = reject;
  });

  add(records: JournalRecord[]): void {
    for (const r of records) {
      this.records.push(r);
      this.text += `${JSON.stringify(r)}\n`;
    }
  }
}

/**
 * The delivery journal: append-only JSON Lines, each write on disk (O_DSYNC, or fdatasync) before it
 * resolves, records that arrive meanwhile sharing the next write (group commit); rotated at
 * `maxFileBytes` keeping `keepFiles` files. Opening it drops a
 * torn last line left by a crash (never an earlier line) and recovers the state: relay position,
 * known ids, pending deliveries.
 */
export class DeliveryLog {
  /**
   * The relay resume point: the highest relay sequence number recorded, or the position the relay
   * gave us (a position record); undefined when the relay never told us where it was.
   */
  lastSeq: number | undefined;
  private readonly statuses = new BoundedMap<string, DeliveryStatus>(INDEX_CAP);
  private readonly pendingRecords = new IdTable<ReceivedRecord>();
  /** Verified deliveries by the signature of their body (`signatureKey`), and when they arrived. */
  private readonly signed = new BoundedMap<string, { id: string; at: string }>(INDEX_CAP);
  private handle: FileHandle | undefined;
  /**
   * The file's size after our last write (undefined: read it with fstat). Another process's append
   * (`resend`) is not in it: the file then rotates a little later, and a failed write is undone only
   * when the file is exactly as we left it plus what we wrote (else it is ended, never truncated).
   */
  private size: number | undefined;
  private fileNo = 1;
  /** Bytes of refused deliveries in the current file, and how many were refused and not journaled. */
  private refusedBytes = 0;
  refusedNotKept = 0;
  /** A failed write left part of a line at the end of the file: the next write ends it first. */
  private torn = false;
  /** The records to write next, their lines, and the promise their callers wait on. */
  private next: Batch | undefined;
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
    makeFolderSync(dir);
    const files = await journalFiles(dir);
    let bad = 0;
    for (const n of files) {
      const path = fileName(dir, n);
      let bytes = await readJournalFile(path);
      if (n === files.at(-1)) {
        // The written part ends at the last line (a journal of an older mkt may have room reserved
        // after it, as newlines: given back here).
        let end = bytes.length;
        while (end > 0 && bytes[end - 1] === NEWLINE) end--;
        const start = bytes.lastIndexOf(NEWLINE, end - 1) + 1;
        let keep = end === 0 ? 0 : end + 1;
        if (end > 0 && (end === bytes.length || !parsesAsRecord(bytes.subarray(start, end)))) {
          // A crash in the middle of a write leaves part of a line: drop only that line.
          options.warn?.(
            `The journal ${path} ended with a partly written line (a crash during a write); it was removed.`,
          );
          keep = start;
        }
        if (keep < bytes.length) {
          bytes = bytes.subarray(0, keep);
          await truncateJournalFile(path, keep);
        }
      }
      for (const r of parseLines(bytes.toString('utf8'), () => bad++)) log.apply(r);
    }
    if (bad > 0) options.warn?.(`${bad} unreadable line(s) in the journal ${dir} were skipped.`);
    log.fileNo = files.at(-1) ?? 1;
    await log.openFile();
    return log;
  }

  private async openFile(): Promise<void> {
    const path = fileName(this.dir, this.fileNo);
    this.handle = await openNoFollow(path, WRITE_FLAGS).catch(journalOpenError(path));
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
      this.statuses.set(r.id, 'received');
      this.pendingRecords.set(r.id, r);
      // The first delivery of a body keeps its place: a later copy is a replay or a forgery.
      const signature = r.headers[HEADER.signature];
      const key = signature && signatureKey(signature);
      if (key && !this.signed.has(key)) this.signed.set(key, { id: r.id, at: r.at });
    } else {
      if (r.status === 'received' && !this.statuses.has(r.id)) return;
      this.statuses.set(r.id, r.status);
      if (r.status === 'received') return;
      const signature = r.status === 'refused' && this.pendingRecords.get(r.id)?.headers[HEADER.signature];
      this.pendingRecords.delete(r.id);
      if (!signature) return;
      // Bytes that did not verify prove nothing about later deliveries.
      const key = signatureKey(signature);
      if (this.signed.get(key)?.id === r.id) this.signed.delete(key);
    }
  }

  /** The verified delivery journaled with the body this signature key (`signatureKey`) signs, and when it arrived. */
  signedBy(key: string): { id: string; at: string } | undefined {
    return this.signed.get(key);
  }

  /** The recorded state of a delivery id, or undefined when it has not been seen (recently). */
  statusOf(id: string): DeliveryStatus | undefined {
    return this.statuses.get(id);
  }

  /** Deliveries recorded as received that were neither forwarded nor given up (e.g. after a crash). */
  pending(): ReceivedRecord[] {
    return this.pendingRecords.values();
  }

  /**
   * Appends records; resolves once they are on disk. The in-memory state (statusOf, lastSeq,
   * signedBy) changes only then: a record that could not be written is not remembered. Records
   * appended later are written after these, in order.
   */
  append(...records: JournalRecord[]): Promise<void> {
    const batch = (this.next ??= new Batch());
    batch.add(records);
    this.writing ??= this.drain();
    return batch.written;
  }

  private async drain(): Promise<void> {
    await Promise.resolve(); // let `append` store this promise before the loop can finish
    while (this.next) {
      const batch = this.next;
      this.next = undefined;
      // The resume point as of this batch (records appended while it is written are not in it).
      let seq = this.lastSeq;
      for (const r of batch.records) {
        if (r.t === 'position') seq = r.seq;
        else if (r.t === 'received' && r.seq !== undefined && r.seq > (seq ?? -1)) seq = r.seq;
      }
      try {
        let data = Buffer.from(batch.text);
        const size = this.handle ? (this.size ??= fstatSync(this.handle.fd).size) : undefined;
        if (size && size + data.length > this.options.maxFileBytes) {
          await this.rotate();
          // Each file holds the resume point, so that it survives when old files are removed; it
          // goes after the batch, so that a write cut short never leaves it without the records it counts.
          if (seq !== undefined) {
            const position: PositionRecord = { t: 'position', at: new Date().toISOString(), seq };
            data = Buffer.concat([data, Buffer.from(`${JSON.stringify(position)}\n`)]);
          }
        }
        await this.writeOut(data);
        for (const r of batch.records) this.apply(r);
        batch.done();
      } catch (err) {
        // ENOSPC, EIO, EROFS: nothing of the batch counts; what it wrote is covered by the next write.
        batch.fail(err);
      }
      // No wait for more records here: those that arrived during this write go together in the
      // next (a wait of 1 ms on a busy machine held every write for a scheduler tick or more:
      // BENCHMARKS.md, listen).
    }
    this.writing = undefined;
  }

  /**
   * Appends `data` (O_APPEND: after any line a `resend` appended meanwhile, never over it), on disk
   * when it resolves. A write that fails leaves the file as it was when it can (a full disk: its space
   * given back); else what it left of a line is ended by a newline before the next records.
   */
  private async writeOut(data: Buffer): Promise<void> {
    if (!this.handle) throw new Error('The journal is closed.');
    const bytes = this.torn ? Buffer.concat([Buffer.from('\n'), data]) : data;
    const length = (this.size ??= fstatSync(this.handle.fd).size);
    const written = await writeAll(this.handle, bytes);
    if (written.error === undefined) {
      this.torn = false;
      this.size = length + bytes.length;
      return;
    }
    this.size = undefined; // read again before the next write
    const whole = written.bytes === bytes.length;
    if (fstatSync(this.handle.fd).size === length + written.bytes) {
      // Nobody else wrote meanwhile: back to as it was, or (the records whole) kept as written.
      const keep = whole ? length + written.bytes : length;
      const kept = await this.handle.truncate(keep).then(
        () => true,
        () => false,
      );
      if (kept && whole) {
        this.torn = false;
        return;
      }
      if (kept) throw written.error;
    }
    if (written.bytes > 0) this.torn = true;
    throw written.error;
  }

  private async rotate(): Promise<void> {
    await this.closeFile();
    this.fileNo += 1;
    await this.openFile();
    this.refusedBytes = 0;
    this.torn = false;
    const doomed = (await journalFiles(this.dir)).filter((n) => n <= this.fileNo - this.options.keepFiles);
    // A delivery not yet forwarded, or failed (for `resend`), moves to the new file before its file goes.
    const open = (id: string) => ['received', 'failed'].includes(this.statuses.get(id) ?? '');
    let carried = '';
    for (const n of doomed) carried += await linesToCarry(fileName(this.dir, n), open);
    if (carried) await this.writeOut(Buffer.from(carried));
    for (const n of doomed) removeSync(fileName(this.dir, n));
  }

  /**
   * Whether a refused delivery of `bytes` is journaled: a sample of REFUSED_BYTES per file, so that
   * what is refused never pushes out what was accepted; the rest are counted (`refusedNotKept`).
   */
  keepRefused(bytes: number): boolean {
    if (this.refusedBytes + bytes > REFUSED_BYTES) {
      this.refusedNotKept += 1;
      return false;
    }
    this.refusedBytes += bytes;
    return true;
  }

  /** Waits for pending writes and closes the file. */
  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await this.closeFile();
  }

  private async closeFile(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.size = undefined;
    await handle?.close();
  }
}
