import { randomBytes, randomFillSync } from 'node:crypto';

/** Identifiers, injected so the sandbox and tests can seed them. */
export interface IdGenerator {
  /** UUID, as event stores require for event ids: version 7, so ids sort by creation time. */
  uuid(): string;
  /** `length` upper-case alphanumerics. */
  alphanumeric(length: number): string;
  /** Key material (media keys, secrets the sandbox makes). */
  bytes(length: number): Buffer;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export const randomIds: IdGenerator = {
  uuid: () => uuidV7(Date.now()),
  bytes: (length) => randomBytes(length),
  alphanumeric(length) {
    let out = '';
    // Rejection sampling keeps every character equally likely (256 is not a multiple of 36).
    while (out.length < length) {
      for (const byte of randomBytes(length * 2)) {
        if (byte < 252 && out.length < length) out += ALPHABET[byte % 36];
      }
    }
    return out;
  },
};

/** Random bytes drawn in bulk: one call to the system per 256 ids. */
const pool = Buffer.alloc(10 * 256);
let poolAt = pool.length;
let lastMs = -1;
let counter = 0;

/**
 * An RFC 9562 version 7 UUID: 48 bits of Unix milliseconds, then a 12-bit counter (started at a
 * random value below 2048 each millisecond, so ids made in one millisecond still sort in the
 * order they were made), then 62 random bits. Keys that grow with time land at the end of a
 * B-tree: an insert touches the last page instead of a random one, which for the event log's id
 * index and the webhook deliveries (keyed by event id) is most of what a commit writes.
 */
export function uuidV7(nowMs: number): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const r = pool.subarray(poolAt, (poolAt += 10));
  let ms = nowMs;
  if (ms > lastMs) {
    lastMs = ms;
    counter = ((r[8] as number) << 3) | ((r[9] as number) & 0x07);
  } else {
    // The same millisecond (or a clock step back): count on, borrowing the next millisecond when full.
    ms = lastMs;
    if (++counter > 0xfff) {
      ms = ++lastMs;
      counter = 0;
    }
  }
  const id = Buffer.allocUnsafe(16);
  id.writeUIntBE(ms, 0, 6);
  id[6] = 0x70 | (counter >> 8);
  id[7] = counter & 0xff;
  id[8] = 0x80 | ((r[0] as number) & 0x3f);
  r.copy(id, 9, 1, 8);
  const hex = id.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
