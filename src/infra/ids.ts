import { randomBytes, randomUUID } from 'node:crypto';

/** Identifiers, injected so the sandbox and tests can seed them. */
export interface IdGenerator {
  /** UUID, as event stores require for event ids. */
  uuid(): string;
  /** `length` upper-case alphanumerics. */
  alphanumeric(length: number): string;
  /** Key material (media keys, secrets the sandbox makes). */
  bytes(length: number): Buffer;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export const randomIds: IdGenerator = {
  uuid: () => randomUUID(),
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
