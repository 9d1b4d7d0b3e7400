/**
 * Values by delivery id, in the order they were first set: for tables that every delivery enters
 * and leaves (deliveries being taken, deliveries waiting for their outcome). A null-prototype
 * object, not a Map: V8 re-allocates a Map that churns every so many deletions, and with Maps here
 * listen's young-generation collections promoted 2.4 times the bytes and took 1.8 times as long
 * (BENCHMARKS.md, "listen").
 */
export class IdTable<V> {
  private readonly table: Record<string, V> = Object.create(null) as Record<string, V>;

  // Each key gets a prefix: an id such as "42" would otherwise be an array index, listed first.
  get(id: string): V | undefined {
    return this.table[`#${id}`];
  }

  set(id: string, value: V): void {
    this.table[`#${id}`] = value;
  }

  delete(id: string): void {
    delete this.table[`#${id}`];
  }

  /** The values, oldest first. */
  values(): V[] {
    return Object.values(this.table);
  }
}
