/** How many rows the cache keeps before it starts again empty. */
const KEPT_ROWS = 50_000;

/** The kinds of rows kept: a subscription, a plan (as billing and as the routes read it), a payment behaviour, a user, an app, a key, a token, a `meta` value. */
export type CachedKind =
  'sub' | 'plan' | 'planRecord' | 'behaviour' | 'user' | 'app' | 'key' | 'token' | 'meta';

/**
 * A read-through cache of the rows most requests read (a key's or token's user and app, a
 * subscription, a plan, a payment behaviour), for the one process that writes the database (it holds
 * an exclusive lock): every write of a cached row updates or forgets it in the same turn, and a
 * rolled-back group forgets everything. Filled lazily, so start-up stays independent of the data size.
 * A row is found by its kind, its app ('' for rows of no app) and its id: maps of maps, so that a
 * lookup never builds a key string (a year of renewals looks up a million).
 */
export class RowCache {
  private readonly rows = new Map<CachedKind, Map<string, Map<string, unknown>>>();
  private size = 0;

  /** The row, loaded (and kept, `undefined` included) on first use. */
  read<T>(kind: CachedKind, appId: string, id: string, load: () => T): T {
    const ids = this.rows.get(kind)?.get(appId);
    if (ids?.has(id)) return ids.get(id) as T;
    const value = load();
    this.put(kind, appId, id, value);
    return value;
  }

  /** The row if it is kept (`undefined` when it is not, or is known to be absent). */
  peek<T>(kind: CachedKind, appId: string, id: string): T | undefined {
    return this.rows.get(kind)?.get(appId)?.get(id) as T | undefined;
  }

  /** Keeps `value` as the row (after it was written). */
  put(kind: CachedKind, appId: string, id: string, value: unknown): void {
    if (this.size >= KEPT_ROWS) this.clear();
    let apps = this.rows.get(kind);
    if (apps === undefined) this.rows.set(kind, (apps = new Map()));
    let ids = apps.get(appId);
    if (ids === undefined) apps.set(appId, (ids = new Map()));
    if (!ids.has(id)) this.size++;
    ids.set(id, value);
  }

  forget(kind: CachedKind, appId: string, id: string): void {
    if (this.rows.get(kind)?.get(appId)?.delete(id)) this.size--;
  }

  clear(): void {
    this.rows.clear();
    this.size = 0;
  }
}
