/**
 * A Map that keeps its newest `limit` entries: setting a key makes it the newest, and the oldest
 * goes once there are more. For memos and caches that must not grow with their input.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  /**
   * Walks the keys from the oldest, kept between calls. A fresh `keys()` per eviction starts at
   * the table's first slot and steps over every entry deleted since V8 last compacted the table:
   * with 100,000 entries that made each set of a full map cost about 24 µs instead of 2.
   * Every key it hands out is deleted at once, so the next one it hands out is the oldest left.
   */
  private oldest?: MapIterator<K>;

  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    // One key in, at most one out.
    if (this.size > this.limit) super.delete(this.nextOldest());
    return this;
  }

  private nextOldest(): K {
    this.oldest ??= this.keys();
    let next = this.oldest.next();
    if (next.done) {
      // Only after the map was emptied and filled again past the walk's end.
      this.oldest = this.keys();
      next = this.oldest.next();
    }
    return next.value as K;
  }
}
