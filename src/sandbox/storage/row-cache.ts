/** How many rows the cache keeps before it starts again empty. */
const KEPT_ROWS = 50_000;

/**
 * A read-through cache of the rows most requests read (a key's or token's user and app, a
 * subscription, a plan, a payment behaviour), for the one process that writes the database (it holds
 * an exclusive lock): every write of a cached row updates or forgets it in the same turn, and a
 * rolled-back group forgets everything. Filled lazily, so start-up stays independent of the data size.
 */
export class RowCache {
  private readonly rows = new Map<string, unknown>();

  /** The row under `key`, loaded (and kept, `undefined` included) on first use. */
  read<T>(key: string, load: () => T): T {
    if (this.rows.has(key)) return this.rows.get(key) as T;
    const value = load();
    this.put(key, value);
    return value;
  }

  /** The row under `key` if it is kept (`undefined` when it is not, or is known to be absent). */
  peek<T>(key: string): T | undefined {
    return this.rows.get(key) as T | undefined;
  }

  /** Keeps `value` as the row under `key` (after it was written). */
  put(key: string, value: unknown): void {
    if (this.rows.size >= KEPT_ROWS && !this.rows.has(key)) this.rows.clear();
    this.rows.set(key, value);
  }

  forget(key: string): void {
    this.rows.delete(key);
  }

  clear(): void {
    this.rows.clear();
  }
}

/** The cache keys of rows more than one room writes (the ledger's changes, billing's statements). */
export const cacheKey = {
  subscription: (appId: string, userId: string) => `s ${appId} ${userId}`,
  plan: (appId: string, planId: string) => `p ${appId} ${planId}`,
  planRecord: (appId: string, planId: string) => `P ${appId} ${planId}`,
  behaviour: (appId: string, userId: string) => `b ${appId} ${userId}`,
};
