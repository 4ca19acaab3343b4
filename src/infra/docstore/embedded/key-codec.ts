import { Rank, typeRank } from './value-order.js';

/**
 * Binary LMDB keys whose byte order equals compareValues order. Every value is written as its type
 * rank then a self-delimiting payload, so encodings are prefix-free: concatenated fields compare
 * field by field, and complementing a field's bytes exactly reverses its order (descending keys).
 */

/** LMDB's key size limit with the default page size. */
export const MAX_KEY_BYTES = 1978;

export class KeyBuilder {
  private readonly bytes: number[];

  constructor(prefix?: Uint8Array) {
    this.bytes = prefix ? Array.from(prefix) : [];
  }

  string(s: string): this {
    writeString(this.bytes, s);
    return this;
  }

  /** Unescaped UTF-8, only valid as the last part of a key. */
  tail(s: string): this {
    for (const b of Buffer.from(s, 'utf8')) this.bytes.push(b);
    return this;
  }

  value(v: unknown, direction: 1 | -1 = 1): this {
    if (direction === 1) {
      writeValue(this.bytes, v);
    } else {
      const part: number[] = [];
      writeValue(part, v);
      for (const b of part) this.bytes.push(b ^ 0xff);
    }
    return this;
  }

  clone(): KeyBuilder {
    return new KeyBuilder(Uint8Array.from(this.bytes));
  }

  build(): Buffer {
    if (this.bytes.length > MAX_KEY_BYTES) {
      throw new RangeError(`index key of ${this.bytes.length} bytes exceeds the ${MAX_KEY_BYTES}-byte limit`);
    }
    return Buffer.from(this.bytes);
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

function writeValue(out: number[], v: unknown): void {
  const rank = typeRank(v);
  out.push(rank);
  writePayload(out, v, rank);
}

function writePayload(out: number[], v: unknown, rank: Rank): void {
  switch (rank) {
    case Rank.number:
      writeNumber(out, Number(v));
      break;
    case Rank.string:
      writeString(out, v as string);
      break;
    case Rank.object:
      // Element = type, name, value: the order compareObjects uses.
      for (const [name, x] of Object.entries(v as Record<string, unknown>)) {
        const xr = typeRank(x);
        out.push(1, xr);
        writeString(out, name);
        writePayload(out, x, xr);
      }
      out.push(0);
      break;
    case Rank.array:
      for (const x of v as unknown[]) {
        out.push(1);
        writeValue(out, x);
      }
      out.push(0);
      break;
    case Rank.binary: {
      const bytes = v as Uint8Array;
      const len = bytes.length;
      out.push((len >>> 24) & 0xff, (len >>> 16) & 0xff, (len >>> 8) & 0xff, len & 0xff);
      for (const b of bytes) out.push(b);
      break;
    }
    case Rank.boolean:
      out.push(v ? 1 : 0);
      break;
    case Rank.date:
      writeNumber(out, (v as Date).getTime());
      break;
    case Rank.regex:
      writeString(out, (v as RegExp).source);
      writeString(out, (v as RegExp).flags);
      break;
    default:
      // null and the empty-array marker are fully described by their rank.
      break;
  }
}

const scratch = Buffer.alloc(8);

/** IEEE-754 big-endian with the sign bit flipped (positives) or all bits flipped (negatives). */
function writeNumber(out: number[], n: number): void {
  if (Number.isNaN(n)) {
    out.push(0, 0, 0, 0, 0, 0, 0, 0);
    return;
  }
  scratch.writeDoubleBE(n === 0 ? 0 : n);
  const negative = ((scratch[0] as number) & 0x80) !== 0;
  for (let i = 0; i < 8; i++) {
    const b = scratch[i] as number;
    out.push(negative ? b ^ 0xff : i === 0 ? b ^ 0x80 : b);
  }
}

/** UTF-8 with 0x00 escaped as 00 FF and a 00 00 terminator: prefix-free and order-preserving. */
function writeString(out: number[], s: string): void {
  for (const b of Buffer.from(s, 'utf8')) {
    if (b === 0) out.push(0, 0xff);
    else out.push(b);
  }
  out.push(0, 0);
}
