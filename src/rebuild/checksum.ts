import { createHash } from 'node:crypto';
import type { DocumentStore } from '../infra/docstore/port.js';
import { APPLIED } from '../projections/idempotent-writes.js';

/** Keys sorted at every depth: two stores that hold the same documents print the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 over the collections' documents in _id order, with their count. */
export async function checksum(docs: DocumentStore, collections: readonly string[]): Promise<{ sha256: string; documents: number }> {
  const hash = createHash('sha256');
  let documents = 0;
  for (const name of collections) {
    hash.update(`\0${name}\0`);
    for (const doc of await docs.collection(name).find({}, { sort: { _id: 1 } })) {
      // The runner's marks of applied writes (MongoDB, see idempotent-writes.ts) are its
      // bookkeeping, not the model: a rebuilt document has none until the next write.
      const { [APPLIED]: marks, ...model } = doc;
      void marks;
      hash.update(canonical(model));
      hash.update('\n');
      documents++;
    }
  }
  return { sha256: hash.digest('hex'), documents };
}
