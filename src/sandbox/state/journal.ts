import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Change } from './records.js';

/** Files are the owner's alone, whatever the umask (docs/DECISIONS.md §2, durability). */
export const FILE_MODE = 0o600;
/** The log of generation `gen` in `dir`. */
export const logPath = (dir: string, gen: number): string => join(dir, `log-${gen}.jsonl`);
/** Matches a log file name and captures its generation. */
export const LOG_NAME = /^log-(\d+)\.jsonl$/;

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Writes a new snapshot covering everything before log generation `gen`, then drops older logs. */
export type Compactor = (gen: number) => Promise<void>;

/**
 * The append-only change log. `append` queues a change; `sync` resolves once every change queued so
 * far is written and fsync'd. Changes queued in the same turn of the event loop share one write and
 * one fsync (group commit). Past `compactAt()` bytes the log rolls over to the next generation and
 * `compact` writes the snapshot in the background.
 */
export class Journal {
  private queued: string[] = [];
  private appended = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private running: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private gen: number,
    private handle: FileHandle,
    private offset: number,
    private readonly compactAt: () => number,
    private readonly compact: Compactor,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Opens generation `gen` for appending at `offset` (its valid length). */
  static async open(
    dir: string,
    gen: number,
    offset: number,
    compactAt: () => number,
    compact: Compactor,
    onError: (error: unknown) => void,
  ): Promise<Journal> {
    const handle = await open(logPath(dir, gen), 'a', FILE_MODE);
    return new Journal(dir, gen, handle, offset, compactAt, compact, onError);
  }

  /** Queues one change; it is written with the next group commit. */
  append(change: Change): void {
    this.queued.push(JSON.stringify(change) + '\n');
    this.appended++;
    this.kick();
  }

  /** Resolves when every change appended so far is on disk. */
  sync(): Promise<void> {
    if (this.durable >= this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.appended, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    // setImmediate gathers every change of this turn into one write and one fsync.
    this.running ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.run())
      .then((ok) => {
        this.running = undefined;
        // After a failed write the batch waits for the next sync instead of retrying in a loop.
        if (ok && this.queued.length > 0) this.kick();
      });
  }

  private async run(): Promise<boolean> {
    while (this.queued.length > 0) {
      const lines = this.queued;
      this.queued = [];
      const upTo = this.appended;
      const bytes = Buffer.from(lines.join(''), 'utf8');
      try {
        await this.handle.write(bytes);
        await this.handle.datasync();
      } catch (error) {
        // Undo a partial write so that the next record never glues to a torn one; keep the batch
        // queued so that memory and disk agree again once the disk has room.
        await this.handle.truncate(this.offset).catch(() => undefined);
        this.queued = [...lines, ...this.queued];
        this.onError(error);
        for (const w of this.waiters.splice(0)) w.reject(error);
        return false;
      }
      this.offset += bytes.length;
      this.durable = upTo;
      this.waiters = this.waiters.filter((w) => {
        if (w.upTo > upTo) return true;
        w.resolve();
        return false;
      });
      if (this.offset > this.compactAt() && this.compacting === undefined) await this.rollOver();
    }
    return true;
  }

  /** Starts the next generation; the snapshot of everything before it is written in the background. */
  private async rollOver(): Promise<void> {
    const next = this.gen + 1;
    let handle: FileHandle;
    try {
      handle = await open(logPath(this.dir, next), 'a', FILE_MODE);
    } catch (error) {
      this.onError(error);
      return;
    }
    // The snapshot is taken now; every change still queued goes to the next generation as well
    // (applying a change twice is harmless).
    const compaction = this.compact(next);
    await this.handle.close().catch(this.onError);
    this.handle = handle;
    this.gen = next;
    this.offset = 0;
    this.compacting = compaction.catch(this.onError).finally(() => (this.compacting = undefined));
  }

  /** Writes what is queued, waits for a running compaction, and closes the file. */
  async close(): Promise<void> {
    await this.sync().catch(() => undefined);
    await this.running;
    await this.compacting;
    await this.handle.close();
  }
}
