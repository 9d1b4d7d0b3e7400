import { closeSync, constants, fdatasync } from 'node:fs';
import { openNoFollowSync } from '../../../platform/fs-atomic.js';
import { join } from 'node:path';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { DATABASE_FILE } from './database.js';
import { RowCache } from './row-cache.js';

/** One transaction shared by the requests that wrote in the same turn of the event loop. */
interface Group {
  id: number;
  done: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** A long transaction's group: committed when it ends, not at the end of a turn. */
  held?: boolean;
}

function newGroup(id: number): Group {
  const group = { id } as Group;
  group.done = new Promise<void>((resolve, reject) => Object.assign(group, { resolve, reject }));
  group.done.catch(() => {}); // a group nobody waits for (background work) fails quietly here
  return group;
}

/** `text` prepared on `db`, once (kept in `kept`). */
function prepared(db: DatabaseSync, kept: Map<string, StatementSync>, text: string): StatementSync {
  let s = kept.get(text);
  if (s === undefined) {
    s = db.prepare(text);
    kept.set(text, s);
  }
  return s;
}

/** A long transaction (an advance of the business clock) under way. */
interface Long {
  group: Group;
  /** What the readers' cache held when it began: the last committed state. */
  committed: RowCache;
  /** Writes made outside its steps, applied once it ends. */
  deferred: Array<() => void>;
  /** Resolves once it has ended and the deferred writes are in a group of their own. */
  finished: Promise<void>;
  finish: () => void;
}

/**
 * The transactions of the sandbox's database (docs/DECISIONS.md, durability). Every change goes
 * through {@link inGroup}, which opens a transaction if none is open; the transaction commits on the
 * next turn of the event loop, so the requests of one turn share one fsync (group commit). A request
 * answers only after {@link settled}: a 2xx means committed, and a group that fails (a full disk) is
 * rolled back whole and fails every request in it.
 *
 * A long transaction ({@link long}: the business clock's advance) writes in steps that yield to the
 * event loop, all of them in one transaction on the writer connection. Between its steps, reads go
 * to a second, read-only connection (WAL: it sees the last committed state) with the cache of that
 * state, and writes wait: they are kept and applied once it has ended, committed or rolled back.
 */
export abstract class GroupCommit {
  private readonly statements = new Map<string, StatementSync>();
  private readerStatements = new Map<string, StatementSync>();
  /** The read-only connection, open while a long transaction runs. */
  private reader: DatabaseSync | undefined;
  /** The open transaction: every change since it began, committed together (group commit). */
  private group: Group | undefined;
  /** Committed groups waiting for the fsync of the write-ahead log. */
  private unsynced: Group[] = [];
  private syncing = false;
  private walFd: number | undefined;
  private lastGroupId = 0;
  /** Groups not yet on disk, and the latest that failed. */
  private readonly unsettled = new Set<Group>();
  private readonly failed: Group[] = [];
  private longRun: Long | undefined;
  /** True while a step of the long transaction runs (it reads and writes its own state). */
  private stepping = false;
  private writerCache = new RowCache();

  constructor(
    /** The writer connection. */
    readonly db: DatabaseSync,
    /** Opens a read-only connection to the same database. */
    private readonly openReader: () => DatabaseSync,
    /** The folder's lock (database.ts, takeLock), released at close. */
    private readonly lock: DatabaseSync,
    readonly dataDir: string,
    private readonly onCommitError: (error: unknown) => void,
  ) {}

  /** True between the steps of a long transaction: reads see the last committed state. */
  private get outside(): boolean {
    return this.longRun !== undefined && !this.stepping;
  }

  /**
   * The rows most requests read (see {@link RowCache}); between a long transaction's steps, the
   * cache of the last committed state.
   */
  get cache(): RowCache {
    return this.outside ? this.longRun!.committed : this.writerCache;
  }

  /** The connection reads go to now: the writer's, or between a long transaction's steps the reader's. */
  get readDb(): DatabaseSync {
    return this.outside ? this.reader! : this.db;
  }

  /** A prepared statement on the connection reads go to now (kept: each text is prepared once per connection). */
  sql(text: string): StatementSync {
    if (this.outside) return prepared(this.reader!, this.readerStatements, text);
    return prepared(this.db, this.statements, text);
  }

  /** Resolves when no long transaction runs (a writer that must read its own writes waits for this). */
  async idle(): Promise<void> {
    while (this.longRun !== undefined) await this.longRun.finished;
  }

