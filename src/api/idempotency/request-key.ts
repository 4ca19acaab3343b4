import { createHash } from 'node:crypto';
import { invalidInput } from '../../domain/errors.js';

const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** 1 to 255 printable ASCII characters (CONTRACT.md, Idempotent writes). */
const KEY = /^[\x20-\x7e]{1,255}$/;

/** The header's key, undefined when absent; 400 naming the header when it is malformed. */
export function idempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  if (!KEY.test(header)) throw invalidInput(IDEMPOTENCY_HEADER, 'must be 1 to 255 printable characters');
  return header;
}

/** Where a key is kept: one per account and key, hashed so any key makes a short store id. */
export function recordId(accountId: string, key: string): string {
  return createHash('sha256').update(accountId).update('\n').update(key).digest('base64url');
}

/**
 * What makes two requests "the same": the route they were sent to and their body, with object
 * keys in a fixed order so that a client re-serialising its body in another order still matches.
 */
export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(canonicalJson(body)).digest('base64url');
}

/** JSON with sorted object keys. Bodies reach here already limited in depth. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
