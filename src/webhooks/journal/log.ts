import { constants as fsConstants, fstatSync, statfsSync } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
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

/** The longest a write waits for the records of the callers its last write released. */
const GATHER_MS = 1;

/** How many delivery ids are remembered for de-duplication (the newest ones). */
const INDEX_CAP = 20_000;

/**
 * Flags that make each write reach the disk before it returns (`O_DSYNC`): one system call per group
 * commit instead of write + fdatasync. Where the platform has no `O_DSYNC` (Windows), an explicit
 * datasync after each write. Not O_APPEND: the listener writes at its own position (see `writeOut`).
 */
const WRITE_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | (DSYNC ?? 0) | NOFOLLOW;

/**
 * Room made at the end of the file at once, as newlines (empty lines, which readers skip): a record
 * written over them changes no file size, so its sync is the data alone, not a file-system journal
 * commit shared with every other writer on the disk (about half the time per sync on a busy disk).
 */
const RESERVE_BYTES = 256 * 1024;
/** The most bytes of refused deliveries (bad signature, cross-site) one journal file keeps. */
const REFUSED_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

/** Records appended while a write is in progress: written together, settled together. */
class Batch {
  readonly records: JournalRecord[] = [];
  text = '';
  appends = 0;
  done!: () => void;
  fail!: (err: unknown) => void;
  /** Settles when the batch is on disk (or failed): one promise for all its callers. */
  readonly written = new Promise<void>((resolve, reject) => {
    this.done = resolve;
    this.fail = reject;
  });

  add(records: JournalRecord[]): void {
    this.appends += 1;
    for (const r of records) {
      this.records.push(r);
      this.text += `${JSON.stringify(r)}\n`;
    }
  }
}