  /** While a long transaction runs: the promise of its end (writes wait for it). */
  get busy(): Promise<void> | undefined {
    return this.longRun?.finished;
  }

  /** The first group a request that starts now can write to: pass it to {@link settled} when it ends. */
  mark(): number {
    return this.group?.id ?? this.lastGroupId + 1;
  }

  /**
   * Resolves once every group from `from` on (a request's {@link mark}) that exists now is committed
   * and on disk; rejects if one of them was rolled back (a full disk), so no 2xx ever covers it. A
   * write kept during a long transaction is waited for too.
   */
  async settled(from: number): Promise<void> {
    if (this.outside) await this.idle();
    await Promise.all([...this.unsettled, ...this.failed].filter((g) => g.id >= from).map((g) => g.done));
  }

  /** Runs one statement inside the open group's transaction, like a change (billing's writes). */
  execute(text: string, ...params: SQLInputValue[]): void {
    this.inGroup(() => this.sql(text).run(...params));
  }

  /** True while {@link atomic} runs (a nested one joins it). */
  private inAtomic = false;

  /**
   * Runs `write` (synchronous) so that what it changes stays all or nothing: in a savepoint of the
   * open group, rolled back to if `write` throws (a request that fails changes nothing; the other
   * requests of the group keep their changes). Between a long transaction's steps, the writes it kept
   * for afterwards are dropped instead.
   */
  atomic<T>(write: () => T): T {
    if (this.inAtomic) return write();
    if (this.outside) {
      const deferred = this.longRun!.deferred;
      const at = deferred.length;
      try {
        return write();
      } catch (error) {
        deferred.length = at;
        throw error;
      }
    }
    this.inGroup(() => this.db.exec('SAVEPOINT request'));
    const group = this.group;
    this.inAtomic = true;
    try {
      const result = write();
      if (this.group === group) this.db.exec('RELEASE request');
      return result;
    } catch (error) {
      // A failed statement already rolled the whole group back (fail); otherwise only this write.
      if (this.group === group) {
        this.db.exec('ROLLBACK TO request; RELEASE request');
        this.writerCache.clear();
      }
      throw error;
    } finally {
      this.inAtomic = false;
    }
  }

  protected inGroup(write: () => void): void {
    if (this.outside) {
      this.longRun!.deferred.push(() => this.inGroup(write));
      return;
    }
    let group = this.group;
    if (group === undefined) {
      // A long transaction that failed mid-way writes nothing more (nor in a group of its own).
      if (this.longRun !== undefined) throw new Error('The long transaction was rolled back.');
      this.db.exec('BEGIN IMMEDIATE');
      group = this.group = newGroup(++this.lastGroupId);
      this.unsettled.add(group);
      const opened = group;
      // At the end of this turn; while an fsync runs, once it is done (see syncWal).
      setImmediate(() => {
        if (!this.syncing) this.flush(opened);
      });
    }
    try {
      write();
    } catch (error) {
      this.fail(group, error);
      throw error;
    }
  }

