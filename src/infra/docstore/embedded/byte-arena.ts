/**
 * Byte strings appended one after another into one buffer, read back in order as views of it.
 * Thousands of keys and values held until a transaction writes them are then one object to the
 * garbage collector, not thousands of buffers that each live long enough to be copied around.
 */
export class ByteArena {
  private bytes: Buffer;
  private length = 0;
  /** Where each item ends; an item starts where the one before it ends. */
  private readonly ends: number[] = [];

  constructor(initialBytes = 64 * 1024) {
    this.bytes = Buffer.allocUnsafe(initialBytes);
  }

  /**
   * Empties the arena to fill it again, keeping its buffer: a large buffer allocated per use
   * counts as external memory to V8, which collects garbage sooner the more of it is made.
   * Views handed out before must not be read after this.
   */
  clear(): void {
    this.length = 0;
    this.ends.length = 0;
  }

  add(item: Uint8Array): void {
    if (this.length + item.length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + item.length));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.bytes.set(item, this.length);
    this.length += item.length;
    this.ends.push(this.length);
  }

  /** The item at this index (in the order added): a view, valid while the arena is. */
  item(index: number): Buffer {
    const start = index === 0 ? 0 : (this.ends[index - 1] as number);
    return this.bytes.subarray(start, this.ends[index]);
  }
}
