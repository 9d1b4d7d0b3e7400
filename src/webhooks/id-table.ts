/**
 * Values by delivery id, in the order they were first set: for tables that every delivery enters
 * and leaves (deliveries being taken, deliveries waiting for their outcome). A null-prototype
 * object, not a Map: V8 re-allocates a Map that churns every so many deletions, and with Maps here
 * listen's young-generation collections promoted 2.4 times the bytes and took 1.8 times as long
 * (BENCHMARKS.md, "listen").
 */
export class IdTable<V> {
  private readonly table: Record<string, V> = Object.create(null) as Record<string, V>;

  get(id: string): V | undefined {
    return this.table[key(id)];
  }

  set(id: string, value: V): void {
    this.table[key(id)] = value;
  }

  delete(id: string): void {
    delete this.table[key(id)];
  }

  /** The values, oldest first. */
  values(): V[] {
    return Object.values(this.table);
  }
}

/**
 * The property name of an id: the id itself (the same string at each lookup: V8 finds it without a
 * copy), but with a `#` before an id that begins with a digit or `#`. An id such as "42" would
 * otherwise be an array index, listed first; and no two ids share a name.
 */
function key(id: string): string {
  const c = id.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 35 ? `#${id}` : id;
}
