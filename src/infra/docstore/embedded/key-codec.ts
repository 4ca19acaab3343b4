import { Rank, typeRank } from './value-order.js';

/**
 * Binary LMDB keys whose byte order equals compareValues order. Every value is written as its type
 * rank then a self-delimiting payload, so encodings are prefix-free: concatenated fields compare
 * field by field, and complementing a field's bytes exactly reverses its order (descending keys).
 */

/** LMDB's key size limit with the default page size. */
const MAX_KEY_BYTES = 1978;
/** Strings up to this length are tried as ASCII first (see writeAscii). */
const SHORT_STRING = 128;

export class KeyBuilder {
  /** Written bytes are [0, length); the buffer grows as needed. */
  private bytes: Buffer;
  private length: number;

  /**
   * `scratch`: a buffer to build in, for a key read (copied or written) before the next one is
   * built in it; a bulk insert encodes hundreds of thousands of keys, each a piece of Node's pool
   * otherwise, made only to be copied.
   */
  constructor(prefix?: Uint8Array, scratch?: Buffer) {
    const size = prefix?.length ?? 0;
    // Room for a typical index key (a few ids and numbers) without growing: small buffers come
    // from Node's shared pool, and growing meant a second buffer and a copy for most keys.
    this.bytes = scratch !== undefined && scratch.length >= size + 256 ? scratch : Buffer.allocUnsafe(size + 256);
    if (prefix) this.bytes.set(prefix, 0);
    this.length = size;
  }

  string(s: string): this {
    this.writeString(s);
    return this;
  }

  /** Unescaped UTF-8, only valid as the last part of a key. */
  tail(s: string): this {
    if (this.writeAscii(s)) return this;
    this.reserveUtf8(s, 0);
    this.length += this.bytes.write(s, this.length, 'utf8');
    return this;
  }

  value(v: unknown, direction: 1 | -1 = 1): this {
    const start = this.length;
    this.writeValue(v);
    // Complemented bytes sort in exactly the reverse order.
    if (direction === -1) for (let i = start; i < this.length; i++) this.bytes[i] = (this.bytes[i] as number) ^ 0xff;
    return this;
  }

  clone(): KeyBuilder {
    return new KeyBuilder(this.bytes.subarray(0, this.length));
  }

  /** Bytes written so far. */
  get size(): number {
    return this.length;
  }

  /** The key so far. Later writes to this builder never change it. */
  build(): Buffer {
    if (this.length > MAX_KEY_BYTES) {
      throw new RangeError(`index key of ${this.length} bytes exceeds the ${MAX_KEY_BYTES}-byte limit`);
    }
    return this.bytes.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + extra));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  /** Room for `s` in UTF-8 plus `extra`: the cheap upper bound when it fits, else the exact size. */
  private reserveUtf8(s: string, extra: number): void {
    if (this.length + s.length * 3 + extra <= this.bytes.length) return;
    this.reserve(Buffer.byteLength(s, 'utf8') + extra);
  }

  private push(b: number): void {
    this.reserve(1);
    this.bytes[this.length++] = b;
  }

  private writeValue(v: unknown): void {
    const rank = typeRank(v);
    this.push(rank);
    this.writePayload(v, rank);
  }

  private writePayload(v: unknown, rank: Rank): void {
    switch (rank) {
      case Rank.number:
        this.writeNumber(Number(v));
        break;
      case Rank.string:
        this.writeString(v as string);
        break;
      case Rank.object:
        // Element = type, name, value: the order compareObjects uses.
        for (const [name, x] of Object.entries(v as Record<string, unknown>)) {
          const xr = typeRank(x);
          this.push(1);
          this.push(xr);
          this.writeString(name);
          this.writePayload(x, xr);
        }
        this.push(0);
        break;
      case Rank.array:
        for (const x of v as unknown[]) {
          this.push(1);
          this.writeValue(x);
        }
        this.push(0);
        break;
      case Rank.binary: {
        const bytes = v as Uint8Array;
        this.reserve(4 + bytes.length);
        this.length = this.bytes.writeUInt32BE(bytes.length, this.length);
        this.bytes.set(bytes, this.length);
        this.length += bytes.length;
        break;
      }
      case Rank.boolean:
        this.push(v ? 1 : 0);
        break;
      case Rank.date:
        this.writeNumber((v as Date).getTime());
        break;
      case Rank.regex:
        this.writeString((v as RegExp).source);
        this.writeString((v as RegExp).flags);
        break;
      default:
        // null and the empty-array marker are fully described by their rank.
        break;
    }
  }

  /** IEEE-754 big-endian with the sign bit flipped (positives) or all bits flipped (negatives). */
  private writeNumber(n: number): void {
    this.reserve(8);
    const at = this.length;
    this.length += 8;
    if (Number.isNaN(n)) {
      this.bytes.fill(0, at, at + 8);
      return;
    }
    this.bytes.writeDoubleBE(n === 0 ? 0 : n, at);
    if (((this.bytes[at] as number) & 0x80) !== 0) {
      for (let i = at; i < at + 8; i++) this.bytes[i] = (this.bytes[i] as number) ^ 0xff;
    } else {
      this.bytes[at] = (this.bytes[at] as number) ^ 0x80;
    }
  }

  /**
   * A short string of ASCII without NUL (ids, jids, names of fields), whose UTF-8 bytes are its
   * char codes, written here: a call into the native encoder cost more than the copy. Answers
   * false, having written nothing that counts, for any other string.
   */
  private writeAscii(s: string): boolean {
    const n = s.length;
    if (n > SHORT_STRING) return false;
    this.reserve(n + 2);
    const bytes = this.bytes;
    const at = this.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 0 || c > 0x7f) return false;
      bytes[at + i] = c;
    }
    this.length = at + n;
    return true;
  }

  /** UTF-8 with 0x00 escaped as 00 FF and a 00 00 terminator: prefix-free and order-preserving. */
  private writeString(s: string): void {
    if (this.writeAscii(s)) {
      this.push(0);
      this.push(0);
      return;
    }
    this.reserveUtf8(s, 2);
    const start = this.length;
    const written = this.bytes.write(s, start, 'utf8');
    if (!s.includes('\0')) {
      this.length = start + written;
    } else {
      // Rare: a NUL in the string. Escape each one, working from a copy of the raw bytes.
      const raw = Buffer.from(this.bytes.subarray(start, start + written));
      this.length = start;
      this.reserve(written * 2 + 2);
      for (const b of raw) {
        this.bytes[this.length++] = b;
        if (b === 0) this.bytes[this.length++] = 0xff;
      }
    }
    this.bytes[this.length++] = 0;
    this.bytes[this.length++] = 0;
  }
}

/** The smallest key greater than every key starting with `prefix` (undefined: no such key). */
export function successor(prefix: Buffer): Buffer | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const b = prefix[i] as number;
    if (b !== 0xff) {
      const next = Buffer.from(prefix.subarray(0, i + 1));
      next[i] = b + 1;
      return next;
    }
  }
  return undefined;
}
