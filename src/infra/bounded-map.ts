/**
 * A Map that keeps its newest `limit` entries: setting a key makes it the newest, and the oldest
 * goes once there are more. For memos and caches that must not grow with their input.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    // One key in, at most one out.
    if (this.size > this.limit) super.delete(this.keys().next().value as K);
    return this;
  }
}