  /**
   * Runs `work` as one transaction of its own whose steps (`step(fn)`: `fn` runs at once, then the
   * event loop turns) let other requests read the last committed state meanwhile. It commits when
   * `work` ends and is on disk when this resolves; if `work` throws, or the commit or its fsync fails,
   * nothing of it stays and this rejects. Writes made by others meanwhile are applied after it.
   */
  async long<T>(work: (step: <R>(fn: () => R) => Promise<R>) => Promise<T>): Promise<T> {
    await this.idle();
    // What is open now is someone else's: committed on its own, before.
    if (this.group !== undefined) this.flush(this.group);
    // The writer gives up the database's exclusive lock (at the end of its next transaction) so
    // that a reader may read beside it; it takes it again afterwards.
    this.db.exec('PRAGMA locking_mode = NORMAL; BEGIN IMMEDIATE; COMMIT');
    this.reader = this.openReader();
    this.readerStatements = new Map();
    this.db.exec('BEGIN IMMEDIATE');
    const group = (this.group = newGroup(++this.lastGroupId));
    group.held = true;
    this.unsettled.add(group);
    let finish = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    this.longRun = { group, committed: this.writerCache, deferred: [], finished, finish };
    this.writerCache = new RowCache();
    const step = async <R>(fn: () => R): Promise<R> => {
      this.stepping = true;
      try {
        return fn();
      } finally {
        this.stepping = false;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    let result: T;
    try {
      this.stepping = true; // the setup of `work` until its first await is a step too
      const running = work(step);
      this.stepping = false;
      result = await running;
      group.held = false;
      this.flush(group);
    } catch (error) {
      this.stepping = false;
      this.fail(group, error);
      // Its caller hears the error itself: no request that began meanwhile fails with it.
      const at = this.failed.indexOf(group);
      if (at >= 0) this.failed.splice(at, 1);
    } finally {
      this.endLong();
    }
    await group.done;
    return result!;
  }

  private endLong(): void {
    const run = this.longRun!;
    this.longRun = undefined;
    this.reader?.close();
    this.reader = undefined;
    this.db.exec('PRAGMA locking_mode = EXCLUSIVE'); // taken again by the next transaction
    // What either cache holds may be stale now (a rollback, the writes kept meanwhile): start afresh.
    this.writerCache = new RowCache();
    for (const write of run.deferred) {
      try {
        write();
      } catch {
        // Its group failed and was rolled back; whoever waits on it hears so.
      }
    }
    run.finish();
  }

  /**
   * Commits the group, then makes it durable: the write-ahead log is fsync'd off the event loop
   * before any request of the group is answered. A group opened while an fsync runs stays open until
   * that fsync is done, so everything written meanwhile shares one commit and the next fsync (fewer,
   * larger commits: each page is written to the log once, and SQLite's checkpoints, which block the
   * event loop, come less often). On failure the group is rolled back and every request in it fails.
   */
  private flush(group: Group): void {
    if (this.group !== group || group.held) return;
    this.group = undefined;
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      this.group = group;
      this.fail(group, error);
      this.onCommitError(error);
      return;
    }
    this.unsynced.push(group);
    if (!this.syncing) void this.syncWal();
  }

  private async syncWal(): Promise<void> {
    this.syncing = true;
    while (this.unsynced.length > 0) {
      const groups = this.unsynced.splice(0);
      try {
        this.walFd ??= openNoFollowSync(
          join(this.dataDir, `${DATABASE_FILE}-wal`),
          constants.O_RDONLY,
          'data_damaged',
        );
        await new Promise<void>((resolve, reject) =>
          fdatasync(this.walFd!, (e) => (e ? reject(e) : resolve())),
        );
        for (const g of groups) {
          this.unsettled.delete(g);
          g.resolve();
        }
      } catch (error) {
        for (const g of groups) this.failGroup(g, error);
        this.onCommitError(error);
      }
      if (this.group !== undefined) this.flush(this.group);
    }
    this.syncing = false;
  }

  private fail(group: Group, error: unknown): void {
    if (this.group !== group) return;
    this.group = undefined;
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // SQLite may have rolled back by itself (a full disk).
    }
    this.writerCache.clear();
    this.failGroup(group, error);
  }

  /** A failed group is remembered a while, so that a request still running learns of it. */
  private failGroup(group: Group, error: unknown): void {
    this.unsettled.delete(group);
    this.failed.push(group);
    if (this.failed.length > 100) this.failed.shift();
    group.reject(error);
  }

  /**
   * Commits the open group now rather than at the end of the turn, so that its fsync runs while the
   * caller still works. Its requests still answer only once it is on disk.
   */
  commitNow(): void {
    if (this.group !== undefined && !this.syncing) this.flush(this.group);
  }

  /**
   * Writes a consistent copy of the committed database to `path` (SQLite's `VACUUM INTO`, through
   * this connection: never a copy of the files under it), between two transactions.
   */
  async snapshotInto(path: string): Promise<void> {
    for (;;) {
      await this.idle();
      if (this.group === undefined && this.longRun === undefined) break;
      this.commitNow();
      await this.sync().catch(() => undefined);
    }
    this.db.prepare('VACUUM INTO ?').run(path);
  }

  /** Resolves once every change so far is committed and on disk; rejects if its group failed. */
  sync(): Promise<void> {
    return this.settled(this.group?.id ?? this.lastGroupId);
  }

  /** Commits what is open, waits until it is durable, and closes the database. */
  async close(): Promise<void> {
    try {
      await this.idle();
      if (this.group) this.flush(this.group);
      while (this.syncing) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      if (this.walFd !== undefined) closeSync(this.walFd);
      this.reader?.close();
      this.db.close();
      this.lock.close();
    }
  }
}
