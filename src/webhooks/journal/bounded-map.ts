/**
 * A Map that forgets its oldest keys (in the order they were first set) past `cap`. The order is a
 * ring of keys: finding the oldest through the Map's own iterator would step over every entry
 * deleted before it, which grows with each one forgotten.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  private readonly order: K[] = [];
  private oldest = 0;

  constructor(private readonly cap: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  set(key: K, value: V): void {
    const size = this.map.size;
    this.map.set(key, value);
    if (this.map.size === size) return; // an update: the key keeps its place
    if (this.order.length < this.cap) this.order.push(key);
    else {
      this.map.delete(this.order[this.oldest]!);
      this.order[this.oldest] = key;
      this.oldest = (this.oldest + 1) % this.cap;
    }
  }
}