/**
 * The delivery journal: append-only JSON Lines, each write on disk (O_DSYNC, or fdatasync) before it
 * resolves, records that arrive meanwhile sharing the next write (group commit), written over room
 * reserved ahead as newlines; rotated at `maxFileBytes` keeping `keepFiles` files. Opening it drops a
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
  /** The same file, appending: what grows the file goes after anything another writer appended. */
  private appender: FileHandle | undefined;
  private fileNo = 1;
  /** Bytes of refused deliveries in the current file, and how many were refused and not journaled. */
  private refusedBytes = 0;
  refusedNotKept = 0;
  /** Where the next record goes: the end of what was written. */
  private size = 0;
  /** The file's length: beyond `size` it holds newlines (or whatever a failed write left, to `dirty`). */
  private allocated = 0;
  /** A failed write may have left part of its records up to here: the next write covers them. */
  private dirty = 0;
  /** The records to write next, their lines, and the promise their callers wait on. */
  private next: Batch | undefined;
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
      let bytes = await readJournalFile(path);
      if (n === files.at(-1)) {
        // The written part ends at the last line; newlines after it are reserved room.
        let end = bytes.length;
        while (end > 0 && bytes[end - 1] === NEWLINE) end--;
        const start = bytes.lastIndexOf(NEWLINE, end - 1) + 1;
        if (end > 0 && (end === bytes.length || !parsesAsRecord(bytes.subarray(start, end)))) {
          // A crash in the middle of a write leaves part of a line: drop only that line.
          options.warn?.(
            `The journal ${path} ended with a partly written line (a crash during a write); it was removed.`,
          );
          bytes = bytes.subarray(0, start);
          await truncateJournalFile(path, start);
          log.size = start;
        } else log.size = end === 0 ? 0 : end + 1;
        log.allocated = bytes.length;
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
    this.handle = await open(path, WRITE_FLAGS, 0o600).catch(journalOpenError(path));
    this.appender = await open(path, WRITE_FLAGS | fsConstants.O_APPEND, 0o600).catch(journalOpenError(path));
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
      const signature = this.pendingRecords.get(r.id)?.headers[HEADER.signature];
      this.pendingRecords.delete(r.id);
      if (r.status !== 'refused' || !signature) return;
      // Bytes that did not verify prove nothing about later deliveries.
      const key = signatureKey(signature);
      if (this.signed.get(key)?.id === r.id) this.signed.delete(key);
    }
  }

  /** The verified delivery journaled with the body this signature header signs, and when it arrived. */
  signedBy(signature: string): { id: string; at: string } | undefined {
    return this.signed.get(signatureKey(signature));
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
    this.queued?.();
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
        if (this.size > 0 && this.size + data.length > this.options.maxFileBytes) {
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
      // Under load the callers of this batch come back at once with the next records (a sender's
      // next delivery, the outcome of a forward): a moment's wait lets them share the next sync
      // instead of each waiting for one in progress and then its own.
      if (GATHER_MS > 0 && this.appended() < batch.appends) await this.gather(batch.appends);
    }
    this.writing = undefined;
  }

  /**
   * Writes `data` at the end of what was written, on disk when it resolves. Into the room reserved
   * (newlines, covering what a failed write left) when it fits; else appended (O_APPEND: after any
   * line a `resend` appended meanwhile, never over it) together with the next RESERVE_BYTES of room.
   */
  private async writeOut(data: Buffer): Promise<void> {
    if (!this.handle || !this.appender) throw new Error('The journal is closed.');
    const length = fstatSync(this.handle.fd).size;
    // Someone appended: what follows goes after it.
    if (length !== this.allocated) this.size = this.allocated = this.dirty = length;
    const cover = Math.max(0, this.dirty - this.size - data.length);
    if (this.size + data.length + cover <= this.allocated) {
      const bytes = cover > 0 ? Buffer.concat([data, Buffer.alloc(cover, NEWLINE)]) : data;
      const written = await writeAll(this.handle, bytes, this.size);
      if (written.error !== undefined) {
        this.dirty = Math.max(this.dirty, this.size + bytes.length);
        throw written.error;
      }
      this.size += data.length;
      this.dirty = 0;
      return;
    }
    // Part of a line a failed write left at the end is cut off by a newline.
    const lead = this.dirty > this.size ? 1 : 0;
    const bytes = Buffer.alloc(lead + data.length + this.room(), NEWLINE);
    data.copy(bytes, lead);
    const written = await writeAll(this.appender, bytes);
    let now = fstatSync(this.handle.fd).size;
    const alone = now === length + written.bytes;
    const whole = written.bytes >= lead + data.length;
    if (written.error !== undefined && alone) {
      // A full disk: give its space back, keeping the records when they were written whole.
      const keep = whole ? length + lead + data.length : length;
      now = await this.handle.truncate(keep).then(
        () => keep,
        () => now,
      );
    }
    if (!whole) {
      this.allocated = now;
      if (now > length) this.dirty = now;
      throw written.error;
    }
    this.size = alone ? length + lead + data.length : now;
    this.allocated = now;
    this.dirty = 0;
  }

  /**
   * RESERVE_BYTES of room, or none on a disk with less than 64 times that free: the room must never
   * be what fills a disk, not even for a moment (another program's write would fail meanwhile).
   */
  private room(): number {
    try {
      const disk = statfsSync(this.dir);
      return disk.bavail * disk.bsize >= 64 * RESERVE_BYTES ? RESERVE_BYTES : 0;
    } catch {
      return 0;
    }
  }

  /** How many appends wait for the next write. */
  private appended(): number {
    return this.next?.appends ?? 0;
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
        if (this.appended() >= count) done();
      };
    });
  }

  private async rotate(): Promise<void> {
    await this.closeFile();
    this.fileNo += 1;
    await this.openFile();
    this.size = this.allocated = this.dirty = this.refusedBytes = 0;
    const doomed = (await journalFiles(this.dir)).filter((n) => n <= this.fileNo - this.options.keepFiles);
    // A delivery not yet forwarded, or failed (for `resend`), moves to the new file before its file goes.
    const open = (id: string) => ['received', 'failed'].includes(this.statuses.get(id) ?? '');
    let carried = '';
    for (const n of doomed) carried += await linesToCarry(fileName(this.dir, n), open);
    if (carried) await this.writeOut(Buffer.from(carried));
    for (const n of doomed) await rm(fileName(this.dir, n), { force: true });
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

  /** Closes the file, first giving back the room nobody wrote after (a `resend` may have). */
  private async closeFile(): Promise<void> {
    const { handle, appender } = this;
    this.handle = this.appender = undefined;
    if (!handle) return;
    try {
      if (fstatSync(handle.fd).size === this.allocated) await handle.truncate(this.size);
    } catch {
      // The room stays: empty lines, skipped by every reader.
    } finally {
      await handle.close();
      await appender?.close();
    }
  }
}
