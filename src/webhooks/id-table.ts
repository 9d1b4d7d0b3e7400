/**
 * Values by delivery id, in the order they were first set: for tables that every delivery enters
 * and leaves (deliveries being taken, deliveries waiting for their outcome). A null-prototype
 * object, not a Map: with a Map that churns, the deliveries in flight were kept through V8's
 * young-generation collections and then promoted, 2.3 times the bytes per collection and twice
 * the collector's time (BENCHMARKS.md, "listen").
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
